"""Kyverno's CEL policy kinds (``policies.kyverno.io``) as a language the engine runs: recognise, compile, lint."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from assertree.errors import PolicyError, Problem, Severity
from assertree.languages.kyverno.cel_policies.compile import CompiledCelPolicy, compile_policy, compile_problems
from assertree.languages.kyverno.cel_policies.model import GROUP, KINDS
from assertree.languages.kyverno.cel_policies.reading import ReadError, build_policy, problems, read_policy
from assertree.languages.schema_problems import in_document_order

__all__ = ["DESCRIPTION", "GROUP", "compile_document", "is_cel_policy", "lint_document"]

DESCRIPTION = (f"{GROUP} ValidatingPolicy, MutatingPolicy, GeneratingPolicy, DeletingPolicy, ImageValidatingPolicy "
               "(and Namespaced variants)")


def is_cel_policy(document: Any) -> bool:
    """Whether `document` is a ``policies.kyverno.io`` policy this language reads."""
    if not isinstance(document, dict):
        return False
    api_version = document.get("apiVersion")
    return (isinstance(api_version, str) and api_version.split("/")[0] == GROUP
            and document.get("kind") in KINDS)


def compile_document(document: Any, *, source: str | None = None, index: int | None = None,
                     line: int | None = None) -> CompiledCelPolicy:
    """Check, read and compile one policy document; PolicyError (with a field path) at the first problem."""
    try:
        policy = read_policy(document, source=source, index=index, line=line)
    except ReadError as error:
        raise PolicyError(str(error), path=error.path) from None
    return compile_policy(policy)


def lint_document(document: Any) -> Iterator[Problem]:
    """Every problem of one document: the schema's (or, once it has none, the rules it cannot say), every
    expression of the well-formed fields that does not compile, and a warning when it is not run offline (no
    location yet: the loader adds the file and line). A document without problems is compiled once, as loading
    compiles it; the others are compiled expression by expression, to find every one that does not compile."""
    found = problems(document)
    first: Problem | None = None
    if not any(problem.severity == Severity.ERROR for problem in found):
        try:
            compiled = compile_document(document)
        except PolicyError as error:
            first = error.problem
        else:
            yield from found
            yield from (item.problem for item in compiled.refused)
            return
    policy = build_policy(document)
    every = compile_problems(policy) if policy is not None and policy.kind in KINDS else []
    if first is not None and not every:  # the policy as written compiles: an autogen variant does not
        every = [first]
    yield from in_document_order(document, [*found, *every])
