"""The ConfigMaps a test's values file stands for: one cluster's data, given to both sides of the proof and to
the rewritten test.

Offline, ``kyverno test`` has no loader for a ClusterPolicy's ``configMap``
context entries (cmd/cli/kubectl-kyverno/store/contextloader.go): their data
come from the values file (``globalValues``, a resource's or a rule's
``values``, dotted keys such as ``cm.data.key``). The converted policy reads
the ConfigMap with Kyverno's ``resource.Get``, which ``kyverno test`` serves
from the test's ``context`` file. One cluster holds one ConfigMap of a name,
while values may give each rule and resource its own part of it: so the
ConfigMap is what all of them give the entry, together (`config_maps`), and
both sides of the proof read that same object (`with_config_maps`): the
source through its values (the whole ConfigMap under the entry's name in
``globalValues``, which each rule's and resource's own keys only repeat), the
conversion through the lookups; the rewritten test gets it in a context file
(`context_document`). A test with ``clusterResources`` serves ``configMap``
entries and ``resource.Get`` from its fake cluster already, on both sides:
nothing is made up for it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from assertree.languages.base import ScanContext

__all__ = ["ConfigMaps", "config_map_entries", "config_maps", "context_document", "with_config_maps"]


@dataclass
class ConfigMaps:
    """The ConfigMaps made from a values file for the ``configMap`` entries of some policies."""

    objects: dict[tuple[str, str], dict] = field(default_factory=dict)  # (namespace, name) -> the ConfigMap
    entries: dict[str, tuple[str, str]] = field(default_factory=dict)  # entry name -> (namespace, name)
    notes: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.objects)


def config_map_entries(document: dict) -> list[tuple[str, str, str]]:
    """(entry name, namespace, ConfigMap name) of each rule-level ``configMap`` context entry of a policy whose
    name and namespace hold no variables (the namespace ``default`` when not given, as Kyverno's loader reads
    it)."""
    out = []
    for rule in (document.get("spec") or {}).get("rules") or []:
        for entry in (rule.get("context") if isinstance(rule, dict) else None) or []:
            spec = entry.get("configMap") if isinstance(entry, dict) else None
            if not isinstance(spec, dict) or not isinstance(entry.get("name"), str):
                continue
            name, namespace = str(spec.get("name") or ""), str(spec.get("namespace") or "default")
            if name and "{{" not in name + namespace:
                out.append((entry["name"], namespace, name))
    return out


def config_maps(documents: Iterable[dict], values: Any) -> ConfigMaps:
    """The ConfigMaps `values` (a `Values`, or None) gives the ``configMap`` entries of the policies
    `documents`: for each entry, what ``globalValues``, every resource's and every rule's values of its policy
    give it, merged in that order."""
    from assertree.languages.kyverno.variables import KyvernoContext

    found = ConfigMaps()
    if values is None:
        return found
    for document in documents:
        policy = str((document.get("metadata") or {}).get("name") or "")
        entries = config_map_entries(document)
        if not entries:
            continue
        context = KyvernoContext()
        sources = [dict(values.global_values)]
        for candidate in values.policies:
            if candidate.name == policy:
                sources.extend(resource.values for resource in candidate.resources)
                sources.extend(rule.variables() for rule in candidate.rules)
        for source in sources:
            for key, value in source.items():
                if any(key == entry or key.startswith(f"{entry}.") for entry, _, _ in entries):
                    context.add_variable(key, value)
        data = context.document
        for entry, namespace, name in entries:
            given = data.get(entry)
            if not isinstance(given, dict):
                continue
            where = (namespace, name)
            known = found.entries.get(entry)
            if known is not None and known != where:
                found.notes.append(f"context entries named {entry!r} read two ConfigMaps ({known[0]}/{known[1]}, "
                                   f"{namespace}/{name}); the values give the first")
                continue
            made = found.objects.setdefault(where, {"apiVersion": "v1", "kind": "ConfigMap",
                                                    "metadata": {"name": name, "namespace": namespace}})
            for key, value in given.items():
                if key in ("apiVersion", "kind"):
                    continue
                if key == "metadata" and isinstance(value, dict):
                    made["metadata"] = {**value, "name": name, "namespace": namespace}
                elif key in made and made[key] != value and isinstance(made[key], dict) and isinstance(value, dict):
                    clashing = sorted(k for k in value if k in made[key] and made[key][k] != value[k])
                    if clashing:
                        found.notes.append(f"ConfigMap {namespace}/{name}: the values give {key}."
                                           f"{', '.join(clashing)} different values; one cluster holds one "
                                           "(the last given)")
                    made[key] = {**made[key], **value}
                else:
                    made[key] = value
            found.entries[entry] = where
    return found


def with_config_maps(context: ScanContext, maps: ConfigMaps) -> ScanContext:
    """`context` where both sides read `maps`: the source policy through ``globalValues`` (each entry's whole
    ConfigMap), the converted one through the lookups (a context file's resources). A context whose lookups
    have a fake cluster (``clusterResources``) is kept: both read that."""
    from assertree.languages.kubernetes.cluster import Cluster
    from assertree.languages.kyverno.cel_policies.environment import Lookups

    lookups = context.lookups
    cluster = getattr(lookups, "cluster", None)
    if not maps or context.values is None or (cluster is not None and cluster.discovery):
        return context
    values = replace(context.values, global_values={
        **context.values.global_values, **{entry: maps.objects[where] for entry, where in maps.entries.items()}})
    served = Cluster(discovery=False)
    if cluster is not None:
        served.extend(cluster.objects())
    served.extend(maps.objects.values())
    lookups = replace(lookups, cluster=served) if lookups is not None else Lookups(cluster=served)
    return context.replace(values=values, lookups=lookups, memo={})


def context_document(maps: ConfigMaps, existing: dict | None = None) -> dict:
    """A ``kyverno test`` context file holding `maps`, after what the test's own context file (`existing`, its
    document) holds."""
    spec = dict((existing or {}).get("spec") or {})
    spec["resources"] = [*(spec.get("resources") or []), *maps.objects.values()]
    return {"apiVersion": "cli.kyverno.io/v1alpha1", "kind": "Context", "metadata": {"name": "context"},
            "spec": spec}
