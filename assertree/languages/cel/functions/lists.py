"""Kubernetes' lists library (k8s.io/apiserver/pkg/cel/library/lists.go): ``isSorted``, ``sum``, ``min``, ``max``,
``indexOf`` and ``lastIndexOf``.

The strings extension already declares ``indexOf`` and ``lastIndexOf`` and the
library accepts one declaration per name, so both are declared under names of
their own (`INDEX_FUNCTIONS`) that serve strings and lists, and
`assertree.languages.cel.rewrite` renames the member calls. Elements must be of
one comparable kind (numbers, strings, bools, bytes, timestamps or durations);
numbers of both kinds compare by value.
"""

from __future__ import annotations

from itertools import pairwise
from typing import Any

from assertree.languages.cel.engine import FunctionError
from assertree.languages.cel.functions.declare import Declaration

__all__ = ["DECLARATIONS", "INDEX_FUNCTIONS"]

INDEX_FUNCTIONS = {"indexOf": "kyvernoIndexOf", "lastIndexOf": "kyvernoLastIndexOf"}
"""The names the strings' and lists' ``indexOf``/``lastIndexOf`` are declared under (member calls are renamed)."""


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


def _string_index(text: str, part: str, offset: int | None = None, *, last: bool = False) -> int:
    if offset is not None and not 0 <= offset <= len(text):
        raise FunctionError(f"index out of range: {offset}")
    if last:
        return text.rfind(part, 0, len(text) if offset is None else offset + len(part))
    return text.find(part, 0 if offset is None else offset)


def _list_index(items: list, wanted: Any, *, last: bool = False) -> int:
    indexes = range(len(items) - 1, -1, -1) if last else range(len(items))
    same_kind = isinstance(wanted, bool)
    return next((i for i in indexes if items[i] == wanted and isinstance(items[i], bool) == same_kind), -1)


def _index_declarations(name: str, last: bool) -> tuple[Declaration, ...]:
    """Strings' ``indexOf``/``lastIndexOf`` and the list ones under one name (one overload per argument kind)."""
    return (
        Declaration(name, ("string", "string"), "int", lambda t, p: _string_index(t, p, last=last), member=True),
        Declaration(name, ("string", "string", "int"), "int", lambda t, p, o: _string_index(t, p, o, last=last),
                    member=True),
        *(Declaration(name, ("list", kind), "int", lambda items, wanted: _list_index(list(items), wanted, last=last),
                      member=True)
          for kind in ("string", "int", "uint", "double", "bool", "bytes", "null", "list", "map")),
    )


DECLARATIONS = (
    Declaration("isSorted", ("list",), "bool", _is_sorted, member=True),
    Declaration("sum", ("list",), "dyn", _sum, member=True),
    Declaration("min", ("list",), "dyn", _extreme("min", min), member=True),
    Declaration("max", ("list",), "dyn", _extreme("max", max), member=True),
    *_index_declarations(INDEX_FUNCTIONS["indexOf"], last=False),
    *_index_declarations(INDEX_FUNCTIONS["lastIndexOf"], last=True),
)
