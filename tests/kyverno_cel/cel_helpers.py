"""Helpers shared by the kyverno_cel tests: build a policy from a small spec, run it on resources."""

from __future__ import annotations

from typing import Any

from assertree.languages.base import ScanContext

POD_RULES = [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE", "UPDATE"], "resources": ["pods"]}]


def policy_document(spec: dict, *, kind: str = "ValidatingPolicy", name: str = "p",
                    version: str = "v1alpha1") -> dict:
    return {"apiVersion": f"policies.kyverno.io/{version}", "kind": kind, "metadata": {"name": name}, "spec": spec}


def pod(name: str = "web", namespace: str = "default", labels: dict | None = None, **spec: Any) -> dict:
    metadata: dict[str, Any] = {"name": name, "namespace": namespace}
    if labels is not None:
        metadata["labels"] = labels
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata,
            "spec": spec or {"containers": [{"name": "c", "image": "nginx:1.25"}]}}


def deployment(name: str = "web", **pod_spec: Any) -> dict:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": "default"},
            "spec": {"template": {"metadata": {"labels": {"app": name}},
                                  "spec": pod_spec or {"containers": [{"name": "c", "image": "nginx:1.25"}]}}}}


def run(document: dict, resource: Any, context: ScanContext | None = None) -> list:
    """Every result the policy gives for `resource` (validating rules only)."""
    from assertree.languages.kyverno.cel_policies.language import compile_document
    from assertree.results import Resource

    compiled = compile_document(document)
    context = context or ScanContext()
    item = Resource(resource)
    return [found for rule in compiled.rules if (found := rule.runner(context)(item)) is not None]
