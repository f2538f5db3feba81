"""A rule's ``context`` entries, loaded the way the Kyverno CLI loads them offline.

Kyverno registers one lazy loader per entry (``pkg/engine/factories/
contextloaderfactory.go``); an entry is evaluated the first time a query names
it, which is why an entry that would fail but is never used costs nothing, and
why an entry may use the entries above it (not those below). The CLI without a
cluster or ``--registry`` (``cmd/cli/kubectl-kyverno/store/contextloader.go``)
has no loader for ``configMap``, ``apiCall``, ``imageRegistry`` and
``globalReference`` entries: they are skipped, and their data comes only from
the values file, whose rule ``values``/``foreachValues`` the CLI adds as plain
variables when the rule's context loads (dotted keys set nested values). A
rule that reads such an entry with no values for it gets the missing-key error
of any unknown variable. assertree never reaches the network.

A ``kyverno test`` may give more (`lookups`, the CEL policies' `Lookups`):

- ``apiCallResponses``: an ``apiCall`` whose ``service.url`` or ``urlPath``
  (variables substituted; method GET unless given) has a mock gets the mock's
  body, through ``jmesPath``; a status outside 200-299 is an error;
- ``clusterResources`` (a fake cluster): an ``apiCall`` ``urlPath`` is a GET on
  it (`Cluster.get_path`), falling back to ``default`` when it fails, and a
  ``configMap`` entry reads the ConfigMap (namespace ``default`` unless given);
- ``globalContextEntries``: a ``globalReference`` reads the entry named
  (``name`` or ``name.projection``), through ``jmesPath``; an unknown entry is
  an error ("failed to fetch entry key=...").

``variable`` entries are evaluated as ``loaders/variable.go`` does: ``value``
(substituted), optionally filtered by ``jmesPath`` (itself substituted first),
else ``jmesPath`` against the whole context; ``default`` when the lookup fails
or (without ``value``) gives null; a null result is an error.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from assertree.languages.kyverno.manifests import to_float64
from assertree.languages.kyverno.substitution import VariableError
from assertree.languages.kyverno.values import RuleValues
from assertree.languages.kyverno.variables import (
    KyvernoContext,
    evaluate,
    render,
    substitute_all,
)

__all__ = ["OFFLINE_KINDS", "SkippedEntry", "add_rule_values", "load_context"]

OFFLINE_KINDS = ("configMap", "apiCall", "globalReference", "imageRegistry")


@dataclass(frozen=True)
class SkippedEntry:
    """An entry the offline CLI has no loader for; its name is only defined by values-file variables."""

    name: str
    kind: str  # configMap, apiCall, globalReference or imageRegistry


def add_rule_values(context: KyvernoContext, values: RuleValues | None, *, foreach_index: int = 0) -> None:
    """Add a rule's values-file variables, as the CLI does each time the rule's context loads."""
    if values is None:
        return
    for key, value in values.variables(foreach_index).items():
        context.add_variable(key, value)


def load_context(
    entries: Sequence[Mapping[str, Any]] | None,
    context: KyvernoContext,
    *,
    values: RuleValues | None = None,
    foreach_index: int = 0,
    lookups: Any = None,
) -> list[SkippedEntry]:
    """Register `entries` (a rule's or a foreach's ``context``) as lazy entries of `context`.

    First adds the rule's values-file variables (`values`), as the CLI's
    context initializer does, then one loader per ``variable`` entry, and per
    entry that `lookups` (a test's mocks and cluster) can serve. Returns the
    entries skipped offline. Raises `VariableError` for an entry with no known
    kind (Kyverno: "missing ConfigMap|APICall|ImageRegistry|Variable").
    """
    add_rule_values(context, values, foreach_index=foreach_index)
    skipped = []
    for entry in entries or ():
        name = str(entry.get("name", ""))
        if entry.get("variable") is not None:
            context.add_deferred(name, _variable_loader(name, entry["variable"], context))
            continue
        kind = next((kind for kind in OFFLINE_KINDS if entry.get(kind) is not None), None)
        if kind is None:
            raise VariableError(f"missing ConfigMap|APICall|ImageRegistry|Variable in context entry {name}")
        loader = _served(name, kind, entry[kind], context, lookups)
        if loader is None:
            skipped.append(SkippedEntry(name, kind))
        else:
            context.add_deferred(name, loader)
    return skipped


def _served(name: str, kind: str, spec: Any, context: KyvernoContext, lookups: Any) -> Callable[[], None] | None:
    """The loader for an entry that `lookups` can serve, or None (the entry is skipped, as offline)."""
    if lookups is None or not isinstance(spec, Mapping):
        return None
    cluster = getattr(lookups, "cluster", None)
    if kind == "apiCall" and (getattr(lookups, "http", None) or (cluster is not None and cluster.discovery)):
        return lambda: context.add_context_entry(name, _api_call(name, spec, context, lookups))
    if kind == "configMap" and cluster is not None and cluster.discovery:
        return lambda: context.add_context_entry(name, _config_map(name, spec, context, cluster))
    if kind == "globalReference" and getattr(lookups, "global_context", None):
        return lambda: context.add_context_entry(name, _global_reference(name, spec, context, lookups))
    return None


def _through_jmespath(name: str, spec: Mapping[str, Any], data: Any, context: KyvernoContext) -> Any:
    if not spec.get("jmesPath"):
        return data
    path = _substituted(name, spec["jmesPath"], context)
    try:
        return evaluate(str(path), data)
    except VariableError as error:
        raise VariableError(f"failed to apply JMESPath {path} for context entry {name}: {error}",
                            variable=name) from None


def _api_call(name: str, spec: Mapping[str, Any], context: KyvernoContext, lookups: Any) -> Any:
    """An ``apiCall`` entry's value: a mock of the test, else a GET on its fake cluster."""
    call = _substituted(name, dict(spec), context)
    service = call.get("service") if isinstance(call.get("service"), Mapping) else None
    url = str(service.get("url") or "") if service else str(call.get("urlPath") or "")
    method = str(call.get("method") or "GET").upper()
    mocks = getattr(lookups, "http", None) or {}
    mock = next((mocks[key] for key in (f"{method}:{url}", url) if url and key in mocks), None)
    if mock is not None:
        status = int(mock.get("statusCode") or 200)
        if not 200 <= status < 300:
            raise VariableError(f"HTTP {status} from apiCall mock for context entry {name!r} (v1 apiCall treats "
                                "non-2xx as failure)", variable=name)
        return _through_jmespath(name, call, to_float64(mock.get("body")), context)
    cluster = getattr(lookups, "cluster", None)
    data = None
    if service is None and cluster is not None and cluster.discovery and method == "GET":
        from assertree.languages.kubernetes.cluster import NotFound

        try:
            data = to_float64(cluster.get_path(url))
        except NotFound as error:
            problem = f"failed to GET resource with raw url: {url}: {error}"
            if spec.get("default") is None:
                raise VariableError(f"failed to fetch data for APICall: {problem}", variable=name) from None
            return spec["default"]
    if data is None:
        raise VariableError(f"failed to fetch data for APICall: {method} {url}: assertree never reaches the "
                            "network (mock the call with apiCallResponses)", variable=name)
    return _through_jmespath(name, call, data, context)


def _config_map(name: str, spec: Mapping[str, Any], context: KyvernoContext, cluster: Any) -> Any:
    from assertree.languages.kubernetes.cluster import NotFound

    call = _substituted(name, dict(spec), context)
    namespace = str(call.get("namespace") or "default")
    try:
        return cluster.get("v1", "configmaps", namespace, str(call.get("name") or ""))
    except NotFound as error:
        raise VariableError(f"failed to retrieve config map for context entry {name}: {error}",
                            variable=name) from None


def _global_reference(name: str, spec: Mapping[str, Any], context: KyvernoContext, lookups: Any) -> Any:
    call = _substituted(name, dict(spec), context)
    entry, _, projection = str(call.get("name") or "").partition(".")
    entries = lookups.global_context
    if entry not in entries:
        raise VariableError(f"failed to fetch entry key={entry}", variable=name)
    data = entries[entry]
    if isinstance(data, Exception):
        raise VariableError(str(data), variable=name)
    if projection:
        if not isinstance(data, Mapping):
            raise VariableError(f"global context mock: projection {projection!r} requested but value is not an "
                                "object", variable=name)
        if projection not in data:
            raise VariableError(f"global context mock: projection {projection!r} not found", variable=name)
        data = data[projection]
    return _through_jmespath(name, call, data, context)


def _variable_loader(name: str, variable: Mapping[str, Any], context: KyvernoContext) -> Callable[[], None]:
    def load() -> None:
        context.add_context_entry(name, evaluate_variable(name, variable, context))

    return load


def evaluate_variable(name: str, variable: Mapping[str, Any], context: KyvernoContext) -> Any:
    """The value of the ``variable`` entry `name` in `context`; `VariableError` when Kyverno fails it."""
    path = ""
    if variable.get("jmesPath"):
        path = _substituted(name, variable["jmesPath"], context)
        if not isinstance(path, str):
            raise VariableError(f"jmespath value must be a string {name} {variable['jmesPath']}", variable=name)
    default = None if variable.get("default") is None else _substituted(name, variable["default"], context)
    output = default
    if variable.get("value") is not None:
        value = _substituted(name, variable["value"], context)
        if path:
            try:
                output = evaluate(path, value)
            except VariableError as error:
                if default is None:
                    raise VariableError(f"failed to apply jmespath {path} to variable {_show(value)}: {error}",
                                        variable=name) from None
        else:
            output = value
    elif path:
        try:
            found = context.query(path)
        except VariableError as error:
            if default is None:
                raise VariableError(f"failed to apply jmespath {path} to variable <nil>: {error}",
                                    variable=name) from None
        else:
            if found is not None:
                output = found
    if output is None:
        raise VariableError(f"failed to add context entry for variable {name} since it evaluated to nil",
                            variable=name)
    return output


def _substituted(name: str, raw: Any, context: KyvernoContext) -> Any:
    try:
        return substitute_all(raw, context)
    except VariableError as error:
        raise VariableError(f"failed to substitute variables in context entry {name} {_show(raw)}: {error}",
                            variable=name) from None


def _show(value: Any) -> str:
    try:
        return render(value)
    except VariableError:
        return repr(value)
