"""A rule's ``match`` and ``exclude`` as ``matchConstraints`` plus CEL ``matchConditions``.

Following the mapping of kyverno/kyverno#16506 and Kyverno's migration
guide: ``kinds`` become ``resourceRules`` (kind to resource; ``Pod`` is
``""/v1/pods`` so that Kyverno's CEL autogen still covers Pod controllers, a
built-in kind keeps its group with any version, since a ClusterPolicy kind
without a version matches every version, and a kind Kyverno cannot place
(a custom resource) matches its guessed plural in any group);
``operations`` go into each resource rule; a single label ``selector`` or
``namespaceSelector`` goes into ``objectSelector``/``namespaceSelector``;
everything else becomes a match condition, as Kubernetes' declarative
fields cannot say it: names and namespaces with wildcards, annotations,
subjects (``request.userInfo``), several filters with different criteria,
and every ``exclude``. ``roles`` and ``clusterRoles`` cannot be converted:
an admission request carries no roles (kyverno/policies#1478).

Kyverno's reading of each criterion is kept (`assertree.languages.kyverno.match`):
a name matches ``metadata.name`` or, without one, ``generateName``; a
Namespace's own namespace is its name; ``subjects`` in ``match`` are ignored
when the request carries no user at all (as the Kyverno CLI does without a
user-info file), so that condition also passes when ``request.userInfo`` has
no user name.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from assertree.languages.kubernetes.resources import plural_of
from assertree.languages.kyverno.match import parse_kind_selector
from assertree.migrate.convert import cel
from assertree.migrate.convert.refusal import NotConvertible

__all__ = ["BUILT_IN_KINDS", "Selection", "kind_rule", "selection"]

BUILT_IN_KINDS: dict[str, tuple[str, str]] = {
    **{kind: ("", "v1") for kind in (
        "Pod", "Service", "Namespace", "ConfigMap", "Secret", "ServiceAccount", "PersistentVolume",
        "PersistentVolumeClaim", "Node", "Endpoints", "Event", "LimitRange", "ResourceQuota",
        "ReplicationController", "PodTemplate", "Binding", "ComponentStatus")},
    **{kind: ("apps", "v1") for kind in ("Deployment", "DaemonSet", "StatefulSet", "ReplicaSet",
                                         "ControllerRevision")},
    **{kind: ("batch", "v1") for kind in ("Job", "CronJob")},
    **{kind: ("networking.k8s.io", "v1") for kind in ("Ingress", "NetworkPolicy", "IngressClass")},
    **{kind: ("rbac.authorization.k8s.io", "v1") for kind in ("Role", "RoleBinding", "ClusterRole",
                                                              "ClusterRoleBinding")},
    "PodDisruptionBudget": ("policy", "v1"),
    **{kind: ("storage.k8s.io", "v1") for kind in ("StorageClass", "CSIDriver", "CSINode", "VolumeAttachment")},
    "HorizontalPodAutoscaler": ("autoscaling", "v2"),
    "PriorityClass": ("scheduling.k8s.io", "v1"),
    **{kind: ("admissionregistration.k8s.io", "v1") for kind in (
        "ValidatingWebhookConfiguration", "MutatingWebhookConfiguration", "ValidatingAdmissionPolicy",
        "ValidatingAdmissionPolicyBinding")},
    "CustomResourceDefinition": ("apiextensions.k8s.io", "v1"),
    "CertificateSigningRequest": ("certificates.k8s.io", "v1"),
    "Lease": ("coordination.k8s.io", "v1"),
    "RuntimeClass": ("node.k8s.io", "v1"),
    "EndpointSlice": ("discovery.k8s.io", "v1"),
    "APIService": ("apiregistration.k8s.io", "v1"),
}
"""Built-in kinds: (API group, version). A kind missing here is taken for a custom resource."""

_USER_KEYS = ("subjects", "roles", "clusterRoles")
_DESCRIPTION_KEYS = ("kinds", "name", "names", "namespaces", "annotations", "selector", "namespaceSelector",
                     "operations")


@dataclass
class Selection:
    """What a rule's match/exclude become: the declarative constraints and the CEL conditions."""

    resource_rules: list[dict] = field(default_factory=list)
    namespace_selector: dict | None = None
    object_selector: dict | None = None
    conditions: list[tuple[str, str]] = field(default_factory=list)  # (name, CEL)
    kinds: list[str] = field(default_factory=list)  # the kinds the rule names (match), as written

    @property
    def pods_only(self) -> bool:
        """Whether the constraints select exactly Pods (so Kyverno's CEL autogen applies)."""
        return (len(self.resource_rules) == 1 and self.object_selector is None
                and self.resource_rules[0]["resources"] == ["pods"]
                and self.resource_rules[0]["apiGroups"] == [""] and self.resource_rules[0]["apiVersions"] == ["v1"])

    def constraints(self) -> dict:
        out: dict[str, Any] = {"resourceRules": self.resource_rules}
        if self.namespace_selector is not None:
            out["namespaceSelector"] = self.namespace_selector
        if self.object_selector is not None:
            out["objectSelector"] = self.object_selector
        return out


def kind_rule(kind: str) -> tuple[str, str, str]:
    """(group, version, resource) a ``kinds`` entry names, ``*`` where it leaves one open."""
    group, version, name, subresource = parse_kind_selector(kind)
    if not name:
        raise NotConvertible(f"kind {kind!r} cannot be read")
    if "*" in name or "?" in name:
        if name != "*":
            raise NotConvertible(f"kind {kind!r} has a wildcard inside a name: resource rules take only '*'")
        resource = "*"
    else:
        resource = plural_of(name)
        if group == "*" and version == "*" and name in BUILT_IN_KINDS:
            group, known = BUILT_IN_KINDS[name]
            version = known if name == "Pod" else "*"
        elif group == "*" and name in BUILT_IN_KINDS:
            group = BUILT_IN_KINDS[name][0]
    if subresource:
        if subresource != "*" and ("*" in subresource or "?" in subresource):
            raise NotConvertible(f"kind {kind!r} has a wildcard inside a subresource name")
        resource = f"{resource}/{subresource}"
    return group, version, resource


def _resource_rules(kinds: Sequence[str], operations: Sequence[str]) -> list[dict]:
    """One resource rule per (group, version), resources in the order the kinds are written."""
    grouped: dict[tuple[str, str], list[str]] = {}
    for kind in kinds:
        group, version, resource = kind_rule(kind)
        resources = grouped.setdefault((group, version), [])
        if resource not in resources:
            resources.append(resource)
    return [{"apiGroups": [group], "apiVersions": [version], "resources": resources,
             "operations": list(operations)} for (group, version), resources in grouped.items()]


def _wildcard_in(value: str, patterns: Sequence[str]) -> str:
    """Whether the CEL string `value` matches one of the wildcard `patterns`."""
    plain = [pattern for pattern in patterns if "*" not in pattern and "?" not in pattern]
    tests = [f"{value} in {cel.literal(plain)}" if len(plain) > 1 else cel.wildcard_test(plain[0], value)] \
        if plain else []
    tests.extend(cel.wildcard_test(pattern, value) for pattern in patterns if pattern not in plain)
    return cel.or_(tests)


def _kind_test(kinds: Sequence[str]) -> str:
    """Whether the request's kind is one of `kinds` (only needed when filters differ beyond their kinds)."""
    tests = []
    for kind in kinds:
        group, version, name, subresource = parse_kind_selector(kind)
        parts = [cel.wildcard_test(name, "request.kind.kind")]
        if group != "*":
            parts.append(cel.wildcard_test(group, "request.kind.group"))
        if version != "*":
            parts.append(cel.wildcard_test(version, "request.kind.version"))
        if subresource and subresource != "*":
            parts.append(cel.wildcard_test(subresource, "request.subResource"))
        tests.append(cel.and_(parts))
    return cel.or_(tests)


def _entry_test(entries: str, key: str, value: str) -> str:
    """Whether the map `entries` holds a key and value matching the wildcards `key` and `value`."""
    test = cel.and_([cel.wildcard_test(key, "key"), cel.wildcard_test(value, f"{entries}[key]")])
    return f"{entries}.exists(key, {test})"


def _label_test(labels: str, selector: Mapping[str, Any]) -> str:
    """A label selector as CEL on the map `labels` (which may be absent: ``labels`` is then ``{}``)."""
    tests = []
    for key, value in (selector.get("matchLabels") or {}).items():
        if "*" in str(key) or "?" in str(key) or "*" in str(value) or "?" in str(value):
            tests.append(_entry_test(labels, str(key), str(value)))
        else:
            tests.append(f"{labels}[?{cel.string(str(key))}].orValue('') == {cel.string(str(value))}"
                         if value != "" else f"{labels}[?{cel.string(str(key))}].orValue(null) == ''")
    for expression in selector.get("matchExpressions") or []:
        key = cel.string(str(expression.get("key")))
        values = [str(item) for item in expression.get("values") or []]
        operator = expression.get("operator")
        if operator == "In":
            tests.append(f"{key} in {labels} && {labels}[{key}] in {cel.literal(values)}")
        elif operator == "NotIn":
            tests.append(f"!({key} in {labels}) || !({labels}[{key}] in {cel.literal(values)})")
        elif operator == "Exists":
            tests.append(f"{key} in {labels}")
        elif operator == "DoesNotExist":
            tests.append(f"!({key} in {labels})")
        else:
            raise NotConvertible(f"selector operator {operator!r}")
    return cel.and_(tests)


_OBJECT_LABELS = "object.metadata.?labels.orValue({})"
_NAMESPACE_LABELS = "(namespaceObject == null ? {} : namespaceObject.metadata.?labels.orValue({}))"


def _description_test(description: Mapping[str, Any], path: tuple, *, with_kinds: bool) -> str:
    """A ``resources`` block (all its criteria) as one CEL test."""
    tests = []
    if with_kinds and description.get("kinds"):
        tests.append(_kind_test(description["kinds"]))
    names = [*([description["name"]] if description.get("name") else []), *(description.get("names") or [])]
    if description.get("name") and description.get("names"):
        tests.append(_wildcard_in(_NAME, [description["name"]]))
        tests.append(_wildcard_in(_NAME, description["names"]))
    elif names:
        tests.append(_wildcard_in(_NAME, names))
    if description.get("namespaces"):
        tests.append(_wildcard_in(_NAMESPACE, description["namespaces"]))
    if description.get("annotations"):
        annotations = "object.metadata.?annotations.orValue({})"
        for key, value in description["annotations"].items():
            tests.append(_entry_test(annotations, str(key), str(value)))
    if description.get("selector") is not None:
        tests.append(_label_test(_OBJECT_LABELS, description["selector"]))
    if description.get("namespaceSelector") is not None:
        tests.append(cel.and_(["object.kind != 'Namespace'",
                               _label_test(_NAMESPACE_LABELS, description["namespaceSelector"])]))
    if description.get("operations"):
        tests.append(f"request.operation in {cel.literal(list(description['operations']))}")
    return cel.and_(tests)


_NAME = "(object.metadata.?name.orValue('') != '' ? object.metadata.name : object.metadata.?generateName.orValue(''))"
_NAMESPACE = "(object.kind == 'Namespace' ? object.metadata.name : request.namespace)"


def _subjects_test(subjects: Sequence[Mapping[str, Any]], path: tuple) -> str:
    tests = []
    for position, subject in enumerate(subjects):
        kind = subject.get("kind")
        name = str(subject.get("name") or "")
        if kind == "ServiceAccount":
            tests.append(cel.wildcard_test(f"system:serviceaccount:{subject.get('namespace') or ''}:{name}",
                                           _USER))
        elif kind == "Group":
            tests.append(f"request.userInfo.?groups.orValue([]).exists(group, {cel.wildcard_test(name, 'group')})")
        elif kind == "User":
            tests.append(cel.wildcard_test(name, _USER))
        else:
            raise NotConvertible(f"subject kind {kind!r}", (*path, position, "kind"))
    return cel.or_(tests)


# the requester's name; a request read offline without a user info file has none (and no subject matches it)
_USER = "request.userInfo.?username.orValue('')"
_NO_USER = f"{_USER} == ''"


def _filter_test(item: Mapping[str, Any], path: tuple, *, exclude: bool, with_kinds: bool) -> str:
    for key in ("roles", "clusterRoles"):
        if item.get(key):
            raise NotConvertible(f"{key}: an admission request carries no roles for CEL to read "
                                 "(match request.userInfo subjects instead)", (*path, key))
    tests = [_description_test(item.get("resources") or {}, (*path, "resources"), with_kinds=with_kinds)]
    if item.get("subjects"):
        subjects = _subjects_test(item["subjects"], (*path, "subjects"))
        tests.append(subjects if exclude else cel.or_([_NO_USER, subjects]))
    return cel.and_(tests)


def _filters(block: Mapping[str, Any]) -> tuple[str, list[Mapping[str, Any]]]:
    """("any"|"all", filters) of a match/exclude block (the legacy form is one ``all`` filter)."""
    if block.get("any"):
        return "any", list(block["any"])
    if block.get("all"):
        return "all", list(block["all"])
    legacy = {key: block.get(key) for key in ("resources", *_USER_KEYS) if block.get(key)}
    return "all", [legacy] if legacy else []


def _is_empty(item: Mapping[str, Any]) -> bool:
    description = item.get("resources") or {}
    return not any(description.get(key) not in (None, [], {}, "") for key in _DESCRIPTION_KEYS) and not any(
        item.get(key) for key in _USER_KEYS)


def selection(rule: Mapping[str, Any], path: tuple, default_operations: Sequence[str],
              policy_namespace: str | None = None) -> Selection:
    """The constraints and conditions of `rule`'s match and exclude blocks (`path` is the rule's field path)."""
    match = rule.get("match") or {}
    how, filters = _filters(match)
    kinds: list[str] = []
    for item in filters:
        for kind in (item.get("resources") or {}).get("kinds") or []:
            if kind not in kinds:
                kinds.append(kind)
    if not kinds:
        raise NotConvertible("match names no kinds: a ValidatingPolicy needs resource rules", (*path, "match"))
    where = (*path, "match", how) if match.get(how) else (*path, "match")
    out = Selection(kinds=kinds)
    operations_per_filter = [(item.get("resources") or {}).get("operations") for item in filters]
    shared_operations = operations_per_filter[0] if operations_per_filter and all(
        ops == operations_per_filter[0] for ops in operations_per_filter) else None
    operations = list(shared_operations or default_operations)
    if how == "all" and len(filters) > 1:
        kind_sets = [set((item.get("resources") or {}).get("kinds") or []) for item in filters]
        named = [s for s in kind_sets if s]
        common = set.intersection(*named) if named else set()
        kinds = [kind for kind in kinds if kind in common]
        if not kinds:
            raise NotConvertible("match.all filters name no kind in common", where)
    out.resource_rules = _resource_rules(kinds, operations)
    rest = [dict(item, resources={key: value for key, value in (item.get("resources") or {}).items()
                                  if key not in ("kinds",) and not (key == "operations" and shared_operations)})
            for item in filters]
    # one selector shared by every filter goes to the declarative field
    for key, target in (("selector", "object_selector"), ("namespaceSelector", "namespace_selector")):
        values = [(item.get("resources") or {}).get(key) for item in rest]
        if values and values[0] is not None and all(value == values[0] for value in values) and not _has_wildcards(
                values[0]):
            setattr(out, target, values[0])
            for item in rest:
                item["resources"].pop(key, None)
    differ = len({repr(sorted(((k, repr(v)) for k, v in item.items()))) for item in rest}) > 1
    tests = []
    for position, item in enumerate(rest):
        if _is_empty(item) and not differ:
            continue
        tests.append(_filter_test(item, (*where, position), exclude=False, with_kinds=differ))
    if tests:
        test = cel.or_(tests) if how == "any" else cel.and_(tests)
        if test != cel.TRUE:
            out.conditions.append(("match", test))
    exclude = rule.get("exclude") or {}
    how, filters = _filters(exclude)
    where = (*path, "exclude", how) if exclude.get(how) else (*path, "exclude")
    tests = [_filter_test(item, (*where, position), exclude=True, with_kinds=True)
             for position, item in enumerate(filters) if not _is_empty(item)]
    if tests:
        excluded = cel.or_(tests) if how == "any" else cel.and_(tests)
        out.conditions.append(("exclude", cel.not_(excluded)))
    return out


def _has_wildcards(selector: Mapping[str, Any]) -> bool:
    return any("*" in str(key) or "?" in str(key) or "*" in str(value) or "?" in str(value)
               for key, value in (selector.get("matchLabels") or {}).items())
