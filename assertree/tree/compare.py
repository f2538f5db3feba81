"""When an expected leaf equals the actual value (kyverno-json's `matching` package).

* expected null equals only null;
* an expected list needs a list of the same length, item by item;
* an expected map (only an expression can give one) matches as a **subset**
  of the actual map;
* numbers compare by value whatever their type (``4 == 4.0``), booleans are
  never numbers;
* any other mix of kinds cannot be compared: that is an error (the rule is
  ERROR), not a mismatch, so ``"4"`` against ``4`` is never silently false.
"""

from __future__ import annotations

from typing import Any

from assertree.jp.values import equal

_NUMBER = (int, float)


class NotComparable(Exception):
    """The expected and actual values are of kinds that cannot be compared."""


def kind(value: Any) -> str:
    """The kind name kyverno-json's errors use (Go reflect kinds; null is "null")."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int64"
    if isinstance(value, float):
        return "float64"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "slice"
    if isinstance(value, dict):
        return "map"
    return type(value).__name__


def _category(value: Any) -> str:
    """Numbers are one category (int and float); booleans are their own."""
    name = kind(value)
    return "number" if name in ("int64", "float64") else name


def matches(expected: Any, actual: Any) -> bool:
    """Whether `actual` satisfies the `expected` leaf; raises NotComparable on a kind mix."""
    expected_type = type(expected)
    if expected_type is type(actual) and expected_type is not list and expected_type is not dict:
        return expected == actual
    if isinstance(expected, list):
        if not isinstance(actual, list):
            raise NotComparable(f"invalid actual value, must be a slice, found {kind(actual)}")
        return len(expected) == len(actual) and all(matches(e, a) for e, a in zip(expected, actual))
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            raise NotComparable(f"invalid actual value, must be a map, found {kind(actual)}")
        return all(key in actual and matches(value, actual[key]) for key, value in expected.items())
    if expected is None or actual is None:
        return False
    if _category(expected) != _category(actual):
        raise NotComparable(f"types are not comparable, {kind(expected)} - {kind(actual)}")
    return equal(expected, actual)
