"""Loading policies from files and directories, all checks done before a scan starts.

A policy file holds one or more YAML documents (or one JSON document); a
directory is walked recursively for ``.yaml``, ``.yml`` and ``.json`` files,
in sorted order so results are stable. Each document must be a
``ValidatingPolicy`` that passes the schema, and every expression in it must
compile; the first problem stops loading with a `PolicyError` naming the
file, line, column and field path:

    policy.yaml:14:9: spec.rules[0].assert.all[1].check.(foo[: invalid expression ...

`read_policies` is the same walk for ``assertree lint``, collecting every
problem instead of stopping at the first.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from assertree.errors import AssertreeError, PolicyError
from assertree.policy.model import Policy, document_kind_problem, policy_from_document

POLICY_SUFFIXES = (".yaml", ".yml", ".json")


def policy_files(paths: Iterable[str | Path]) -> list[Path]:
    """The files named, and the policy files under the directories named, in a stable order."""
    files: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found = sorted(p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in POLICY_SUFFIXES)
            files.extend(found)
        elif path.exists():
            files.append(path)
        else:
            raise PolicyError("policy file or directory not found", source=str(raw))
    return files


@dataclass
class LoadProblem:
    """One problem found while reading policies (lint reports all of them)."""

    error: AssertreeError
    policy: Policy | None = None


def load_policies(*paths: str | Path, selector: Callable[[Mapping[str, str]], bool] | None = None) -> list[Policy]:
    """Every ValidatingPolicy in `paths`, compiled; raises PolicyError at the first problem.

    `selector` (see `assertree.labels`) keeps only policies whose labels match.
    """
    policies = []
    for item in read_policies(paths):
        if isinstance(item, LoadProblem):
            raise item.error
        if selector is None or selector(item.labels):
            policies.append(item)
    return policies


def read_policies(paths: Iterable[str | Path]) -> Iterator[Policy | LoadProblem]:
    """Each policy of each file, or a LoadProblem in its place; file-level problems too."""
    from assertree.source import SourceError, load_documents

    for file in policy_files(paths):
        try:
            documents = load_documents(file)
        except SourceError as error:
            yield LoadProblem(PolicyError(error.message, source=error.path, line=error.line, column=error.column))
            continue
        for document in documents:
            try:
                yield _policy(document)
            except PolicyError as error:
                yield LoadProblem(_locate(error, document))


def policy_from_mapping(value: object, *, source: str | None = None, index: int | None = None,
                        line: int | None = None) -> Policy:
    """Check, model and compile one policy document given as data (not read from a file)."""
    from assertree.policy.schema import problems
    from assertree.rules import compile_policy

    wrong_kind = document_kind_problem(value)
    if wrong_kind is not None:
        path, message = wrong_kind
        raise PolicyError(message, path=path)
    found = problems(value)
    if found:
        first = found[0]
        more = f" (and {len(found) - 1} more problem{'s' if len(found) > 2 else ''})" if len(found) > 1 else ""
        raise PolicyError(f"{first.message}{more}", path=first.path)
    policy = policy_from_document(value, source=source, index=index, line=line)
    policy.compiled = compile_policy(policy)
    return policy


def _policy(document) -> Policy:
    return policy_from_mapping(document.value, source=document.path, index=document.index, line=document.line)


def _locate(error: PolicyError, document) -> PolicyError:
    """Add the file, and the line and column of the error's field path, to `error`."""
    line, column = document.locate(error.path) if error.path else (document.line, None)
    return error.located(source=document.path, line=line, column=column)
