"""Pod-controller variants of a Pod policy, as Kyverno's CEL autogen derives them.

A policy whose match constraints select exactly ``pods`` (group ``""``,
version ``v1``, one resource rule, no names, no object selector, no exclusion:
pkg/cel/autogen/support.go) also runs on the Pod templates of controllers.
Kyverno makes one variant per *replacement group* (pkg/cel/autogen/data.go):
``defaults`` (DaemonSet, Deployment, Job, ReplicaSet, StatefulSet: the template
is at ``spec.template``) and ``cronjobs`` (at ``spec.jobTemplate.spec.template``),
restricted to ``spec.autogen.podControllers.controllers`` when given.

- ValidatingPolicy (pkg/cel/policies/vpol/autogen): every string of the spec
  has ``object.spec``/``oldObject.spec`` and ``object.metadata``/
  ``oldObject.metadata`` moved under the template, except
  ``object.metadata.namespace`` (the controller's namespace is the Pod's)
  (pkg/cel/autogen/replacement.go).
- MutatingPolicy (pkg/cel/policies/mpol/autogen): only match conditions and
  apply configurations are rewritten (``.spec``, ``.metadata.labels``,
  ``.metadata.annotations`` of ``object``/``oldObject``/``Object``), and an
  apply configuration that starts with ``Object{`` is wrapped in the
  template's ``Object`` path. JSON patches and variables are kept as written,
  as Kyverno does.

Match constraints become one resource rule per group/version of the targets,
with the Pod rule's operations and namespace selector.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from typing import Any, TypeGuard

__all__ = ["CONTROLLERS", "can_autogen", "variants"]

# controller resource -> (group, version, kind, replacement group)
CONTROLLERS: dict[str, tuple[str, str, str, str]] = {
    "daemonsets": ("apps", "v1", "DaemonSet", "defaults"),
    "deployments": ("apps", "v1", "Deployment", "defaults"),
    "replicasets": ("apps", "v1", "ReplicaSet", "defaults"),
    "statefulsets": ("apps", "v1", "StatefulSet", "defaults"),
    "jobs": ("batch", "v1", "Job", "defaults"),
    "cronjobs": ("batch", "v1", "CronJob", "cronjobs"),
}
_TEMPLATE = {"defaults": "spec.template", "cronjobs": "spec.jobTemplate.spec.template"}
_WRAPPERS = {
    "defaults": ("Object{spec: Object.spec{template: Object.spec.template{", "}}}"),
    "cronjobs": (("Object{spec: Object.spec{jobTemplate: Object.spec.jobTemplate{spec: Object.spec.jobTemplate.spec{"
                  "template: Object.spec.jobTemplate.spec.template{"), "}}}}}"),
}


def _has_selector(selector: Any) -> bool:
    return isinstance(selector, Mapping) and bool(selector.get("matchLabels") or selector.get("matchExpressions"))


def can_autogen(match: Any) -> TypeGuard[Mapping[str, Any]]:
    """Whether match constraints (JSON) select exactly Pods, so that autogen applies."""
    if not isinstance(match, Mapping):
        return False
    if _has_selector(match.get("objectSelector")) or match.get("excludeResourceRules"):
        return False
    rules = match.get("resourceRules") or []
    if len(rules) != 1 or not isinstance(rules[0], Mapping):
        return False
    rule = rules[0]
    return (not rule.get("resourceNames") and rule.get("apiGroups") == [""] and rule.get("apiVersions") == ["v1"]
            and rule.get("resources") == ["pods"])


def _match_constraints(targets: list[str], operations: Any, namespace_selector: Any) -> dict:
    by_group_version: dict[tuple[str, str], set[str]] = {}
    for resource in targets:
        group, version, _kind, _group = CONTROLLERS[resource]
        by_group_version.setdefault((group, version), set()).add(resource)
    rules = [{"apiGroups": [group], "apiVersions": [version], "resources": sorted(resources),
              "operations": list(operations or [])}
             for (group, version), resources in sorted(by_group_version.items())]
    out: dict[str, Any] = {"resourceRules": rules}
    if namespace_selector is not None:
        out["namespaceSelector"] = copy.deepcopy(namespace_selector)
    return out


def _replace_validating(text: str, group: str) -> str:
    template = _TEMPLATE[group]
    for field in ("spec", "metadata"):
        for root in ("object", "oldObject"):
            text = re.sub(rf"{root}\.{field}(?!\.namespace(?![A-Za-z0-9_]))", f"{root}.{template}.{field}", text)
    return text


def _rewrite_strings(value: Any, rewrite) -> Any:
    if isinstance(value, str):
        return rewrite(value)
    if isinstance(value, list):
        return [_rewrite_strings(item, rewrite) for item in value]
    if isinstance(value, dict):
        return {key: _rewrite_strings(item, rewrite) for key, item in value.items()}
    return value


_SPEC = re.compile(r"\b(object|oldObject|Object)\.spec")
_LABELS = re.compile(r"\b(object|oldObject|Object)\.metadata\.labels")
_ANNOTATIONS = re.compile(r"\b(object|oldObject|Object)\.metadata\.annotations")


def _replace_mutating(text: str, group: str) -> str:
    template = _TEMPLATE[group]
    text = _SPEC.sub(rf"\1.{template}.spec", text)
    text = _LABELS.sub(rf"\1.{template}.metadata.labels", text)
    text = _ANNOTATIONS.sub(rf"\1.{template}.metadata.annotations", text)
    stripped = text.strip()
    if not stripped.startswith("Object"):
        return text
    content = stripped[len("Object"):].lstrip()
    if not content.startswith("{"):
        return text
    content = content[1:]
    depth = 1
    for index, char in enumerate(content):
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                if index == 0:
                    return text
                opening, closing = _WRAPPERS[group]
                return opening + content[:index] + closing + content[index + 1:]
    return text


def _mutating_spec(spec: dict, group: str) -> dict:
    for condition in spec.get("matchConditions") or []:
        if isinstance(condition, dict) and isinstance(condition.get("expression"), str):
            condition["expression"] = _replace_mutating(condition["expression"], group)
    for mutation in spec.get("mutations") or []:
        apply = mutation.get("applyConfiguration") if isinstance(mutation, dict) else None
        if isinstance(apply, dict) and isinstance(apply.get("expression"), str):
            apply["expression"] = _replace_mutating(apply["expression"], group)
    return spec


def variants(spec: Mapping[str, Any], *, mutating: bool) -> list[tuple[str, list[str], dict]]:
    """(replacement group, controller kinds, rewritten spec) for each variant autogen makes, in Kyverno's order."""
    match = spec.get("matchConstraints")
    if not can_autogen(match):
        return []
    configured = ((spec.get("autogen") or {}).get("podControllers") or {}).get("controllers")
    controllers = list(CONTROLLERS) if configured is None else [c for c in configured if c in CONTROLLERS]
    groups: dict[str, list[str]] = {}
    for resource in controllers:
        groups.setdefault(CONTROLLERS[resource][3], []).append(resource)
    out = []
    for group in sorted(groups):
        targets = sorted(groups[group], key=lambda r: CONTROLLERS[r][:3])
        rewritten = copy.deepcopy(dict(spec))
        operations = match["resourceRules"][0].get("operations")
        rewritten["matchConstraints"] = _match_constraints(targets, operations, match.get("namespaceSelector"))
        if mutating:
            rewritten = _mutating_spec(rewritten, group)
        else:
            constraints = rewritten.pop("matchConstraints")
            rewritten = _rewrite_strings(rewritten, lambda text, g=group: _replace_validating(text, g))
            rewritten["matchConstraints"] = constraints
        out.append((group, [CONTROLLERS[r][2] for r in targets], rewritten))
    return out
