"""What ``kyverno-json scan --output json`` prints: a list with one report per resource, in its Go types' shape.

kyverno-json (``pkg/commands/scan/report.go`` at commit bd9932a0) writes
``json.MarshalIndent(ToReports(responses), "", "  ")``: a top-level array (``null``
when no resource was read) of

    {"resource": <the resource>, "results": [{"policy": <ValidatingPolicy>,
      "rules": [{"rule": <ValidatingRule>, "identifier": ..., "error": ...,
                 "violations": [{"message": ..., "errors": [{"type", "field", "value", "detail"}]}]}]}]}

with Go's ``omitempty`` on ``results``, ``rules``, ``identifier``, ``error``,
``violations``, ``message``, ``errors`` and on each error field; every policy is
listed for every resource (with no ``rules`` when none applied). The policy and
its rules are Go structs, so their fields come in declaration order
(``pkg/apis/policy/v1alpha1``: ``kind`` before ``apiVersion``, ``metadata`` with
``creationTimestamp: null``, a rule's ``name``, ``compiler``, ``context``,
``match``, ``exclude``, ``identifier``, ``feedback``, ``assert``), while the
resource and the assertion trees are Go maps, keys sorted (`gojson`).

A policy of another language (a ClusterPolicy) has no Go shape there: its
document is written as a map, and a rule result kyverno-json cannot have
(``skip``, ``warn``) is written as a pass with its message left out.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from assertree.report.gojson import Struct
from assertree.report.wording import rule_error
from assertree.results import ERROR, PolicyInfo, Resource, RuleResult

__all__ = ["go_policy", "report"]

KYVERNO_JSON_GROUP = "json.kyverno.io"
_OBJECT_META = ("name", "generateName", "namespace", "selfLink", "uid", "resourceVersion", "generation",
                "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "labels", "annotations",
                "ownerReferences", "finalizers", "managedFields")


def report(resource: Resource, results: Sequence[RuleResult], policies: Sequence[PolicyInfo]) -> Struct:
    """The report of one resource: the resource, and for every policy the rules that applied to it."""
    by_policy: dict[int, list[RuleResult]] = {}
    for result in results:
        by_policy.setdefault(id(result.policy), []).append(result)
    entries = [_omitting(Struct(policy=go_policy(policy.document)),
                         rules=[_rule(result) for result in by_policy.get(id(policy), [])]) for policy in policies]
    return _omitting(Struct(resource=resource.value), results=entries)


def _omitting(out: Struct, **fields: Any) -> Struct:
    """`out` with the `fields` Go's ``omitempty`` writes: those that are not empty (None, "", [] or {})."""
    for name, value in fields.items():
        if value not in (None, "", [], {}):
            out[name] = value
    return out


def _rule(result: RuleResult) -> Struct:
    violations = [_omitting(Struct(), message=violation.message,
                            errors=[_field_error(error) for error in violation.errors])
                  for violation in result.violations]
    return _omitting(Struct(rule=_go_rule(result.rule.document)), identifier=result.identifier,
                     error=rule_error(result.error, kyverno_json=True) if result.status == ERROR else None,
                     violations=violations)


def _field_error(error: Any) -> Struct:
    out = _omitting(Struct(), type=error.type, field=error.field)
    if error.value is not None:  # an interface: omitted only when nil, so 0, false and "" are written
        out["value"] = error.value
    return _omitting(out, detail=error.detail)


def go_policy(document: Any) -> Any:
    """A kyverno-json ValidatingPolicy as Go writes its struct; a document of another group as it is."""
    if not isinstance(document, dict) or not str(document.get("apiVersion", "")).startswith(KYVERNO_JSON_GROUP):
        return document
    out = Struct()
    for name in ("kind", "apiVersion"):
        if document.get(name):
            out[name] = document[name]
    out["metadata"] = _object_meta(document.get("metadata") or {})
    spec = document.get("spec")
    spec = spec if isinstance(spec, dict) else {}
    written = Struct()
    if spec.get("compiler"):
        written["compiler"] = spec["compiler"]
    rules = spec.get("rules")
    written["rules"] = [_go_rule(rule) for rule in rules] if isinstance(rules, list) else None
    out["spec"] = written
    return out


def _object_meta(metadata: Any) -> Struct:
    """``metav1.ObjectMeta``: its fields in order, empty ones left out, ``creationTimestamp`` always."""
    out = Struct()
    for name in _OBJECT_META:
        value = metadata.get(name) if isinstance(metadata, dict) else None
        if name == "creationTimestamp" or value not in (None, "", 0, [], {}):
            out[name] = value
    return out


def _go_rule(rule: Any) -> Any:
    """``v1alpha1.ValidatingRule``: name, compiler, context, match, exclude, identifier, feedback, assert."""
    if not isinstance(rule, dict):
        return rule
    out = Struct(name=rule.get("name", ""))
    if rule.get("compiler"):
        out["compiler"] = rule["compiler"]
    if rule.get("context"):
        out["context"] = [_pick(entry, ("compiler",), ("name",), ("variable",), always=("name", "variable"))
                          for entry in rule["context"]]
    for name in ("match", "exclude"):
        if isinstance(rule.get(name), dict):
            out[name] = _pick(rule[name], ("compiler",), ("any",), ("all",))
    if rule.get("identifier"):
        out["identifier"] = rule["identifier"]
    if rule.get("feedback"):
        out["feedback"] = [_pick(entry, ("compiler",), ("name",), ("value",), always=("name",), present=("value",))
                           for entry in rule["feedback"]]
    assertion = rule.get("assert")
    assertion = assertion if isinstance(assertion, dict) else {}
    checks = Struct()
    if assertion.get("compiler"):
        checks["compiler"] = assertion["compiler"]
    for name in ("any", "all"):
        if assertion.get(name):
            checks[name] = [_pick(item, ("compiler",), ("message",), ("check",), always=("check",))
                            for item in assertion[name]]
    out["assert"] = checks
    return out


def _pick(value: Any, *fields: tuple[str], always: tuple[str, ...] = (), present: tuple[str, ...] = ()) -> Any:
    """The fields of a small Go struct, in order: omitted when empty unless `always`, or kept whenever
    written when `present` (a pointer field: ``omitempty`` leaves out only a missing one)."""
    if not isinstance(value, dict):
        return value
    out = Struct()
    for (name,) in fields:
        if name in always or (name in present and name in value) or value.get(name) not in (None, "", [], {}):
            out[name] = value.get(name)
    return out
