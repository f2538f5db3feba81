"""What discovery would say about a kind without a cluster: its resource name (``Pod`` -> ``pods``) and scope.

Admission requests, and so ``matchConstraints.resourceRules``, name resources
by their plural (``deployments``), while manifests name their kind. The Kyverno
CLI asks its built-in discovery data first and otherwise guesses the way
apimachinery's ``UnsafeGuessKindToResource`` does (lower case; ``-s`` ->
``-ses``, ``-y`` -> ``-ies``, else ``-s``), which gives the discovery answer
for every built-in kind except the irregular ones listed here. Scope: the
built-in cluster-scoped kinds are listed (`CLUSTER_SCOPED`); any other kind,
a CRD's included, counts as namespaced, as in the CLI.
"""

from __future__ import annotations

from typing import Any

__all__ = ["CLUSTER_SCOPED", "identity", "is_namespaced", "plural_of", "resource_key"]

# Built-in kinds that are cluster-scoped, by API group (from kubectl-kyverno's data/api-group-resources.json).
CLUSTER_SCOPED: frozenset[tuple[str, str]] = frozenset({
    ("", "ComponentStatus"), ("", "Namespace"), ("", "Node"), ("", "NodeProxyOptions"), ("", "PersistentVolume"),
    ("admissionregistration.k8s.io", "MutatingWebhookConfiguration"),
    ("admissionregistration.k8s.io", "ValidatingAdmissionPolicy"),
    ("admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding"),
    ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration"),
    ("apiextensions.k8s.io", "CustomResourceDefinition"), ("apiregistration.k8s.io", "APIService"),
    ("authentication.k8s.io", "SelfSubjectReview"), ("authentication.k8s.io", "TokenReview"),
    ("authorization.k8s.io", "SelfSubjectAccessReview"), ("authorization.k8s.io", "SelfSubjectRulesReview"),
    ("authorization.k8s.io", "SubjectAccessReview"), ("certificates.k8s.io", "CertificateSigningRequest"),
    ("flowcontrol.apiserver.k8s.io", "FlowSchema"), ("flowcontrol.apiserver.k8s.io", "PriorityLevelConfiguration"),
    ("networking.k8s.io", "IPAddress"), ("networking.k8s.io", "IngressClass"), ("networking.k8s.io", "ServiceCIDR"),
    ("node.k8s.io", "RuntimeClass"), ("rbac.authorization.k8s.io", "ClusterRole"),
    ("rbac.authorization.k8s.io", "ClusterRoleBinding"), ("resource.k8s.io", "DeviceClass"),
    ("resource.k8s.io", "ResourceSlice"), ("scheduling.k8s.io", "PriorityClass"), ("storage.k8s.io", "CSIDriver"),
    ("storage.k8s.io", "CSINode"), ("storage.k8s.io", "StorageClass"), ("storage.k8s.io", "VolumeAttachment"),
    ("storage.k8s.io", "VolumeAttributesClass"),
})

_IRREGULAR = {"endpoints": "endpoints", "podsecuritypolicy": "podsecuritypolicies"}


def plural_of(kind: str) -> str:
    """The resource name of `kind` (lower-case plural)."""
    singular = kind.lower()
    if not singular:
        return ""
    if singular in _IRREGULAR:
        return _IRREGULAR[singular]
    if singular.endswith("s"):
        return singular + "es"
    if singular.endswith("y"):
        return singular[:-1] + "ies"
    return singular + "s"


def is_namespaced(api_version: Any, kind: Any, cluster_scoped: frozenset[tuple[str, str]] = frozenset()) -> bool:
    """False only for the built-in cluster-scoped kinds, and those of `cluster_scoped` (group, kind) pairs
    (read from CRD files); unknown kinds count as namespaced, as in the CLI."""
    version = str(api_version or "")
    group = version.split("/", 1)[0] if "/" in version else ""
    key = (group, str(kind or ""))
    return key not in CLUSTER_SCOPED and key not in cluster_scoped


def resource_key(value: Any) -> str | None:
    """``Kind/namespace/name`` (``Kind/name`` when cluster-scoped), as Kyverno names a resource."""
    if not isinstance(value, dict):
        return None
    raw_metadata = value.get("metadata")
    metadata = raw_metadata if isinstance(raw_metadata, dict) else {}
    parts = [value.get("kind"), metadata.get("namespace"), metadata.get("name")]
    return "/".join(str(part) for part in parts if part) or None


def identity(resource: Any) -> tuple[str, str, str, str]:
    """(apiVersion, kind, namespace, name) of a Kubernetes object (``""`` for what it lacks)."""
    if not isinstance(resource, dict):
        return "", "", "", ""
    raw_metadata = resource.get("metadata")
    metadata = raw_metadata if isinstance(raw_metadata, dict) else {}
    return (str(resource.get("apiVersion") or ""), str(resource.get("kind") or ""),
            str(metadata.get("namespace") or ""), str(metadata.get("name") or ""))
