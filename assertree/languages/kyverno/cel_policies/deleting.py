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

from collections.abc import Sequence
from typing import Any

from assertree.languages.cel.limits import budgeted
from assertree.languages.kyverno.cel_policies.conditions import check_conditions
from assertree.languages.kyverno.cel_policies.evaluate import CompiledSpec, Outcome, begin, noted
from assertree.languages.kyverno.cel_policies.exceptions import CompiledException
from assertree.results import ERROR, PASS, SKIP, RuleError

__all__ = ["evaluate_conditions"]


@budgeted  # the policy's expressions share one cost budget, as in Kubernetes
def evaluate_conditions(spec: CompiledSpec, data: dict[str, Any], lookups: Any, describe: str,
                        exceptions: Sequence[CompiledException] = ()) -> Outcome:
    """PASS (``would delete <describe>``), SKIP (a condition is false, an exception) or ERROR, for one selected
    resource."""
    scope, stopped, note = begin(spec, data, lookups, exceptions)
    if stopped is not None:
        return noted(stopped, note)
    check = check_conditions(spec.conditions, scope, lookups, "condition")
    if check.false is not None:
        name, path = check.false
        return noted(Outcome(SKIP, f"would not delete {describe}: condition {name!r} is false", check=path), note)
    if check.errors:
        path = check.errors[0][1]
        text = check.message()
        return noted(Outcome(ERROR, text, error=RuleError(text, path=path, kind="evaluation"), check=path), note)
    return noted(Outcome(PASS, f"would delete {describe}"), note)
