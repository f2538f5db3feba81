"""What the Kyverno CLI makes of engine responses: each rule's status and type, a policy's failure action,
and the ``pass: N, fail: N, warn: N, error: N, skip: N`` counts (``processor/result.go``).

A response is one policy's phase on one resource (`assertree.testing.responses.PolicyResponse`,
made by `assertree.testing.execute.process` in the CLI's order). The counts follow
``ResultCounts`` at kyverno/kyverno 111e07bb, rule for rule:

- a ClusterPolicy/Policy's validate rules: pass, skip and error as they are; a
  failure is a warning when the policy is not scored
  (``policies.kyverno.io/scored: "false"``) or, with ``--audit-warn``, when its
  failure action is Audit; otherwise a failure;
- its mutate rules: pass, fail, skip, error (a warning is not counted);
- a ValidatingPolicy's results: pass, fail, error, skip; a DeletingPolicy's
  and a CleanupPolicy's too, a resource the policy selects but would keep
  being a failure there ("resource did not match"), where assertree says skip;
- a generate rule's or a GeneratingPolicy's: pass, fail, error, skip;
- a MutatingPolicy's results: pass, fail, skip, error, **counted twice**: the CLI
  adds a MutatingPolicy response to the counts, then again while printing it
  (``addMutateResponse`` in ``ApplyPoliciesOnResource`` and in
  ``processMutateEngineResponse``), and the drop-in prints the counts it prints.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from assertree.languages.kyverno.wildcard import match as wildcard_match
from assertree.results import ERROR, FAIL, PASS, SKIP, WARN, RuleResult
from assertree.testing.check import DELETING_KINDS, kyverno_status
from assertree.testing.responses import MUTATE, PolicyResponse

__all__ = ["Counts", "audit", "count", "is_kyverno_policy", "rule_name", "rule_status", "rule_type"]


@dataclass
class Counts:
    """``ResultCounts``: what the summary line says and the exit code is decided on."""

    passed: int = 0
    failed: int = 0
    warned: int = 0
    errors: int = 0
    skipped: int = 0

    def line(self) -> str:
        """``pass: 1, fail: 0, warn: 0, error: 0, skip: 0 `` (with the CLI's space before the line break)."""
        return (f"pass: {self.passed}, fail: {self.failed}, warn: {self.warned}, error: {self.errors}, "
                f"skip: {self.skipped} ")

    def add(self, status: str, times: int = 1) -> None:
        if status == PASS:
            self.passed += times
        elif status == FAIL:
            self.failed += times
        elif status == WARN:
            self.warned += times
        elif status == ERROR:
            self.errors += times
        elif status == SKIP:
            self.skipped += times


def is_kyverno_policy(policy: Any) -> bool:
    """A ``kyverno.io`` ClusterPolicy or Policy (the CLI's ``AsKyvernoPolicy() != nil``; a CleanupPolicy is not
    one)."""
    return (str(getattr(policy, "api_version", "")).split("/")[0] == "kyverno.io"
            and getattr(policy, "kind", None) in ("ClusterPolicy", "Policy"))


def rule_status(policy: Any, result: RuleResult) -> str:
    """The status the Kyverno engine gives a rule: a failure of an unscored ClusterPolicy is a failure there
    (the CLI makes it a warning when counting and reporting), where assertree's result says warn; a resource a
    deleting policy keeps is a failure there, where assertree says skip (`testing.check.kyverno_status`)."""
    if result.status == WARN and is_kyverno_policy(policy) and not getattr(policy, "scored", True):
        return FAIL
    return kyverno_status(policy, result)


def rule_name(policy: Any, result: RuleResult) -> str:
    """The rule's name in the engine's response: a ClusterPolicy's rule (``autogen-`` ones included); a
    deleting policy's is the policy's name; the other CEL kinds' responses have none, but ``exception`` when a
    PolicyException made them a skip."""
    if is_kyverno_policy(policy):
        return result.rule.name
    if getattr(policy, "kind", None) in DELETING_KINDS and not result.exception:
        return str(policy.name)
    return "exception" if result.exception else ""


def rule_type(response: PolicyResponse) -> str:
    """``Mutation`` or ``Validation`` (the engine's rule types the CLI prints differently)."""
    return "Mutation" if response.phase == MUTATE else "Validation"


def audit(policy: Any, namespace: str) -> bool:
    """The CLI's ``GetValidationFailureAction().Audit()``: the first rule with its own action (or an override
    for `namespace`) decides, then the policy's overrides, then ``validationFailureAction``; anything but
    Enforce (none at all, as for the CEL kinds) is Audit."""
    document = getattr(policy, "document", None) or {}
    if not is_kyverno_policy(policy) or not isinstance(document, dict):
        return True
    spec = document.get("spec") if isinstance(document.get("spec"), dict) else {}
    assert isinstance(spec, dict)
    action: Any = None
    for rule in spec.get("rules") or []:
        validate = rule.get("validate") if isinstance(rule, dict) else None
        if isinstance(validate, dict):
            action = _override(validate.get("failureActionOverrides"), namespace) or validate.get("failureAction")
            if action:
                break
    if not action:
        action = _override(spec.get("validationFailureActionOverrides"), namespace) or spec.get(
            "validationFailureAction")
    return str(action or "") not in ("Enforce", "enforce")


def _override(overrides: Any, namespace: str) -> str | None:
    """The action of the first override that names `namespace` (or names none), as ``matchOverride`` (a
    namespace selector cannot be checked offline: such an override is passed over)."""
    for override in overrides if isinstance(overrides, list) else ():
        if not isinstance(override, dict) or override.get("action") not in ("Enforce", "enforce", "Audit", "audit"):
            continue
        namespaces = override.get("namespaces")
        if namespaces is None:
            if override.get("namespaceSelector") is None:
                return str(override["action"])
            continue
        if any(isinstance(pattern, str) and wildcard_match(pattern, namespace) for pattern in namespaces) \
                and override.get("namespaceSelector") is None:
            return str(override["action"])
    return None


def count(responses: Iterable[PolicyResponse], *, audit_warn: bool = False) -> Counts:
    """The CLI's counts of `responses` (see the module docstring)."""
    counts = Counts()
    for response in responses:
        policy = response.policy
        if is_kyverno_policy(policy):
            namespace = _namespace(response.resource)
            for result in response.results:
                status = rule_status(policy, result)
                if response.phase == MUTATE:
                    if status != WARN:
                        counts.add(status)
                elif status == FAIL:
                    unscored = not getattr(policy, "scored", True)
                    counts.add(WARN if unscored or (audit_warn and audit(policy, namespace)) else FAIL)
                else:
                    counts.add(status)
        else:
            for result in response.results:
                if result.status != WARN:
                    counts.add(rule_status(policy, result), 2 if response.phase == MUTATE else 1)
    return counts


def _namespace(resource: Any) -> str:
    metadata = resource.get("metadata") if isinstance(resource, dict) else None
    return str(metadata.get("namespace") or "") if isinstance(metadata, dict) else ""
