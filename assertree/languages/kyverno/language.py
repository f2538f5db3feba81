"""Recognising and loading ``kyverno.io`` documents: ClusterPolicy/Policy, CleanupPolicy/ClusterCleanupPolicy
(`cleanup`), and PolicyException.

`compile_document` is the one entry point from data to a compiled policy: it
checks the structure (`schema`), builds the model (with autogen rules) and
compiles every rule, so a bad policy fails at load time with its file, line and
field path; a rule assertree cannot run offline is left out with a warning
naming its field (``policy.refused``), and the others run. PolicyException
documents are not policies: `load_kyverno_documents` returns them apart, for
`ScanContext.exceptions`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assertree.errors import PolicyError, Problem

if TYPE_CHECKING:
    from assertree.languages.checked_files import CheckedFile
    from assertree.languages.kyverno.cleanup import CompiledCleanupPolicy
    from assertree.languages.kyverno.compile import CompiledKyvernoPolicy

GROUP = "kyverno.io"
DESCRIPTION = f"{GROUP} ClusterPolicy, Policy, CleanupPolicy, ClusterCleanupPolicy"
POLICY_KINDS = ("ClusterPolicy", "Policy")
CLEANUP_KINDS = ("CleanupPolicy", "ClusterCleanupPolicy")
POLICY_VERSIONS = ("kyverno.io/v1", "kyverno.io/v2beta1")
EXCEPTION_KIND = "PolicyException"


def is_kyverno_policy(document: Any) -> bool:
    """Whether `document` is a ``kyverno.io`` ClusterPolicy or Policy (any version), or a cleanup policy."""
    return (isinstance(document, dict) and document.get("kind") in (*POLICY_KINDS, *CLEANUP_KINDS)
            and str(document.get("apiVersion", "")).split("/", 1)[0] == GROUP)


def is_policy_exception(document: Any) -> bool:
    """Whether `document` is a Kyverno PolicyException: ``kyverno.io`` (v2, v2beta1, v2alpha1) for
    ClusterPolicy/Policy, or ``policies.kyverno.io`` (v1alpha1, v1beta1, v1) for the CEL kinds."""
    return (isinstance(document, dict) and document.get("kind") == EXCEPTION_KIND
            and str(document.get("apiVersion", "")).split("/", 1)[0] in (GROUP, f"policies.{GROUP}"))



def compile_document(document: dict, *, source: str | None = None, index: int | None = None,
                     line: int | None = None) -> CompiledKyvernoPolicy | CompiledCleanupPolicy:
    """Check, model and compile one ClusterPolicy/Policy; raises PolicyError with the field path.

    Returns a `CompiledKyvernoPolicy` (see `assertree.languages.kyverno.compile`). `source`, `index`
    and `line` say where the document was read; errors carry only the field path, and the caller
    (which knows the file) locates them, as for every language (`assertree.languages.load`).
    """
    return _compile(document, source, index, line)


def lint_document(document: Any) -> Iterator[Problem]:
    """Every structural problem of one document, else the first compile problem, else the warnings: one for
    each rule that is not run offline, and podSecurity's (no location yet)."""
    from assertree.languages.kyverno.schema import problems

    found = problems(document) if is_kyverno_policy(document) and document["kind"] in POLICY_KINDS else []
    if found:
        yield from found
        return
    try:
        compiled = _compile(document, None, None, None)
    except PolicyError as error:
        yield error.problem
        return
    yield from (item.problem for item in getattr(compiled.policy, "refused", ()))
    if document["kind"] not in POLICY_KINDS:
        return
    from assertree.languages.kyverno.pod_security.rule import lint_pod_security

    for position, rule in enumerate(document["spec"]["rules"]):
        validate = rule.get("validate")
        if isinstance(validate, dict) and isinstance(validate.get("podSecurity"), dict):
            yield from lint_pod_security(validate["podSecurity"], ("spec", "rules", position, "validate",
                                                                   "podSecurity"))


def _compile(document: dict, source: str | None, index: int | None,
             line: int | None) -> CompiledKyvernoPolicy | CompiledCleanupPolicy:
    """`compile_document`, raising errors that carry only the field path (the caller locates them)."""
    from assertree.languages.kyverno.compile import compile_policy
    from assertree.languages.kyverno.schema import problems

    if is_policy_exception(document):
        raise PolicyError("a PolicyException is not a policy: pass its file with --exceptions (scan, apply) or "
                          "list it under exceptions: in a kyverno-test.yaml", path=("kind",))
    if not is_kyverno_policy(document):
        raise PolicyError("not a kyverno.io ClusterPolicy or Policy", path=("kind",))
    if document.get("kind") in CLEANUP_KINDS:
        from assertree.languages.kyverno.cleanup import compile_cleanup

        return compile_cleanup(document, source=source, index=index, line=line)
    if document.get("apiVersion") not in POLICY_VERSIONS:
        raise PolicyError(f"must be one of: {', '.join(POLICY_VERSIONS)}", path=("apiVersion",))
    found = problems(document)
    if found:
        first = found[0]
        more = f" (and {len(found) - 1} more problem{'s' if len(found) > 2 else ''})" if len(found) > 1 else ""
        raise PolicyError(f"{first.message}{more}", path=first.path)
    return compile_policy(document, source=source, index=index, line=line)


@dataclass
class KyvernoDocuments:
    """What a set of files holds for Kyverno: compiled policies, exception documents, other documents."""

    policies: list = field(default_factory=list)  # CompiledKyvernoPolicy
    exceptions: list[dict] = field(default_factory=list)
    others: list = field(default_factory=list)  # assertree.documents.reader.Document of any other kind


def policy_file(path: str | Path) -> CheckedFile:
    """The documents (`assertree.documents.reader.Document`) of a policy file, from the cache of checked
    files when its bytes were read before (`assertree.languages.checked_files`: then no YAML parse, and
    no schema validation inside `CheckedFile.checked`); PolicyError (located) when the file is not YAML or
    JSON. The caller calls `CheckedFile.remember` once every document compiled."""
    from assertree.errors import AssertreeError
    from assertree.languages.checked_files import read_checked

    try:
        return read_checked(path)
    except AssertreeError as error:
        raise PolicyError(error.message, source=error.source or str(path), line=error.line,
                          column=error.column) from None


def load_kyverno_documents(paths: Iterable[str | Path]) -> KyvernoDocuments:
    """Every ClusterPolicy/Policy (compiled) and PolicyException in the files at `paths`.

    Errors name the file, line, column and field path of the first problem.
    """
    found = KyvernoDocuments()
    for path in paths:
        read = policy_file(path)
        compiled = 0
        with read.checked():
            for document in read.documents:
                value = document.value
                if is_kyverno_policy(value):
                    from assertree.languages.base import locate_refusals

                    try:
                        policy = _compile(value, document.path, document.index, document.line)
                    except PolicyError as error:
                        line, column = document.locate(error.path) if error.path else (document.line, None)
                        raise error.located(source=document.path, line=line, column=column) from None
                    found.policies.append(locate_refusals(policy, document))
                    compiled += 1
                elif is_policy_exception(value):
                    found.exceptions.append(value)
                else:
                    found.others.append(document)
        if compiled == len(read.documents):  # every document compiled here (others are checked elsewhere)
            read.remember()
    return found
