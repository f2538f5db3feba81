"""Checking an admission policy or binding document and reading it into the model.

Two checks, both with field paths. The packaged JSON Schema
(``schemas/admissionregistration.json``, the fields admissionregistration.k8s.io
defines for the four kinds in v1, v1beta1 and v1alpha1) finds unknown fields,
wrong types and unknown enum values. Then the rules the apiserver's validation
adds (pkg/apis/admissionregistration/validation): a policy matches something
and does something, names are unique, a paramRef names its params one way, a
binding's actions do not contradict each other. Each is an error, except where
the Kyverno CLI runs what the apiserver would refuse: a binding without
``validationActions`` (run as ``[Deny]``), a ``paramRef`` without
``parameterNotFoundAction`` (run as ``Allow``) and a MutatingAdmissionPolicy
without ``reinvocationPolicy`` (run as ``Never``) are warnings.

CEL text is checked when it is compiled (`compile`). `problems` lists
everything for ``assertree lint``; `read_document` stops at the first error.
"""

from __future__ import annotations

import re
from typing import Any

from assertree.errors import Problem, Severity
from assertree.languages.admission.model import (
    GROUP,
    MUTATING,
    VALIDATING,
    VERSIONS,
    AdmissionPolicy,
    AdmissionRule,
    AuditAnnotation,
    Binding,
    ParamRef,
)
from assertree.languages.kubernetes.expressions import Expression, FieldPath, Mutation, Validation
from assertree.languages.kubernetes.matching import MatchConstraints
from assertree.languages.schema_problems import schema_problems, type_and_actual

__all__ = ["SCHEMA_FILE", "ReadError", "problems", "read_binding", "read_document", "read_policy", "readable"]

SCHEMA_FILE = "admissionregistration.json"
_IDENTIFIER = re.compile(r"[_a-zA-Z][_a-zA-Z0-9]*")
_QUALIFIED_NAME = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")


class ReadError(ValueError):
    """The first problem found while reading: its message and field path."""

    def __init__(self, message: str, path: FieldPath) -> None:
        self.path = path
        super().__init__(message)


def _spec(document: dict) -> dict:
    spec = document.get("spec")
    return spec if isinstance(spec, dict) else {}


def _named_problems(items: list, path: FieldPath, *, identifiers: bool) -> list[Problem]:
    found = []
    seen: set[str] = set()
    for index, item in enumerate(items):
        name = item.get("name", "")
        at = (*path, index, "name")
        if name in seen:
            found.append(Problem(f"duplicate name {name!r}", path=at))
        seen.add(name)
        if identifiers and not _IDENTIFIER.fullmatch(name):
            found.append(Problem(f"{name!r} is not a valid CEL identifier (variables.{name} could not be read)",
                                 path=at))
        if not identifiers and (len(name) > 63 or not _QUALIFIED_NAME.fullmatch(name.rpartition("/")[2])):
            found.append(Problem(f"{name!r} is not a qualified name", path=at))
    return found


def _rule_problems(match: dict, path: FieldPath) -> list[Problem]:
    """The fields Kubernetes requires of a resource rule: without them the rule matches no request."""
    found = []
    for key in ("resourceRules", "excludeResourceRules"):
        for index, rule in enumerate(match.get(key) or []):
            for required in ("apiGroups", "apiVersions", "operations", "resources"):
                if not rule.get(required):
                    found.append(Problem(f"Kubernetes requires {required}; without it the rule matches no request",
                                         path=(*path, key, index, required), severity=Severity.WARNING))
    return found


def _param_ref_problems(param_ref: dict, path: FieldPath) -> list[Problem]:
    found = []
    if param_ref.get("name") and param_ref.get("selector") is not None:
        found.append(Problem("name and selector are mutually exclusive", path=(*path, "selector")))
    if not param_ref.get("name") and param_ref.get("selector") is None:
        found.append(Problem("one of name or selector must be given", path=path))
    if "parameterNotFoundAction" not in param_ref:
        found.append(Problem("Kubernetes requires parameterNotFoundAction (Allow or Deny); assertree runs it as Allow",
                             path=(*path, "parameterNotFoundAction"), severity=Severity.WARNING))
    return found


def _policy_problems(document: dict) -> list[Problem]:
    spec = _spec(document)
    at = ("spec",)
    found = []
    rules = (spec.get("matchConstraints") or {}).get("resourceRules")
    if not rules:
        found.append(Problem("required field is missing: a policy must match resources (Kubernetes refuses a policy "
                             "without resourceRules)", path=(*at, "matchConstraints", "resourceRules")))
    found.extend(_rule_problems(spec.get("matchConstraints") or {}, (*at, "matchConstraints")))
    found.extend(_named_problems(spec.get("matchConditions") or [], (*at, "matchConditions"), identifiers=False))
    found.extend(_named_problems(spec.get("variables") or [], (*at, "variables"), identifiers=True))
    param_kind = spec.get("paramKind")
    if param_kind is not None and not (param_kind.get("apiVersion") and param_kind.get("kind")):
        found.append(Problem("paramKind needs apiVersion and kind", path=(*at, "paramKind")))
    if document.get("kind") == VALIDATING:
        if not spec.get("validations") and not spec.get("auditAnnotations"):
            found.append(Problem("required field is missing: a ValidatingAdmissionPolicy needs validations or "
                                 "auditAnnotations", path=(*at, "validations")))
        keys: set[str] = set()
        for index, item in enumerate(spec.get("auditAnnotations") or []):
            key = item.get("key", "")
            if key in keys:
                found.append(Problem(f"duplicate key {key!r}", path=(*at, "auditAnnotations", index, "key")))
            keys.add(key)
    else:
        if not spec.get("mutations"):
            found.append(Problem("required field is missing: a MutatingAdmissionPolicy needs mutations",
                                 path=(*at, "mutations")))
        for index, item in enumerate(spec.get("mutations") or []):
            wanted = "applyConfiguration" if item.get("patchType") == "ApplyConfiguration" else "jsonPatch"
            other = "jsonPatch" if wanted == "applyConfiguration" else "applyConfiguration"
            if wanted not in item:
                found.append(Problem(f"required field is missing: patchType {item.get('patchType')} needs {wanted}",
                                     path=(*at, "mutations", index, wanted)))
            if other in item:
                found.append(Problem(f"{other} does not go with patchType {item.get('patchType')}",
                                     path=(*at, "mutations", index, other)))
        if "reinvocationPolicy" not in spec:
            found.append(Problem("Kubernetes requires reinvocationPolicy (Never or IfNeeded); assertree runs it as "
                                 "Never", path=(*at, "reinvocationPolicy"), severity=Severity.WARNING))
    return found


def _binding_problems(document: dict) -> list[Problem]:
    spec = _spec(document)
    found = []
    if isinstance(spec.get("paramRef"), dict):
        found.extend(_param_ref_problems(spec["paramRef"], ("spec", "paramRef")))
    found.extend(_rule_problems(spec.get("matchResources") or {}, ("spec", "matchResources")))
    if document.get("kind") == f"{VALIDATING}Binding":
        actions = spec.get("validationActions")
        if not actions:
            found.append(Problem("Kubernetes requires validationActions (Deny, Warn, Audit); assertree runs the "
                                 "binding as [Deny], as the Kyverno CLI does", path=("spec", "validationActions"),
                                 severity=Severity.WARNING))
        else:
            if len(set(actions)) != len(actions):
                found.append(Problem("validationActions must not repeat an action", path=("spec", "validationActions")))
            if {"Deny", "Warn"} <= set(actions):
                found.append(Problem("Deny and Warn may not be used together (a denied request has no warnings)",
                                     path=("spec", "validationActions")))
    return found


def readable(document: Any) -> bool:
    """Whether the schema accepts `document`, so that reading it cannot fail on its structure."""
    return not schema_problems(SCHEMA_FILE, document, type_wording=type_and_actual)


def problems(document: Any) -> list[Problem]:
    """Every problem of `document`: the schema's, then the apiserver's rules (some of them warnings)."""
    found = schema_problems(SCHEMA_FILE, document, type_wording=type_and_actual)
    if not isinstance(document, dict):
        return found
    api_version = document.get("apiVersion")
    if isinstance(api_version, str) and api_version.partition("/")[0] == GROUP \
            and api_version.partition("/")[2] not in VERSIONS:
        found.insert(0, Problem(f"unsupported apiVersion {api_version!r} (expected {GROUP}/{'|'.join(VERSIONS)})",
                                path=("apiVersion",)))
    if any(problem.severity == Severity.ERROR for problem in found):
        return found
    kind = document.get("kind")
    return found + (_policy_problems(document) if kind in (VALIDATING, MUTATING) else _binding_problems(document))


def _first_error(document: Any) -> None:
    for problem in problems(document):
        if problem.severity == Severity.ERROR:
            raise ReadError(problem.message, problem.path)


def _labels(metadata: dict, key: str) -> dict[str, str]:
    return {str(k): str(v) for k, v in (metadata.get(key) or {}).items()}


def read_policy(document: dict, *, source: str | None = None, index: int | None = None,
                line: int | None = None, checked: bool = False) -> AdmissionPolicy:
    """The policy `document` says (its bindings are attached later); ReadError at the first problem.

    `checked`: the document has passed `problems` already (skip the checks).
    """
    if not checked:
        _first_error(document)
    spec = document["spec"]
    metadata = document["metadata"]
    param_kind = spec.get("paramKind")
    mutations = tuple(
        Mutation(item["patchType"], item[key]["expression"], ("spec", "mutations", position, key, "expression"))
        for position, item in enumerate(spec.get("mutations") or [])
        for key in ("applyConfiguration" if item["patchType"] == "ApplyConfiguration" else "jsonPatch",))
    policy = AdmissionPolicy(
        name=metadata["name"],
        kind=document["kind"],
        api_version=document["apiVersion"],
        document=document,
        match=MatchConstraints.read(spec["matchConstraints"]) if spec.get("matchConstraints") else None,
        param_kind=(param_kind["apiVersion"], param_kind["kind"]) if param_kind else None,
        match_conditions=tuple(Expression(item["name"], item["expression"],
                                          ("spec", "matchConditions", position, "expression"))
                               for position, item in enumerate(spec.get("matchConditions") or [])),
        variables=tuple(Expression(item["name"], item["expression"], ("spec", "variables", position, "expression"))
                        for position, item in enumerate(spec.get("variables") or [])),
        validations=tuple(Validation(item["expression"], ("spec", "validations", position, "expression"),
                                     item.get("message") or "", item.get("messageExpression") or None,
                                     item.get("reason"))
                          for position, item in enumerate(spec.get("validations") or [])),
        audit_annotations=tuple(AuditAnnotation(item["key"], item["valueExpression"],
                                                ("spec", "auditAnnotations", position, "valueExpression"))
                                for position, item in enumerate(spec.get("auditAnnotations") or [])),
        mutations=mutations,
        failure_policy=spec.get("failurePolicy") or "Fail",
        reinvocation_policy=spec.get("reinvocationPolicy") or "Never",
        source=source, document_index=index, line=line,
        annotations=_labels(metadata, "annotations"), labels=_labels(metadata, "labels"),
    )
    policy.rules = [AdmissionRule(policy.name, spec)]
    return policy


def read_binding(document: dict, *, source: str | None = None, line: int | None = None,
                 checked: bool = False) -> Binding:
    """The binding `document` says; ReadError at the first problem."""
    if not checked:
        _first_error(document)
    spec = document["spec"]
    param_ref = spec.get("paramRef")
    return Binding(
        name=document["metadata"]["name"],
        kind=document["kind"],
        policy_name=spec["policyName"],
        document=document,
        param_ref=ParamRef(param_ref.get("name") or "", param_ref.get("namespace") or "", param_ref.get("selector"),
                           param_ref.get("parameterNotFoundAction")) if isinstance(param_ref, dict) else None,
        match=MatchConstraints.read(spec["matchResources"]) if spec.get("matchResources") else None,
        actions=tuple(spec.get("validationActions") or ("Deny",)),
        source=source, line=line,
    )


def read_document(document: Any, *, source: str | None = None, index: int | None = None,
                  line: int | None = None) -> AdmissionPolicy | Binding:
    """A policy or a binding; ReadError at the first problem."""
    _first_error(document)
    if document["kind"] in (VALIDATING, MUTATING):
        return read_policy(document, source=source, index=index, line=line, checked=True)
    return read_binding(document, source=source, line=line, checked=True)
