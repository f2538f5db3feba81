"""Helpers for the admission tests: build policies, bindings and resources from small specs, and scan them."""

from __future__ import annotations

from typing import Any

from assertree.engine.scan import scan
from assertree.languages.base import ScanContext
from assertree.languages.load import compile_document, link
from assertree.results import RuleResult

GROUP = "admissionregistration.k8s.io"
POD_RULES = [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE", "UPDATE"], "resources": ["pods"]}]


def vap(name: str = "p", **spec: Any) -> dict:
    spec.setdefault("matchConstraints", {"resourceRules": POD_RULES})
    return {"apiVersion": f"{GROUP}/v1", "kind": "ValidatingAdmissionPolicy", "metadata": {"name": name},
            "spec": spec}


def map_(name: str = "m", **spec: Any) -> dict:
    spec.setdefault("matchConstraints", {"resourceRules": POD_RULES})
    spec.setdefault("reinvocationPolicy", "Never")
    return {"apiVersion": f"{GROUP}/v1beta1", "kind": "MutatingAdmissionPolicy", "metadata": {"name": name},
            "spec": spec}


def binding(policy: str = "p", name: str | None = None, *, mutating: bool = False, **spec: Any) -> dict:
    kind = "MutatingAdmissionPolicyBinding" if mutating else "ValidatingAdmissionPolicyBinding"
    if not mutating:
        spec.setdefault("validationActions", ["Deny"])
    return {"apiVersion": f"{GROUP}/{'v1beta1' if mutating else 'v1'}", "kind": kind,
            "metadata": {"name": name or f"{policy}-binding"}, "spec": {"policyName": policy, **spec}}


def pod(name: str = "web", namespace: str | None = "default", labels: dict | None = None, **spec: Any) -> dict:
    metadata: dict[str, Any] = {"name": name}
    if namespace is not None:
        metadata["namespace"] = namespace
    if labels is not None:
        metadata["labels"] = labels
    spec.setdefault("containers", [{"name": "app", "image": "nginx:1.27"}])
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec}


def config_map(name: str, namespace: str | None = "default", labels: dict | None = None, **data: str) -> dict:
    metadata: dict[str, Any] = {"name": name}
    if namespace is not None:
        metadata["namespace"] = namespace
    if labels is not None:
        metadata["labels"] = labels
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata, "data": data}


def compiled(*documents: dict) -> list[Any]:
    """The documents compiled and linked, as a load gives them."""
    policies, unlinked = link([compile_document(document) for document in documents])
    assert not unlinked, unlinked
    return policies


def run(documents: list[dict], resources: list[dict], **context: Any) -> list[RuleResult]:
    """Every result of scanning `resources` with the `documents` (policies and bindings)."""
    return scan(resources, compiled(*documents), context=ScanContext(**context)).results


def one(documents: list[dict], resource: dict, **context: Any) -> RuleResult | None:
    """The one result of a one-policy scan of `resource` (None when the policy did not select it)."""
    results = run(documents, [resource], **context)
    assert len(results) <= 1, results
    return results[0] if results else None
