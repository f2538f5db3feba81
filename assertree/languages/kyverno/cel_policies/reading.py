"""Checking a ``policies.kyverno.io`` document and reading it into the model, every problem with a field path.

Only the shape evaluation depends on is checked here (types of the fields it
reads, required fields, known enum values); CEL text is checked when it is
compiled (`compile`). `problems` collects everything for ``assertree lint``;
`read_policy` stops at the first problem.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from assertree.errors import Problem, Severity
from assertree.languages.kubernetes.expressions import Expression, FieldPath, Mutation, Validation
from assertree.languages.kubernetes.matching import MatchConstraints, ResourceRule
from assertree.languages.kyverno.cel_policies.model import (
    DELETING_KINDS,
    GENERATING_KINDS,
    GROUP,
    IMAGE_KINDS,
    KINDS,
    MUTATING_KINDS,
    VERSIONS,
    CelPolicy,
    Generation,
    ImageReference,
    PolicySpec,
)

__all__ = ["ReadError", "problems", "read_policy", "read_spec"]

ACTIONS = ("Deny", "Audit", "Warn")
VALIDATING_NEEDS = frozenset({"ValidatingPolicy", "NamespacedValidatingPolicy", *IMAGE_KINDS})
PATCH_TYPES = ("ApplyConfiguration", "JSONPatch")
OPERATIONS = ("CREATE", "UPDATE", "DELETE", "CONNECT", "*")
MODES = ("Kubernetes", "JSON", "HTTP", "Envoy")  # HTTP and Envoy: authorization policies (`authz`)


class ReadError(ValueError):
    """The first problem found while reading: its message and field path."""

    def __init__(self, message: str, path: FieldPath) -> None:
        self.path = path
        super().__init__(message)


def _fail(message: str, path: FieldPath) -> ReadError:
    return ReadError(message, path)


def _mapping(value: Any, path: FieldPath, *, required: bool = False) -> dict:
    if value is None:
        if required:
            raise _fail("required field is missing", path)
        return {}
    if not isinstance(value, dict):
        raise _fail(f"expected a mapping, found {type(value).__name__}", path)
    return value


def _list(value: Any, path: FieldPath) -> list:
    if value is None:
        return []
    if not isinstance(value, list):
        raise _fail(f"expected a list, found {type(value).__name__}", path)
    return value


def _text(value: Any, path: FieldPath, *, required: bool = False) -> str:
    if value is None:
        if required:
            raise _fail("required field is missing", path)
        return ""
    if not isinstance(value, str):
        raise _fail(f"expected a string, found {type(value).__name__}", path)
    if required and not value.strip():
        raise _fail("must not be empty", path)
    return value


def _strings(value: Any, path: FieldPath) -> tuple[str, ...]:
    """A list of strings; "" is a value (the core API group is ``""``)."""
    out = []
    for i, item in enumerate(_list(value, path)):
        if not isinstance(item, str):
            raise _fail(f"expected a string, found {type(item).__name__}", (*path, i))
        out.append(item)
    return tuple(out)


def _resource_rule(value: Any, path: FieldPath) -> ResourceRule:
    data = _mapping(value, path, required=True)
    operations = _strings(data.get("operations"), (*path, "operations"))
    for i, operation in enumerate(operations):
        if operation not in OPERATIONS:
            raise _fail(f"unknown operation {operation!r} (expected one of {', '.join(OPERATIONS)})",
                        (*path, "operations", i))
    return ResourceRule(
        api_groups=_strings(data.get("apiGroups"), (*path, "apiGroups")),
        api_versions=_strings(data.get("apiVersions"), (*path, "apiVersions")),
        resources=_strings(data.get("resources"), (*path, "resources")),
        operations=operations,
        resource_names=_strings(data.get("resourceNames"), (*path, "resourceNames")),
        scope=_text(data.get("scope"), (*path, "scope")) or "*",
    )


def _selector(value: Any, path: FieldPath) -> dict | None:
    if value is None:
        return None
    data = _mapping(value, path)
    for i, item in enumerate(_list(data.get("matchExpressions"), (*path, "matchExpressions"))):
        entry = _mapping(item, (*path, "matchExpressions", i), required=True)
        operator = entry.get("operator")
        if operator not in ("In", "NotIn", "Exists", "DoesNotExist"):
            raise _fail(f"unknown selector operator {operator!r}", (*path, "matchExpressions", i, "operator"))
    _mapping(data.get("matchLabels"), (*path, "matchLabels"))
    return data


def _match(value: Any, path: FieldPath) -> MatchConstraints | None:
    if value is None:
        return None
    data = _mapping(value, path)
    return MatchConstraints(
        resource_rules=tuple(_resource_rule(item, (*path, "resourceRules", i))
                             for i, item in enumerate(_list(data.get("resourceRules"), (*path, "resourceRules")))),
        exclude_resource_rules=tuple(
            _resource_rule(item, (*path, "excludeResourceRules", i))
            for i, item in enumerate(_list(data.get("excludeResourceRules"), (*path, "excludeResourceRules")))),
        namespace_selector=_selector(data.get("namespaceSelector"), (*path, "namespaceSelector")),
        object_selector=_selector(data.get("objectSelector"), (*path, "objectSelector")),
        match_policy="Exact",  # Kyverno's matcher (pkg/cel/matching) does no equivalent-resource matching
    )


def _named(value: Any, path: FieldPath) -> tuple[Expression, ...]:
    out = []
    seen: set[str] = set()
    for i, item in enumerate(_list(value, path)):
        entry = _mapping(item, (*path, i), required=True)
        name = _text(entry.get("name"), (*path, i, "name"), required=True)
        if name in seen:
            raise _fail(f"duplicate name {name!r}", (*path, i, "name"))
        seen.add(name)
        out.append(Expression(name, _text(entry.get("expression"), (*path, i, "expression"), required=True),
                              (*path, i, "expression")))
    return tuple(out)


def _validations(value: Any, path: FieldPath) -> tuple[Validation, ...]:
    out = []
    for i, item in enumerate(_list(value, path)):
        entry = _mapping(item, (*path, i), required=True)
        message_expression = entry.get("messageExpression")
        out.append(Validation(
            expression=_text(entry.get("expression"), (*path, i, "expression"), required=True),
            path=(*path, i, "expression"),
            message=_text(entry.get("message"), (*path, i, "message")),
            message_expression=_text(message_expression, (*path, i, "messageExpression")) or None,
            reason=_text(entry.get("reason"), (*path, i, "reason")) or None,
        ))
    return tuple(out)


def _mutations(value: Any, path: FieldPath) -> tuple[Mutation, ...]:
    out = []
    for i, item in enumerate(_list(value, path)):
        entry = _mapping(item, (*path, i), required=True)
        patch_type = _text(entry.get("patchType"), (*path, i, "patchType"), required=True)
        if patch_type not in PATCH_TYPES:
            raise _fail(f"unknown patchType {patch_type!r} (expected {' or '.join(PATCH_TYPES)})",
                        (*path, i, "patchType"))
        key = "applyConfiguration" if patch_type == "ApplyConfiguration" else "jsonPatch"
        body = _mapping(entry.get(key), (*path, i, key), required=True)
        out.append(Mutation(patch_type, _text(body.get("expression"), (*path, i, key, "expression"), required=True),
                            (*path, i, key, "expression")))
    return tuple(out)


def _generations(value: Any, path: FieldPath) -> tuple[Generation, ...]:
    out = []
    for i, item in enumerate(_list(value, path)):
        entry = _mapping(item, (*path, i), required=True)
        expression, template = entry.get("expression"), entry.get("template")
        if expression is not None and template is not None:
            raise _fail("only one of expression or template may be set", (*path, i))
        if template is not None:
            body = _mapping(template, (*path, i, "template"), required=True)
            mode = _text(body.get("interpolate"), (*path, i, "template", "interpolate")) or "none"
            if mode not in ("none", "cel"):
                raise _fail(f"unknown interpolate mode {mode!r} (expected none or cel)",
                            (*path, i, "template", "interpolate"))
            out.append(Generation((*path, i, "template", "value"),
                                  template=_text(body.get("value"), (*path, i, "template", "value"), required=True),
                                  interpolate=mode == "cel"))
            continue
        out.append(Generation((*path, i, "expression"),
                              expression=_text(expression, (*path, i, "expression"), required=True)))
    return tuple(out)


def _image_references(value: Any, path: FieldPath) -> tuple[ImageReference, ...]:
    out = []
    for i, item in enumerate(_list(value, path)):
        entry = _mapping(item, (*path, i), required=True)
        glob = _text(entry.get("glob"), (*path, i, "glob")) or None
        expression = _text(entry.get("expression"), (*path, i, "expression")) or None
        if (glob is None) == (expression is None):
            raise _fail("exactly one of glob or expression must be set", (*path, i))
        out.append(ImageReference((*path, i, "expression" if expression else "glob"), glob, expression))
    return tuple(out)


def _flag(value: Any, path: FieldPath) -> bool:
    if value is None:
        return False
    if not isinstance(value, bool):
        raise _fail(f"expected a boolean, found {type(value).__name__}", path)
    return value


def _kind_parts(data: dict, kind: str, path: FieldPath) -> dict[str, Any]:
    """The parts of the spec only one kind has, checked as that kind requires them."""
    parts: dict[str, Any] = {}
    if kind in GENERATING_KINDS:
        parts["generations"] = _generations(data.get("generate"), (*path, "generate"))
        if not parts["generations"]:
            raise _fail("a GeneratingPolicy needs at least one generate entry", (*path, "generate"))
    elif kind in DELETING_KINDS:
        parts["conditions"] = _named(data.get("conditions"), (*path, "conditions"))
    elif kind in IMAGE_KINDS:
        parts["image_references"] = _image_references(data.get("matchImageReferences"),
                                                      (*path, "matchImageReferences"))
        parts["image_extractors"] = _named(data.get("images"), (*path, "images"))
        config = _mapping(data.get("validationConfigurations"), (*path, "validationConfigurations"))
        parts["verify_digest"] = _flag(config.get("verifyDigest"), (*path, "validationConfigurations", "verifyDigest"))
        parts["required"] = _flag(config.get("required"), (*path, "validationConfigurations", "required"))
    elif kind in MUTATING_KINDS:
        evaluation = _mapping(data.get("evaluation"), (*path, "evaluation"))
        existing = _mapping(evaluation.get("mutateExisting"), (*path, "evaluation", "mutateExisting"))
        parts["mutate_existing"] = _flag(existing.get("enabled"), (*path, "evaluation", "mutateExisting", "enabled"))
        target = _mapping(data.get("targetMatchConstraints"), (*path, "targetMatchConstraints"))
        if target.get("expression") is not None:
            parts["target_expression"] = Expression(
                "targetMatchConstraints", _text(target["expression"], (*path, "targetMatchConstraints", "expression"),
                                                required=True), (*path, "targetMatchConstraints", "expression"))
        if target.get("resourceRules"):
            parts["target_match"] = _match({key: value for key, value in target.items() if key != "expression"},
                                           (*path, "targetMatchConstraints"))
    return parts


def read_spec(spec: Any, kind: str, path: FieldPath = ("spec",)) -> PolicySpec:
    """The evaluated parts of `spec`; ReadError at the first problem."""
    data = _mapping(spec, path, required=True)
    evaluation = _mapping(data.get("evaluation"), (*path, "evaluation"))
    mode = _text(evaluation.get("mode"), (*path, "evaluation", "mode")) or "Kubernetes"
    if mode not in MODES or (mode in ("HTTP", "Envoy") and kind in MUTATING_KINDS):
        expected = "Kubernetes or JSON" if kind in MUTATING_KINDS else ", ".join(MODES)
        raise _fail(f"unknown evaluation mode {mode!r} (expected {expected})", (*path, "evaluation", "mode"))
    actions = _strings(data.get("validationActions"), (*path, "validationActions")) or ("Deny",)
    for i, action in enumerate(actions):
        if action not in ACTIONS:
            raise _fail(f"unknown validation action {action!r} (expected one of {', '.join(ACTIONS)})",
                        (*path, "validationActions", i))
    failure_policy = _text(data.get("failurePolicy"), (*path, "failurePolicy")) or "Fail"
    if failure_policy not in ("Fail", "Ignore"):
        raise _fail(f"unknown failurePolicy {failure_policy!r} (expected Fail or Ignore)", (*path, "failurePolicy"))
    match = _match(data.get("matchConstraints"), (*path, "matchConstraints"))
    if match is None and mode == "Kubernetes":
        raise _fail("required field is missing (a Kubernetes-mode policy matches nothing without it)",
                    (*path, "matchConstraints"))
    validations = _validations(data.get("validations"), (*path, "validations"))
    mutations = _mutations(data.get("mutations"), (*path, "mutations"))
    if kind in MUTATING_KINDS and not mutations:
        raise _fail("a MutatingPolicy needs at least one mutation", (*path, "mutations"))
    if kind in VALIDATING_NEEDS and not validations:
        raise _fail(f"a{'n' if kind[0] in 'AEIOU' else ''} {kind} needs at least one validation",
                    (*path, "validations"))
    audit = _list(data.get("auditAnnotations"), (*path, "auditAnnotations"))
    return PolicySpec(
        match=match,
        match_conditions=_named(data.get("matchConditions"), (*path, "matchConditions")),
        variables=_named(data.get("variables"), (*path, "variables")),
        validations=validations,
        mutations=mutations,
        validation_actions=actions,
        failure_policy=failure_policy,
        mode=mode,
        audit_annotations=tuple(str((item or {}).get("key", "")) for item in audit if isinstance(item, dict)),
        **_kind_parts(data, kind, path),
    )


def read_policy(document: Any, *, source: str | None = None, index: int | None = None,
                line: int | None = None) -> CelPolicy:
    """The policy `document` says (no rules yet: `autogen` adds them); ReadError at the first problem."""
    data = _mapping(document, (), required=True)
    api_version = _text(data.get("apiVersion"), ("apiVersion",), required=True)
    group, _, version = api_version.partition("/")
    if group != GROUP or version not in VERSIONS:
        raise _fail(f"unsupported apiVersion {api_version!r} (expected {GROUP}/{'|'.join(sorted(VERSIONS))})",
                    ("apiVersion",))
    kind = _text(data.get("kind"), ("kind",), required=True)
    if kind not in KINDS:
        raise _fail(f"unsupported kind {kind!r} (assertree reads {', '.join(sorted(KINDS))})", ("kind",))
    metadata = _mapping(data.get("metadata"), ("metadata",), required=True)
    name = _text(metadata.get("name"), ("metadata", "name"), required=True)
    annotations = _mapping(metadata.get("annotations"), ("metadata", "annotations"))
    labels = _mapping(metadata.get("labels"), ("metadata", "labels"))
    spec = read_spec(data.get("spec"), kind)
    return CelPolicy(
        name=name, kind=kind, api_version=api_version, document=data, spec=spec,
        namespace=metadata.get("namespace") if isinstance(metadata.get("namespace"), str) else None,
        source=source, document_index=index, line=line,
        annotations={str(k): str(v) for k, v in annotations.items()},
        labels={str(k): str(v) for k, v in labels.items()},
    )


def problems(document: Any) -> Iterator[Problem]:
    """The reading problem of `document` (reading stops at the first), and notes on what is not evaluated."""
    try:
        policy = read_policy(document)
    except ReadError as error:
        yield Problem(str(error), path=error.path)
        return
    if policy.spec.audit_annotations:
        yield Problem("auditAnnotations are not evaluated offline (they only annotate audit events)",
                      path=("spec", "auditAnnotations"), severity=Severity.NOTE)
