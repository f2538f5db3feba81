"""Loading policies of every language from files and directories, all checks done before a scan.

A policy file holds one or more YAML documents (or one JSON document); a
directory is walked recursively for ``.yaml``, ``.yml`` and ``.json`` files,
in sorted order so results are stable. Each document goes to the language its
``apiVersion`` names (`LANGUAGES`), which checks and compiles it; the first
problem stops loading with a `PolicyError` naming the file, line, column and
field path:

    policy.yaml:14:9: spec.rules[0].assert.all[1].check.(foo[: invalid expression ...

`load_policy_set` reads a repository: it never stops at a problem, passes over
the files that hold no policy (tests, kustomizations, Artifact Hub metadata,
manifests, Helm templates) with a count of them, and names each policy that
cannot be used in one line; ``assertree lint`` walks the same way through each
language's lint mode.
"""

from __future__ import annotations

import importlib
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

from assertree.documents.nesting import TOO_DEEP
from assertree.documents.paths import NO_EXCLUDE, Exclude, walk
from assertree.documents.reader import SUFFIXES, Document, load_documents
from assertree.errors import AssertreeError, DocumentError, Location, PolicyError, Problem, Severity, Unsupported
from assertree.languages.base import locate_refusals
from assertree.languages.checked_files import CheckedFile, read_checked
from assertree.records import ValueRecord
from assertree.results import refused_rules

LANGUAGES = {
    "json.kyverno.io": "assertree.languages.kyverno_json.language",
    "kyverno.io": "assertree.languages.kyverno.language",
    "policies.kyverno.io": "assertree.languages.kyverno.cel_policies.language",
    "admissionregistration.k8s.io": "assertree.languages.admission.language",
}
"""apiVersion group -> the module of the language that reads it (imported when first needed)."""


def policy_files(paths: Iterable[str | Path], exclude: Exclude = NO_EXCLUDE) -> list[Path]:
    """The files named, and the policy files under the directories named, in a stable order.

    Hidden files and folders under a directory are not searched (kyverno/policies keeps each policy's
    ``kyverno-test.yaml`` in ``.kyverno-test/`` beside it; Kyverno's own loader skips every name that
    starts with a dot), nor is what `exclude` names (`assertree.documents.paths`). An empty path is
    refused: ``Path("")`` means the working directory, so an unset CI variable (``--policy "$POLICIES"``)
    would otherwise load every policy-looking file of the checkout, or none, and pass.
    """
    return find_policy_files(paths, exclude).files


class FoundFiles(ValueRecord):
    """The policy files of a set of paths: which were named, and how many YAML files hid in hidden folders."""

    files: list[Path]
    named: set[Path]
    hidden: int  # YAML/JSON files in hidden folders (or hidden themselves) under a directory named
    chainsaw: int  # YAML/JSON files of Chainsaw test folders (`CHAINSAW_TEST_FILES`) under a directory named

    __slots__ = ("chainsaw", "files", "hidden", "named")

    def __init__(
            self, files: list[Path] | None = None, named: set[Path] | None = None, hidden: int = 0, chainsaw: int = 0,
    ) -> None:
        self.files = [] if files is None else files
        self.named = set() if named is None else named
        self.hidden = hidden
        self.chainsaw = chainsaw


def find_policy_files(paths: Iterable[str | Path], exclude: Exclude = NO_EXCLUDE) -> FoundFiles:
    """`policy_files`, saying also which files were named and how many hidden ones were left out."""
    found = FoundFiles()
    for raw in paths:
        if not str(raw).strip():
            raise PolicyError(f"empty policy path {str(raw)!r}: name a policy file or directory "
                              "(is a variable in the command line unset?)")
        path = Path(raw)
        if path.is_dir():
            tests: dict[Path, bool] = {}
            for file in walk(path, SUFFIXES, exclude):
                if any(part.startswith(".") for part in file.relative_to(path).parts):
                    found.hidden += 1
                elif _in_chainsaw_test(file, path, tests):
                    found.chainsaw += 1
                else:
                    found.files.append(file)
        elif path.exists():
            if not exclude.matches(path):
                found.files.append(path)
                found.named.add(path)
        else:
            raise PolicyError("policy file or directory not found", source=str(raw))
    found.files = list(dict.fromkeys(found.files))
    return found


CHAINSAW_TEST_FILES = ("chainsaw-test.yaml", "chainsaw-test.yml", "chainsaw-test.json")
"""The names Chainsaw looks for a test by (its ``--test-file`` default, ``chainsaw-test``, with each suffix)."""


def _in_chainsaw_test(file: Path, root: Path, tests: dict[Path, bool]) -> bool:
    """Whether `file` is in a Chainsaw test's folder (one holding a `CHAINSAW_TEST_FILES` file), or below
    one, under `root`: repositories that keep their end-to-end tests beside a policy (``e2e/``, not the
    hidden ``.chainsaw-test/``) hold there the partial policies Chainsaw asserts (``status: ready``, no
    rules) and the resources it applies, none of them a policy to run. `tests` caches each folder's answer."""
    folder = file.parent
    while True:
        held = tests.get(folder)
        if held is None:
            held = tests[folder] = any((folder / name).is_file() for name in CHAINSAW_TEST_FILES)
        if held:
            return True
        if folder == root or folder == folder.parent:
            return False
        folder = folder.parent


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


def compile_read(document: Document) -> Any:
    """A document read from a file, compiled: a PolicyError (of the same class: `Unsupported` stays one), and
    the warnings of refused rules, carry its file, line and column."""
    try:
        compiled = compile_document(document.value, source=document.path, index=document.index, line=document.line)
    except PolicyError as error:
        raise type(error).of(locate(error.problem, document)) from None
    return locate_refusals(compiled, document)


def load_policies(*paths: str | Path, selector: Callable[[Mapping[str, str]], bool] | None = None,
                  exclude: Iterable[str] = ()) -> list[Any]:
    """Every policy in `paths`, compiled; raises PolicyError at the first policy that cannot be loaded.

    Files found in a directory that hold no policy (tests, kustomizations, Artifact Hub metadata,
    manifests, CRDs, Helm templates) are passed over, as `load_policy_set` does; a file named explicitly
    must hold policies only. `selector` (see `assertree.languages.selectors`) keeps only policies whose
    labels match.
    """
    found = load_policy_set(paths, selector=selector, exclude=Exclude.of(exclude))
    problems = found.errors + found.refused
    if problems:
        first = min(problems, key=lambda problem: found.order.get(id(problem), 0))
        raise PolicyError.of(first.replace(severity=Severity.ERROR))
    return found.policies


def link(compiled: Iterable[Any]) -> tuple[list[Any], list[Problem]]:
    """Documents of one load joined where a language needs several for one policy (Kubernetes' admission
    policies and the bindings that name them): (the policies, a located problem for each document left over).

    Each language already imported that defines ``link(items) -> (items, problems)`` links its own documents
    (a language not imported yet compiled none of them).
    """
    items = list(compiled)
    problems: list[Problem] = []
    for module_name in LANGUAGES.values():
        language = sys.modules.get(module_name)
        if language is not None and hasattr(language, "link"):
            items, found = language.link(items)
            problems.extend(found)
    return items, problems


class PolicySet(ValueRecord, hidden=("order",)):
    """What a run's ``--policy`` paths hold, read as a repository is (`load_policy_set`).

    `errors` are the documents of files named explicitly that cannot be used (the run exits 2);
    `refused` the policies found in a directory that cannot be used: a WARNING for one that is
    invalid, a NOTE for one assertree cannot run (`assertree.errors.Unsupported`); each is one line
    and the others still run. `not_run` has a WARNING for each rule of a loaded policy that is not
    run (`assertree.results.RefusedRule`: it needs a registry or a cluster, ...), naming the policy,
    the rule and the field at fault; the policy's other rules run. `skipped` counts the files that
    hold no policy.
    """

    policies: list[Any]
    errors: list[Problem]
    refused: list[Problem]
    not_run: list[Problem]
    skipped: Counter[str]
    order: dict[int, int]  # id(problem) -> position in the walk

    __slots__ = ("errors", "not_run", "order", "policies", "refused", "skipped")

    def __init__(
            self, policies: list[Any] | None = None, errors: list[Problem] | None = None,
            refused: list[Problem] | None = None, not_run: list[Problem] | None = None,
            skipped: Counter[str] | None = None, order: dict[int, int] | None = None,
    ) -> None:
        self.policies = [] if policies is None else policies
        self.errors = [] if errors is None else errors
        self.refused = [] if refused is None else refused
        self.not_run = [] if not_run is None else not_run
        self.skipped = Counter() if skipped is None else skipped
        self.order = {} if order is None else order

    def skipped_note(self) -> str | None:
        """One line: how many files were passed over, by what they hold; None when there were none."""
        return skipped_note(self.skipped)


def skipped_note(skipped: Counter[str]) -> str | None:
    """``skipped 1,234 files that hold no policy (1,100 in hidden folders, 130 Artifact Hub metadata, ...)``."""
    total = sum(skipped.values())
    if not total:
        return None
    ordered = sorted(skipped.items(), key=lambda item: (-item[1], item[0]))
    kinds = ", ".join(f"{count:,} {what}" for what, count in ordered)
    files = f"{total:,} files that hold" if total != 1 else "1 file that holds"
    return f"skipped {files} no policy ({kinds})"


def load_policy_set(paths: Iterable[str | Path], *, selector: Callable[[Mapping[str, str]], bool] | None = None,
                    exclude: Exclude = NO_EXCLUDE) -> PolicySet:
    """Every policy in `paths`, as a real repository holds them: nothing stops at the first problem.

    A file named explicitly must hold policies, and each document that cannot be used is an error. Under
    a directory, only policies are read: hidden folders (``.kyverno-test/``, ``.chainsaw-test/``), Chainsaw
    test folders (`CHAINSAW_TEST_FILES`) and files that hold no policy document (Kyverno and Chainsaw
    tests, kustomizations, Artifact Hub metadata, manifests, CRDs, PolicyExceptions, Helm templates) are
    counted in `PolicySet.skipped`;
    a policy that cannot be loaded is one entry of `PolicySet.refused` and the others still load; a rule
    that is not run is one entry of `PolicySet.not_run` and its policy's other rules still run.
    """
    found = find_policy_files(paths, exclude)
    out = PolicySet()
    skipped = _Skipped()
    _count_left_out(found, skipped)
    for file in found.files:
        named = file in found.named
        for item in _read_file(file, named, skipped):
            if isinstance(item, Problem):
                out.order[id(item)] = len(out.order)
                if named and item.severity == Severity.ERROR:
                    out.errors.append(item)
                else:
                    out.refused.append(item)
                continue
            out.policies.append(item)
    linked, unlinked = link(out.policies)  # admission policies and the bindings that name them
    for problem in unlinked:
        out.order[id(problem)] = len(out.order)
        out.errors.append(problem)
    out.policies = [item for item in linked
                    if selector is None or selector(getattr(item.policy, "labels", None) or {})]
    out.not_run = [refused.problem for item in out.policies for refused in refused_rules(item)]
    out.skipped = skipped.files
    return out


def _count_left_out(found: FoundFiles, skipped: _Skipped) -> None:
    """The files a directory walk left unread, for the skipped-files note."""
    if found.hidden:
        skipped.add_many("in hidden folders", found.hidden)
    if found.chainsaw:
        skipped.add_many("in Chainsaw test folders", found.chainsaw)


class _Skipped(ValueRecord):
    """What a walk passed over: files that hold no policy, by what they hold."""

    files: Counter[str]

    __slots__ = ("files",)

    def __init__(self, files: Counter[str] | None = None) -> None:
        self.files = Counter() if files is None else files

    def add(self, what: str) -> None:
        self.files[what] += 1

    def add_many(self, what: str, count: int) -> None:
        self.files[what] += count


def _read_file(file: Path, named: bool, skipped: _Skipped) -> Iterator[Any]:
    """The compiled policies of one file, or located problems in their place (see `_policy_documents`).
    In a file found in a directory, a policy that cannot be used is a WARNING, or a NOTE when it is one
    assertree cannot run (`assertree.errors.Unsupported`).

    The file's documents come from the cache of checked files when its bytes were read before
    (`assertree.languages.checked_files`), and are stored there only when every one of them compiled: a
    file with a problem, or with documents passed over, is read (and its problems found) every time."""
    read = _open_policy_file(file, named, skipped)
    if isinstance(read, Problem):  # a file that is not YAML: lint's error, a warning for a repository
        yield read if named else read.replace(severity=Severity.WARNING)
        return
    if read is None:
        return
    compiled: list[Any] = []
    with read.checked():
        for document in _policy_documents_of(read.documents, file, named, skipped):
            if isinstance(document, Problem):
                compiled.append(document)
                continue
            try:
                compiled.append(compile_read(document))
            except PolicyError as error:  # located by compile_read
                if named and not isinstance(error, Unsupported):
                    compiled.append(error.problem)
                elif not named and "templates" in file.parts[:-1] and _is_template(file):
                    skipped.add(HELM_TEMPLATES)  # a chart that templates policies: {{ }} where values go
                else:
                    compiled.append(_refusal(error, document))
            except RecursionError:  # a policy nested deeper than the process may recurse
                compiled.append(locate(Problem(TOO_DEEP), document))
    if len(compiled) == len(read.documents) and not any(isinstance(item, Problem) for item in compiled):
        read.remember()
    yield from compiled


def _policy_documents(file: Path, named: bool, skipped: _Skipped) -> Iterator[Document | Problem]:
    """The policy documents of one file, and located problems. A file found in a directory that holds no
    policy is counted in `skipped` and gives nothing, and its documents that are not policies are passed
    over; every document of a file named explicitly must be a policy."""
    read = _open_policy_file(file, named, skipped)
    if isinstance(read, Problem):
        yield read
    elif read is not None:
        yield from _policy_documents_of(read.documents, file, named, skipped)


def _open_policy_file(file: Path, named: bool, skipped: _Skipped) -> CheckedFile | Problem | None:
    """The documents of a policy file (`read_checked`), the problem of one that is not YAML or JSON, or None
    for a file found in a directory that holds no policy (counted in `skipped`)."""
    if not named:
        what = _holds_no_policy(file)
        if what is not None:
            skipped.add(what)
            return None
    try:
        return read_checked(file)
    except DocumentError as error:
        if not named and _is_template(file):
            skipped.add(HELM_TEMPLATES)
            return None
        return error.problem


def _policy_documents_of(documents: list[Document], file: Path, named: bool,
                         skipped: _Skipped) -> Iterator[Document | Problem]:
    """The policy documents among `documents` (see `_policy_documents`)."""
    policies = 0
    held: list[str] = []
    for document in documents:
        if language_of(document.value) is None or (not named and _not_a_policy_kind(document.value)):
            if named:
                yield locate(not_a_policy(document.value), document)
            else:
                held.append(_what_document_holds(document.value, file))
            continue
        policies += 1
        yield document
    if not named and not policies:
        skipped.add(held[0] if held else OTHER_FILES)


def _refusal(error: PolicyError, document: Document) -> Problem:
    """A policy found in a directory that will not run, as one line: one assertree cannot run (a NOTE:
    ``...: ClusterPolicy 'add-ns-quota' is not checked``) or one that is invalid (a WARNING)."""
    value = document.value if isinstance(document.value, dict) else {}
    metadata = value.get("metadata")
    name = metadata.get("name") if isinstance(metadata, dict) else None
    who = f"{value.get('kind') or 'policy'} {name!r}" if isinstance(name, str) else "the policy"
    if isinstance(error, Unsupported):
        problem = error.problem.replace(message=f"{error.problem.message}: {who} is not checked",
                          severity=Severity.NOTE)
    else:
        problem = error.problem.replace(message=f"{error.problem.message} ({who} is skipped)",
                          severity=Severity.WARNING)
    return locate(problem, document)


HELM_TEMPLATES = "Helm templates"
OTHER_FILES = "other YAML or JSON"

# Kinds of the policy languages' groups that are not policies: passed over under a directory.
_NOT_POLICIES = {"PolicyException", "GlobalContextEntry", "UpdateRequest", "PolicyReport", "ClusterPolicyReport",
                 "EphemeralReport", "ClusterEphemeralReport", "Values", "Test", "UserInfo", "Context",
                 "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"}


def _not_a_policy_kind(document: Any) -> bool:
    return isinstance(document, dict) and document.get("kind") in _NOT_POLICIES


def _what_document_holds(document: Any, file: Path) -> str:
    """What a non-policy document is, for the skipped-files note."""
    if not isinstance(document, dict):
        return OTHER_FILES
    api_version, kind = str(document.get("apiVersion") or ""), document.get("kind")
    group = api_version.split("/")[0] if "/" in api_version else ""
    if group == "cli.kyverno.io":
        return "Kyverno tests" if kind == "Test" else "Kyverno CLI inputs"
    if group == "chainsaw.kyverno.io":
        return "Chainsaw tests"
    if kind == "PolicyException":
        return "PolicyExceptions"
    if kind == "Kustomization" or group == "kustomize.config.k8s.io":
        return "kustomizations"
    if kind == "CustomResourceDefinition":
        return "CRDs"
    if not api_version and not kind:
        return _by_name(file) or OTHER_FILES
    return "Kubernetes resources"


def _by_name(file: Path) -> str | None:
    name = file.name.lower()
    if name.startswith(("artifacthub-", "artifact-hub.")):
        return "Artifact Hub metadata"
    if name in ("kustomization.yaml", "kustomization.yml"):
        return "kustomizations"
    if name in ("chart.yaml", "values.yaml", "values.yml") and (file.parent / "templates").is_dir():
        return "Helm chart files"
    return None


def _is_template(file: Path) -> bool:
    """Whether the file's first MiB has ``{{``: a Helm (or other Go) template's actions."""
    try:
        with file.open("rb") as stream:
            return b"{{" in stream.read(1 << 20)
    except OSError:
        return False


_POLICY_MARKERS = (b"kyverno.io", b"ValidatingPolicy", b"ClusterPolicy", b"admissionregistration.k8s.io")
_OLD_SYNTAX = {
    "kind": "old kyverno-json syntax: the kind is now ValidatingPolicy",
    "validate": "old kyverno-json syntax: write match/assert directly under the rule, without 'validate:'",
}


def _holds_no_policy(file: Path) -> str | None:
    """What a file found in a directory holds when it cannot be a policy of any language (it never names
    one), for the skipped-files note; None when it may hold a policy. Read in chunks: a repository may
    hold a plan of gigabytes."""
    overlap = max(len(marker) for marker in _POLICY_MARKERS) - 1  # a marker split across two chunks
    tail = b""
    template = False
    try:
        with file.open("rb") as stream:
            while chunk := stream.read(1 << 20):
                data = tail + chunk
                if any(marker in data for marker in _POLICY_MARKERS):
                    return None
                template = template or b"{{" in data
                tail = data[-overlap:]
    except OSError:
        return None
    by_name = _by_name(file)
    if by_name:
        return by_name
    if template:
        return HELM_TEMPLATES
    return "Kubernetes resources" if file.suffix.lower() in (".yaml", ".yml") and _looks_like_resource(file) \
        else OTHER_FILES


def _looks_like_resource(file: Path) -> bool:
    try:
        with file.open("rb") as stream:
            head = stream.read(1 << 16)
    except OSError:
        return False
    return b"apiVersion:" in head and b"kind:" in head


def _with_hint(problem: Problem, document: Any) -> Problem:
    """`problem`, with a hint when it comes from kyverno-json's old syntax (blog posts still show it)."""
    if not isinstance(document, dict) or not problem.path:
        return problem
    last = problem.path[-1]
    if last == "validate" or (last == "kind" and document.get("kind") == "Policy"
                              and str(document.get("apiVersion", "")).startswith("json.kyverno.io/")):
        return problem.replace(message=f"{problem.message} ({_OLD_SYNTAX[str(last)]})")
    return problem


def lint(paths: Iterable[str | Path], exclude: Iterable[str] = ()) -> list[Problem]:
    """Every problem in the policy files and directories named, each located; policies of any language.

    Files found in a directory are read as `load_policy_set` reads them: those that hold no policy are
    skipped, with one NOTE problem (no location) counting them, and so are their other documents; a file
    named explicitly is always checked, every document of it.
    """
    return lint_files(paths, exclude)[0]


def lint_files(paths: Iterable[str | Path], exclude: Iterable[str] = (), *, exceptions: Iterable[str | Path] = (),
               expiring_days: int = 30) -> tuple[list[Problem], int]:
    """`lint`'s problems, and how many files it checked (files named, and files that hold a policy).

    PolicyExceptions found beside the policies, and those of the `exceptions` files, are checked against the
    policies found (`assertree.languages.kyverno.exceptions_lint`: the ones that exempt nothing, the expired,
    and those expiring within `expiring_days`)."""
    paths = list(paths)
    problems: list[Problem] = []
    known: list[Any] = []
    seen_names: dict[tuple, str] = {}
    together: dict[ModuleType, list[Document]] = {}  # documents of languages that also check them together
    skipped = _Skipped()
    try:
        found = find_policy_files(paths, Exclude.of(exclude))
    except AssertreeError as error:
        return [error.problem], 0
    _count_left_out(found, skipped)
    checked = 0
    for file in found.files:
        before = sum(skipped.files.values())
        for document in _policy_documents(file, file in found.named, skipped):
            if isinstance(document, Problem):
                problems.append(document)
                continue
            problems.extend(_lint_document(document, seen_names))
            known.append(document.value)
            language = language_of(document.value)
            if language is not None and hasattr(language, "lint_documents"):
                together.setdefault(language, []).append(document)
        checked += sum(skipped.files.values()) == before
    for language, documents in together.items():  # a binding naming a policy that is not there ...
        problems.extend(locate(problem, documents[position])
                        for position, problem in language.lint_documents([document.value for document in documents]))
    problems.extend(_lint_exceptions(paths, Exclude.of(exclude), list(exceptions), known, expiring_days))
    skipped.files.pop("PolicyExceptions", None)  # not skipped: checked just above
    note = skipped_note(skipped.files)
    if note:
        problems.append(Problem(note, severity=Severity.NOTE))
    return problems, checked


def exception_documents(paths: Iterable[str | Path], exclude: Exclude = NO_EXCLUDE) -> list[Document]:
    """The PolicyException documents (``kyverno.io`` and ``policies.kyverno.io``) in the policy files of
    `paths`, hidden folders and what `exclude` names left out, as for the policies. Files that cannot be read
    are reported where the policies are read."""
    from assertree.languages.kyverno.language import is_policy_exception

    found: list[Document] = []
    for file in policy_files(paths, exclude):
        try:
            documents = load_documents(file)
        except DocumentError:
            continue
        found.extend(document for document in documents if is_policy_exception(document.value))
    return found


def _lint_exceptions(paths: list[str | Path], exclude: Exclude, files: list[str | Path], policies: list[Any],
                     expiring_days: int) -> list[Problem]:
    """The problems of the PolicyExceptions beside the policies and in `files` (each named file must hold
    exceptions only)."""
    from assertree.languages.kyverno.exceptions_lint import known_policy, lint_exceptions
    from assertree.languages.kyverno.language import is_policy_exception

    problems: list[Problem] = []
    documents = exception_documents(paths, exclude)
    for file in policy_files(files):
        try:
            loaded = load_documents(file)
        except DocumentError as error:
            problems.append(error.problem)
            continue
        for document in loaded:
            if is_policy_exception(document.value):
                documents.append(document)
            else:
                problems.append(locate(Problem("not a PolicyException (kyverno.io or policies.kyverno.io)",
                                               path=("kind",)), document))
    if not documents:
        return problems
    known = [item for item in (known_policy(value) for value in policies if isinstance(value, dict)) if item]
    found = lint_exceptions([document.value for document in documents], known, expiring_days=expiring_days)
    problems.extend(locate(problem, documents[position]) for position, problem in found)
    return problems


def _lint_document(document: Document, seen_names: dict[tuple, str]) -> list[Problem]:
    """The problems of one policy document, and a warning when another policy has its kind and name."""
    language = language_of(document.value)
    assert language is not None  # `_policy_documents` gives policy documents only
    try:
        found = list(language.lint_document(document.value))
    except RecursionError:
        found = [Problem(TOO_DEEP)]
    if _has_no_rules(document.value) and not any(p.path[:2] == ("spec", "rules") for p in found):
        found.append(Problem(NO_RULES, path=("spec", "rules"), severity=Severity.WARNING))
    problems = [locate(_with_hint(problem, document.value), document) for problem in found]
    metadata = document.value.get("metadata") if isinstance(document.value, dict) else None
    name = metadata.get("name") if isinstance(metadata, dict) else None  # `metadata: 1` is the schema's to report
    if isinstance(name, str) and name:
        key = (document.value.get("kind"), name)
        if key in seen_names:
            problems.append(locate(Problem(f"another policy is also named {name!r} ({seen_names[key]})",
                                           path=("metadata", "name"), severity=Severity.WARNING), document))
        else:
            seen_names[key] = f"{document.path}:{document.line}"
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
