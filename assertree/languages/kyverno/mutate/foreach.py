"""``mutate.foreach``: one patch per element of a list, nested loops, Kyverno's order and statuses.

A port of pkg/engine/handlers/mutation/common.go (forEachMutator) and mutate.ForEach
(pkg/engine/mutate/mutation.go). What this module decides, and what it leaves to its callers:

- the loop: each ``foreach`` entry evaluates its ``list`` against the context, visits the elements
  (null elements skipped), in reverse by default when the entry has a ``patchStrategicMerge``
  (kustomize prepends merged elements, so Kyverno walks backwards to keep their order), or as
  ``order: Ascending|Descending`` says; ``elementIndex`` is the element's index in the list either
  way;
- per element: ``element``/``elementIndex`` and ``element<N>``/``elementIndex<N>`` (N = nesting
  depth) are bound, ``context`` is loaded, ``preconditions`` may skip it, then either the nested
  ``foreach`` runs or the entry's patch is substituted and applied to the resource patched so far;
- ``request.object``: after each ``foreach`` entry that did something, Kyverno puts the patched
  resource into the context, so the next entry's list and variables see it; the resource patched by
  earlier *elements* of the same entry is not visible to later elements' variables (Kyverno resets
  the context for each element), only to their patches;
- statuses: SKIP ("0 elements processed") when no entry changed anything, PASS otherwise, ERROR as
  soon as a list, context, precondition, substitution or patch fails, with Kyverno's nested
  wording (``failed to mutate elements: failed to patch resource: ...``).

The callers supply the expression work through `ForEachHooks`: evaluating ``list``, substituting
``{{ }}``, loading ``context`` entries and checking ``preconditions`` are the variables engine's job.

Bounded (Kyverno sets no limit: a foreach nested 12 deep over 6 elements would visit two billion of
them): a foreach may nest `MAX_FOREACH_NESTING` levels, and one rule on one resource may visit
`MAX_FOREACH_ELEMENTS` elements at all levels together (`ForEachBudget`, which validate's
foreach shares); past either, the rule is an ERROR.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from assertree.languages.kyverno.manifests import copy_json
from assertree.languages.kyverno.mutate.compare import json_equal
from assertree.languages.kyverno.mutate.json6902 import apply_json6902
from assertree.languages.kyverno.mutate.preprocess import PatternMatcher, validate_matcher
from assertree.languages.kyverno.mutate.result import MutateResult, error, success_message
from assertree.languages.kyverno.mutate.strategic import NO_PATCHES, apply_strategic_merge
from assertree.results import Status

Bindings = Mapping[str, Any]
"""Variables of the loops around: ``element``, ``elementIndex``, ``element0``, ... and context entries."""

MAX_FOREACH_NESTING = 10
"""Levels of ``foreach`` inside ``foreach`` (policies use two or three: containers, then their ports)."""
MAX_FOREACH_ELEMENTS = 10_000
"""Elements one rule may visit on one resource, every level together (each may patch the whole resource)."""


class ForEachLimitError(Exception):
    """A foreach nested too deeply or visiting too many elements; the message names the limit."""


class ForEachBudget:
    """The elements a rule's foreach loops may still visit on one resource (`MAX_FOREACH_ELEMENTS`)."""

    __slots__ = ("left",)

    def __init__(self) -> None:
        self.left = MAX_FOREACH_ELEMENTS

    def enter(self, nesting: int, count: int) -> None:
        """Before `count` elements at `nesting` (0 for the outermost foreach): ForEachLimitError past a limit."""
        if nesting >= MAX_FOREACH_NESTING:
            raise ForEachLimitError(f"foreach nested more than {MAX_FOREACH_NESTING} levels deep, assertree's limit")
        if count > self.left:
            raise ForEachLimitError(f"foreach would visit more than {MAX_FOREACH_ELEMENTS:,} elements in one rule, "
                                    "assertree's limit")
        self.left -= count


def _no_substitution(value: Any, resource: dict, bindings: Bindings) -> Any:
    return value


@dataclass(frozen=True)
class ForEachHooks:
    """How to evaluate what a foreach entry writes as expressions; `resource` is ``request.object``.

    - `evaluate_list(list_expression, resource, bindings)`: the value of ``list`` (a JMESPath
      expression without braces); a non-list value is one element;
    - `substitute(patches, resource, bindings)`: `patches` (``{"patchStrategicMerge": ...,
      "patchesJson6902": ...}``) with ``{{ }}`` replaced;
    - `load_context(entries, resource, bindings)`: the bindings with the entry's ``context`` added;
    - `preconditions(conditions, resource, bindings)`: (met, message) for ``preconditions``.

    Any exception a hook raises becomes the rule's ERROR, worded as Kyverno words it.
    """

    evaluate_list: Callable[[str, dict, Bindings], Any]
    substitute: Callable[[Any, dict, Bindings], Any] = _no_substitution
    load_context: Callable[[list, dict, Bindings], Bindings] | None = None
    preconditions: Callable[[Any, dict, Bindings], tuple[bool, str]] | None = None
    match_pattern: PatternMatcher = validate_matcher


def apply_foreach(
    foreach: list[dict], resource: dict, hooks: ForEachHooks, bindings: Bindings | None = None
) -> MutateResult:
    """Run a rule's ``mutate.foreach`` on `resource` (not changed); the rule's status and message."""
    try:
        outcome = _foreach(foreach, resource, resource, dict(bindings or {}), 0, hooks, ForEachBudget())
    except ForEachLimitError as failure:
        return error(f"failed to mutate elements: {failure}", resource)
    if outcome.status is Status.PASS:
        return MutateResult(Status.PASS, outcome.resource, success_message(outcome.resource))
    return outcome


def _foreach(
    entries: list[dict], resource: dict, context_resource: dict, bindings: Bindings, nesting: int, hooks: ForEachHooks,
    budget: ForEachBudget,
) -> MutateResult:
    """forEachMutator.mutateForEach: every entry in turn, each on the result of the ones before."""
    applied = 0
    for entry in entries:
        expression = entry.get("list", "")
        try:
            elements = hooks.evaluate_list(expression, context_resource, bindings)
        except Exception as failure:  # noqa: BLE001 (any hook failure is the rule's error, as in Kyverno)
            return error(f"failed to evaluate list {expression}: {failure}: {failure}", resource)
        elements = _as_list(elements)
        budget.enter(nesting, len(elements))
        outcome = _elements(entry, elements, resource, context_resource, bindings, nesting, hooks, budget)
        if outcome.status is Status.ERROR:
            return error(f"failed to mutate elements: {outcome.message}", resource)
        if outcome.status is not Status.SKIP:
            applied += 1
            if outcome.status is Status.PASS:
                resource = outcome.resource
            context_resource = outcome.resource
    message = f"{applied} elements processed"
    return MutateResult(Status.PASS if applied else Status.SKIP, resource, message)


def _as_list(value: Any) -> list:
    """utils.EvaluateList: a list is the elements, anything else is one element."""
    return list(value) if isinstance(value, list) else [value]


def _elements(
    entry: dict,
    elements: list,
    resource: dict,
    context_resource: dict,
    outer: Bindings,
    nesting: int,
    hooks: ForEachHooks,
    budget: ForEachBudget,
) -> MutateResult:
    """forEachMutator.mutateElements: the entry's patch (or nested loop) for each element."""
    patched = copy_json(resource)
    reverse = entry.get("patchStrategicMerge") is not None
    if entry.get("order") is not None:
        reverse = entry["order"] == "Descending"
    order = list(enumerate(elements))
    if reverse:
        order.reverse()
    for index, element in order:
        if element is None:
            continue
        bindings = {
            **outer,
            "element": element,
            f"element{nesting}": element,
            "elementIndex": index,
            f"elementIndex{nesting}": index,
        }
        if entry.get("context"):
            if hooks.load_context is None:
                return error(f"failed to load to mutate.foreach[{index}].context: no context loader")
            try:
                bindings = {**bindings, **hooks.load_context(entry["context"], context_resource, bindings)}
            except Exception as failure:  # noqa: BLE001 (Kyverno reports any loader failure as the rule's error)
                return error(f"failed to load to mutate.foreach[{index}].context: {failure}")
        if entry.get("preconditions") is not None:
            if hooks.preconditions is None:
                return error(f"failed to evaluate mutate.foreach[{index}].preconditions: no precondition evaluator")
            try:
                met, _ = hooks.preconditions(entry["preconditions"], context_resource, bindings)
            except Exception as failure:  # noqa: BLE001 (Kyverno reports any evaluation failure as the rule's error)
                return error(f"failed to evaluate mutate.foreach[{index}].preconditions: {failure}")
            if not met:
                continue
        if entry.get("foreach"):
            outcome = _foreach(entry["foreach"], patched, context_resource, bindings, nesting + 1, hooks, budget)
        else:
            outcome = _patch(entry, patched, context_resource, bindings, hooks)
        if outcome.status in (Status.FAIL, Status.ERROR):
            return outcome
        if outcome.status is Status.PASS:
            patched = outcome.resource
    if not json_equal(resource, patched):
        return MutateResult(Status.PASS, patched, "")
    return MutateResult(Status.SKIP, patched, NO_PATCHES)


def _patch(
    entry: dict, resource: dict, context_resource: dict, bindings: Bindings, hooks: ForEachHooks
) -> MutateResult:
    """mutate.ForEach: substitute the entry's patches for this element, then apply them."""
    patches = {"patchStrategicMerge": entry.get("patchStrategicMerge"), "patchesJson6902": entry.get("patchesJson6902")}
    try:
        substituted = hooks.substitute(patches, context_resource, bindings)
    except Exception as failure:  # noqa: BLE001 (Kyverno: any substitution failure is "variable substitution failed")
        return error(f"variable substitution failed: {failure}", resource)
    strategic, json_patch = substituted.get("patchStrategicMerge"), substituted.get("patchesJson6902")
    if strategic is not None:
        return apply_strategic_merge(resource, strategic, hooks.match_pattern)
    if isinstance(json_patch, str) and json_patch:
        return apply_json6902(resource, json_patch)
    return error("empty mutate rule", resource)
