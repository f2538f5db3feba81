"""MutatingPolicy ``mutateExisting``: a trigger's policy also patches existing resources, its targets.

As the Kyverno CLI runs it (``processor/policy_processor.go``: ``targetMatchPredicate``,
``discoverCELTargets``; ``pkg/cel/policies/mpol/engine``): once the policy
selects the trigger, every existing resource (`ScanContext.cluster`, the
trigger itself left out) is a target when

- ``targetMatchConstraints.expression`` is set: the expression (with
  ``object`` the trigger, and lookups that also see the existing resources)
  names it, as one object or ``{"items": [...]}``, by namespace and name;
- else ``targetMatchConstraints``' resource rules (or, without them, the
  policy's ``matchConstraints``) select it, whatever the operation.

Each target is then mutated as if it were being admitted (``object`` is the
target; match conditions false: no result), and gives one result: PASS with
the patched target in `RuleResult.target`, or ERROR.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from assertree.languages.cel.engine import CelError
from assertree.languages.kubernetes.cluster import Cluster
from assertree.languages.kubernetes.matching import matches
from assertree.languages.kubernetes.request import admission_request
from assertree.languages.kubernetes.resources import identity
from assertree.languages.kyverno.cel_policies.environment import Lookups
from assertree.languages.kyverno.cel_policies.evaluate import evaluate_mutations, prepare_variables
from assertree.languages.kyverno.cel_policies.selection import selected_data
from assertree.results import ERROR, PASS, Resource, RuleError, RuleResult

if TYPE_CHECKING:
    from assertree.languages.base import ScanContext
    from assertree.languages.kyverno.cel_policies.compile import CompiledCelPolicy

__all__ = ["mutate_targets"]


def mutate_targets(compiled: CompiledCelPolicy, trigger: Resource, context: ScanContext) -> list[RuleResult]:
    """The results of patching the targets `trigger` makes the policy mutate (none without a cluster)."""
    from assertree.languages.kyverno.generate import describe

    policy = compiled.policy
    rule = compiled.compiled_rules[0]
    cluster = context.cluster
    if cluster is None:
        return []
    trigger_data = selected_data(policy, rule.rule, trigger.value, context)
    if trigger_data is None:
        return []
    existing = [item for item in cluster.objects() if identity(item) != identity(trigger.value)]
    lookups = _with_resources(getattr(context, "lookups", None), existing)
    try:
        named = _named_targets(compiled, trigger_data, lookups)
    except CelError as failure:
        text = f"failed to discover CEL targets: {failure.message}"
        return [RuleResult(trigger, policy, rule.rule, ERROR, message=text,
                           error=RuleError(text, ("spec", "targetMatchConstraints", "expression")))]
    results = []
    for target in existing:
        if not _is_target(compiled, target, named):
            continue
        request = admission_request(target, values=context.values, user_info=context.user_info)
        data = {**request.variables(), "request": trigger_data.get("request")}
        outcome = evaluate_mutations(rule.compiled, data, lookups)
        if outcome.status == PASS and outcome.patched is not None:
            results.append(RuleResult(trigger, policy, rule.rule, PASS, message=f"mutated {describe(target)}",
                                      target=outcome.patched, action="mutate existing"))
        elif outcome.status == ERROR:
            results.append(rule.result(trigger, outcome))
    return results


def _with_resources(lookups: Any, resources: list[Any]) -> Lookups:
    """The lookups, with the existing resources added (the CLI registers its targets in its fake context)."""
    found = lookups if isinstance(lookups, Lookups) else Lookups()
    cluster = found.cluster.copy() if found.cluster is not None else Cluster(discovery=False)
    cluster.extend(resources)
    return replace(found, cluster=cluster)


def _named_targets(compiled: CompiledCelPolicy, trigger_data: dict, lookups: Lookups) -> set[str] | None:
    """The ``namespace/name`` keys the target expression gives, or None without one."""
    program = compiled.compiled_rules[0].compiled.target_expression
    if program is None:
        return None
    scope = prepare_variables(compiled.compiled_rules[0].compiled, trigger_data, lookups)
    found = program.evaluate(scope, lookups)
    if not isinstance(found, dict):
        raise CelError("the target selector expression must give an object")
    listed = found.get("items")
    keys = set()
    for item in listed if isinstance(listed, list) else [found]:
        _, _, namespace, name = identity(item)
        keys.add(f"{namespace}/{name}" if namespace else name)
    return keys


def _is_target(compiled: CompiledCelPolicy, target: Any, named: set[str] | None) -> bool:
    _, _, namespace, name = identity(target)
    if named is not None:
        return (f"{namespace}/{name}" if namespace else name) in named
    spec = compiled.policy.spec
    constraints = spec.target_match or spec.match
    if constraints is None:
        return False
    try:
        return matches(constraints, admission_request(target).attributes, any_operation=True)
    except ValueError:
        return False
