"""kyverno-json's ValidatingPolicy as a language the engine runs: recognise, check, compile, lint."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from assertree.errors import PolicyError, Problem
from assertree.languages.kyverno_json.compile import CompiledPolicy, compile_policy
from assertree.languages.kyverno_json.model import API_VERSION, document_kind_problem, policy_from_document

GROUP = API_VERSION.split("/")[0]
DESCRIPTION = f"{API_VERSION} ValidatingPolicy"


def compile_document(document: Any, *, source: str | None = None, index: int | None = None,
                     line: int | None = None) -> CompiledPolicy:
    """Check, model and compile one policy document; PolicyError (with a field path) at the first problem."""
    from assertree.languages.kyverno_json.schema import problems

    wrong_kind = document_kind_problem(document)
    if wrong_kind is not None:
        path, message = wrong_kind
        raise PolicyError(message, path=path)
    found = problems(document)
    if found:
        first = found[0]
        more = f" (and {len(found) - 1} more problem{'s' if len(found) > 2 else ''})" if len(found) > 1 else ""
        raise PolicyError(f"{first.message}{more}", path=first.path)
    return compile_policy(policy_from_document(document, source=source, index=index, line=line))


def lint_document(document: Any) -> Iterator[Problem]:
    """Every problem of one document (no location yet: the loader adds the file and line)."""
    from assertree.languages.kyverno_json.lint import lint_document as lint

    yield from lint(document)
