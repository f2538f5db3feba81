"""Which parameter resources a binding gives its policy: Kubernetes' CollectParams, offline.

k8s.io/apiserver/pkg/admission/plugin/policy/generic/policy_dispatcher.go
(``CollectParams``). Offline the "cluster" is the parameter resources given
(``--params``, a test's ``paramResources``); only those of the policy's
``paramKind`` (group and kind; any version) are candidates.

- No ``paramKind``, or a binding without ``paramRef``: the policy runs once,
  with ``params`` null.
- ``paramRef.name``: the one resource of that name, in ``paramRef.namespace``,
  else the request's namespace when the kind is namespaced; a namespaced kind
  with neither (a cluster-scoped request) is a configuration error, and so is
  a namespace given for a cluster-scoped kind.
- ``paramRef.selector``: every resource whose labels it selects (in that
  namespace, for a namespaced kind); the policy runs once per resource, as in
  Kubernetes (the Kyverno CLI passes them as one list instead).
- Nothing found: ``parameterNotFoundAction: Deny`` is a configuration error
  ("no params found for policy binding with `Deny` parameterNotFoundAction");
  otherwise the policy does not run for that binding.

Scope without discovery: a built-in kind is namespaced unless Kubernetes
lists it as cluster-scoped (`assertree.languages.kubernetes.resources`); a
custom kind is namespaced when one of its given resources has a namespace,
and cluster-scoped otherwise. A resource of a namespaced kind without a
namespace is in ``default``, where ``kubectl apply`` would put it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from assertree.languages.admission.model import ParamRef
from assertree.languages.kubernetes.resources import CLUSTER_SCOPED
from assertree.languages.selectors import SelectorError, selects

__all__ = ["ParamError", "select_params"]

_BUILT_IN_GROUPS = frozenset({"", "apps", "batch", "autoscaling", "policy", "extensions"})


class ParamError(ValueError):
    """A binding whose params cannot be chosen: a configuration error (subject to the failure policy)."""


def _group(api_version: str) -> str:
    return api_version.rpartition("/")[0]


def _metadata(value: Any) -> Mapping:
    metadata = value.get("metadata") if isinstance(value, Mapping) else None
    return metadata if isinstance(metadata, Mapping) else {}


def _of_kind(params: Sequence[Any], api_version: str, kind: str) -> list[Mapping]:
    group = _group(api_version)
    return [param for param in params if isinstance(param, Mapping) and param.get("kind") == kind
            and _group(str(param.get("apiVersion") or "")) == group]


def _namespaced(api_version: str, kind: str, candidates: list[Mapping]) -> bool:
    group = _group(api_version)
    if (group, kind) in CLUSTER_SCOPED:
        return False
    if group in _BUILT_IN_GROUPS or (group.endswith(".k8s.io") and not group.endswith(".x-k8s.io")):
        return True
    return any(_metadata(param).get("namespace") for param in candidates)


def select_params(param_kind: tuple[str, str] | None, param_ref: ParamRef | None, namespace: str,
                  params: Sequence[Any]) -> list[Any]:
    """The params the policy runs with for one binding and a request in `namespace` (``""``: cluster-scoped):
    ``[None]`` to run without params, ``[]`` not to run; ParamError for a configuration error."""
    if param_kind is None or param_ref is None:
        return [None]
    api_version, kind = param_kind
    candidates = _of_kind(params, api_version, kind)
    namespaced = _namespaced(api_version, kind, candidates)
    if namespaced:
        where = param_ref.namespace or namespace
        if not where:
            raise ParamError("cannot use namespaced paramRef in policy binding that matches cluster-scoped resources")
        candidates = [param for param in candidates if (_metadata(param).get("namespace") or "default") == where]
    elif param_ref.namespace:
        raise ParamError("paramRef.namespace must not be provided for a cluster-scoped `paramKind`")
    if param_ref.name:
        if param_ref.selector is not None:
            raise ParamError("paramRef.name and paramRef.selector are mutually exclusive")
        found = [param for param in candidates if _metadata(param).get("name") == param_ref.name][:1]
    elif param_ref.selector is not None:
        try:
            found = [param for param in candidates if selects(param_ref.selector, _metadata(param).get("labels"))]
        except SelectorError as error:
            raise ParamError(str(error)) from None
    else:
        raise ParamError("one of name or selector must be provided")
    if not found and param_ref.not_found_action == "Deny":
        raise ParamError("no params found for policy binding with `Deny` parameterNotFoundAction")
    return found
