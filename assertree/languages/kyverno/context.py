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

``variable`` entries are evaluated as ``loaders/variable.go`` does: ``value``
(substituted), optionally filtered by ``jmesPath`` (itself substituted first),
else ``jmesPath`` against the whole context; ``default`` when the lookup fails
or (without ``value``) gives null; a null result is an error.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

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
) -> list[SkippedEntry]:
    """Register `entries` (a rule's or a foreach's ``context``) as lazy entries of `context`.

    First adds the rule's values-file variables (`values`), as the CLI's
    context initializer does, then one loader per ``variable`` entry. Returns
    the entries skipped offline. Raises `VariableError` for an entry with no
    known kind (Kyverno: "missing ConfigMap|APICall|ImageRegistry|Variable").
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
        skipped.append(SkippedEntry(name, kind))
    return skipped


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
