"""The admission request a resource stands for, and the CEL variables a policy invocation sees, offline.

The request is `assertree.languages.kubernetes.request`'s (the scan's
operation, CREATE by default; the user from a user-info file), with what the
apiserver does before admission policies see it (its create handler and
k8s.io/apiserver/pkg/admission/plugin/cel ``CreateAdmissionRequest``,
``CreateNamespaceObject``):

- an object of a namespaced kind without ``metadata.namespace`` is in the
  request's namespace, ``default`` (what ``kubectl apply`` sends), and its
  ``metadata.namespace`` says so;
- the object has the defaults the apiserver's decoding fills in
  (`assertree.languages.kubernetes.defaults`), unless the scan says not to
  (``ScanContext.kubernetes_defaults``; ``assertree test`` does not, as the
  Kyverno CLI does not);
- a Namespace's request has its own name as the namespace;
- ``request`` carries no ``object``/``oldObject`` (they are variables of their
  own);
- ``namespaceObject`` is the request's Namespace (null for cluster-scoped
  objects and for a Namespace itself): from a Kyverno values file when it
  describes it, else a Namespace with the ``kubernetes.io/metadata.name``
  label every namespace has; only the fields Kubernetes exposes (metadata,
  spec, status).
- ``authorizer`` acts for the request's user (`assertree.languages.cel.functions.authz`).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from assertree.languages.cel.functions.authz import authorizer, request_resource
from assertree.languages.kubernetes.defaults import with_defaults
from assertree.languages.kubernetes.request import AdmissionRequest, admission_request
from assertree.languages.kubernetes.resources import is_namespaced

__all__ = ["Request", "build_request", "request_for"]

_NAME_LABEL = "kubernetes.io/metadata.name"


@dataclass(frozen=True)
class Request:
    """One resource as the request admission policies see, and the variables every invocation shares."""

    admission: AdmissionRequest
    variables: dict[str, Any]

    @property
    def namespace(self) -> str:
        """The namespace the request is in, ``""`` for a cluster-scoped object (a Namespace included)."""
        if self.admission.attributes.resource == "namespaces":
            return ""
        return self.variables["request"].get("namespace", "")  # the request's JSON leaves an empty one out

    def with_params(self, params: Any) -> dict[str, Any]:
        """The variables of one invocation: these, and `params`."""
        return {**self.variables, "params": params}


def _in_namespace(resource: Any) -> Any:
    """`resource` with ``metadata.namespace: default`` when its kind is namespaced and it names none."""
    if not isinstance(resource, Mapping) or not isinstance(resource.get("kind"), str) \
            or not is_namespaced(resource.get("apiVersion"), resource.get("kind")):
        return resource  # a cluster-scoped kind, or not a Kubernetes object at all
    metadata = resource.get("metadata")
    if not isinstance(metadata, Mapping) or metadata.get("namespace"):
        return resource
    return {**resource, "metadata": {**metadata, "namespace": "default"}}


def _namespace_object(name: str, values: Any) -> dict:
    described = values.namespace(name) if values is not None and hasattr(values, "namespace") else None
    metadata = (described or {}).get("metadata") or {}
    labels = {_NAME_LABEL: name, **(metadata.get("labels") or {})}
    out: dict[str, Any] = {"metadata": {**{key: metadata[key] for key in ("annotations", "uid") if key in metadata},
                                        "name": name, "labels": labels},
                           "spec": (described or {}).get("spec") or {"finalizers": ["kubernetes"]},
                           "status": (described or {}).get("status") or {"phase": "Active"}}
    return out


_KEPT = 16
_local = threading.local()


def request_for(resource: Any, context: Any) -> Request:
    """The request for `resource` under the scan's `context` (operation, values, user info).

    Fast path: every admission policy of a scan asks for the request of the same resource, and building it
    (a defaulted copy of the object) costs as much as evaluating the policy; the last `_KEPT` requests are
    kept, keyed by the identity of the resource and of the context's inputs, which the entry keeps alive. It
    must never change a result, which holds while a resource is not changed after it is first checked: a scan
    only reads its resources, and a mutation makes a new value. `build_request` is the general path.
    """
    key = (id(resource), id(context), getattr(context, "operation", None), id(getattr(context, "values", None)),
           id(getattr(context, "user_info", None)), getattr(context, "kubernetes_defaults", True))
    kept: dict = _local.__dict__.setdefault("requests", {})
    found = kept.get(key)
    if found is not None:
        return found[2]
    request = build_request(resource, context)
    if len(kept) >= _KEPT:
        del kept[next(iter(kept))]
    kept[key] = (resource, context, request)  # the resource and the context pin the ids of the key
    return request


def build_request(resource: Any, context: Any) -> Request:
    """The request for `resource` under the scan's `context`, built (`request_for` keeps the last ones)."""
    operation = getattr(context, "operation", "CREATE") or "CREATE"
    values = getattr(context, "values", None)
    resource = _in_namespace(resource)
    if getattr(context, "kubernetes_defaults", True):
        resource = with_defaults(resource)
    built = admission_request(resource, operation=operation, values=values, user_info=getattr(context, "user_info",
                                                                                                None))
    attributes = built.attributes
    request = {key: value for key, value in built.request.items() if key not in ("object", "oldObject")}
    namespace_object = None
    if attributes.resource == "namespaces" and attributes.group == "":
        request["namespace"] = attributes.name
    elif attributes.namespace:
        namespace_object = _namespace_object(attributes.namespace, values)
    user = str((request.get("userInfo") or {}).get("username") or "")
    variables = {
        "object": built.object, "oldObject": built.old_object, "request": request,
        "namespaceObject": namespace_object,
        "authorizer": authorizer(user),
        "authorizer.requestResource": request_resource(attributes.group, attributes.resource, attributes.subresource,
                                                       attributes.namespace, attributes.name, user),
    }
    admission = AdmissionRequest(replace(attributes, namespace_object=namespace_object), request, built.object,
                                 built.old_object, namespace_object)
    return Request(admission, variables)
