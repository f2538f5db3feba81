"""Kyverno's autogen: the rules it derives from Pod rules for Pod controllers and CronJobs.

A rule written for Pods also runs, under the names ``autogen-<rule>`` and
``autogen-cronjob-<rule>``, on the workloads that create Pods: Kyverno adds
these rules whenever it computes a policy's rules (``pkg/autogen/v1``, the
default autogen of the 2026 engine and CLI), so an offline engine must add
them too and then treat them like written rules. What is reproduced:

- when: every rule of the policy must be free of ``generate`` and JSON 6902
  patches, no match/exclude filter may name resources (``name``, ``names``,
  ``selector``, ``annotations``) or mix Pod with other kinds, and some filter
  must name ``Pod`` (or a controller) literally; the
  ``pod-policies.kyverno.io/autogen-controllers`` annotation then narrows the
  controllers (comma separated, not trimmed; ``none`` turns autogen off), but
  cannot force autogen on a policy that fails those conditions;
- which rules: those whose match kinds include Pod (and exclude kinds, if any,
  too), that are not ``autogen-`` rules themselves, and that validate with
  ``pattern``/``anyPattern``/``deny``/``podSecurity``/``foreach``/``cel``,
  mutate with a strategic merge patch (or foreach of them), or verify images;
- how: kinds become the controllers' ``group/version/Kind`` (in ``any``/``all``
  only the filters that named Pod; every filter for CronJob), patterns and
  patches are wrapped in ``spec.template`` (``spec.jobTemplate.spec.template``
  for CronJob), ``$( )`` references in the message are shifted, and in the
  whole rule's JSON text ``request.object.spec`` becomes
  ``request.object.spec.template.spec`` (and ``.metadata``, ``oldObject``;
  ``object.spec`` etc. for CEL rules) -- a plain text replacement, as Kyverno
  does. Generated names are cut to 63 characters.

Input is a policy document (a dict); output is rule documents (dicts).
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from assertree.languages.kyverno.references import shift_references

__all__ = [
    "ANNOTATION",
    "CONTROLLERS",
    "autogen_controllers",
    "autogen_rules",
    "can_autogen",
    "compute_rules",
]

ANNOTATION = "pod-policies.kyverno.io/autogen-controllers"
CONTROLLERS = ("DaemonSet", "Deployment", "Job", "StatefulSet", "ReplicaSet", "ReplicationController", "CronJob")
_POD_CONTROLLERS = frozenset(CONTROLLERS[:-1])
_GVK = {
    "DaemonSet": "apps/v1/DaemonSet",
    "Deployment": "apps/v1/Deployment",
    "Job": "batch/v1/Job",
    "StatefulSet": "apps/v1/StatefulSet",
    "ReplicaSet": "apps/v1/ReplicaSet",
    "ReplicationController": "v1/ReplicationController",
    "CronJob": "batch/v1/CronJob",
    "Pod": "v1/Pod",
}
_REPLACEMENTS = {
    ("Pod", False): (("request.object.spec", "request.object.spec.template.spec"),
                     ("request.oldObject.spec", "request.oldObject.spec.template.spec"),
                     ("request.object.metadata", "request.object.spec.template.metadata"),
                     ("request.oldObject.metadata", "request.oldObject.spec.template.metadata")),
    ("Pod", True): (("object.spec", "object.spec.template.spec"),
                    ("oldObject.spec", "oldObject.spec.template.spec"),
                    ("object.metadata", "object.spec.template.metadata"),
                    ("oldObject.metadata", "oldObject.spec.template.metadata")),
    ("CronJob", False): (("request.object.spec", "request.object.spec.jobTemplate.spec.template.spec"),
                         ("request.oldObject.spec", "request.oldObject.spec.jobTemplate.spec.template.spec"),
                         ("request.object.metadata", "request.object.spec.jobTemplate.spec.template.metadata"),
                         ("request.oldObject.metadata", "request.oldObject.spec.jobTemplate.spec.template.metadata")),
    ("CronJob", True): (("object.spec", "object.spec.jobTemplate.spec.template.spec"),
                        ("oldObject.spec", "oldObject.spec.jobTemplate.spec.template.spec"),
                        ("object.metadata", "object.spec.jobTemplate.spec.template.metadata"),
                        ("oldObject.metadata", "oldObject.spec.jobTemplate.spec.template.metadata")),
}
_VERSION = re.compile(r"v\d+((alpha|beta)\d+)?|\*")
# The fields of a generated rule (Kyverno serialises it through a struct with only these).
_RULE_FIELDS = ("name", "match", "exclude", "celPreconditions", "context", "preconditions", "mutate", "validate",
                "verifyImages", "skipBackgroundRequests", "reportProperties")


# -- kinds ------------------------------------------------------------------------------------------------


def _kind_of(entry: str) -> str:
    # Kyverno's GetKindFromGVK + SplitSubresource: the Kind of a `kinds` entry, subresource dropped.
    parts = entry.split("/")
    if len(parts) == 1:
        kind = entry.replace(".", "/", 1)
    elif len(parts) == 2:
        if parts == ["*", "*"]:
            kind = "*/*"
        elif _is_version(parts[0]):
            kind = parts[1].replace(".", "/", 1)
        else:
            kind = entry
    elif len(parts) == 3:
        kind = parts[1] + "/" + parts[2] if _is_version(parts[0]) else parts[2].replace(".", "/", 1)
    elif len(parts) == 4:
        kind = parts[2] + "/" + parts[3]
    else:
        kind = ""
    pieces = kind.split("/")
    return pieces[0] if len(pieces) == 2 else kind


def _is_version(text: str) -> bool:
    return _VERSION.fullmatch(text) is not None


def _contains_kind(kinds: Sequence[str], kind: str) -> bool:
    return any(_kind_of(entry) == kind for entry in kinds)


def _kinds(block: Mapping | None) -> list[str]:
    if not block:
        return []
    out = list((block.get("resources") or {}).get("kinds") or [])
    for key in ("all", "any"):
        for item in block.get(key) or []:
            out.extend((item.get("resources") or {}).get("kinds") or [])
    return out


def _to_gvk(kinds: Sequence[str]) -> list[str]:
    return [_GVK.get(kind, kind) for kind in kinds]


def _split(controllers: str) -> list[str]:
    return sorted(controllers.split(","))


# -- when autogen applies ----------------------------------------------------------------------------------


def _supported(description: Mapping | None, needed: list[bool]) -> bool:
    description = description or {}
    kinds = description.get("kinds") or []
    if (description.get("name") or description.get("names") or description.get("selector") is not None
            or description.get("annotations") is not None or (len(kinds) > 1 and _contains_kind(kinds, "Pod"))):
        return False
    needed[0] = needed[0] or any(kind == "Pod" or kind in CONTROLLERS for kind in kinds)
    return True


def can_autogen(policy: Mapping[str, Any]) -> tuple[bool, frozenset[str]]:
    """Whether Kyverno may generate controller rules for `policy`, and for which controllers (``CanAutoGen``)."""
    spec = policy.get("spec") or {}
    needed = [False]
    for rule in spec.get("rules") or []:
        if rule.get("generate") is not None:
            return False, frozenset({"none"})
        mutate = rule.get("mutate")
        if mutate is not None:
            if mutate.get("patchesJson6902"):
                return False, frozenset({"none"})
            if any(item.get("patchesJson6902") for item in mutate.get("foreach") or []):
                return False, frozenset({"none"})
        for block in (rule.get("match") or {}, rule.get("exclude")):
            if block is None:
                continue
            filters = [block.get("resources"), *[item.get("resources") for item in block.get("any") or []],
                       *[item.get("resources") for item in block.get("all") or []]]
            if not all(_supported(description, needed) for description in filters):
                return False, frozenset()
    if not needed[0]:
        return False, frozenset()
    return True, frozenset(CONTROLLERS)


def autogen_controllers(policy: Mapping[str, Any]) -> str:
    """The controllers Kyverno generates rules for, as its comma-separated text ("none" for no autogen)."""
    apply, desired = can_autogen(policy)
    if not apply:
        desired = frozenset({"none"})
    annotations = ((policy.get("metadata") or {}).get("annotations")) or {}
    annotation = annotations.get(ANNOTATION)
    actual = desired if annotation is None or not apply else frozenset(str(annotation).split(","))
    return ",".join(sorted(actual))


# -- generating ----------------------------------------------------------------------------------------------


def autogen_rules(policy: Mapping[str, Any]) -> list[dict]:
    """The rules autogen adds to `policy`, in Kyverno's order (per rule: ``autogen-``, then ``autogen-cronjob-``)."""
    controllers = autogen_controllers(policy)
    if controllers == "none":
        return []
    out: list[dict] = []
    for rule in (policy.get("spec") or {}).get("rules") or []:
        generated = _for_controllers(rule, _strip_cronjob(controllers))
        if generated is not None:
            out.append(_finish(generated, "Pod"))
        cronjob = _for_cronjob(rule, controllers)
        if cronjob is not None:
            out.append(_finish(cronjob, "CronJob"))
    return out


def compute_rules(policy: Mapping[str, Any]) -> list[dict]:
    """The rules Kyverno runs for `policy`: the written ones (less any named ``autogen-*`` when it
    generates rules) followed by the generated ones (``ComputeRules``)."""
    written = list((policy.get("spec") or {}).get("rules") or [])
    generated = autogen_rules(policy)
    if not generated:
        return written
    return [rule for rule in written if not str(rule.get("name", "")).startswith("autogen-")] + generated


def _strip_cronjob(controllers: str) -> str:
    return ",".join(kind for kind in _split(controllers) if kind != "CronJob")


def _name(prefix: str, name: str) -> str:
    return f"{prefix}-{name}"[:63]


def _for_controllers(rule: Mapping, controllers: str) -> dict | None:
    name = str(rule.get("name", ""))
    if name.startswith("autogen-") or controllers == "":
        return None
    exclude_kinds = _kinds(rule.get("exclude"))
    if not _contains_kind(_kinds(rule.get("match")), "Pod") or (exclude_kinds and
                                                                not _contains_kind(exclude_kinds, "Pod")):
        return None
    if controllers == "all":
        controllers = "DaemonSet,Deployment,Job,StatefulSet,ReplicaSet,ReplicationController"
    elif controllers != "none":
        validated = [kind for kind in _split(controllers) if kind in _POD_CONTROLLERS]
        if validated:
            controllers = ",".join(validated)
    kinds = _split(controllers)

    def filters(items: list, gvks: list[str]) -> list:
        out = copy.deepcopy(items)
        for item in out:
            resources = item.get("resources")
            if resources and _contains_kind(resources.get("kinds") or [], "Pod"):
                resources["kinds"] = list(gvks)
        return out

    return _generate(_name("autogen", name), rule, "template", "spec/template", kinds, filters)


def _for_cronjob(rule: Mapping, controllers: str) -> dict | None:
    if "CronJob" not in controllers and "all" not in controllers:
        return None
    base = _for_controllers(rule, controllers)
    if base is None:
        return None

    def filters(items: list, gvks: list[str]) -> list:
        out = copy.deepcopy(items)
        for item in out:
            item["resources"] = {**(item.get("resources") or {}), "kinds": list(gvks)}
        return out

    return _generate(_name("autogen-cronjob", str(rule.get("name", ""))), base, "jobTemplate",
                     "spec/jobTemplate/spec/template", ["CronJob"], filters)


def _generate(name: str, source: Mapping, template: str, shift: str, kinds: list[str],
              filters: Callable[[list, list[str]], list]) -> dict | None:
    rule = copy.deepcopy(dict(source))
    rule["name"] = name
    gvks = _to_gvk(kinds)
    match = rule["match"] = rule.get("match") or {}
    if match.get("any"):
        match["any"] = filters(match["any"], gvks)
    elif match.get("all"):
        match["all"] = filters(match["all"], gvks)
    else:
        match["resources"] = {**(match.get("resources") or {}), "kinds": list(gvks)}
    exclude = rule.get("exclude")
    if exclude is not None:
        if exclude.get("any"):
            exclude["any"] = filters(exclude["any"], gvks)
        elif exclude.get("all"):
            exclude["all"] = filters(exclude["all"], gvks)
        elif (exclude.get("resources") or {}).get("kinds"):
            exclude["resources"]["kinds"] = list(gvks)

    def wrap(value: Any) -> dict:
        return {"spec": {template: value}}

    mutate = rule.get("mutate")
    if mutate is not None:
        if mutate.get("patchStrategicMerge") is not None:
            rule["mutate"] = {"patchStrategicMerge": wrap(mutate["patchStrategicMerge"])}
            return rule
        if mutate.get("foreach"):
            rule["mutate"] = {"foreach": [
                {**{key: item[key] for key in ("list", "context", "preconditions") if item.get(key)},
                 "patchStrategicMerge": wrap(item.get("patchStrategicMerge"))}
                for item in mutate["foreach"]
            ]}
            return rule
    validate = rule.get("validate")
    if validate is not None:

        def common(pivot: str) -> dict:
            out: dict[str, Any] = {}
            message = shift_references(str(validate.get("message") or ""), shift, pivot)
            if message:
                out["message"] = message
            for key in ("failureAction", "failureActionOverrides", "allowExistingViolations"):
                if validate.get(key) is not None:
                    out[key] = validate[key]
            return out

        if validate.get("pattern") is not None:
            rule["validate"] = {**common("pattern"), "pattern": wrap(validate["pattern"])}
            return rule
        if validate.get("deny") is not None:
            rule["validate"] = {**common("deny"), "deny": validate["deny"]}
            return rule
        if validate.get("podSecurity") is not None:
            security = validate["podSecurity"]
            # Kyverno copies level, version and exclude, and its JSON round trip drops the empty ones
            kept = {key: security[key] for key in ("level", "version", "exclude") if security.get(key)}
            rule["validate"] = {**common("podSecurity"), "podSecurity": kept}
            return rule
        if validate.get("anyPattern") is not None:
            patterns = validate["anyPattern"] if isinstance(validate["anyPattern"], list) else []
            rule["validate"] = {**common("anyPattern"), "anyPattern": [wrap(item) for item in patterns]}
            return rule
        if validate.get("foreach"):
            rule["validate"] = {**common("pattern"), "foreach": validate["foreach"]}
            return rule
        if validate.get("cel") is not None:
            return rule
    if rule.get("verifyImages") is not None:
        return rule
    return None


def _finish(rule: dict, kind: str) -> dict:
    # Kyverno keeps only its rule struct's non-empty fields, then rewrites request paths in the JSON text.
    kept = {key: rule[key] for key in _RULE_FIELDS if key in rule and rule[key] not in (None, {}, [])}
    kept["name"] = rule["name"]
    kept.setdefault("match", {})
    text = json.dumps(kept, ensure_ascii=False)
    cel = (kept.get("validate") or {}).get("cel") is not None
    for old, new in _REPLACEMENTS[(kind, cel)]:
        text = text.replace(old, new)
    return json.loads(text)
