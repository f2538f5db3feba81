"""The admission request a resource stands for, offline, as ``kyverno test`` builds it.

The Kyverno CLI (cmd/cli/kubectl-kyverno/processor: ``AdmissionRequestShape``,
pkg/cel/engine/request.go) sends each resource as an admission request:
CREATE (the default) has the resource as ``object`` and no ``oldObject``,
UPDATE has it as both, DELETE only as ``oldObject``. ``request`` is the
AdmissionRequest as its JSON has it (uid, kind, resource, names, operation,
userInfo, the objects, dryRun, options; an empty name or namespace is left
out, as the ``omitempty`` fields are); ``namespaceObject`` is the Namespace from the values file,
or null. The same data serves `matching` (as `Attributes`) and the CEL
variables (`variables`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from assertree.languages.kubernetes.matching import Attributes
from assertree.languages.kubernetes.resources import plural_of

__all__ = ["AdmissionRequest", "admission_request"]


@dataclass(frozen=True)
class AdmissionRequest:
    """One resource as an admission request: matching attributes and the CEL variables it gives."""

    attributes: Attributes
    request: dict
    object: Any
    old_object: Any
    namespace_object: Any

    def variables(self) -> dict[str, Any]:
        """The request-level CEL variables (``variables`` and ``exceptions`` are added per policy)."""
        return {"object": self.object, "oldObject": self.old_object, "request": self.request, "params": None,
                "namespaceObject": self.namespace_object}


def _user(user_info: Any) -> dict[str, Any]:
    if user_info is None:
        return {}
    info = user_info.request_info() if hasattr(user_info, "request_info") else user_info
    user = info.get("userInfo") if isinstance(info, Mapping) else None
    return dict(user) if isinstance(user, Mapping) else {}


def admission_request(resource: Any, *, operation: str = "CREATE", values: Any = None,
                      user_info: Any = None, types: Any = None) -> AdmissionRequest:
    """The request for `resource` under `operation`; `values` (a Kyverno values file) gives namespaces,
    `types` (a `kubernetes.cluster.Cluster`: a test's CRDs) the resource names of custom kinds."""
    value = resource if isinstance(resource, Mapping) else {}
    api_version = str(value.get("apiVersion") or "")
    group, _, version = api_version.rpartition("/")
    kind = str(value.get("kind") or "")
    raw_metadata = value.get("metadata")
    metadata = raw_metadata if isinstance(raw_metadata, Mapping) else {}
    namespace = str(metadata.get("namespace") or "")
    name = str(metadata.get("name") or "")
    operation = operation if operation in ("CREATE", "UPDATE", "DELETE") else "CREATE"
    new, old = {"CREATE": (resource, None), "UPDATE": (resource, resource), "DELETE": (None, resource)}[operation]
    namespace_object = None
    if namespace and values is not None and hasattr(values, "namespace"):
        namespace_object = values.namespace(namespace)
    plural = types.type_of(group, version, kind).plural if types is not None else plural_of(kind)
    gvk = {"group": group, "version": version, "kind": kind}
    gvr = {"group": group, "version": version, "resource": plural}
    request: dict[str, Any] = {
        "uid": "", "kind": gvk, "resource": gvr, "requestKind": gvk, "requestResource": gvr,
        "operation": operation, "userInfo": _user(user_info), "object": new, "oldObject": old, "dryRun": False,
        "options": None,
    }
    if name:  # the AdmissionRequest's JSON leaves an empty name, namespace (and subresource) out
        request["name"] = name
    if namespace:
        request["namespace"] = namespace
    attributes = Attributes(group=group, version=version, resource=plural, subresource="", operation=operation,
                            namespace=namespace, name=name, object=new, old_object=old,
                            namespace_object=namespace_object)
    return AdmissionRequest(attributes, request, new, old, namespace_object)
