"""Joining bindings to the policies they name, once every document of a load is compiled.

A binding is its own document (often its own file) and names its policy by
``spec.policyName``; a ValidatingAdmissionPolicyBinding binds a
ValidatingAdmissionPolicy, a MutatingAdmissionPolicyBinding a
MutatingAdmissionPolicy. `link` attaches each binding to the policy of that
kind and name among the documents loaded together, in load order, and hands
back the bindings that name no such policy (Kubernetes ignores them; the
callers decide what to say). A policy that no binding names stays unbound.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from assertree.languages.admission.compile import CompiledAdmissionPolicy
from assertree.languages.admission.model import Binding

__all__ = ["link", "orphan_message"]


def link(items: Iterable[Any]) -> tuple[list[Any], list[Binding]]:
    """(`items` without the bindings, each admission policy among them with its bindings attached; the bindings
    that name no policy of `items`). Other items pass through unchanged, in order."""
    items = list(items)
    bindings = [item for item in items if isinstance(item, Binding)]
    policies = [item for item in items if isinstance(item, CompiledAdmissionPolicy)]
    by_name = {(compiled.policy.binding_kind, compiled.policy.name): compiled.policy for compiled in policies}
    attached: dict[int, list[Binding]] = {id(compiled.policy): [] for compiled in policies}
    orphans = []
    for binding in bindings:
        policy = by_name.get((binding.kind, binding.policy_name))
        if policy is None:
            orphans.append(binding)
        else:
            attached[id(policy)].append(binding)
    for compiled in policies:
        if attached[id(compiled.policy)] or not compiled.policy.bindings:
            compiled.policy.bindings = tuple(attached[id(compiled.policy)])
    return [item for item in items if not isinstance(item, Binding)], orphans


def orphan_message(binding: Binding) -> str:
    """What is wrong with a binding whose policy was not given."""
    policy_kind = binding.kind.removesuffix("Binding")
    return (f"{binding.kind} {binding.name!r} binds {policy_kind} {binding.policy_name!r}, which is not among the "
            "policies given (Kubernetes ignores such a binding)")
