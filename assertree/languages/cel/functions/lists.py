"""Kubernetes' lists library (k8s.io/apiserver/pkg/cel/library/lists.go): ``isSorted``, ``sum``, ``min``, ``max``.

``indexOf`` and ``lastIndexOf`` on lists are missing: the strings extension
already declares those names and the library accepts one declaration per
name. Elements must be of one comparable kind (numbers, strings, bools,
bytes, timestamps or durations); numbers of both kinds compare by value.
"""

from __future__ import annotations

from itertools import pairwise
from typing import Any

from assertree.languages.cel.engine import FunctionError
from assertree.languages.cel.functions.declare import Declaration


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    return type(value).__name__


def _comparable(items: list[Any]) -> list[Any]:
    kinds = {_kind(item) for item in items}
    if len(kinds) > 1 or kinds & {"list", "dict", "NoneType"}:
        raise FunctionError("no such overload: list elements must be of one comparable kind")
    return items


def _is_sorted(items: list[Any]) -> bool:
    items = _comparable(items)
    return all(a <= b for a, b in pairwise(items))


def _sum(items: list[Any]) -> Any:
    items = _comparable(items)
    if items and _kind(items[0]) != "number":
        raise FunctionError("no such overload: sum needs numbers")
    return sum(items) if items else 0


def _extreme(name: str, pick):
    def call(items: list[Any]) -> Any:
        if not items:
            raise FunctionError(f"{name} called on empty list")
        return pick(_comparable(items))

    return call


DECLARATIONS = (
    Declaration("isSorted", ("list",), "bool", _is_sorted, member=True),
    Declaration("sum", ("list",), "dyn", _sum, member=True),
    Declaration("min", ("list",), "dyn", _extreme("min", min), member=True),
    Declaration("max", ("list",), "dyn", _extreme("max", max), member=True),
)
