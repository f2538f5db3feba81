"""The Kyverno CLI's values and user-info files, read into typed objects.

``kyverno test`` and ``kyverno apply`` take what a cluster would know from two
files (``cmd/cli/kubectl-kyverno/apis/v1alpha1``): a values file
(``cli.kyverno.io/v1alpha1`` ``Values``, or the same fields inline under a
test's ``values:``) and a user-info file (``UserInfo``). The CLI decodes both
strictly (sigs.k8s.io/yaml ``UnmarshalStrict``): an unknown field is an error,
and so it is here, with the file and field path (`PayloadError`).

What the values mean is applied elsewhere; this module only answers the
questions the CLI asks of them:

- `Values.resource_values`: the variables of one resource of one policy
  (``globalValues``, then the resource's ``values``, and ``request.operation``
  defaulting to ``CREATE``), added to the context before any rule runs;
- `Values.rule`: a rule's ``values`` and ``foreachValues`` (found also under
  its ``autogen-``/``autogen-cronjob-`` names), added when the rule's context
  loads;
- `Values.namespace_labels`: the labels of namespaces (``namespaceSelector``,
  then ``namespaces``, which win) for ``namespaceSelector`` matching;
- `Values.subresources`: which resource kinds are subresources of which parent.

A file without ``apiVersion``/``kind`` is the older untyped form; the CLI of
2026 refuses it ("deprecated schema"), older CLIs read it the same way. It is
read and flagged (`Values.typed` is False) so the caller decides. As in the
CLI, the values of ``apiVersion`` and ``kind`` are not checked.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, NoReturn

import yaml

from assertree.errors import PayloadError
from assertree.languages.kyverno.manifests import go_yaml_documents, read_input_text

__all__ = [
    "NamespaceSelector",
    "PolicyValues",
    "ResourceValues",
    "RuleValues",
    "Subresource",
    "UserInfo",
    "Values",
    "load_user_info",
    "load_values",
    "parse_user_info",
    "parse_values",
    "values_from_spec",
]

API_VERSION = "cli.kyverno.io/v1alpha1"
FieldPath = tuple[str | int, ...]


def _fail(message: str, source: str | None, path: FieldPath = ()) -> NoReturn:
    """The one place this module reports a bad file."""
    raise PayloadError(message, source=source, path=path)


@dataclass(frozen=True)
class RuleValues:
    """``policies[].rules[]``: variables for one rule; ``foreachValues`` hold one value per foreach element."""

    name: str
    values: dict[str, Any]
    foreach_values: dict[str, list[Any]]

    def variables(self, foreach_index: int = 0) -> dict[str, Any]:
        """The variables the CLI adds when the rule's context loads: `values`, then each foreach list's element.

        The CLI at kyverno 111e07b never advances its foreach index (``Store.SetForEachElement`` has
        no caller), so it always adds element 0; pass another index to model a fixed CLI.
        """
        out = dict(self.values)
        for key, items in self.foreach_values.items():
            if foreach_index < len(items):
                out[key] = items[foreach_index]
        return out


@dataclass(frozen=True)
class ResourceValues:
    """``policies[].resources[]``: variables for one resource, by name."""

    name: str
    values: dict[str, Any]


@dataclass(frozen=True)
class PolicyValues:
    name: str
    resources: tuple[ResourceValues, ...] = ()
    rules: tuple[RuleValues, ...] = ()


@dataclass(frozen=True)
class NamespaceSelector:
    """``namespaceSelector[]``: the labels of a namespace that is not among the resources."""

    name: str
    labels: dict[str, str]


@dataclass(frozen=True)
class Subresource:
    """``subresources[]``: resources of kind `kind` are the `name` subresource (``pods/exec``) of `parent_kind`."""

    name: str
    group: str
    version: str
    kind: str
    parent_group: str
    parent_version: str
    parent_kind: str

    @property
    def subresource(self) -> str:
        """The part after ``/`` in `name` (``exec`` for ``pods/exec``)."""
        parts = self.name.split("/")
        return parts[1] if len(parts) > 1 else ""


@dataclass(frozen=True)
class Values:
    """A values file (or a test's inline ``values:``)."""

    global_values: dict[str, Any]
    policies: tuple[PolicyValues, ...]
    namespace_selectors: tuple[NamespaceSelector, ...] = ()
    namespaces: tuple[dict, ...] = ()
    subresources: tuple[Subresource, ...] = ()
    source: str | None = None
    typed: bool = True  # False for the old form without apiVersion/kind
    forced_operation: str = ""  # a kyverno test result's operation: it wins over request.operation set here

    def with_operation(self, operation: str) -> Values:
        """These values with `operation` as every resource's ``request.operation`` (as the CLI runs a test
        result's ``operation``: it takes precedence over the values file's)."""
        return replace(self, forced_operation=operation)

    def policy(self, name: str) -> PolicyValues | None:
        return next((policy for policy in self.policies if policy.name == name), None)

    def rule(self, policy: str, rule: str) -> RuleValues | None:
        """The values of `rule` of `policy`; an ``autogen-``/``autogen-cronjob-`` rule finds its Pod rule's."""
        for candidate in self.policies:
            if candidate.name != policy:
                continue
            for values in candidate.rules:
                if rule in (values.name, f"autogen-{values.name}", f"autogen-cronjob-{values.name}"):
                    return values
        return None

    def resource_values(self, policy: str, resource: str) -> dict[str, Any]:
        """The variables for resource `resource` (by name) under `policy` (``ComputeVariables``)."""
        out = dict(self.global_values)
        for candidate in self.policies:
            if candidate.name != policy:
                continue
            for values in candidate.resources:
                if values.name == resource:
                    out.update(values.values)
        out.setdefault("request.operation", "CREATE")
        if self.forced_operation:
            out["request.operation"] = self.forced_operation
        return out

    @property
    def operation(self) -> str:
        """The ``request.operation`` of ``globalValues`` (or the forced one), or ""."""
        operation = self.forced_operation or self.global_values.get("request.operation")
        return operation if isinstance(operation, str) else ""

    def namespace_labels(self) -> dict[str, dict[str, str]]:
        """Namespace name -> labels; ``namespaces`` entries win over ``namespaceSelector`` ones."""
        out = {selector.name: dict(selector.labels) for selector in self.namespace_selectors}
        for namespace in self.namespaces:
            metadata = namespace.get("metadata") or {}
            out[str(metadata.get("name", ""))] = dict(metadata.get("labels") or {})
        return out

    def namespace(self, name: str) -> dict | None:
        """The Namespace resource `name` as the CLI builds it from the file, or None."""
        for namespace in self.namespaces:
            if (namespace.get("metadata") or {}).get("name") == name:
                return namespace
        for selector in self.namespace_selectors:
            if selector.name == name:
                return {"apiVersion": "v1", "kind": "Namespace",
                        "metadata": {"name": name, "labels": dict(selector.labels)}}
        return None


@dataclass(frozen=True)
class UserInfo:
    """A user-info file: who sends the request (``kyverno/v2.RequestInfo``)."""

    roles: tuple[str, ...] = ()
    cluster_roles: tuple[str, ...] = ()
    username: str = ""
    uid: str = ""
    groups: tuple[str, ...] = ()
    extra: dict[str, list[str]] | None = None
    source: str | None = None
    typed: bool = True

    def request_info(self) -> dict[str, Any]:
        """The JSON Kyverno merges under ``request`` (``roles``, ``clusterRoles``, ``userInfo``)."""
        user: dict[str, Any] = {}
        if self.username:
            user["username"] = self.username
        if self.uid:
            user["uid"] = self.uid
        if self.groups:
            user["groups"] = list(self.groups)
        if self.extra:
            user["extra"] = {key: list(value) for key, value in self.extra.items()}
        out: dict[str, Any] = {}
        if self.roles:
            out["roles"] = list(self.roles)
        if self.cluster_roles:
            out["clusterRoles"] = list(self.cluster_roles)
        out["userInfo"] = user
        return out


# -- reading -----------------------------------------------------------------------------------------------


def _document(text: str, source: str | None, what: str) -> dict:
    try:
        documents = [doc for doc in go_yaml_documents(text) if doc is not None]
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        raise PayloadError(f"invalid YAML: {error.problem or error.context}", source=source,
                           line=mark.line + 1 if mark else None, column=mark.column + 1 if mark else None) from None
    except yaml.YAMLError as error:
        _fail(f"invalid YAML: {str(error).splitlines()[0]}", source)
    if len(documents) != 1:
        _fail(f"a {what} file holds exactly one YAML document, found {len(documents)}", source)
    if not isinstance(documents[0], dict):
        _fail(f"a {what} file is a mapping", source)
    return documents[0]


def _check_keys(value: Any, allowed: Sequence[str], source: str | None, path: FieldPath) -> dict:
    if value is None:
        return {}
    if not isinstance(value, dict):
        _fail("expected a mapping", source, path)
    for key in value:
        if key not in allowed:
            _fail(f'unknown field "{key}"', source, (*path, key))
    return value


def _list(value: Any, source: str | None, path: FieldPath) -> list:
    if value is None:
        return []
    if not isinstance(value, list):
        _fail("expected a list", source, path)
    return value


def _text(value: Any, source: str | None, path: FieldPath, *, required: bool = False) -> str:
    if value is None:
        if required:
            _fail("required field is missing", source, path)
        return ""
    if not isinstance(value, str):
        _fail("expected a string", source, path)
    return value


def _object(value: Any, source: str | None, path: FieldPath) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        _fail("expected a mapping", source, path)
    return {str(key): item for key, item in value.items()}


def _labels(value: Any, source: str | None, path: FieldPath) -> dict[str, str]:
    labels = _object(value, source, path)
    for key, item in labels.items():
        if not isinstance(item, str):
            _fail("a label value is a string", source, (*path, key))
    return labels


_VALUES_FIELDS = ("apiVersion", "kind", "metadata", "globalValues", "policies", "namespaceSelector", "namespaces",
                  "subresources")
_API_RESOURCE_FIELDS = ("name", "singularName", "namespaced", "group", "version", "kind", "verbs", "shortNames",
                        "categories", "storageVersionHash")


def parse_values(text: str, source: str | None = None) -> Values:
    """A values file's text as `Values`; `PayloadError` (file, field path) when it is not one."""
    document = _document(text, source, "values")
    # The CLI only checks that apiVersion and kind are set (a test of the corpus says `kind: Value`).
    typed = bool(document.get("apiVersion")) and bool(document.get("kind"))
    return values_from_spec(document, source, typed=typed)


def load_values(path: str | Path) -> Values:
    """The values file at `path` (see `parse_values`)."""
    return parse_values(read_input_text(path, "values"), str(path))


def values_from_spec(spec: Mapping, source: str | None = None, *, typed: bool = True,
                     path: FieldPath = ()) -> Values:
    """`Values` from the fields of a ``ValuesSpec`` (a values file, or a test's inline ``values:``)."""
    document = _check_keys(dict(spec), _VALUES_FIELDS, source, path)
    policies = []
    for i, raw in enumerate(_list(document.get("policies"), source, (*path, "policies"))):
        where = (*path, "policies", i)
        policy = _check_keys(raw, ("name", "resources", "rules"), source, where)
        resources = []
        for j, item in enumerate(_list(policy.get("resources"), source, (*where, "resources"))):
            at = (*where, "resources", j)
            resource = _check_keys(item, ("name", "values"), source, at)
            resources.append(ResourceValues(_text(resource.get("name"), source, (*at, "name"), required=True),
                                            _object(resource.get("values"), source, (*at, "values"))))
        rules = []
        for j, item in enumerate(_list(policy.get("rules"), source, (*where, "rules"))):
            at = (*where, "rules", j)
            rule = _check_keys(item, ("name", "values", "foreachValues"), source, at)
            foreach = _object(rule.get("foreachValues"), source, (*at, "foreachValues"))
            for key, items in foreach.items():
                _list(items, source, (*at, "foreachValues", key))
            rules.append(RuleValues(_text(rule.get("name"), source, (*at, "name"), required=True),
                                    _object(rule.get("values"), source, (*at, "values")),
                                    {key: list(items or []) for key, items in foreach.items()}))
        policies.append(PolicyValues(_text(policy.get("name"), source, (*where, "name"), required=True),
                                     tuple(resources), tuple(rules)))
    selectors = []
    for i, raw in enumerate(_list(document.get("namespaceSelector"), source, (*path, "namespaceSelector"))):
        where = (*path, "namespaceSelector", i)
        selector = _check_keys(raw, ("name", "labels"), source, where)
        selectors.append(NamespaceSelector(_text(selector.get("name"), source, (*where, "name"), required=True),
                                           _labels(selector.get("labels"), source, (*where, "labels"))))
    namespaces = []
    for i, raw in enumerate(_list(document.get("namespaces"), source, (*path, "namespaces"))):
        where = (*path, "namespaces", i)
        if not isinstance(raw, dict):
            _fail("expected a Namespace resource", source, where)
        metadata = _object(raw.get("metadata"), source, (*where, "metadata"))
        _labels(metadata.get("labels"), source, (*where, "metadata", "labels"))
        namespaces.append(raw)
    subresources = []
    for i, raw in enumerate(_list(document.get("subresources"), source, (*path, "subresources"))):
        where = (*path, "subresources", i)
        entry = _check_keys(raw, ("subresource", "parentResource"), source, where)
        sub = _check_keys(entry.get("subresource"), _API_RESOURCE_FIELDS, source, (*where, "subresource"))
        parent = _check_keys(entry.get("parentResource"), _API_RESOURCE_FIELDS, source, (*where, "parentResource"))
        subresources.append(Subresource(
            _text(sub.get("name"), source, (*where, "subresource", "name")),
            _text(sub.get("group"), source, (*where, "subresource", "group")),
            _text(sub.get("version"), source, (*where, "subresource", "version")),
            _text(sub.get("kind"), source, (*where, "subresource", "kind")),
            _text(parent.get("group"), source, (*where, "parentResource", "group")),
            _text(parent.get("version"), source, (*where, "parentResource", "version")),
            _text(parent.get("kind"), source, (*where, "parentResource", "kind")),
        ))
    return Values(_object(document.get("globalValues"), source, (*path, "globalValues")), tuple(policies),
                  tuple(selectors), tuple(namespaces), tuple(subresources), source, typed)


def parse_user_info(text: str, source: str | None = None) -> UserInfo:
    """A user-info file's text as `UserInfo`; `PayloadError` (file, field path) when it is not one."""
    document = _check_keys(_document(text, source, "user info"),
                           ("apiVersion", "kind", "metadata", "roles", "clusterRoles", "userInfo"), source, ())
    typed = bool(document.get("apiVersion")) and bool(document.get("kind"))
    user = _check_keys(document.get("userInfo"), ("username", "uid", "groups", "extra"), source, ("userInfo",))
    extra = _object(user.get("extra"), source, ("userInfo", "extra"))
    return UserInfo(
        roles=tuple(_strings(document.get("roles"), source, ("roles",))),
        cluster_roles=tuple(_strings(document.get("clusterRoles"), source, ("clusterRoles",))),
        username=_text(user.get("username"), source, ("userInfo", "username")),
        uid=_text(user.get("uid"), source, ("userInfo", "uid")),
        groups=tuple(_strings(user.get("groups"), source, ("userInfo", "groups"))),
        extra={key: _strings(item, source, ("userInfo", "extra", key)) for key, item in extra.items()} or None,
        source=source,
        typed=typed,
    )


def load_user_info(path: str | Path) -> UserInfo:
    """The user-info file at `path` (see `parse_user_info`)."""
    return parse_user_info(read_input_text(path, "user info"), str(path))


def _strings(value: Any, source: str | None, path: FieldPath) -> list[str]:
    items = _list(value, source, path)
    for i, item in enumerate(items):
        if not isinstance(item, str):
            _fail("expected a string", source, (*path, i))
    return items
