"""Whether a policy looks at a resource, and with what CEL variables: the request a resource stands for.

`selected_data` is where every CEL kind starts with a resource: JSON mode
takes any payload as ``object``; Kubernetes mode builds the admission request
(`request`) and asks the match constraints (`matching`), a namespaced policy
seeing only its own namespace.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from assertree.languages.kyverno.cel_policies.matching import matches
from assertree.languages.kyverno.cel_policies.model import CelPolicy, CelRule
from assertree.languages.kyverno.cel_policies.request import admission_request

if TYPE_CHECKING:
    from assertree.languages.base import ScanContext

__all__ = ["selected_data"]


def selected_data(policy: CelPolicy, rule: CelRule, resource: Any, context: ScanContext, *,
          any_operation: bool = False) -> dict[str, Any] | None:
    """The CEL variables for `resource`, or None when the rule's match constraints do not select it
    (`any_operation`: an existing resource, selected whatever the operation)."""
    if rule.spec.mode == "JSON":
        return {"object": resource, "oldObject": None, "request": None, "params": None, "namespaceObject": None}
    if rule.spec.match is None:
        return None
    if policy.kind.startswith("Namespaced") and policy.namespace is not None:
        metadata = resource.get("metadata") if isinstance(resource, dict) else None
        if not isinstance(metadata, dict) or metadata.get("namespace") != policy.namespace:
            return None  # a namespaced policy sees only its own namespace
    request = admission_request(resource, operation=context.operation, values=context.values,
                                user_info=context.user_info)
    if not matches(rule.spec.match, request.attributes, any_operation=any_operation):
        return None
    return request.variables()
