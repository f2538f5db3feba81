"""Running MutatingAdmissionPolicies on a resource as the apiserver's mutating plugin does, reinvocation included.

k8s.io/apiserver .../policy/mutating/dispatcher.go. Each MAP's invocations
(`dispatch`) run in order, each patching the object the previous one left
(`evaluate.mutate`). The plugin runs every MAP before any validation, and
runs once more, after all of them, the invocations of the MAPs with
``reinvocationPolicy: IfNeeded`` when the object changed in the first pass:
another policy's patch may call for theirs again.

The engine asks each policy for its own mutator and calls them in order, so
the MAPs of one scan find each other through the scan's `ScanContext.memo`
(`_Chain`, filled as their mutators are made, in policy order); the last MAP
of the chain runs the second pass. A policy reinvoked keeps one result per
resource: the first pass's, with the final object.

Outcomes, one `RuleResult` per MAP and resource it selects: PASS with the
patched object (``patched``; the same object when nothing changed); SKIP when
the match conditions of every invocation are false, or when the policy is not
bound; ERROR when a mutation or its configuration fails under ``failurePolicy:
Fail`` (the apiserver refuses the request), a SKIP saying why under
``Ignore`` (the object is left as it was).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from assertree.languages.admission.activation import request_for
from assertree.languages.admission.dispatch import (
    UNBOUND,
    ConfigurationError,
    Invocation,
    invocations,
    not_bound_message,
)
from assertree.languages.admission.evaluate import CompiledSpec, invocation_budget, mutate, prepare
from assertree.languages.admission.model import AdmissionPolicy, AdmissionRule
from assertree.languages.base import Mutator, ScanContext
from assertree.languages.kubernetes.defaults import without_defaults
from assertree.languages.kubernetes.jsonpatch import json_equal
from assertree.languages.kubernetes.patches import MutationError, apply_configuration, apply_json_patch
from assertree.languages.kubernetes.resources import resource_key
from assertree.results import ERROR, PASS, SKIP, Resource, RuleError, RuleResult

__all__ = ["mutating_mutator"]

_CHAIN_KEY = "admission.mutating-chain"


def _apply_configuration(resource: Any, patch: Any) -> Any:
    try:
        return apply_configuration(resource, patch)
    except MutationError as error:
        raise ValueError(f"error applying patch: {error}") from None


def _apply_json_patch(resource: Any, patch: Any) -> Any:
    if not isinstance(patch, list):
        raise ValueError("type mismatch: JSONPatchType.expression should evaluate to array")
    try:
        return apply_json_patch(resource, patch, strict=True)
    except MutationError as error:
        raise ValueError(f"JSONPath: {error}") from None


_APPLY = (_apply_configuration, _apply_json_patch)


@dataclass
class _Pass:
    """One resource's way through the chain: the IfNeeded invocations run, and whether the object changed."""

    reinvocable: list[tuple[_Member, Invocation, RuleResult]] = field(default_factory=list)
    changed: bool = False


@dataclass(frozen=True, eq=False)
class _Member:
    """One MAP of the chain: what running it needs."""

    key: Any  # the compiled policy: a context may make its mutator twice (apply), the chain holds it once
    policy: AdmissionPolicy
    rule: AdmissionRule
    spec: CompiledSpec


class _Chain:
    """The MutatingAdmissionPolicies of one scan, in policy order, and the pass each thread is in."""

    def __init__(self) -> None:
        self.members: list[_Member] = []
        self._local = threading.local()

    def join(self, member: _Member) -> _Member:
        for existing in self.members:
            if existing.key is member.key:
                return existing
        self.members.append(member)
        return member

    def current(self, member: _Member) -> _Pass:
        if member is self.members[0] or not hasattr(self._local, "state"):
            self._local.state = _Pass()
        return self._local.state

    def is_last(self, member: _Member) -> bool:
        return member is self.members[-1]


def _chain(context: ScanContext) -> _Chain:
    chain = context.memo.get(_CHAIN_KEY)
    if chain is None:
        chain = context.memo[_CHAIN_KEY] = _Chain()
    return chain


def _result(member: _Member, resource: Resource, status: str, message: str, **fields: Any) -> RuleResult:
    return RuleResult(resource=resource, policy=member.policy, rule=member.rule, status=status,
                      identifier=resource_key(resource.value), message=message, **fields)


def _invoke(member: _Member, invocation: Invocation, value: Any, context: Any) -> tuple[Any, Any]:
    """(the object after one invocation, or None when it did not apply; the error of a mutation or of the match
    conditions, or None). The mutations patch the object as the request has it (in its namespace, with the
    apiserver's defaults); what they did not change of that is taken out again (`without_defaults`)."""
    request = request_for(value, context)
    with invocation_budget():
        outcome = mutate(member.spec, prepare(member.spec, request.with_params(invocation.params)), _APPLY)
    if not outcome.applied:
        return None, outcome.error
    return without_defaults(value, request.variables["object"], outcome.object), outcome.error


def mutating_mutator(key: Any, policy: AdmissionPolicy, rule: AdmissionRule, spec: CompiledSpec,
                     context: ScanContext) -> Mutator:
    """The mutator of one MAP (`key`: the compiled policy, which identifies it in `context`'s chain)."""
    chain = _chain(context)
    member = chain.join(_Member(key, policy, rule, spec))
    params = tuple(getattr(context, "params", ()) or ())
    run_unbound = bool(getattr(context, "run_unbound", False))

    def first_pass(resource: Resource, state: _Pass) -> tuple[Resource, list[RuleResult]]:
        request = request_for(resource.value, context)
        items = list(invocations(policy, request, params, run_unbound=run_unbound))
        if not items:
            return resource, []
        if items == [UNBOUND]:
            return resource, [_result(member, resource, SKIP, not_bound_message(policy))]
        value = resource.value
        applied = False
        errors: list[str] = []
        ran: list[Invocation] = []
        for item in items:
            if not isinstance(item, Invocation):  # a ConfigurationError (UNBOUND comes alone)
                errors.append(item.message if isinstance(item, ConfigurationError) else str(item))
                continue
            after, error = _invoke(member, item, value, context)
            if error is not None:
                errors.append(error.message)
            if after is None or (error is not None and json_equal(after, value)):  # nothing of it applied
                continue
            applied = True
            ran.append(item)
            value = after
        if errors and policy.failure_policy != "Ignore":
            result = _result(member, resource, ERROR, errors[0], error=RuleError(errors[0], kind="mutation"))
            return resource, [result]
        changed = not json_equal(value, resource.value)
        state.changed |= changed
        mutated = resource.with_value(value) if changed else resource
        if not applied:
            message = "match conditions are not met" if not errors else \
                f"mutation failed and failurePolicy is Ignore: {errors[0]}"
            return resource, [_result(member, resource, SKIP, message)]
        result = _result(member, resource, PASS, "mutation applied" if changed else "mutation applied: no change",
                         patched=value)
        if policy.reinvocation_policy == "IfNeeded":
            state.reinvocable.extend((member, item, result) for item in ran)
        return mutated, [result]

    def mutate_resource(resource: Resource) -> tuple[Resource, list[RuleResult]]:
        state = chain.current(member)
        resource, results = first_pass(resource, state)
        if chain.is_last(member) and state.changed and state.reinvocable:
            resource = _reinvoke(state, resource, context)
            state.reinvocable = []
        return resource, results

    return mutate_resource


def _reinvoke(state: _Pass, resource: Resource, context: Any) -> Resource:
    """The second pass: each IfNeeded invocation of the first, in order, on the object as it is now."""
    value = resource.value
    for member, invocation, result in state.reinvocable:
        after, error = _invoke(member, invocation, value, context)
        if error is not None and member.policy.failure_policy != "Ignore":
            result.status, result.message = ERROR, f"reinvoked: {error.message}"
            result.error = RuleError(result.message, kind="mutation")
            continue
        if after is not None:
            value = after
            result.patched = value
    return resource if json_equal(value, resource.value) else resource.with_value(value)
