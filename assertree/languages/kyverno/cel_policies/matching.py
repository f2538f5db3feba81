"""Whether a policy's ``matchConstraints`` select an admission request (Kubernetes mode).

The rules are Kubernetes' admission matching, which Kyverno reuses
(pkg/cel/matching/matcher.go over k8s.io/apiserver's webhook predicates):

- ``namespaceSelector``: the labels of the request's namespace (the Namespace
  itself for a Namespace CREATE/UPDATE); a cluster-scoped resource always
  passes. Without a Namespace object the namespace has only the
  ``kubernetes.io/metadata.name`` label, as in the CLI.
- ``objectSelector``: the labels of the object (or of the old object).
- ``excludeResourceRules`` then ``resourceRules`` (none means all): operation,
  API group, version and resource (``*``, ``pods``, ``pods/*``, ``*/status``),
  scope, and ``resourceNames``.

Label selectors use `assertree.languages.kyverno.match.check_selector`
(Kubernetes' semantics, the same code Kyverno's ClusterPolicy matching uses).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from assertree.languages.kyverno.cel_policies.model import MatchConstraints, ResourceRule

__all__ = ["Attributes", "matches"]


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


def _labels(value: Any) -> dict:
    if not isinstance(value, Mapping):
        return {}
    labels = (value.get("metadata") or {}).get("labels")
    return dict(labels) if isinstance(labels, Mapping) else {}


def _selects(selector: Mapping | None, labels: Mapping[str, str]) -> bool:
    from assertree.languages.kyverno.match import check_selector

    if not selector or not (selector.get("matchLabels") or selector.get("matchExpressions")):
        return True
    return check_selector(selector, labels)


def _namespace_matches(selector: Mapping | None, attributes: Attributes) -> bool:
    if not selector or not (selector.get("matchLabels") or selector.get("matchExpressions")):
        return True
    if attributes.resource == "namespaces" and not attributes.subresource and attributes.operation in (
            "CREATE", "UPDATE"):
        return _selects(selector, _labels(attributes.object))
    if not attributes.namespace:
        return attributes.resource != "namespaces" or _selects(selector, _labels(attributes.old_object))
    if attributes.namespace_object is not None:
        labels = _labels(attributes.namespace_object)
    else:
        labels = {"kubernetes.io/metadata.name": attributes.namespace}
    return _selects(selector, labels)


def _object_matches(selector: Mapping | None, attributes: Attributes) -> bool:
    if not selector or not (selector.get("matchLabels") or selector.get("matchExpressions")):
        return True
    return any(_selects(selector, _labels(value)) for value in (attributes.object, attributes.old_object)
               if value is not None)


def _one_of(values: tuple[str, ...], value: str) -> bool:
    return "*" in values or value in values


def _resource_matches(patterns: tuple[str, ...], resource: str, subresource: str) -> bool:
    for pattern in patterns:
        if pattern in ("*/*",):
            return True
        if pattern == "*" and not subresource:
            return True
        base, _, sub = pattern.partition("/")
        if not sub:
            if base == resource and not subresource:
                return True
            continue
        if (base == "*" or base == resource) and (sub == "*" or sub == subresource):
            return True
    return False


def _scope_matches(scope: str, namespace: str) -> bool:
    if scope in ("", "*"):
        return True
    return (scope == "Namespaced") == bool(namespace)


def _rule_matches(rule: ResourceRule, attributes: Attributes, any_operation: bool = False) -> bool:
    operation = any_operation or _one_of(rule.operations, attributes.operation)
    if not (operation and _one_of(rule.api_groups, attributes.group)
            and _one_of(rule.api_versions, attributes.version)
            and _resource_matches(rule.resources, attributes.resource, attributes.subresource)
            and _scope_matches(rule.scope, attributes.namespace)):
        return False
    if not rule.resource_names:
        return True
    if attributes.name:
        return attributes.name in rule.resource_names
    generate_name = ((attributes.object or {}).get("metadata") or {}).get("generateName") or ""
    return any(str(generate_name).startswith(name) for name in rule.resource_names)


def matches(constraints: MatchConstraints, attributes: Attributes, *, any_operation: bool = False) -> bool:
    """Whether `constraints` select the request `attributes` describe; with `any_operation`, whatever the
    operation (an existing resource, as DeletingPolicies and mutate-existing targets are matched)."""
    if not _namespace_matches(constraints.namespace_selector, attributes):
        return False
    if not _object_matches(constraints.object_selector, attributes):
        return False
    if any(_rule_matches(rule, attributes, any_operation) for rule in constraints.exclude_resource_rules):
        return False
    if not constraints.resource_rules:
        return True
    return any(_rule_matches(rule, attributes, any_operation) for rule in constraints.resource_rules)
