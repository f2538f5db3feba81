"""Loading policies of every language from files and directories, all checks done before a scan.

A policy file holds one or more YAML documents (or one JSON document); a
directory is walked recursively for ``.yaml``, ``.yml`` and ``.json`` files,
in sorted order so results are stable. Each document goes to the language its
``apiVersion`` names (`LANGUAGES`), which checks and compiles it; the first
problem stops loading with a `PolicyError` naming the file, line, column and
field path:

    policy.yaml:14:9: spec.rules[0].assert.all[1].check.(foo[: invalid expression ...

`read_policies` is the same walk collecting every problem instead of stopping
(``assertree lint`` uses it through each language's lint mode).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import replace
from pathlib import Path
from types import ModuleType
from typing import Any

from assertree.documents.nesting import TOO_DEEP
from assertree.documents.reader import SUFFIXES, Document, load_documents
from assertree.errors import AssertreeError, DocumentError, Location, PolicyError, Problem, Severity

LANGUAGES = {
    "json.kyverno.io": "assertree.languages.kyverno_json.language",
    "kyverno.io": "assertree.languages.kyverno.language",
    "policies.kyverno.io": "assertree.languages.kyverno.cel_policies.language",
}
"""apiVersion group -> the module of the language that reads it (imported when first needed)."""


def policy_files(paths: Iterable[str | Path]) -> list[Path]:
    """The files named, and the policy files under the directories named, in a stable order.

    Hidden folders under a directory are not searched (kyverno/policies keeps each policy's
    ``kyverno-test.yaml`` in ``.kyverno-test/`` beside it). An empty path is refused:
    ``Path("")`` means the working directory, so an
    unset CI variable (``--policy "$POLICIES"``) would otherwise load every
    policy-looking file of the checkout, or none, and pass.
    """
    files: list[Path] = []
    for raw in paths:
        if not str(raw).strip():
            raise PolicyError(f"empty policy path {str(raw)!r}: name a policy file or directory "
                              "(is a variable in the command line unset?)")
        path = Path(raw)
        if path.is_dir():  # hidden folders (.kyverno-test/, .chainsaw-test/, .git/) hold tests, not policies
            files.extend(sorted(p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in SUFFIXES
                                and not any(part.startswith(".") for part in p.relative_to(path).parts[:-1])))
        elif path.exists():
            files.append(path)
        else:
            raise PolicyError("policy file or directory not found", source=str(raw))
    return files


def language_of(document: Any) -> ModuleType | None:
    """The language module for a document, by the group of its apiVersion; None when no language reads it."""
    api_version = document.get("apiVersion") if isinstance(document, dict) else None
    if not isinstance(api_version, str):
        return None
    module = LANGUAGES.get(api_version.split("/")[0])
    return importlib.import_module(module) if module else None


def not_a_policy(document: Any) -> Problem:
    """Why a document that no language reads is not a policy."""
    languages = "; ".join(importlib.import_module(module).DESCRIPTION for module in LANGUAGES.values())
    if not isinstance(document, dict):
        found = type(document).__name__ if document is not None else "null"
        return Problem(f"expected a policy document (a mapping), found {found} (assertree reads: {languages})")
    api_version, kind = document.get("apiVersion"), document.get("kind")
    if api_version is None and kind is None:
        return Problem(f"not a policy: the document has no apiVersion and kind (assertree reads: {languages})",
                       path=("apiVersion",))
    return Problem(f"unsupported document: apiVersion {api_version!r}, kind {kind!r} (assertree reads: {languages})",
                   path=("apiVersion",))


def compile_document(document: Any, *, source: str | None = None, index: int | None = None,
                     line: int | None = None) -> Any:
    """Check and compile one policy document of any language; PolicyError at the first problem."""
    language = language_of(document)
    if language is None:
        raise PolicyError.of(not_a_policy(document))
    return language.compile_document(document, source=source, index=index, line=line)


policy_from_mapping = compile_document  # the name the 0.1 API had


def load_policies(*paths: str | Path, selector: Callable[[Mapping[str, str]], bool] | None = None) -> list[Any]:
    """Every policy in `paths`, compiled; raises PolicyError at the first problem.

    `selector` (see `assertree.languages.selectors`) keeps only policies whose labels match.
    """
    policies = []
    for item in read_policies(paths):
        if isinstance(item, Problem):
            raise PolicyError.of(item)
        labels = getattr(item.policy, "labels", None) or {}
        if selector is None or selector(labels):
            policies.append(item)
    return policies


def read_policies(paths: Iterable[str | Path]) -> Iterator[Any]:
    """Each compiled policy of each file, or a located `Problem` in its place."""
    for file in policy_files(paths):
        try:
            documents = load_documents(file)
        except DocumentError as error:
            yield error.problem
            continue
        for document in documents:
            try:
                compiled = compile_document(document.value, source=document.path, index=document.index,
                                            line=document.line)
            except PolicyError as error:
                yield locate(error.problem, document)
                continue
            except RecursionError:
                yield locate(Problem(TOO_DEEP), document)
                continue
            yield compiled


_POLICY_MARKERS = (b"kyverno.io", b"ValidatingPolicy", b"ClusterPolicy")
_OLD_SYNTAX = {
    "kind": "old kyverno-json syntax: the kind is now ValidatingPolicy",
    "validate": "old kyverno-json syntax: write match/assert directly under the rule, without 'validate:'",
}


def _holds_no_policy(file: Path) -> bool:
    """Whether a file found in a directory cannot be a policy of any language (it never names one),
    so lint skips it rather than calling every payload of a repository "not a policy"."""
    overlap = max(len(marker) for marker in _POLICY_MARKERS) - 1  # a marker split across two chunks
    tail = b""
    try:
        with file.open("rb") as stream:  # in chunks: a repository may hold a plan of gigabytes
            while chunk := stream.read(1 << 20):
                data = tail + chunk
                if any(marker in data for marker in _POLICY_MARKERS):
                    return False
                tail = data[-overlap:]
    except OSError:
        return False
    return True


def _with_hint(problem: Problem, document: Any) -> Problem:
    """`problem`, with a hint when it comes from kyverno-json's old syntax (blog posts still show it)."""
    if not isinstance(document, dict) or not problem.path:
        return problem
    last = problem.path[-1]
    if last == "validate" or (last == "kind" and document.get("kind") == "Policy"
                              and str(document.get("apiVersion", "")).startswith("json.kyverno.io/")):
        return replace(problem, message=f"{problem.message} ({_OLD_SYNTAX[str(last)]})")
    return problem


def files_to_lint(paths: Iterable[str | Path]) -> tuple[list[Path], list[Path]]:
    """(files lint checks, files it skips): files found in a directory that never name a policy
    language are skipped; a file named explicitly is always checked. PolicyError for a missing path."""
    paths = list(paths)
    named = {Path(raw) for raw in paths}
    checked: list[Path] = []
    skipped: list[Path] = []
    for file in policy_files(paths):
        (skipped if file not in named and _holds_no_policy(file) else checked).append(file)
    return checked, skipped


def lint(paths: Iterable[str | Path]) -> list[Problem]:
    """Every problem in the policy files and directories named, each located; policies of any language.

    Files found in a directory that never name a policy language are skipped, with one NOTE problem
    (no location) counting them; a file named explicitly is always checked.
    """
    problems: list[Problem] = []
    seen_names: dict[tuple, str] = {}
    try:
        files, skipped = files_to_lint(paths)
    except AssertreeError as error:
        return [error.problem]
    for file in files:
        try:
            documents = load_documents(file)
        except DocumentError as error:
            problems.append(error.problem)
            continue
        for document in documents:
            language = language_of(document.value)
            try:
                found = [not_a_policy(document.value)] if language is None else list(
                    language.lint_document(document.value))
            except RecursionError:
                found = [Problem(TOO_DEEP)]
            if language is not None and _has_no_rules(document.value) and not any(p.path[:2] == ("spec", "rules")
                                                                                    for p in found):
                found.append(Problem(NO_RULES, path=("spec", "rules"), severity=Severity.WARNING))
            problems.extend(locate(_with_hint(problem, document.value), document) for problem in found)
            name = (document.value.get("metadata") or {}).get("name") if isinstance(document.value, dict) else None
            if language is not None and isinstance(name, str) and name:
                key = (document.value.get("kind"), name)
                if key in seen_names:
                    problems.append(locate(Problem(f"another policy is also named {name!r} ({seen_names[key]})",
                                                   path=("metadata", "name"), severity=Severity.WARNING), document))
                else:
                    seen_names[key] = f"{document.path}:{document.line}"
    if skipped:
        shown = ", ".join(str(file) for file in skipped[:3]) + (", ..." if len(skipped) > 3 else "")
        problems.append(Problem(f"skipped {len(skipped)} file{'s' if len(skipped) != 1 else ''} that hold no policy "
                                f"({shown})", severity=Severity.NOTE))
    return problems


NO_RULES = "the policy has no rules: it checks nothing"
"""Lint's warning for ``rules: []``: kyverno-json loads such a policy (its CRD sets no minimum, and its
test suite loads two), so a scan accepts it too, but in CI a policy that checks nothing passes silently."""


def _has_no_rules(document: Any) -> bool:
    spec = document.get("spec") if isinstance(document, dict) else None
    return isinstance(spec, dict) and spec.get("rules") == []


def locate(problem: Problem, document: Document) -> Problem:
    """`problem` with the file, and the line and column of its field path, filled in."""
    line, column = document.locate(problem.path) if problem.path else (document.line, None)
    return problem.located(Location(document.path, line, column))
