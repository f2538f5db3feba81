"""Which resources a Kyverno rule selects: its ``match`` and ``exclude`` blocks.

Mirrors ``MatchesResourceDescription`` (``pkg/engine/utils/match.go``) and the
checks it calls (``pkg/utils/match``), as the CLI runs them offline:

- ``match`` holds ``any`` (one filter must select), ``all`` (every filter
  must), or the legacy direct form (``resources`` plus ``subjects``/``roles``/
  ``clusterRoles``). Inside a filter every given criterion must hold; inside
  a list (kinds, names, namespaces) one entry is enough.
- ``exclude`` is checked only after a match: ``any`` excludes when one filter
  selects the resource, ``all`` when every filter does.
- kinds: ``Kind``, ``version/Kind``, ``group/version/Kind``, with ``*`` and
  ``?`` wildcards and an optional subresource (``Pod/exec``, ``*/*``); a rule
  on Pods also sees the ``ephemeralcontainers`` subresource.
- names and namespaces take wildcards; a Namespace's own namespace is its name.
- ``selector`` / ``namespaceSelector`` are Kubernetes label selectors;
  wildcards are allowed only in ``matchLabels`` (Kyverno expands them against
  the labels before building the selector); invalid selectors never select.
  Namespace labels come from the values file offline.
- user info: ``roles``/``clusterRoles`` need one exact name in common with
  the request's, ``subjects`` match user, group or service account names with
  wildcards. In ``match`` (not ``exclude``) Kyverno ignores them when the
  request carries no user information at all, as the CLI without a user-info
  file does.

`MatchResult` carries Kyverno's reasons for not selecting, as data.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from assertree.languages.kyverno.wildcard import contains_wildcard
from assertree.languages.kyverno.wildcard import match as wildcard
from assertree.languages.selectors import SelectorError, selects

__all__ = [
    "GVK",
    "MatchResult",
    "SelectorError",
    "check_annotations",
    "check_kind",
    "check_names",
    "check_namespaces",
    "check_selector",
    "check_subjects",
    "exception_matches",
    "parse_kind_selector",
    "request_info_is_empty",
    "resource_gvk",
    "rule_matches",
    "selects_by_kinds_alone",
]


@dataclass(frozen=True)
class GVK:
    group: str
    version: str
    kind: str


@dataclass(frozen=True)
class MatchResult:
    """Whether a rule selects a resource; `reasons` say why not (Kyverno's wording)."""

    matched: bool
    reasons: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return self.matched


# -- kinds ------------------------------------------------------------------------------------------------

_VERSION = re.compile(r"^(v\d+((alpha|beta)\d+)?|\*)$")
_POD = GVK("", "v1", "Pod")


def parse_kind_selector(text: str) -> tuple[str, str, str, str]:
    """(group, version, kind, subresource) of a ``kinds`` entry; ``*`` for what it leaves open.

    ``Pod`` -> any group and version; ``v1/Pod``; ``apps/v1/Deployment``;
    ``Pod/exec`` and ``Pod.exec`` name a subresource; ``*/*`` is everything.
    """
    parts = text.split("/")
    parts = [*parts[:-1], *parts[-1].split(".")]
    if len(parts) == 1:
        return "*", "*", parts[0], ""
    if len(parts) == 2:
        if parts[0] == "*" and parts[1] == "*":
            return "*", "*", "*", "*"
        if parts[0] == "*" and parts[1].lower() == parts[1]:
            return "*", "*", parts[0], parts[1]
        if _VERSION.match(parts[0]):
            return "*", parts[0], parts[1], ""
        return "*", "*", parts[0], parts[1]
    if len(parts) == 3:
        if _VERSION.match(parts[0]):
            return "*", parts[0], parts[1], parts[2]
        return parts[0], parts[1], parts[2], ""
    if len(parts) == 4:
        return parts[0], parts[1], parts[2], parts[3]
    return "", "", "", ""


_parsed_kind = lru_cache(maxsize=4096)(parse_kind_selector)  # a rule's kinds are read for every resource it meets


def check_kind(kinds: Iterable[str], gvk: GVK, subresource: str = "", *, allow_ephemeral: bool = True) -> bool:
    """Whether one of `kinds` selects a resource of `gvk` (and `subresource`)."""
    for entry in kinds:
        group, version, kind, sub = _parsed_kind(entry) if type(entry) is str else parse_kind_selector(entry)
        if wildcard(group, gvk.group) and wildcard(version, gvk.version) and wildcard(kind, gvk.kind):
            if wildcard(sub, subresource):
                return True
            if allow_ephemeral and gvk == _POD and subresource == "ephemeralcontainers":
                return True
    return False


def resource_gvk(resource: Mapping, subresources: Iterable[Any] = ()) -> tuple[GVK, str]:
    """The (group/version/kind, subresource) Kyverno matches `resource` as.

    `subresources` are the values file's (`values.Subresource`): a resource
    whose kind is declared a subresource is matched as its parent kind plus
    the subresource name, as the CLI does offline.
    """
    api_version = str(resource.get("apiVersion") or "")
    group, _, version = api_version.rpartition("/") if "/" in api_version else ("", "", api_version)
    if api_version.count("/") > 1:
        group = version = ""
    gvk = GVK(group, version, str(resource.get("kind") or ""))
    subresource = ""
    for entry in subresources:
        if GVK(entry.group, entry.version, entry.kind) == gvk:
            gvk = GVK(entry.parent_group, entry.parent_version, entry.parent_kind)
            subresource = entry.subresource
    return gvk, subresource


# -- names, namespaces, annotations ----------------------------------------------------------------------


def _metadata(resource: Mapping) -> Mapping:
    metadata = resource.get("metadata")
    return metadata if isinstance(metadata, Mapping) else {}


def _name(resource: Mapping) -> str:
    metadata = _metadata(resource)
    return str(metadata.get("name") or metadata.get("generateName") or "")


def check_names(names: Iterable[str], resource: Mapping) -> bool:
    """Whether one of `names` (wildcards allowed) is the resource's name (or generateName)."""
    name = _name(resource)
    return any(wildcard(pattern, name) for pattern in names)


def check_namespaces(namespaces: Iterable[str], resource: Mapping) -> bool:
    """Whether one of `namespaces` (wildcards allowed) is the resource's namespace (a Namespace's own name)."""
    metadata = _metadata(resource)
    key = "name" if resource.get("kind") == "Namespace" else "namespace"
    namespace = str(metadata.get(key) or "")
    return any(wildcard(pattern, namespace) for pattern in namespaces)


def check_annotations(expected: Mapping[str, str], actual: Mapping[str, Any] | None) -> bool:
    """Whether every expected annotation (key and value may hold wildcards) is among `actual`."""
    actual = actual or {}
    return all(any(wildcard(key, str(k)) and wildcard(str(value), str(v)) for k, v in actual.items())
               for key, value in expected.items())


# -- label selectors --------------------------------------------------------------------------------------

def _expand_wildcards(match_labels: Mapping[str, Any], labels: Mapping[str, str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in match_labels.items():
        if isinstance(value, str) and (contains_wildcard(key) or contains_wildcard(value)):
            found = next(((k, v) for k, v in labels.items() if wildcard(key, k) and wildcard(value, v)), None)
            if found is None:
                found = (key.replace("*", "0").replace("?", "0"), value.replace("*", "0").replace("?", "0"))
            out[found[0]] = found[1]
        else:
            out[key] = value
    return out


def check_selector(selector: Mapping[str, Any] | None, labels: Mapping[str, str] | None) -> bool:
    """Whether the label `selector` selects `labels`; None selects nothing, ``{}`` everything.

    Kyverno's addition to Kubernetes' selectors: wildcards in ``matchLabels`` keys and values, expanded
    against `labels` first. Raises `SelectorError` for a selector Kubernetes would not build.
    """
    if selector is None:
        return False
    labels = {str(k): str(v) for k, v in (labels or {}).items()}
    expanded = {**selector, "matchLabels": _expand_wildcards(selector.get("matchLabels") or {}, labels)}
    return selects(expanded, labels)


# -- user info ---------------------------------------------------------------------------------------------


def _user(request_info: Mapping | None) -> Mapping:
    user = (request_info or {}).get("userInfo")
    return user if isinstance(user, Mapping) else {}


def request_info_is_empty(request_info: Mapping | None) -> bool:
    """Whether the request carries no roles, cluster roles or user (the CLI without a user-info file)."""
    if not request_info:
        return True
    return not request_info.get("roles") and not request_info.get("clusterRoles") and not any(
        _user(request_info).get(key) for key in ("username", "uid", "groups", "extra"))


def check_subjects(subjects: Iterable[Mapping], request_info: Mapping | None) -> bool:
    """Whether one of `subjects` (User, Group, ServiceAccount; names with wildcards) is the requester."""
    user = _user(request_info)
    username = str(user.get("username") or "")
    groups = [str(group) for group in user.get("groups") or ()]
    for subject in subjects:
        kind = subject.get("kind")
        name = str(subject.get("name") or "")
        if kind == "ServiceAccount":
            if wildcard(f"system:serviceaccount:{subject.get('namespace') or ''}:{name}", username):
                return True
        elif kind == "Group":
            if any(wildcard(name, group) for group in groups):
                return True
        elif kind == "User" and wildcard(name, username):
            return True
    return False


def _user_errors(user_info: Mapping, request_info: Mapping | None) -> list[str]:
    errors = []
    info = request_info or {}
    if user_info.get("roles") and not set(user_info["roles"]) & set(info.get("roles") or ()):
        errors.append("user info does not match roles for the given conditionBlock")
    if user_info.get("clusterRoles") and not set(user_info["clusterRoles"]) & set(info.get("clusterRoles") or ()):
        errors.append("user info does not match clustersRoles for the given conditionBlock")
    if user_info.get("subjects") and not check_subjects(user_info["subjects"], request_info):
        errors.append("user info does not match subject for the given conditionBlock")
    return errors


# -- filters ------------------------------------------------------------------------------------------------

_USER_KEYS = ("roles", "clusterRoles", "subjects")
_DESCRIPTION_KEYS = ("kinds", "name", "names", "namespaces", "annotations", "selector", "namespaceSelector",
                     "operations")


@dataclass(frozen=True)
class _Request:
    resource: Mapping
    gvk: GVK
    subresource: str
    operation: str
    namespace_labels: Mapping[str, str] | None
    request_info: Mapping | None


def _is_empty_description(description: Mapping) -> bool:
    return not any(description.get(key) not in (None, [], {}, "") for key in _DESCRIPTION_KEYS
                   if key not in ("selector", "namespaceSelector")) and all(
        description.get(key) is None for key in ("selector", "namespaceSelector"))


def _is_empty_user(user_info: Mapping) -> bool:
    return not any(user_info.get(key) for key in _USER_KEYS)


def _description_errors(description: Mapping, request: _Request, *, exception: bool = False) -> list[str]:
    resource = request.resource
    if not exception and description.get("operations") and request.operation not in description["operations"]:
        return ["operation does not match"]
    errors = []
    kinds = description.get("kinds") or []
    if kinds and not check_kind(kinds, request.gvk, request.subresource):
        errors.append(f"kind does not match {kinds}")
    if description.get("name") and not check_names([description["name"]], resource):
        errors.append("name does not match")
    if description.get("names") and not check_names(description["names"], resource):
        errors.append("none of the names match")
    if description.get("namespaces") and not check_namespaces(description["namespaces"], resource):
        errors.append("namespace does not match")
    if description.get("annotations") and not check_annotations(description["annotations"],
                                                                _metadata(resource).get("annotations")):
        errors.append("annotations does not match")
    if description.get("selector") is not None:
        try:
            if not check_selector(description["selector"], _metadata(resource).get("labels")):
                errors.append("selector does not match")
        except SelectorError as error:
            errors.append(f"failed to parse selector: {error}")
    if description.get("namespaceSelector") is not None:
        kind = resource.get("kind")
        if kind == "Namespace":
            if not exception:
                errors.append("namespace selector is not applicable for namespace resource")
        elif kind:
            try:
                if not check_selector(description["namespaceSelector"], request.namespace_labels):
                    errors.append("namespace selector does not match labels")
            except SelectorError as error:
                errors.append(f"failed to parse namespace selector: {error}")
    return errors


def _filter_errors(resource_filter: Mapping, request: _Request, *, exclude: bool = False) -> list[str]:
    """Kyverno's reasons why one ``any``/``all`` filter does not select (match) or does select (exclude)."""
    description = resource_filter.get("resources") or {}
    user_info = {key: resource_filter.get(key) for key in _USER_KEYS}
    if not exclude and request_info_is_empty(request.request_info):
        user_info = {}
    if _is_empty_description(description) and _is_empty_user(user_info):
        return [] if exclude else ["match cannot be empty"]
    errors = _description_errors(description, request) + _user_errors(user_info,
                                                                                        request.request_info)
    if exclude:
        return ["resource excluded since one of the criteria excluded it"] if not errors else []
    return errors


def _legacy(block: Mapping) -> dict:
    return {key: block.get(key) for key in ("resources", *_USER_KEYS)}


def _block_is_empty(block: Mapping) -> bool:
    if not block:
        return True
    if block.get("any") or block.get("all"):
        return False
    return _is_empty_description(block.get("resources") or {}) and _is_empty_user(block)


def _match_errors(match: Mapping, request: _Request) -> list[str]:
    if match.get("any"):
        if any(not _filter_errors(item, request) for item in match["any"]):
            return []
        return ["no resource matched"]
    if match.get("all"):
        return [error for item in match["all"] for error in _filter_errors(item, request)]
    return _filter_errors(_legacy(match), request)


def _exclude_errors(exclude: Mapping, request: _Request) -> list[str]:
    if exclude.get("any"):
        return [error for item in exclude["any"] for error in _filter_errors(item, request, exclude=True)]
    if exclude.get("all"):
        if all(_filter_errors(item, request, exclude=True) for item in exclude["all"]):
            return ["resource excluded since the combination of all criteria exclude it"]
        return []
    return _filter_errors(_legacy(exclude), request, exclude=True)


def selects_by_kinds_alone(rule: Mapping[str, Any]) -> bool:
    """Whether `rule`'s ``match`` reads nothing but kinds (every filter it reads has a non-empty ``kinds``
    list of strings and no other criterion) and its ``exclude`` is empty.

    Invariant (the fast path of selection, `bridge.selects`): for such a rule, a non-empty resource, no
    policy namespace and no values-file subresources, `rule_matches` selects exactly when the kinds do,
    as `kind_gate.KindGate.admits` answers, whatever the operation, names, labels or user info.
    `tests/kyverno/test_kinds_alone.py` holds the two to each other.
    """
    exclude = rule.get("exclude") or {}
    match = rule.get("match") or {}
    if not isinstance(exclude, Mapping) or not _block_is_empty(exclude) or not isinstance(match, Mapping):
        return False
    filters = match["any"] if match.get("any") else match["all"] if match.get("all") else [_legacy(match)]
    return isinstance(filters, list) and bool(filters) and all(_kinds_alone(item) for item in filters)


def _kinds_alone(resource_filter: Any) -> bool:
    if not isinstance(resource_filter, Mapping) or any(resource_filter.get(key) for key in _USER_KEYS):
        return False
    description = resource_filter.get("resources") or {}
    if not isinstance(description, Mapping):
        return False
    kinds = description.get("kinds")
    if not isinstance(kinds, list) or not kinds or not all(isinstance(kind, str) for kind in kinds):
        return False
    return all(description.get(key) is None for key in ("selector", "namespaceSelector")) and all(
        description.get(key) in (None, [], {}, "") for key in _DESCRIPTION_KEYS
        if key not in ("kinds", "selector", "namespaceSelector"))


def _matches(rule: Mapping, resource: Mapping | None, request: _Request, policy_namespace: str) -> list[str]:
    if not resource:
        return ["resource is empty"]
    if policy_namespace and policy_namespace != str(_metadata(resource).get("namespace") or ""):
        return ["policy and resource namespaces mismatch"]
    errors = _match_errors(rule.get("match") or {}, request)
    exclude = rule.get("exclude") or {}
    if not errors and not _block_is_empty(exclude):
        errors = _exclude_errors(exclude, request)
    return errors


def exception_matches(
    match: Mapping[str, Any] | None,
    resource: Mapping,
    *,
    namespace_labels: Mapping[str, str] | None = None,
    request_info: Mapping | None = None,
    subresources: Sequence[Any] = (),
    gvk: GVK | None = None,
    subresource: str | None = None,
) -> bool:
    """Whether a PolicyException's ``spec.match`` selects `resource` (``pkg/engine/utils/exceptions.go``).

    Unlike a rule's ``match``: only ``any``/``all`` (neither selects nothing),
    no ``operations`` check, user info is always checked, and a
    ``namespaceSelector`` does not stop a Namespace from being selected.
    """
    if gvk is None:
        gvk, found = resource_gvk(resource, subresources)
        subresource = found if subresource is None else subresource
    request = _Request(resource, gvk, subresource or "", "", namespace_labels, request_info)

    def selects(resource_filter: Mapping) -> bool:
        description = resource_filter.get("resources") or {}
        user_info = {key: resource_filter.get(key) for key in _USER_KEYS}
        if _is_empty_description(description) and _is_empty_user(user_info):
            return False
        return not _description_errors(description, request, exception=True) and not _user_errors(
            user_info, request_info)

    match = match or {}
    if match.get("any"):
        return any(selects(item) for item in match["any"])
    if match.get("all"):
        return all(selects(item) for item in match["all"])
    return False


def rule_matches(
    rule: Mapping[str, Any],
    resource: Mapping | None,
    *,
    operation: str = "CREATE",
    old_resource: Mapping | None = None,
    namespace_labels: Mapping[str, str] | None = None,
    request_info: Mapping | None = None,
    policy_namespace: str = "",
    subresources: Sequence[Any] = (),
    gvk: GVK | None = None,
    subresource: str | None = None,
) -> MatchResult:
    """Whether `rule` (its ``match``/``exclude``) selects the request for `resource`.

    `resource` is the new object (None on DELETE; then `old_resource` is
    checked, as the engine does); `namespace_labels` are the labels of the
    resource's namespace; `request_info` the ``RequestInfo`` JSON (roles,
    clusterRoles, userInfo) or None; `policy_namespace` the namespace of a
    namespaced ``Policy`` (it selects only resources of that namespace).
    `gvk`/`subresource` default to what `resource_gvk` finds with `subresources`.
    """
    subject = resource or old_resource or {}
    if gvk is None:
        gvk, found = resource_gvk(subject, subresources)
        subresource = found if subresource is None else subresource
    request = _Request(subject, gvk, subresource or "", operation, namespace_labels, request_info)
    errors = _matches(rule, resource, request, policy_namespace)
    if errors and not resource and old_resource:
        errors = _matches(rule, old_resource, request, policy_namespace)
    if errors:
        return MatchResult(False, (f"rule {rule.get('name', '')} not matched:", *errors))
    return MatchResult(True)
