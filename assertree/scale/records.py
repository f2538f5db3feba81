"""What a worker sends back for each resource it checked, and how the parent turns that into a `ScanResult`.

Why records, and not the `RuleResult` objects themselves: a result points at its policy and rule, which
the parent's `ScanResult` matches by identity (``skipped()``, ``unmatched_rules()``, the reports' totals),
and at its `Resource`, whose ``root`` is the whole document it came from (a Terraform plan) and whose
``file`` is the parsed input. Pickled as they are, every partition would carry copies of the policies and of
the plan, and the parent would receive policies that are not its own. A record instead names the policy and
the rule by position, carries the resource's value and provenance without ``root``/``file`` (the parent
puts its own back when it has the resources), and writes violations and errors as plain data: a field
path's "not in the payload" step and a field error's "no expected value" are identity sentinels that
pickling would turn into new objects. Records are dicts, lists, tuples, strings and the payload's own
values, so any engine can move them and a Dask user can filter them (``record["results"][i]["status"]``).

A record, for one resource::

    {"source": ..., "document": ..., "default_identifier": ...,
     "values": [checked value, ...],      # 0: the resource after mutation; then others results refer to
     "input": k,                          # only when mutated: which value is the resource as given
     "results": [{"policy": i, "rule": j, "policy_name": ..., "rule_name": ..., "status": "fail",
                  "on": k,                # only when the result is not about values[0]
                  "identifier": ..., "violations": [...], ...}]}   # only the fields that are set

`decode` is the exact inverse for the fields reports read (a test compares them field by field).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from assertree.results import FieldError, PolicyInfo, Resource, RuleError, RuleResult, ScanResult, Status, Violation
from assertree.tree.fieldpath import NOT_IN_PAYLOAD

__all__ = ["RulePositions", "decode", "encode", "light", "rule_positions", "scan_result"]

RulePositions = dict[int, tuple[int, int]]
"""id(rule) -> (position of its policy, position of the rule in ``policy.rules``)."""

_OPTIONAL = ("identifier", "message", "exception", "patched")


def rule_positions(policies: Sequence[PolicyInfo]) -> RulePositions:
    """Where each rule of `policies` is, for `encode`."""
    return {id(rule): (i, j) for i, policy in enumerate(policies) for j, rule in enumerate(policy.rules)}


def light(resource: Any) -> Resource:
    """`resource` (a `Resource` or a JSON value) as a worker needs it: value and provenance, without the
    source document and parsed input (a `Resource`'s ``root`` and ``file``), which no rule reads."""
    if not isinstance(resource, Resource):
        return Resource(resource)
    if resource.root is None and resource.file is None and resource.origin is None:
        return resource
    return Resource(resource.value, resource.source, resource.document,
                    default_identifier=resource.default_identifier)


def encode(given: Resource, checked: Resource, results: Iterable[RuleResult], positions: RulePositions) -> dict:
    """The record of one resource: `given` to the scanner, `checked` after mutation, and its results."""
    objects = [checked]
    record: dict[str, Any] = {"source": checked.source, "document": checked.document,
                              "default_identifier": checked.default_identifier}
    if checked is not given:
        objects.append(given)
        record["input"] = 1
    record["results"] = [_result(result, positions, objects) for result in results]
    record["values"] = [item.value for item in objects]
    return record


def decode(record: dict, policies: Sequence[PolicyInfo], original: Resource | None = None,
           ) -> tuple[Resource, list[RuleResult]]:
    """The checked resource and the results of one record, pointing at `policies` (the parent's own, in the
    order the workers had them) and at `original` (the parent's resource, with its root and file) if given."""
    values = record["values"]
    given = record.get("input", 0)
    resources: list[Resource] = []
    for position, value in enumerate(values):
        if original is not None and position == given:
            resources.append(original)
        elif original is not None:  # what a mutator makes: the new value, the original's provenance
            resources.append(Resource(value, source=original.source, document=original.document,
                                      root=original.root, origin=original.origin,
                                      default_identifier=original.default_identifier, file=original.file))
        else:
            resources.append(Resource(value, record["source"], record["document"],
                                      default_identifier=record["default_identifier"]))
    return resources[0], [_decoded_result(item, policies, resources) for item in record["results"]]


def scan_result(records: Iterable[dict], policies: Sequence[Any], resources: Sequence[Any] | None = None,
                ) -> ScanResult:
    """The `ScanResult` of a distributed scan, for `assertree.render` and the other reporters.

    `records` are the workers' records in resource order; `policies` the compiled policies the scan was
    given, in the same order (their ``.policy`` objects are the results' policies); `resources`, when the
    parent has them, the resources in the same order (so reports can show lines in their files).
    """
    infos = [policy.policy if hasattr(policy, "mutator") else policy for policy in policies]
    records = list(records)
    if resources is not None and len(resources) != len(records):
        raise ValueError(f"{len(records)} records for {len(resources)} resources: give the resources that were "
                         "scanned, in the same order")
    checked: list[Resource] = []
    results: list[RuleResult] = []
    for position, record in enumerate(records):
        original = None
        if resources is not None:
            item = resources[position]
            original = item if isinstance(item, Resource) else Resource(item)
        resource, found = decode(record, infos, original)
        checked.append(resource)
        results.extend(found)
    return ScanResult(checked, infos, results)


def _result(result: RuleResult, positions: RulePositions, objects: list[Resource]) -> dict:
    where = positions.get(id(result.rule))
    if where is None:
        raise ValueError(f"rule {result.rule.name!r} of policy {result.policy.name!r} is not among the policies' "
                         "rules: a record can only name rules of the policies scanned")
    out: dict[str, Any] = {"policy": where[0], "rule": where[1], "policy_name": result.policy.name,
                           "rule_name": result.rule.name, "status": str(result.status)}
    if result.resource is not objects[0]:
        for position, item in enumerate(objects):
            if item is result.resource:
                out["on"] = position
                break
        else:
            out["on"] = len(objects)
            objects.append(result.resource)
    for name in _OPTIONAL:
        value = getattr(result, name)
        if value is not None:
            out[name] = value
    if result.violations:
        out["violations"] = [_violation(violation) for violation in result.violations]
    if result.error is not None:
        out["error"] = _error(result.error)
    if result.identifier_error is not None:
        out["identifier_error"] = _error(result.identifier_error)
    if result.feedback:
        out["feedback"] = [(name, key, isinstance(item, RuleError), _error(item) if isinstance(item, RuleError)
                            else item) for name, entry in result.feedback.items() for key, item in entry.items()]
    return out


def _decoded_result(item: dict, policies: Sequence[PolicyInfo], resources: list[Resource]) -> RuleResult:
    policy = policies[item["policy"]]
    status = item["status"]
    result = RuleResult(resources[item.get("on", 0)], policy, policy.rules[item["rule"]], _status(status))
    for name in _OPTIONAL:
        if name in item:
            setattr(result, name, item[name])
    result.violations = [_decoded_violation(violation) for violation in item.get("violations", ())]
    if "error" in item:
        result.error = _decoded_error(item["error"])
    if "identifier_error" in item:
        result.identifier_error = _decoded_error(item["identifier_error"])
    for name, key, is_error, value in item.get("feedback", ()):
        result.feedback.setdefault(name, {})[key] = _decoded_error(value) if is_error else value
    return result


def _status(text: str) -> str:
    try:
        return Status(text)
    except ValueError:  # a language's own status word: kept as written
        return text


def _violation(violation: Violation) -> dict:
    return {"check": violation.check, "message": violation.message, "steps": violation.steps,
            "errors": [_field_error(error) for error in violation.errors]}


def _decoded_violation(data: dict) -> Violation:
    return Violation(data["check"], data["message"], [_decoded_field_error(error) for error in data["errors"]],
                     data["steps"])


def _field_error(error: FieldError) -> dict:
    steps = []
    path = error.path
    while path is not None:  # (parent, text, bracket, step) links, written root first
        parent, text, bracket, step = path
        in_payload = step is not NOT_IN_PAYLOAD
        steps.append((text, bracket, in_payload, step if in_payload else None))
        path = parent
    steps.reverse()
    out = {"type": error.type, "path": steps, "reason": error.reason, "value": error.value}
    if error.has_expected:
        out["expected"] = error.expected
    return out


def _decoded_field_error(data: dict) -> FieldError:
    path: tuple | None = None
    for text, bracket, in_payload, step in data["path"]:
        path = (path, text, bracket, step if in_payload else NOT_IN_PAYLOAD)
    error = FieldError(data["type"], path, data["reason"], data["value"])
    if "expected" in data:
        error.expected = data["expected"]
    return error


def _error(error: RuleError) -> dict:
    return {"message": error.message, "path": error.path, "kind": error.kind, "value": error.value}


def _decoded_error(data: dict) -> RuleError:
    return RuleError(data["message"], data["path"], data["kind"], data["value"])
