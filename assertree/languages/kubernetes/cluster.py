"""A fake cluster: Kubernetes objects held in memory and read the way Kyverno reads a cluster.

``kyverno test`` seeds a fake client with the test's resources,
``targetResources`` and ``paramResources``, and, with ``clusterResources``,
their ``spec.resources`` and the CRDs their ``spec.crds`` name (then lookups
read it too: CEL ``resource.Get/List``, ClusterPolicy ``apiCall``
(``urlPath``) and ``configMap`` context entries, namespace labels); generate
rules clone from it (with the ``cloneSourceResource`` files), mutate-existing
rules patch its targets, cleanup and DeletingPolicies pick what they would
delete from it. ``assertree apply`` fills one from its resource and
``--target`` files. A ``Context`` file's ``spec.resources`` serve the CEL
lookups the same way, through Kyverno's simpler fake provider
(kyverno/kyverno pkg/cel/libs/fake_context.go), which knows no resource types
of its own. `Cluster` is both, told apart by `discovery`:

- resources are stored by group, version, resource (plural), namespace and
  name, the resource named by the built-in kinds (`assertree.languages.kubernetes.
  resources.plural_of`, cluster scope from the CLI's discovery
  data) and by the CRDs added;
- `get` finds one object or raises `NotFound` with Kubernetes' wording
  (``configmaps "x" not found``);
- `list` gives the objects of one resource in one namespace (every namespace
  for ``""`` on a cluster, as the API does), optionally filtered by labels.
  Without `discovery` (a context file), listing a resource nothing was stored
  for is an error, as in Kyverno's fake provider; a cluster knows its
  resource types and lists none;
- `get_path` answers a Kubernetes REST path (``/api/v1/namespaces/ns/pods/x``,
  ``/apis/apps/v1/deployments``), a list as ``{"kind": "<Kind>List", "items":
  [...]}``, as ``apiCall.urlPath`` reads it;
- `find` and `select` look objects up by kind, as Kyverno's generate and
  mutate-existing rules name them (``apiVersion`` ``""`` is any version;
  ``select`` takes a full label selector, ``matchExpressions`` included).

Objects are stored as given (JSON); callers must not mutate what they get.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlsplit

from assertree.languages.kubernetes.resources import is_namespaced, plural_of
from assertree.languages.selectors import selects

__all__ = ["Cluster", "NotFound", "ResourceType", "split_api_version"]


class NotFound(LookupError):
    """No such object, or no such resource type (the message is Kubernetes' or Kyverno's)."""


@dataclass(frozen=True, slots=True)
class ResourceType:
    """What discovery says about a kind: its resource name and scope."""

    group: str
    version: str
    kind: str
    plural: str
    namespaced: bool


def split_api_version(api_version: str) -> tuple[str, str]:
    """(group, version) of ``apps/v1`` or ``v1``."""
    group, _, version = str(api_version or "").rpartition("/")
    return group, version


def _metadata(value: Any) -> Mapping:
    metadata = value.get("metadata") if isinstance(value, Mapping) else None
    return metadata if isinstance(metadata, Mapping) else {}


def _labels_match(labels: Mapping | None, wanted: Mapping[str, str] | None) -> bool:
    if not wanted:
        return True
    labels = labels if isinstance(labels, Mapping) else {}
    return all(labels.get(key) == value for key, value in wanted.items())


@dataclass
class Cluster:
    """Objects by (group, version, plural) and namespace; see the module docstring."""

    discovery: bool = True  # False: a context file's resources (Kyverno's fake provider), no resource types
    _objects: dict[tuple[str, str, str], dict[str, dict[str, dict]]] = field(default_factory=dict)
    _types: dict[tuple[str, str], ResourceType] = field(default_factory=dict)  # (group, kind) -> type (CRDs)
    _plurals: dict[tuple[str, str], ResourceType] = field(default_factory=dict)  # (group, plural) -> type

    # ------------------------------------------------------------------ filling

    def add_crd(self, crd: Mapping[str, Any]) -> None:
        """Register the resource type a CustomResourceDefinition declares (every version)."""
        spec = crd.get("spec") if isinstance(crd, Mapping) else None
        if not isinstance(spec, Mapping):
            raise ValueError("a CustomResourceDefinition needs a spec")
        raw_names = spec.get("names")
        names: Mapping[str, Any] = raw_names if isinstance(raw_names, Mapping) else {}
        group, kind, plural = str(spec.get("group") or ""), str(names.get("kind") or ""), str(names.get("plural") or "")
        if not kind or not plural:
            raise ValueError("a CustomResourceDefinition needs spec.names.kind and spec.names.plural")
        namespaced = spec.get("scope", "Namespaced") != "Cluster"
        versions = [str(item.get("name")) for item in spec.get("versions") or () if isinstance(item, Mapping)]
        for version in versions or [str(spec.get("version") or "")]:
            kept = ResourceType(group, version, kind, plural.lower(), namespaced)
            self._types[(group, kind)] = kept
            self._plurals[(group, plural.lower())] = kept

    def add(self, resource: Mapping[str, Any]) -> None:
        """Store one object (a ``kind: List`` stores its items); a CRD also registers its type."""
        if not isinstance(resource, Mapping):
            return
        if resource.get("kind") == "List" and isinstance(resource.get("items"), list):
            for item in resource["items"]:
                self.add(item)
            return
        kind = str(resource.get("kind") or "")
        if kind == "CustomResourceDefinition" and str(resource.get("apiVersion", "")).startswith("apiextensions."):
            self.add_crd(resource)
        group, version = split_api_version(str(resource.get("apiVersion") or ""))
        kind_type = self.type_of(group, version, kind)
        metadata = _metadata(resource)
        namespace = str(metadata.get("namespace") or "") if kind_type.namespaced else ""
        key = (group, version, kind_type.plural)
        self._objects.setdefault(key, {}).setdefault(namespace, {})[str(metadata.get("name") or "")] = dict(resource)

    def extend(self, resources: Iterable[Mapping[str, Any]]) -> None:
        for resource in resources:
            self.add(resource)

    @classmethod
    def of(cls, resources: Iterable[Mapping[str, Any]] = ()) -> Cluster:
        """A cluster (with discovery) holding `resources`."""
        cluster = cls()
        cluster.extend(resources)
        return cluster

    def copy(self) -> Cluster:
        """Another cluster with the same types and objects, to add to without changing this one."""
        objects = {key: {namespace: dict(named) for namespace, named in namespaces.items()}
                   for key, namespaces in self._objects.items()}
        return Cluster(self.discovery, objects, dict(self._types), dict(self._plurals))

    # ------------------------------------------------------------------ types

    def type_of(self, group: str, version: str, kind: str) -> ResourceType:
        """The resource type of a kind: a CRD's, else the built-in naming (plural guess, known scope)."""
        found = self._types.get((group, kind))
        if found is not None:
            return ResourceType(group, version, kind, found.plural, found.namespaced)
        return ResourceType(group, version, kind, plural_of(kind),
                            is_namespaced(f"{group}/{version}" if group else version, kind))

    def kind_of(self, group: str, plural: str) -> str | None:
        """The kind stored (or declared by a CRD) under a resource name."""
        found = self._plurals.get((group, plural))
        if found is not None:
            return found.kind
        for (stored_group, _version, stored_plural), namespaces in self._objects.items():
            if stored_group == group and stored_plural == plural:
                for objects in namespaces.values():
                    for value in objects.values():
                        return str(value.get("kind") or "")
        return None

    # ------------------------------------------------------------------ reading

    def objects(self) -> Iterator[dict]:
        """Every stored object."""
        for namespaces in self._objects.values():
            for objects in namespaces.values():
                yield from objects.values()

    def find(self, api_version: str, kind: str, namespace: str, name: str) -> dict | None:
        """The object of `kind` named `name` in `namespace` (any for a cluster-scoped kind), or None;
        `api_version` ``""`` is any version."""
        for value in self._of_kind(api_version, kind, None):
            metadata = _metadata(value)
            if str(metadata.get("name") or "") == name and self._in_namespace(value, namespace):
                return value
        return None

    def select(self, api_version: str, kind: str, namespace: str | None = None,
               selector: Mapping[str, Any] | None = None) -> list[dict]:
        """The objects of `kind` in `namespace` (None: every namespace) whose labels `selector` (a
        ``LabelSelector``; none: every object) selects; `selectors.SelectorError` for one Kubernetes would not
        build. `api_version` ``""`` is any version."""
        return [value for value in self._of_kind(api_version, kind, namespace)
                if not selector or selects(selector, _metadata(value).get("labels"))]

    def _of_kind(self, api_version: str, kind: str, namespace: str | None) -> Iterator[dict]:
        group, version = split_api_version(api_version)
        for (stored_group, stored_version, _plural), namespaces in self._objects.items():
            if api_version and (stored_group, stored_version) != (group, version):
                continue
            for stored_namespace, objects in namespaces.items():
                if namespace is not None and stored_namespace not in (namespace, ""):
                    continue
                for value in objects.values():
                    if value.get("kind") == kind and (namespace is None or self._in_namespace(value, namespace)):
                        yield value

    def _in_namespace(self, value: Mapping[str, Any], namespace: str) -> bool:
        """Whether `value` is in `namespace` (a cluster-scoped object is in every one)."""
        group, version = split_api_version(str(value.get("apiVersion") or ""))
        if not self.type_of(group, version, str(value.get("kind") or "")).namespaced:
            return True
        return str(_metadata(value).get("namespace") or "") == (namespace or "")

    def get(self, api_version: str, plural: str, namespace: str, name: str) -> dict:
        """The object, or `NotFound` (``<resource> "<name>" not found``)."""
        group, version = split_api_version(api_version)
        found = self._objects.get((group, version, plural), {}).get(namespace or "", {}).get(name)
        if found is None:
            resource = f"{plural}.{group}" if group else plural
            raise NotFound(f'{resource} "{name}" not found')
        return found

    def list(self, api_version: str, plural: str, namespace: str = "",
             labels: Mapping[str, str] | None = None) -> list[dict]:
        """The objects of one resource in `namespace` (a cluster: every namespace for ``""``), label-filtered."""
        group, version = split_api_version(api_version)
        namespaces = self._objects.get((group, version, plural))
        if namespaces is None:
            if not self.discovery:
                resource = f"{plural}.{group}" if group else plural
                raise NotFound(f"{resource} resource not found")
            return []
        if namespace or not self.discovery:
            chosen = list(namespaces.get(namespace or "", {}).values())
        else:
            chosen = [value for objects in namespaces.values() for value in objects.values()]
        return [value for value in chosen if _labels_match(_metadata(value).get("labels"), labels)]

    def namespace(self, name: str) -> dict | None:
        """The Namespace object named `name`, if stored."""
        return self._objects.get(("", "v1", "namespaces"), {}).get("", {}).get(name)

    def get_path(self, path: str) -> Any:
        """The answer to a GET of a Kubernetes REST `path` (with an optional ``?labelSelector=a=b,c=d``)."""
        parts = urlsplit(path)
        segments = [segment for segment in parts.path.split("/") if segment]
        if segments[:1] == ["api"] and len(segments) >= 2:
            api_version, rest = segments[1], segments[2:]
        elif segments[:1] == ["apis"] and len(segments) >= 3:
            api_version, rest = f"{segments[1]}/{segments[2]}", segments[3:]
        else:
            raise NotFound(f"the server could not find the requested resource ({path})")
        namespace = ""
        if len(rest) >= 3 and rest[0] == "namespaces":
            namespace, rest = rest[1], rest[2:]
        elif len(rest) == 2 and rest[0] == "namespaces":
            return copy.deepcopy(self.get(api_version, "namespaces", "", rest[1]))
        if len(rest) == 2:
            return copy.deepcopy(self.get(api_version, rest[0], namespace, rest[1]))
        if len(rest) != 1:
            raise NotFound(f"the server could not find the requested resource ({path})")
        selector = parse_qs(parts.query).get("labelSelector", [""])[0]
        labels = dict(item.split("=", 1) for item in selector.split(",") if "=" in item) if selector else None
        items = self.list(api_version, rest[0], namespace, labels)
        group, _version = split_api_version(api_version)
        kind = self.kind_of(group, rest[0]) or rest[0]
        return {"apiVersion": api_version, "kind": f"{kind}List", "metadata": {"resourceVersion": ""},
                "items": copy.deepcopy(items)}
