"""Running a ValidatingAdmissionPolicy on a resource: every invocation's decisions, summed up as the apiserver acts.

The policy is one rule (the policy itself): its runner gives one `RuleResult`
per resource the policy selects, summing up every invocation (`dispatch`) the
way the apiserver's dispatcher (k8s.io/apiserver .../policy/validating/
dispatcher.go) acts on their decisions through each binding's
``validationActions``:

- a denial through a ``Deny`` binding is a FAIL; an evaluation or
  configuration error that denies (``failurePolicy: Fail``) an ERROR;
- a denial only through ``Warn`` or ``Audit`` bindings is a WARN (the request
  would be admitted, with a warning or an audit annotation);
- nothing denied is a PASS; every invocation skipped by its match conditions
  a SKIP; an unbound policy that selects the resource a SKIP saying so.

Published audit annotations (``<policy>/<key>``; distinct values of several
invocations joined by ", ") and, for ``Audit`` bindings, Kubernetes'
``validation.policy.admission.k8s.io/validation_failure`` value are the
result's feedback.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from assertree.errors import field_path_text
from assertree.languages.admission.activation import request_for
from assertree.languages.admission.dispatch import (
    UNBOUND,
    ConfigurationError,
    Invocation,
    invocations,
    not_bound_message,
)
from assertree.languages.admission.evaluate import (
    AuditValue,
    CompiledSpec,
    Decision,
    invocation_budget,
    prepare,
    validate,
)
from assertree.languages.admission.model import AdmissionPolicy, AdmissionRule
from assertree.languages.base import RuleRunner, ScanContext
from assertree.languages.kubernetes.resources import resource_key
from assertree.results import ERROR, FAIL, PASS, SKIP, WARN, Resource, RuleError, RuleResult, Violation

__all__ = ["VALIDATION_FAILURE_KEY", "validating_runner"]

VALIDATION_FAILURE_KEY = "validation.policy.admission.k8s.io/validation_failure"


def _suffix(invocation: Invocation, several: bool) -> str:
    """Which binding (and param) a message is about, when the policy ran more than once."""
    if not several:
        return ""
    where = f" (binding {invocation.binding.name!r}"
    if isinstance(invocation.params, dict):
        metadata = invocation.params.get("metadata") or {}
        name = "/".join(str(part) for part in (metadata.get("namespace"), metadata.get("name")) if part)
        where += f", params {name!r}"
    return where + ")"


@dataclass
class _Tally:
    """The decisions of every invocation on one resource, sorted by what the apiserver does with them."""

    blocking: list[tuple[Decision, str]]
    warning: list[tuple[Decision, str]]
    errors: list[tuple[Decision, str]]  # blocking errors (evaluation or configuration)
    annotations: dict[str, list]  # key -> distinct values (failure records for VALIDATION_FAILURE_KEY)
    decided: bool = False  # some invocation applied (its match conditions held, or failed)


def _tally(policy: AdmissionPolicy, spec: CompiledSpec, items: list, request: Any) -> _Tally:
    tally = _Tally([], [], [], {})
    several = sum(isinstance(item, Invocation) for item in items) > 1
    for item in items:
        if isinstance(item, ConfigurationError):
            tally.decided = True
            if policy.failure_policy != "Ignore":
                tally.errors.append((Decision("error", item.message), ""))
            continue
        with invocation_budget():
            validated = validate(spec, prepare(spec, request.with_params(item.params)))
        tally.decided |= validated.applied
        suffix = _suffix(item, several)
        for decision in validated.decisions:
            if not decision.denies(policy.failure_policy):
                continue
            actions = item.binding.actions
            if "Deny" in actions:
                (tally.errors if decision.evaluation == "error" else tally.blocking).append((decision, suffix))
            elif {"Warn", "Audit"} & set(actions):
                tally.warning.append((decision, suffix))
            if "Audit" in actions:
                tally.annotations.setdefault(VALIDATION_FAILURE_KEY, []).append({
                    "message": decision.message, "policy": policy.name, "binding": item.binding.name,
                    "expressionIndex": decision.index, "validationActions": list(actions)})
        _publish(tally.annotations, policy.name, validated.published)
    return tally


def _publish(annotations: dict[str, list], policy_name: str, published: list[AuditValue]) -> None:
    """Audit annotations as the apiserver collects them: ``<policy>/<key>``, each distinct value once."""
    for value in published:
        values = annotations.setdefault(f"{policy_name}/{value.key}", [])
        if value.value not in values:
            values.append(value.value)


def _judge(policy: AdmissionPolicy, rule: AdmissionRule, resource: Resource, tally: _Tally) -> RuleResult:
    """The one result the decisions of every invocation make."""
    feedback = {key: {"value": json.dumps(values) if key == VALIDATION_FAILURE_KEY else ", ".join(values)}
                for key, values in tally.annotations.items()}
    violations = [Violation(field_path_text(decision.path), decision.message + suffix, [])
                  for decision, suffix in (tally.blocking or tally.warning)]
    status, message, error = PASS, "validation passed", None
    if tally.blocking:
        status, message = FAIL, tally.blocking[0][0].message + tally.blocking[0][1]
    elif tally.errors:
        decision, suffix = tally.errors[0]
        status, message = ERROR, decision.message + suffix
        error = RuleError(message, path=decision.path, kind="evaluation" if decision.path else "configuration")
        violations = []
    elif tally.warning:
        status, message = WARN, tally.warning[0][0].message + tally.warning[0][1]
    elif not tally.decided:
        status, message = SKIP, "match conditions are not met"
    return RuleResult(resource=resource, policy=policy, rule=rule, status=status,
                      identifier=resource_key(resource.value), message=message, violations=violations, error=error,
                      feedback=feedback)


def validating_runner(policy: AdmissionPolicy, rule: AdmissionRule, spec: CompiledSpec,
                      context: ScanContext) -> RuleRunner:
    """The runner of a ValidatingAdmissionPolicy in a scan with `context` (params, run_unbound, values ...)."""
    params = tuple(getattr(context, "params", ()) or ())
    run_unbound = bool(getattr(context, "run_unbound", False))

    def run(resource: Resource) -> RuleResult | None:
        request = request_for(resource.value, context)
        items = list(invocations(policy, request, params, run_unbound=run_unbound))
        if not items:
            return None
        if items == [UNBOUND]:
            return RuleResult(resource=resource, policy=policy, rule=rule, status=SKIP,
                              identifier=resource_key(resource.value), message=not_bound_message(policy))
        return _judge(policy, rule, resource, _tally(policy, spec, items, request))

    return run
