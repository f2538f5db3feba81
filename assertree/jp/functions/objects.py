"""Kyverno's object and array helpers: lookup, items, object_from_lists, label_match.

They follow Kyverno's handlers, not Python's habits: `lookup` never indexes
from the end (a negative index is simply absent), `items` sorts object keys
by their UTF-8 bytes as Go's `sort.Strings` does, and `object_from_lists`
prints number keys with float32 precision (``123456789`` -> ``"123456790"``).

Two Go typing artefacts are deliberately not reproduced (spec 2.3, 2.4):
`items` returns an ordinary array, so `sort_by`, `type` or `sum` work on it,
and `label_match` compares values with JSON deep equality, as the main
Kyverno repository does, where kyverno-json's copy panics on nested values.
"""

from __future__ import annotations

from typing import Any

from assertree.jp.errors import FunctionError
from assertree.jp.functions.conversions import INT64_MAX, INT64_MIN, float32_text, go_float_text
from assertree.jp.registry import function
from assertree.jp.values import equal, is_number

_INT64_BOUND = 2.0**63


@function("lookup(collection: object|array, key: string|number) -> any")
def lookup(collection, key):
    """The value under `key` of an object, or at index `key` of an array; null when absent."""
    if isinstance(collection, dict):
        if not isinstance(key, str):
            raise FunctionError.kyverno("lookup", "argument #2 is not of type String")
        return collection.get(key)
    if not is_number(key):
        raise FunctionError.kyverno("lookup", "argument #2 is not of type Number")
    index = _index(key)
    return collection[index] if 0 <= index < len(collection) else None


def _index(number: int | float) -> int:
    """`number` as a Go int, with Kyverno's wording when it is not a whole number in range."""
    if isinstance(number, int):
        if INT64_MIN <= number <= INT64_MAX:
            return number
        number = float(number)
    if not -_INT64_BOUND <= number < _INT64_BOUND:
        reason = f"number is outside the range of integer numbers: {go_float_text(number)}"
        raise FunctionError.kyverno("lookup", f"argument #2: {reason}")
    if not number.is_integer():
        reason = f"expected an integer number but got: {go_float_text(number)}"
        raise FunctionError.kyverno("lookup", f"argument #2: {reason}")
    return int(number)


@function("items(collection: object|array, key_name: string, value_name: string) -> array[object]", replaces=True)
def items(collection, key_name, value_name):
    """One `{key_name: key, value_name: value}` object per entry, object keys in byte order."""
    if isinstance(collection, dict):
        # Code point order is UTF-8 byte order, the order of Go's sort.Strings.
        pairs: list[tuple[Any, Any]] = [(k, collection[k]) for k in sorted(collection)]
    else:
        pairs = list(enumerate(collection))
    # With key_name == value_name the value is written last and wins, as in Kyverno.
    return [{key_name: key, value_name: value} for key, value in pairs]


@function("object_from_lists(keys: array, values: array) -> object")
def object_from_lists(keys, values):
    """An object pairing keys[i] with values[i] (null when `values` is shorter)."""
    result = {}
    for index, key in enumerate(keys):
        result[_key_text(key)] = values[index] if index < len(values) else None
    return result


def _key_text(key: Any) -> str:
    if isinstance(key, str):
        return key
    if isinstance(key, bool):
        return "true" if key else "false"
    if is_number(key):
        return float32_text(key)
    raise FunctionError.kyverno("object_from_lists", "argument #1 is not of type StringArray")


@function("label_match(selector: object, labels: object) -> boolean")
def label_match(selector, labels):
    """True when every key of `selector` is in `labels` with an equal (deep JSON) value."""
    return all(key in labels and equal(value, labels[key]) for key, value in selector.items())
