"""DeletingPolicy: whether Kyverno's cleanup would delete a resource that exists.

A DeletingPolicy runs on a schedule over existing resources, not on admission
requests (``pkg/cel/policies/dpol/engine/engine.go``, ``compiler/policy.go``):
the match constraints select the resource whatever the operation (no result
when they do not); then its ``conditions`` are evaluated, in order, with the
policy's variables (``object`` is the resource, ``namespaceObject`` its
Namespace): all true, the resource would be deleted; one false, it would not;
one that errors is an ERROR. ``schedule`` and ``deletionPropagationPolicy``
only say when and how a cluster deletes.

Results: PASS "would delete KIND/ns/name" (an action: `RuleResult.action`),
SKIP when the conditions keep it. ``kyverno test`` and ``kyverno apply`` report
that second case as ``fail`` ("resource did not match"); `assertree test`
compares it so (`assertree.testing.check`), while a scan, which checks
resources rather than cleans a cluster, does not count a resource kept as a
failure.
"""

from __future__ import annotations

from typing import Any

from assertree.languages.kyverno.cel_policies.evaluate import CompiledSpec, Outcome, first_false, prepare_variables
from assertree.results import ERROR, PASS, SKIP, RuleError

__all__ = ["evaluate_conditions"]


def evaluate_conditions(spec: CompiledSpec, data: dict[str, Any], lookups: Any, describe: str) -> Outcome:
    """PASS (``would delete <describe>``), SKIP (a condition is false) or ERROR, for one selected resource."""
    scope = prepare_variables(spec, data, lookups)
    false, errors = first_false(spec.conditions, scope, lookups, "condition")
    if false is not None:
        return Outcome(SKIP, f"would not delete {describe}: condition {false[0]!r} is false", check=false[1])
    if errors:
        text = "; ".join(message for message, _ in errors)
        return Outcome(ERROR, text, error=RuleError(text, path=errors[0][1], kind="evaluation"), check=errors[0][1])
    return Outcome(PASS, f"would delete {describe}")
