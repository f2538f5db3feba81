"""A rule's ``match`` kinds as a gate checked before anything else: the fast path of `match.rule_matches`.

A policy library is hundreds of rules over thousands of resources, and most
(rule, resource) pairs differ in kind. `match.rule_matches` learns that only
after building a session and walking the ``match`` block; the gate answers it
from the resource's ``apiVersion`` and ``kind`` alone, with one dictionary
lookup once the pair of strings has been seen.

Invariant (`tests/kyverno/test_kind_gate.py` holds it to `rule_matches` on
every rule of the conformance data and random kinds): when `admits` is False,
`rule_matches` of that rule gives ``matched=False`` for every resource with
that ``apiVersion`` and ``kind``, whatever its other fields, the operation,
user info or namespace labels, provided no values file declares
subresources (it can change a resource's kind; callers pass none). The gate
reads only the ``kinds`` lists that every selecting filter must satisfy; a
``match`` it cannot read that way (a filter without ``kinds``, a kinds entry
that is not a string) admits everything and leaves the decision to
`rule_matches`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from weakref import WeakKeyDictionary

from assertree.languages.kyverno.match import check_kind, resource_gvk

__all__ = ["KindGate", "gate_of", "kind_gate"]

_GATES: WeakKeyDictionary[Any, KindGate | None] = WeakKeyDictionary()


class KindGate:
    """Which (apiVersion, kind) a rule could select; answers are memoised per pair of strings."""

    __slots__ = ("_answers", "_mode", "_required")

    def __init__(self, mode: str, required: list[list[str]]) -> None:
        self._mode = mode  # "any": one list must select; "all": every list must
        self._required = required
        self._answers: dict[tuple[str, str], bool] = {}

    def admits(self, resource: Mapping) -> bool:
        """False only when the rule's ``match`` cannot select a resource of this apiVersion and kind."""
        key = (str(resource.get("apiVersion") or ""), str(resource.get("kind") or ""))
        answer = self._answers.get(key)
        if answer is None:
            gvk, subresource = resource_gvk(resource)
            found = (check_kind(kinds, gvk, subresource) for kinds in self._required)
            answer = self._answers[key] = any(found) if self._mode == "any" else all(found)
        return answer


def _kinds(resource_filter: Any) -> list[str] | None:
    """The filter's non-empty ``resources.kinds`` (all strings), or None when it does not read as one."""
    if not isinstance(resource_filter, Mapping):
        return None
    description = resource_filter.get("resources") or {}
    if not isinstance(description, Mapping):
        return None
    kinds = description.get("kinds") or []
    if not isinstance(kinds, list) or not kinds or not all(isinstance(kind, str) for kind in kinds):
        return None
    return kinds


def kind_gate(rule: Mapping) -> KindGate | None:
    """The gate of a rule document's ``match`` (dispatched as `match.rule_matches` does), or None when the
    kinds do not bound what it selects."""
    match = rule.get("match") or {}
    if not isinstance(match, Mapping):
        return None
    if match.get("any"):
        filters, mode = match["any"], "any"
    elif match.get("all"):
        filters, mode = match["all"], "all"
    else:
        filters, mode = [match], "all"
    if not isinstance(filters, list):
        return None
    required = [_kinds(item) for item in filters]
    if mode == "any":
        if any(kinds is None for kinds in required):
            return None  # a filter without kinds may select any kind
        return KindGate(mode, [kinds for kinds in required if kinds is not None])
    if not all(_readable(item) for item in filters):
        return None  # the general path reads every filter of ``all``; it decides what an odd one means
    bounded = [kinds for kinds in required if kinds is not None]
    return KindGate(mode, bounded) if bounded else None


def _readable(resource_filter: Any) -> bool:
    return isinstance(resource_filter, Mapping) and isinstance(resource_filter.get("resources") or {}, Mapping)


def gate_of(rule: Any) -> KindGate | None:
    """`kind_gate` of a `model.KyvernoRule`'s document, made once per rule."""
    try:
        return _GATES[rule]
    except KeyError:
        gate = _GATES[rule] = kind_gate(rule.document)
        return gate
