"""Running a policy's mutate rules on one resource (`base.Mutator`), as Kyverno's engine does.

``pkg/engine/mutation.go`` and ``engine.go`` (``invokeRuleHandler``): the rules
run in order, each on the output of the previous one. For one rule: `prelude.enter_rule` (match/exclude, context
entries, preconditions, PolicyExceptions), then the
``mutate`` block itself, which is `mutate.apply_mutation`'s job: patches with
variables substituted (here, against the rule's context) or a ``foreach``
whose expressions it evaluates through `bridge.foreach_hooks`. PASS when the
resource changed, SKIP ("no patches applied") when not, ERROR when a patch
cannot apply. With ``spec.applyRules: One`` the first rule that patched ends
the policy.

Every result carries the resource after its rule (`RuleResult.patched`).
Rules with ``targets`` patch existing resources instead (`mutate_existing`),
one result per target, and leave the resource as it was; after the mutate
rules, ``verifyImages`` rules run their image phase (`verify_images`), as
Kyverno runs ``VerifyAndPatchImages`` after ``Mutate``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from assertree.languages.kyverno import bridge
from assertree.languages.kyverno.manifests import is_kubernetes_object
from assertree.languages.kyverno.prelude import as_kyverno_reads, enter_rule
from assertree.results import ERROR, PASS, Resource, RuleError, RuleResult

if TYPE_CHECKING:
    from assertree.languages.base import Mutator, ScanContext
    from assertree.languages.kyverno.compile import CompiledKyvernoPolicy, CompiledKyvernoRule


def policy_mutator(compiled: CompiledKyvernoPolicy, context: ScanContext) -> Mutator:
    """The function that applies `compiled`'s mutate rules, in order, to a resource."""
    rules = list(compiled.mutate_rules)

    def mutate(resource: Resource) -> tuple[Resource, list[RuleResult]]:
        if not is_kubernetes_object(resource.value):
            return resource, []  # not a Kubernetes object: no kind or no usable metadata, so no rule selects it
        current = as_kyverno_reads(resource, context).value  # converted once per resource (`prelude`)
        results: list[RuleResult] = []
        for rule in rules:
            if rule.rule.mutates_existing:
                from assertree.languages.kyverno.mutate_existing import mutate_targets

                results.extend(mutate_targets(rule, resource, current, context))
                continue
            if rule.rule.verifies_images:
                from assertree.languages.kyverno.verify_images import patch_images

                result = patch_images(rule, resource, current, context)
            else:
                result = _mutate_rule(rule, resource, current, context)
            if result is None:
                continue
            results.append(result)
            current = result.patched
            if compiled.policy.apply_one and result.status == PASS:
                break  # Kyverno counts a rule as applied when it passed (or failed)
        if not any(result.patched is not None for result in results):
            return resource, results
        patched = Resource(current, source=resource.source, document=resource.document, root=resource.root,
                           origin=resource.origin, default_identifier=resource.default_identifier,
                           file=resource.file)
        return patched, results

    return mutate


def _mutate_rule(compiled: CompiledKyvernoRule, resource: Resource, current: Any,
                 context: ScanContext) -> RuleResult | None:
    policy, rule = compiled.policy, compiled.rule
    document = rule.document

    def result(status: str, message: str, patched: Any, error: RuleError | None = None) -> RuleResult:
        return RuleResult(resource, policy, rule, status, message=message, error=error, patched=patched)

    entered = enter_rule(policy, rule, current, context, context=document.get("context") or [],
                         preconditions=document.get("preconditions"))
    if entered.stop is not None:
        stop = entered.stop
        found = result(stop.status, stop.message, current, stop.error)
        found.exception = stop.exception
        return found
    if entered.session is None:
        return None
    # The resource as the rule's context holds it (values-file variables may have set fields of it).
    target = current if bridge.is_delete(entered.session) else bridge.resource_of(entered.session)
    outcome = bridge.mutate(document.get("mutate") or {}, entered.session, target)
    status = str(outcome.status)
    if status == ERROR:
        return result(ERROR, outcome.message, current, RuleError(outcome.message, ("mutate",)))
    if not is_kubernetes_object(outcome.resource):  # a JSON patch replaced the resource, or its metadata
        from assertree.jp.values import type_name

        patched = outcome.resource
        what = ("the patched resource", patched) if not isinstance(patched, dict) else (
            "the patched resource's metadata", patched["metadata"])
        message = (f"failed to apply patches: {what[0]} is a JSON {type_name(what[1])}, not an object (Kubernetes "
                   "cannot decode it)")
        return result(ERROR, message, current, RuleError(message, ("mutate",)))
    return result(status, outcome.message, outcome.resource)
