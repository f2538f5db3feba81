"""Whether ``matchConstraints`` / a binding's ``matchResources`` select an admission request.

The rules are Kubernetes' admission matching
(k8s.io/apiserver/pkg/admission/plugin/policy/matching/matching.go over the
webhook predicates ``namespace``, ``object`` and ``rules``), which Kyverno's CEL
policies reuse (pkg/cel/matching/matcher.go):

- ``namespaceSelector``: the labels of the request's namespace (the Namespace
  itself for a Namespace CREATE/UPDATE); a cluster-scoped resource always
  passes. Without a Namespace object the namespace has only the
  ``kubernetes.io/metadata.name`` label, which the apiserver gives every
  namespace.
- ``objectSelector``: the labels of the object, or of the old object.
- ``excludeResourceRules`` then ``resourceRules`` (none means all): operation,
  API group, version and resource (``*``, ``pods``, ``pods/*``, ``*/status``),
  scope, and ``resourceNames`` (the request's name; Kyverno also matches a
  ``generateName`` prefix when there is no name: `matches`' ``generate_name``).
- ``matchPolicy: Equivalent`` (the API's default) also matches the request
  through an equivalent resource: the same resource in another version of its
  group, or in the group it moved to (``extensions`` deployments are ``apps``
  deployments). The apiserver would convert the object to the matched
  version; offline the object is passed on as it is.

A selector Kubernetes would not build (`SelectorError`) is an error of the
match, as in Kubernetes, reported only when the rules select the request.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from assertree.languages.selectors import SelectorError, selects

__all__ = ["Attributes", "MatchConstraints", "ResourceRule", "SelectorError", "matches"]


@dataclass(frozen=True, slots=True)
class ResourceRule:
    """One ``resourceRules``/``excludeResourceRules`` entry (admissionregistration's NamedRuleWithOperations)."""

    api_groups: tuple[str, ...]
    api_versions: tuple[str, ...]
    resources: tuple[str, ...]
    operations: tuple[str, ...]
    resource_names: tuple[str, ...] = ()
    scope: str = "*"

    @classmethod
    def read(cls, data: Mapping[str, Any]) -> ResourceRule:
        """The rule a (schema-checked) document entry describes."""
        return cls(
            api_groups=tuple(data.get("apiGroups") or ()),
            api_versions=tuple(data.get("apiVersions") or ()),
            resources=tuple(data.get("resources") or ()),
            operations=tuple(data.get("operations") or ()),
            resource_names=tuple(data.get("resourceNames") or ()),
            scope=data.get("scope") or "*",
        )


@dataclass(frozen=True, slots=True)
class MatchConstraints:
    """``matchConstraints`` (a policy) or ``matchResources`` (a binding): which requests are looked at."""

    resource_rules: tuple[ResourceRule, ...]
    exclude_resource_rules: tuple[ResourceRule, ...] = ()
    namespace_selector: dict | None = None
    object_selector: dict | None = None
    match_policy: str = "Equivalent"

    @classmethod
    def read(cls, data: Mapping[str, Any]) -> MatchConstraints:
        """The constraints a (schema-checked) ``MatchResources`` document describes."""
        return cls(
            resource_rules=tuple(ResourceRule.read(rule) for rule in data.get("resourceRules") or ()),
            exclude_resource_rules=tuple(ResourceRule.read(rule) for rule in data.get("excludeResourceRules") or ()),
            namespace_selector=data.get("namespaceSelector"),
            object_selector=data.get("objectSelector"),
            match_policy=data.get("matchPolicy") or "Equivalent",
        )

    @property
    def is_simple(self) -> bool:
        """One resource rule, no selector, no exclusion, no names: the CLI then drops a response without results
        (its ``hasSelector``, cmd/cli/kubectl-kyverno/processor/policy_processor.go)."""
        selectors = (self.namespace_selector, self.object_selector)
        if any(s and (s.get("matchLabels") or s.get("matchExpressions")) for s in selectors):
            return False
        return (not self.exclude_resource_rules and len(self.resource_rules) == 1
                and not self.resource_rules[0].resource_names)


@dataclass(frozen=True, slots=True)
class Attributes:
    """What matching reads from an admission request."""

    group: str
    version: str
    resource: str  # plural
    subresource: str
    operation: str
    namespace: str
    name: str
    object: Any
    old_object: Any
    namespace_object: Mapping | None


# Resources that moved between API groups: a rule naming either group matches both under matchPolicy Equivalent.
_MOVED = {("extensions", "deployments"): "apps", ("extensions", "daemonsets"): "apps",
          ("extensions", "replicasets"): "apps", ("extensions", "ingresses"): "networking.k8s.io",
          ("extensions", "networkpolicies"): "networking.k8s.io", ("extensions", "podsecuritypolicies"): "policy"}


def _labels(value: Any) -> dict:
    if not isinstance(value, Mapping):
        return {}
    metadata = value.get("metadata")
    labels = metadata.get("labels") if isinstance(metadata, Mapping) else None
    return dict(labels) if isinstance(labels, Mapping) else {}


def _empty(selector: Mapping | None) -> bool:
    """No requirement at all: the API defaults an absent selector to ``{}``, which selects everything."""
    return not selector or not (selector.get("matchLabels") or selector.get("matchExpressions"))


def _namespace_matches(selector: Mapping | None, attributes: Attributes) -> bool:
    if attributes.resource == "namespaces" and not attributes.subresource and attributes.operation in (
            "CREATE", "UPDATE"):
        return _empty(selector) or selects(selector, _labels(attributes.object))
    if not attributes.namespace:
        if attributes.resource != "namespaces":
            return True  # a cluster-scoped resource is never exempt
        return _empty(selector) or selects(selector, _labels(attributes.old_object))
    if _empty(selector):
        return True
    if attributes.namespace_object is not None:
        labels = _labels(attributes.namespace_object)
    else:
        labels = {"kubernetes.io/metadata.name": attributes.namespace}
    return selects(selector, labels)


def _object_matches(selector: Mapping | None, attributes: Attributes) -> bool:
    if _empty(selector):
        return True
    return any(selects(selector, _labels(value)) for value in (attributes.object, attributes.old_object)
               if isinstance(value, Mapping))


def _one_of(values: tuple[str, ...], value: str) -> bool:
    return "*" in values or value in values


def _resource_matches(patterns: tuple[str, ...], resource: str, subresource: str) -> bool:
    for pattern in patterns:
        base, _, sub = pattern.partition("/")
        if (base == "*" or base == resource) and (sub == "*" or sub == subresource):
            return True
    return False


def _scope_matches(scope: str, attributes: Attributes) -> bool:
    if scope in ("", "*"):
        return True
    if scope == "Namespaced":
        return attributes.resource != "namespaces" and bool(attributes.namespace)
    return attributes.resource == "namespaces" or not attributes.namespace  # Cluster


def _rule_selects(rule: ResourceRule, attributes: Attributes, group: str, version: str | None,
                  any_operation: bool = False) -> bool:
    """Whether `rule` selects the request as a request for `group` (and `version`; None: any version the
    rule names, which is how an equivalent resource in another version is found offline)."""
    versions_ok = _one_of(rule.api_versions, version) if version is not None else bool(rule.api_versions)
    operation_ok = any_operation or _one_of(rule.operations, attributes.operation)
    return (versions_ok and _scope_matches(rule.scope, attributes) and operation_ok
            and _one_of(rule.api_groups, group)
            and _resource_matches(rule.resources, attributes.resource, attributes.subresource))


def _named(rule: ResourceRule, attributes: Attributes, generate_name: bool) -> bool:
    if not rule.resource_names or attributes.name in rule.resource_names:
        return True
    if attributes.name or not generate_name:
        return False
    metadata = attributes.object.get("metadata") if isinstance(attributes.object, Mapping) else None
    prefix = str((metadata or {}).get("generateName") or "") if isinstance(metadata, Mapping) else ""
    return bool(prefix) and any(prefix.startswith(name) for name in rule.resource_names)


def _equivalent_groups(attributes: Attributes) -> tuple[str, ...]:
    """The groups the request's resource is also served under (itself first)."""
    moved = _MOVED.get((attributes.group, attributes.resource))
    earlier = [group for (group, resource), now in _MOVED.items()
               if now == attributes.group and resource == attributes.resource]
    return (attributes.group, *([moved] if moved else []), *earlier)


def _rules_select(rules: tuple[ResourceRule, ...], attributes: Attributes, match_policy: str,
                  generate_name: bool, any_operation: bool = False) -> bool:
    if any(_rule_selects(rule, attributes, attributes.group, attributes.version, any_operation)
           and _named(rule, attributes, generate_name) for rule in rules):
        return True
    if match_policy != "Equivalent":
        return False
    return any(_rule_selects(rule, attributes, group, None, any_operation) and _named(rule, attributes, generate_name)
               for rule in rules for group in _equivalent_groups(attributes))


def matches(constraints: MatchConstraints, attributes: Attributes, *, generate_name: bool = False,
            any_operation: bool = False) -> bool:
    """Whether `constraints` select the request `attributes` describe; with `any_operation`, whatever the
    operation (an existing resource, as Kyverno matches a DeletingPolicy's resources and mutate-existing
    targets).

    Raises `SelectorError` for a label selector Kubernetes would not build, when the resource rules
    select the request (Kubernetes reports selector errors only then).
    """
    try:
        namespace_ok: bool | None = _namespace_matches(constraints.namespace_selector, attributes)
        namespace_error = None
    except SelectorError as error:
        namespace_ok, namespace_error = None, error
    if namespace_ok is False:
        return False
    try:
        object_ok: bool | None = _object_matches(constraints.object_selector, attributes)
        object_error = None
    except SelectorError as error:
        object_ok, object_error = None, error
    if object_ok is False:
        return False
    policy = constraints.match_policy
    if _rules_select(constraints.exclude_resource_rules, attributes, policy, generate_name, any_operation):
        return False
    if constraints.resource_rules and not _rules_select(constraints.resource_rules, attributes, policy,
                                                        generate_name, any_operation):
        return False
    if namespace_error is not None:
        raise namespace_error
    if object_error is not None:
        raise object_error
    return True
