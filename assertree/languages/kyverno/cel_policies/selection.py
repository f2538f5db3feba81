"""Whether a policy looks at a resource, and with what CEL variables: the request a resource stands for.

`selected_data` is where every CEL kind starts with a resource: JSON mode
takes any payload as ``object``; the authorization modes (HTTP, Envoy) check
requests, not resources; Kubernetes mode puts a namespace-less namespaced
resource in ``default`` (as ``kyverno apply`` reads resources), builds the
admission request (`assertree.languages.kubernetes.request`) and asks the
match constraints (`assertree.languages.kubernetes.matching`), a namespaced
policy seeing only its own namespace.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from assertree.languages.kubernetes.matching import matches
from assertree.languages.kubernetes.request import AdmissionRequest, admission_request
from assertree.languages.kyverno.cel_policies.authz import MODES as AUTHZ_MODES
from assertree.languages.kyverno.cel_policies.model import CelPolicy, CelRule
from assertree.languages.kyverno.manifests import with_default_namespace

if TYPE_CHECKING:
    from assertree.languages.base import ScanContext

__all__ = ["selected_data"]


def selected_data(policy: CelPolicy, rule: CelRule, resource: Any, context: ScanContext, *,
                  any_operation: bool = False) -> dict[str, Any] | None:
    """The CEL variables for `resource`, or None when the rule's match constraints do not select it
    (`any_operation`: an existing resource, selected whatever the operation)."""
    if rule.spec.mode == "JSON":
        return {"object": resource, "oldObject": None, "request": None, "params": None, "namespaceObject": None}
    if rule.spec.mode in AUTHZ_MODES:
        return None  # checks requests, not resources (`compile.CompiledCelPolicy.check_request`)
    if rule.spec.match is None:
        return None
    resource, request = _request(resource, context)
    if policy.kind.startswith("Namespaced") and policy.namespace is not None:
        metadata = resource.get("metadata") if isinstance(resource, dict) else None
        if not isinstance(metadata, dict) or metadata.get("namespace") != policy.namespace:
            return None  # a namespaced policy sees only its own namespace
    if not matches(rule.spec.match, request.attributes, generate_name=True, any_operation=any_operation):
        return None
    return request.variables()


def _request(resource: Any, context: ScanContext) -> tuple[Any, AdmissionRequest]:
    """`resource` as kyverno apply reads it (in ``default`` when namespace-less) and its admission request,
    made once per resource for every rule of every policy.

    Invariant (held to a fresh build by `tests/kyverno_cel/test_request_memo.py`): the request is a function
    of the resource object and the scan's operation, values, user info, cluster types and cluster-scoped
    kinds, and nothing that
    receives it changes it, so the memo (the last resource, compared by identity, with those five) gives
    what building it again would.
    """
    lookups = getattr(context, "lookups", None)
    inputs = (resource, context.operation, context.values, context.user_info, getattr(lookups, "cluster", None),
              context.cluster_scoped)
    memo: list[Any] = context.memo.setdefault("kubernetes.request", [None, None, None])
    if memo[0] is None or any(a is not b for a, b in zip(memo[0], inputs, strict=True)):
        defaulted = with_default_namespace(resource, inputs[5])
        request = admission_request(defaulted, operation=inputs[1], values=inputs[2], user_info=inputs[3],
                                    types=inputs[4])
        memo[:] = [inputs, defaulted, request]
    return memo[1], memo[2]
