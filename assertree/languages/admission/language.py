"""Kubernetes' admission policies (``admissionregistration.k8s.io``) as a language the engine runs.

Four kinds: ValidatingAdmissionPolicy and MutatingAdmissionPolicy compile to
policies; their bindings compile to `Binding`s, which `link` attaches to the
policies they name once every document of a load is compiled (the loader
calls it). `lint_document` checks one document (schema, the apiserver's
rules, CEL); `lint_documents` adds what only the documents together tell:
a binding naming a policy that is not there, a policy whose ``paramKind`` no
binding gives params for, a ``paramRef`` for a policy without ``paramKind``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from assertree.errors import Location, PolicyError, Problem, Severity
from assertree.languages.admission.compile import CompiledAdmissionPolicy, compile_policy, compile_spec
from assertree.languages.admission.linking import link as link_bindings
from assertree.languages.admission.linking import orphan_message
from assertree.languages.admission.model import GROUP, KINDS, MUTATING, VALIDATING, Binding
from assertree.languages.admission.reading import ReadError, problems, read_document, read_policy, readable

__all__ = ["DESCRIPTION", "GROUP", "compile_document", "link", "lint_document", "lint_documents",
           "unbound", "without_params"]

DESCRIPTION = f"{GROUP} {VALIDATING}, {MUTATING} and their bindings"


def compile_document(document: Any, *, source: str | None = None, index: int | None = None,
                     line: int | None = None) -> CompiledAdmissionPolicy | Binding:
    """A compiled policy, or a binding to `link`; PolicyError (with a field path) at the first problem."""
    try:
        read = read_document(document, source=source, index=index, line=line)
    except ReadError as error:
        raise PolicyError(str(error), path=error.path) from None
    if isinstance(read, Binding):
        return read
    return compile_policy(read)


def link(items: Iterable[Any]) -> tuple[list[Any], list[Problem]]:
    """`items` with each binding attached to its policy (`linking`), and a located problem for each binding
    whose policy is not among them."""
    linked, orphans = link_bindings(items)
    return linked, [Problem(orphan_message(binding), Location(binding.source, binding.line), ("spec", "policyName"))
                    for binding in orphans]


def lint_document(document: Any) -> Iterator[Problem]:
    """Every problem of one document, every expression that does not compile included (no location yet: the
    loader adds the file and line)."""
    yield from problems(document)
    if not readable(document) or document.get("kind") not in (VALIDATING, MUTATING):
        return
    compiled: list[Problem] = []
    compile_spec(read_policy(document, checked=True), compiled)
    yield from compiled


def _name(document: dict) -> Any:
    """``metadata.name``, or None (also where ``metadata`` is not a map: the schema's problem to report)."""
    metadata = document.get("metadata")
    return metadata.get("name") if isinstance(metadata, dict) else None


def _spec(document: Any) -> dict:
    spec = document.get("spec") if isinstance(document, dict) else None
    return spec if isinstance(spec, dict) else {}


def lint_documents(documents: Iterable[Any]) -> Iterator[tuple[int, Problem]]:
    """What only the documents together tell, as (position of the document in `documents`, problem)."""
    documents = list(documents)
    policies: dict[tuple[str, str], int] = {}
    bound: dict[tuple[str, str], list[dict]] = {}
    for position, document in enumerate(documents):
        if not isinstance(document, dict) or document.get("kind") not in KINDS:
            continue
        name = _name(document)
        if document["kind"] in (VALIDATING, MUTATING):
            policies[(document["kind"], str(name))] = position
    for position, document in enumerate(documents):
        if not isinstance(document, dict) or str(document.get("kind")) not in (f"{VALIDATING}Binding",
                                                                               f"{MUTATING}Binding"):
            continue
        spec = _spec(document)
        key = (str(document["kind"]).removesuffix("Binding"), str(spec.get("policyName")))
        if key not in policies:
            binding = Binding(str(_name(document)), str(document["kind"]), key[1], document)
            yield position, Problem(orphan_message(binding), path=("spec", "policyName"))
        elif spec.get("paramRef") and not _spec(documents[policies[key]]).get("paramKind"):
            yield position, Problem("the policy has no paramKind: Kubernetes ignores this paramRef",
                                    path=("spec", "paramRef"), severity=Severity.WARNING)
        bound.setdefault(key, []).append(spec)
    for key, position in policies.items():
        if not _spec(documents[position]).get("paramKind"):
            continue
        given = [binding for binding in bound.get(key, []) if binding.get("paramRef")]
        if not given:
            yield position, Problem("the policy has a paramKind but no binding gives it params (paramRef): its "
                                    "expressions would see params as null", path=("spec", "paramKind"),
                                    severity=Severity.WARNING)


def unbound(policies: Iterable[Any]) -> list[Any]:
    """The admission policies among compiled `policies` that no binding names (Kubernetes would not run them)."""
    return [item.policy for item in policies if isinstance(item, CompiledAdmissionPolicy) and not item.policy.bindings]


def without_params(policies: Iterable[Any], params: Iterable[Any]) -> list[tuple[Any, Binding]]:
    """(policy, binding) for each binding whose ``paramRef`` can find nothing: no parameter resource of the
    policy's ``paramKind`` was given, so the policy never runs for it (or always refuses, with ``Deny``)."""
    given = {(str(param.get("apiVersion", "")).rpartition("/")[0], param.get("kind")) for param in params
             if isinstance(param, dict)}
    found: list[tuple[Any, Binding]] = []
    for item in policies:
        if not isinstance(item, CompiledAdmissionPolicy) or item.policy.param_kind is None:
            continue
        api_version, kind = item.policy.param_kind
        if (api_version.rpartition("/")[0], kind) not in given:
            found.extend((item.policy, binding) for binding in item.policy.bindings if binding.param_ref is not None)
    return found
