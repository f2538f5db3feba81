"""The parameter resources of a ClusterPolicy ``validate.cel`` rule (``paramKind`` with ``paramRef``), offline.

Kyverno collects them from its client (pkg/admissionpolicy/utils.go
``CollectParams``, called by pkg/engine/handlers/validation/validate_cel.go);
``kyverno test``'s client is a fake cluster of the test's resources,
``paramResources`` and cluster resources. Offline the cluster is
`param_cluster`: the parameter resources given (``scan --params``, a test's
``paramResources``; a namespaced one without a namespace is in ``default``,
as the CLI loads it) and, in a test with ``clusterResources``, that fake
cluster's objects. Kyverno's rules, which differ from Kubernetes' own:

- a namespaced ``paramKind`` is read in ``paramRef.namespace``, else in the
  resource's namespace; neither (a cluster-scoped resource) is an error, and
  so is a namespace for a cluster-scoped kind;
- ``paramRef.name``: that one object, an error when it does not exist
  (whatever ``parameterNotFoundAction`` says); else ``paramRef.selector``:
  every object it selects; neither: none;
- none found with ``parameterNotFoundAction: Deny`` is an error
  ("no params found"); with ``Allow`` the rule runs for no params (it passes).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from assertree.languages.kubernetes.cluster import Cluster, NotFound, split_api_version
from assertree.languages.selectors import SelectorError, selects

__all__ = ["ParamsError", "collect_params", "param_cluster"]

_MEMO_KEY = "kyverno.validate_cel.params"


class ParamsError(ValueError):
    """Params that cannot be collected: the rule errors ("error in parameterized resource: ...")."""


def param_cluster(context: Any) -> Cluster:
    """The objects params are read from under a scan's `context` (kept in its memo for the scan)."""
    memo = getattr(context, "memo", None)
    if isinstance(memo, dict) and _MEMO_KEY in memo:
        return memo[_MEMO_KEY]
    cluster = Cluster()
    lookups = getattr(context, "lookups", None)
    test_cluster = getattr(lookups, "cluster", None)
    if isinstance(test_cluster, Cluster):
        cluster = test_cluster.copy()
    for param in getattr(context, "params", ()) or ():
        cluster.add(_in_namespace(cluster, param))
    if isinstance(memo, dict):
        memo[_MEMO_KEY] = cluster
    return cluster


def _in_namespace(cluster: Cluster, param: Any) -> Any:
    """`param` with the ``default`` namespace when its kind is namespaced and it names none."""
    if not isinstance(param, Mapping):
        return param
    raw = param.get("metadata")
    metadata: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
    group, version = split_api_version(str(param.get("apiVersion") or ""))
    if metadata.get("namespace") or not cluster.type_of(group, version, str(param.get("kind") or "")).namespaced:
        return param
    return {**param, "metadata": {**metadata, "namespace": "default"}}


def _labels(value: Mapping[str, Any]) -> Mapping[str, str] | None:
    metadata = value.get("metadata")
    labels = metadata.get("labels") if isinstance(metadata, Mapping) else None
    return labels if isinstance(labels, Mapping) else None


def collect_params(param_kind: Mapping[str, Any], param_ref: Mapping[str, Any], namespace: str,
                   cluster: Cluster) -> list[dict]:
    """The params of a rule for a resource in `namespace` (``""``: cluster-scoped); ParamsError as Kyverno's."""
    api_version = str(param_kind.get("apiVersion") or "")
    if api_version.count("/") > 1:
        raise ParamsError("can't parse the parameter resource group version")
    group, version = split_api_version(api_version)
    kind_type = cluster.type_of(group, version, str(param_kind.get("kind") or ""))
    where = ""
    if kind_type.namespaced:
        where = str(param_ref.get("namespace") or "") or namespace
        if not where:
            raise ParamsError("can't use namespaced paramRef to match cluster-scoped resources")
    elif param_ref.get("namespace"):
        raise ParamsError("paramRef.namespace must not be provided for a cluster-scoped `paramKind`")
    found: list[dict] = []
    if param_ref.get("name"):
        try:
            return [cluster.get(api_version, kind_type.plural, where, str(param_ref["name"]))]
        except NotFound as error:
            raise ParamsError(str(error)) from None
    selector = param_ref.get("selector")
    if isinstance(selector, Mapping):
        try:
            found = [value for value in cluster.list(api_version, kind_type.plural, where)
                     if selects(selector, _labels(value))]
        except (NotFound, SelectorError) as error:
            raise ParamsError(str(error)) from None
    if not found and param_ref.get("parameterNotFoundAction") == "Deny":
        raise ParamsError("no params found")
    return found
