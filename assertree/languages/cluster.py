"""The resources a policy may look up besides the one it checks: a fake cluster, offline.

Some rules read other objects of the cluster: a ``generate`` rule that clones
a Secret, a ``mutate.targets`` rule that patches existing ConfigMaps, a
MutatingPolicy's ``mutateExisting`` targets. assertree has no cluster, so the
caller says which objects exist: ``kyverno test`` builds its fake client from
the test's ``resources``, ``targetResources`` and ``cloneSourceResource``
files; ``assertree apply`` from its resource and ``--target`` files. Whatever
they come from, languages see them through `Cluster` (`ScanContext.cluster`):

    cluster.get("v1", "Secret", "default", "regcred")      # one object, or None
    cluster.list("v1", "Secret", "default", selector)      # every match, in order

`ResourceSet` is the one implementation: objects kept in order, indexed by
kind. Another source (the ``clusterResources`` files of a test, say) plugs in
by giving the same two methods. ``api_version`` ``""`` matches any version;
``namespace`` ``None`` lists every namespace; ``selector`` is a Kubernetes
label selector (``matchLabels``/``matchExpressions``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Protocol

__all__ = ["Cluster", "ResourceSet", "identity", "selects"]


class Cluster(Protocol):
    """Lookups of existing objects (see the module docstring)."""

    def get(self, api_version: str, kind: str, namespace: str, name: str) -> dict | None: ...

    def list(self, api_version: str, kind: str, namespace: str | None = None,
             selector: Mapping[str, Any] | None = None) -> list[dict]: ...


def identity(resource: Any) -> tuple[str, str, str, str]:
    """(apiVersion, kind, namespace, name) of a Kubernetes object ("" for what it lacks)."""
    if not isinstance(resource, Mapping):
        return "", "", "", ""
    metadata = resource.get("metadata")
    metadata = metadata if isinstance(metadata, Mapping) else {}
    return (str(resource.get("apiVersion") or ""), str(resource.get("kind") or ""),
            str(metadata.get("namespace") or ""), str(metadata.get("name") or ""))


class ResourceSet:
    """A `Cluster` made of given objects; a later object with the same identity replaces the earlier one."""

    def __init__(self, resources: Iterable[Any] = ()) -> None:
        self._objects: dict[tuple[str, str, str, str], dict] = {}
        for resource in resources:
            self.add(resource)

    def add(self, resource: Any) -> None:
        if isinstance(resource, dict) and resource.get("kind"):
            self._objects[identity(resource)] = resource

    def __len__(self) -> int:
        return len(self._objects)

    def __iter__(self):
        return iter(self._objects.values())

    def get(self, api_version: str, kind: str, namespace: str, name: str) -> dict | None:
        for (version, their_kind, their_namespace, their_name), value in self._objects.items():
            if (their_kind == kind and their_name == name and their_namespace == (namespace or "")
                    and (not api_version or version == api_version)):
                return value
        return None

    def list(self, api_version: str, kind: str, namespace: str | None = None,
             selector: Mapping[str, Any] | None = None) -> list[dict]:
        out = []
        for (version, their_kind, their_namespace, _name), value in self._objects.items():
            if their_kind != kind or (api_version and version != api_version):
                continue
            if namespace is not None and their_namespace != namespace:
                continue
            if selector and not selects(selector, (value.get("metadata") or {}).get("labels")):
                continue
            out.append(value)
        return out


def selects(selector: Mapping[str, Any], labels: Any) -> bool:
    """Whether a Kubernetes label selector (``matchLabels``, ``matchExpressions``) selects `labels`, as a
    list call filters: every requirement holds; ``NotIn`` and ``DoesNotExist`` hold when the label is absent."""
    labels = labels if isinstance(labels, Mapping) else {}
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    for requirement in selector.get("matchExpressions") or []:
        if not isinstance(requirement, Mapping):
            return False
        key, operator = requirement.get("key"), requirement.get("operator")
        values = [str(value) for value in requirement.get("values") or []]
        present = key in labels
        if operator == "In" and not (present and str(labels[key]) in values):
            return False
        if operator == "NotIn" and present and str(labels[key]) in values:
            return False
        if operator == "Exists" and not present:
            return False
        if operator == "DoesNotExist" and present:
            return False
        if operator not in ("In", "NotIn", "Exists", "DoesNotExist"):
            return False
    return True
