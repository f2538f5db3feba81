"""Checking a ``policies.kyverno.io`` document and reading it into the model, every problem with a field path.

Two checks. The packaged JSON Schema (``schemas/policies.kyverno.io.json``,
assertree's own description of the fields Kyverno's CRDs define for the ten
kinds in v1alpha1, v1beta1 and v1) finds unknown fields, wrong types, missing
required fields and unknown enum values, all of them at once
(`assertree.languages.schema_problems`, as for every language). Then the rules
a schema cannot say (`spec_problems`): names are unique, a Kubernetes-mode
policy has matchConstraints, a policy does something, a generate entry or an
image reference is one thing. CEL text is checked when it is compiled
(`compile`).

`problems` lists everything for ``assertree lint``; `read_policy` stops at the
first error. Building the model (`build_policy`) reads only what is well
formed and passes over the rest, so lint can still compile the expressions of
a document whose other fields are wrong; a document that passed both checks
loses nothing.
"""

from __future__ import annotations

from typing import Any

from assertree.errors import Problem, Severity
from assertree.languages.kubernetes.expressions import Expression, FieldPath, Mutation, Validation
from assertree.languages.kubernetes.matching import MatchConstraints, ResourceRule
from assertree.languages.kyverno.cel_policies.model import (
    DELETING_KINDS,
    GENERATING_KINDS,
    IMAGE_KINDS,
    MUTATING_KINDS,
    CelPolicy,
    Generation,
    ImageReference,
    PolicySpec,
)
from assertree.languages.schema_problems import schema_problems, type_and_actual

__all__ = ["SCHEMA_FILE", "ReadError", "build_policy", "problems", "read_policy", "read_spec", "spec_problems"]

SCHEMA_FILE = "policies.kyverno.io.json"
ACTIONS = ("Deny", "Audit", "Warn")
VALIDATING_NEEDS = frozenset({"ValidatingPolicy", "NamespacedValidatingPolicy", *IMAGE_KINDS})
PATCH_BODIES = {"ApplyConfiguration": "applyConfiguration", "JSONPatch": "jsonPatch"}
NAMED_LISTS = ("matchConditions", "variables", "conditions", "images", "targetMatchConditions")


class ReadError(ValueError):
    """The first problem found while reading: its message and field path."""

    def __init__(self, message: str, path: FieldPath) -> None:
        self.path = path
        super().__init__(message)


def _map(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def _entries(value: Any) -> list[tuple[int, dict]]:
    """The mappings of a list, with their positions (what is not a mapping is the schema's to report)."""
    return [(i, item) for i, item in enumerate(value) if isinstance(item, dict)] if isinstance(value, list) else []


def _text(value: Any) -> str | None:
    """A non-empty string, else None."""
    return value if isinstance(value, str) and value else None


def _string(value: Any) -> str:
    """A string, else ""."""
    return value if isinstance(value, str) else ""


def _strings(value: Any) -> tuple[str, ...]:
    """The strings of a list; "" is a value (the core API group is ``""``)."""
    return tuple(item for item in value if isinstance(item, str)) if isinstance(value, list) else ()


def _rules(value: Any) -> tuple[ResourceRule, ...]:
    return tuple(ResourceRule(api_groups=_strings(rule.get("apiGroups")),
                              api_versions=_strings(rule.get("apiVersions")),
                              resources=_strings(rule.get("resources")),
                              operations=_strings(rule.get("operations")),
                              resource_names=_strings(rule.get("resourceNames")),
                              scope=_text(rule.get("scope")) or "*")
                 for _, rule in _entries(value))


def _match(value: Any) -> MatchConstraints | None:
    if not isinstance(value, dict):
        return None
    return MatchConstraints(
        resource_rules=_rules(value.get("resourceRules")),
        exclude_resource_rules=_rules(value.get("excludeResourceRules")),
        namespace_selector=value.get("namespaceSelector") if isinstance(value.get("namespaceSelector"), dict) else None,
        object_selector=value.get("objectSelector") if isinstance(value.get("objectSelector"), dict) else None,
        match_policy="Exact",  # Kyverno's matcher (pkg/cel/matching) does no equivalent-resource matching
    )


def _named(value: Any, path: FieldPath) -> tuple[Expression, ...]:
    return tuple(Expression(name, text, (*path, i, "expression")) for i, entry in _entries(value)
                 if (name := _text(entry.get("name"))) is not None
                 and (text := _text(entry.get("expression"))) is not None)


def _validations(value: Any, path: FieldPath) -> tuple[Validation, ...]:
    return tuple(Validation(expression=text, path=(*path, i, "expression"),
                            message=_string(entry.get("message")),
                            message_expression=_text(entry.get("messageExpression")),
                            reason=_text(entry.get("reason")))
                 for i, entry in _entries(value) if (text := _text(entry.get("expression"))) is not None)


def _mutations(value: Any, path: FieldPath) -> tuple[Mutation, ...]:
    out = []
    for i, entry in _entries(value):
        patch_type = _string(entry.get("patchType"))
        key = PATCH_BODIES.get(patch_type)
        text = _text(_map(entry.get(key)).get("expression")) if key else None
        if key and text is not None:
            out.append(Mutation(patch_type, text, (*path, i, key, "expression")))
    return tuple(out)


def _generations(value: Any, path: FieldPath) -> tuple[Generation, ...]:
    out = []
    for i, entry in _entries(value):
        template = entry.get("template")
        if isinstance(template, dict):
            text = _text(template.get("value"))
            if text is not None:
                out.append(Generation((*path, i, "template", "value"), template=text,
                                      interpolate=template.get("interpolate") == "cel"))
        elif (expression := _text(entry.get("expression"))) is not None:
            out.append(Generation((*path, i, "expression"), expression=expression))
    return tuple(out)


def _image_references(value: Any, path: FieldPath) -> tuple[ImageReference, ...]:
    out = []
    for i, entry in _entries(value):
        glob, expression = _text(entry.get("glob")), _text(entry.get("expression"))
        if (glob is None) != (expression is None):
            out.append(ImageReference((*path, i, "expression" if expression else "glob"), glob, expression))
    return tuple(out)


def _kind_parts(data: dict, kind: str, path: FieldPath) -> dict[str, Any]:
    """The parts of the spec only one kind has."""
    parts: dict[str, Any] = {}
    if kind in GENERATING_KINDS:
        parts["generations"] = _generations(data.get("generate"), (*path, "generate"))
    elif kind in DELETING_KINDS:
        parts["conditions"] = _named(data.get("conditions"), (*path, "conditions"))
    elif kind in IMAGE_KINDS:
        parts["image_references"] = _image_references(data.get("matchImageReferences"),
                                                      (*path, "matchImageReferences"))
        parts["image_extractors"] = _named(data.get("images"), (*path, "images"))
        config = _map(data.get("validationConfigurations"))
        parts["verify_digest"] = config.get("verifyDigest") is True
        parts["required"] = config.get("required") is True
    elif kind in MUTATING_KINDS:
        evaluation = _map(data.get("evaluation"))
        parts["mutate_existing"] = _map(evaluation.get("mutateExisting")).get("enabled") is True
        target = _map(data.get("targetMatchConstraints"))
        expression = _text(target.get("expression"))
        if expression is not None:
            parts["target_expression"] = Expression("targetMatchConstraints", expression,
                                                    (*path, "targetMatchConstraints", "expression"))
        if target.get("resourceRules"):
            parts["target_match"] = _match(target)
    return parts


def _mode(data: dict) -> str:
    mode = _map(data.get("evaluation")).get("mode")
    return mode if isinstance(mode, str) and mode else "Kubernetes"


def build_spec(spec: Any, kind: str, path: FieldPath = ("spec",)) -> PolicySpec:
    """The evaluated parts of `spec`, of what is well formed (nothing is checked: see `spec_problems`)."""
    data = _map(spec)
    failure_policy = data.get("failurePolicy")
    return PolicySpec(
        match=_match(data.get("matchConstraints")),
        match_conditions=_named(data.get("matchConditions"), (*path, "matchConditions")),
        variables=_named(data.get("variables"), (*path, "variables")),
        validations=_validations(data.get("validations"), (*path, "validations")),
        mutations=_mutations(data.get("mutations"), (*path, "mutations")),
        validation_actions=tuple(action for action in _strings(data.get("validationActions")) if action in ACTIONS)
        or ("Deny",),
        failure_policy=failure_policy if failure_policy in ("Fail", "Ignore") else "Fail",
        mode=_mode(data),
        audit_annotations=tuple(str(item.get("key", "")) for _, item in _entries(data.get("auditAnnotations"))),
        **_kind_parts(data, kind, path),
    )


def spec_problems(spec: Any, kind: str, path: FieldPath = ("spec",)) -> list[Problem]:
    """The rules of a (schema-checked) spec that a JSON Schema cannot say, every one broken, in document order."""
    data = _map(spec)
    found = []
    if data.get("matchConstraints") is None and _mode(data) == "Kubernetes":
        found.append(Problem("required field is missing (a Kubernetes-mode policy matches nothing without it)",
                             path=(*path, "matchConstraints")))
    for key in NAMED_LISTS:
        seen: set[Any] = set()
        for i, entry in _entries(data.get(key)):
            name = entry.get("name")
            if name in seen:
                found.append(Problem(f"duplicate name {name!r}", path=(*path, key, i, "name")))
            seen.add(name)
    if kind in MUTATING_KINDS and not data.get("mutations"):
        found.append(Problem("a MutatingPolicy needs at least one mutation", path=(*path, "mutations")))
    if kind in VALIDATING_NEEDS and not data.get("validations"):
        found.append(Problem(f"a{'n' if kind[0] in 'AEIOU' else ''} {kind} needs at least one validation",
                             path=(*path, "validations")))
    if kind in GENERATING_KINDS:
        for i, entry in _entries(data.get("generate")):
            if ("expression" in entry) == ("template" in entry):
                found.append(Problem("exactly one of expression or template must be set", path=(*path, "generate", i)))
    if kind in IMAGE_KINDS:
        for i, entry in _entries(data.get("matchImageReferences")):
            if ("glob" in entry) == ("expression" in entry):
                found.append(Problem("exactly one of glob or expression must be set",
                                     path=(*path, "matchImageReferences", i)))
    return found


def read_spec(spec: Any, kind: str, path: FieldPath = ("spec",)) -> PolicySpec:
    """The evaluated parts of a (schema-checked) `spec`; ReadError at the first of its `spec_problems`."""
    found = spec_problems(spec, kind, path)
    if found:
        raise ReadError(found[0].message, found[0].path)
    return build_spec(spec, kind, path)


def build_policy(document: Any, *, source: str | None = None, index: int | None = None,
                 line: int | None = None) -> CelPolicy | None:
    """The policy `document` says, of what is well formed (None when it names no kind); nothing is checked."""
    if not isinstance(document, dict) or not isinstance(document.get("kind"), str):
        return None
    metadata = _map(document.get("metadata"))
    namespace = metadata.get("namespace")
    return CelPolicy(
        name=_string(metadata.get("name")),
        kind=document["kind"], api_version=str(document.get("apiVersion", "")), document=document,
        spec=build_spec(document.get("spec"), document["kind"]),
        namespace=namespace if isinstance(namespace, str) else None,
        source=source, document_index=index, line=line,
        annotations={str(k): str(v) for k, v in _map(metadata.get("annotations")).items()},
        labels={str(k): str(v) for k, v in _map(metadata.get("labels")).items()},
    )


def problems(document: Any) -> list[Problem]:
    """Every problem of `document` (the schema's; once it has none, `spec_problems`), and a note on what is not
    evaluated."""
    found = schema_problems(SCHEMA_FILE, document, type_wording=type_and_actual)
    if found:
        return found
    found = spec_problems(document["spec"], document["kind"])
    if not found and document["spec"].get("auditAnnotations"):
        found.append(Problem("auditAnnotations are not evaluated offline (they only annotate audit events)",
                             path=("spec", "auditAnnotations"), severity=Severity.NOTE))
    return found


def read_policy(document: Any, *, source: str | None = None, index: int | None = None,
                line: int | None = None) -> CelPolicy:
    """The policy `document` says (no rules yet: `autogen` adds them); ReadError at the first problem, which
    says how many more there are."""
    errors = [problem for problem in problems(document) if problem.severity == Severity.ERROR]
    if errors:
        more = len(errors) - 1
        suffix = f" (and {more} more problem{'s' if more > 1 else ''})" if more else ""
        raise ReadError(f"{errors[0].message}{suffix}", errors[0].path)
    policy = build_policy(document, source=source, index=index, line=line)
    assert policy is not None  # the schema requires a kind
    return policy
