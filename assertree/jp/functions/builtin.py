"""The 26 functions of standard JMESPath, with go-jmespath's behaviour.

Where Python and Go differ the Go behaviour wins: ``to_string`` writes Go
JSON (sorted keys, ``<>&`` escaped, ``3`` for an integral float), ``to_number``
reads the decimal forms ``strconv.ParseFloat`` accepts, and ordering functions
take numbers or strings but never both.
"""

from __future__ import annotations

import functools
import math
import re

from assertree.jp.errors import InvalidTypeError, InvalidValueError, LimitError
from assertree.jp.limits import check_string_length
from assertree.jp.registry import function
from assertree.jp.values import JSONTooLongError, equal, is_number, to_json, type_name


@functools.cache
def _decimal() -> re.Pattern[str]:
    """What `to_number` reads as a number, compiled on first use (most policies never call it)."""
    return re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


@function("abs(value: number) -> number")
def abs_(value):
    """Absolute value of a number."""
    return abs(value)


@function("avg(values: array[number]) -> number|null")
def avg(values):
    """Mean of an array of numbers (null for an empty array)."""
    if not values:
        return None
    return sum(values) / len(values)


@function("ceil(value: number) -> number")
def ceil(value):
    """Smallest integer not less than the number."""
    return value if math.isinf(value) or math.isnan(value) else math.ceil(value)


@function("floor(value: number) -> number")
def floor(value):
    """Largest integer not greater than the number."""
    return value if math.isinf(value) or math.isnan(value) else math.floor(value)


@function("contains(subject: array|string, search: any) -> boolean")
def contains(subject, search):
    """Whether an array holds a value, or a string a substring."""
    if isinstance(subject, str):
        return isinstance(search, str) and search in subject
    if type(search) is str:  # the usual case: a string among strings, compared without a call per item
        for item in subject:  # noqa: SIM110  (a loop: no generator frame per call)
            if item == search if type(item) is str else equal(item, search):
                return True
        return False
    return any(equal(item, search) for item in subject)


@function("ends_with(subject: string, suffix: string) -> boolean")
def ends_with(subject, suffix):
    """Whether the string ends with the suffix."""
    return subject.endswith(suffix)


@function("starts_with(subject: string, prefix: string) -> boolean")
def starts_with(subject, prefix):
    """Whether the string starts with the prefix."""
    return subject.startswith(prefix)


@function("join(glue: string, items: array[string]) -> string")
def join(glue, items):
    """The strings of an array joined with a separator."""
    check_string_length("join()", sum(map(len, items)) + len(glue) * max(0, len(items) - 1))  # [$s, $s, ...]
    return glue.join(items)


@function("keys(object: object) -> array[string]")
def keys(obj):
    """The keys of an object."""
    return list(obj)


@function("values(object: object) -> array")
def values(obj):
    """The values of an object."""
    return list(obj.values())


@function("length(subject: string|array|object) -> number")
def length(subject):
    """Number of characters (code points), items or keys."""
    return len(subject)


@function("map(expression: expref, items: array) -> array")
def map_(expression, items):
    """The expression applied to each item (nulls kept)."""
    return [expression(item) for item in items]


@function("max(items: array[number]|array[string]) -> number|string|null")
def max_(items):
    """The largest number or string (null for an empty array)."""
    if not items:
        return None
    return max(items)


@function("min(items: array[number]|array[string]) -> number|string|null")
def min_(items):
    """The smallest number or string (null for an empty array)."""
    if not items:
        return None
    return min(items)


def _keys_by(items: list, expression, name: str) -> list:
    """Each item's sort key, all numbers or all strings."""
    keys_ = [expression(item) for item in items]
    kind = None
    for key in keys_:
        key_kind = "number" if is_number(key) else "string" if isinstance(key, str) else None
        if key_kind is None or (kind is not None and key_kind != kind):
            raise InvalidTypeError(
                f"function {name}() expression must give only numbers or only strings, got {type_name(key)}"
            )
        kind = key_kind
    return keys_


@function("max_by(items: array, expression: expref) -> any")
def max_by(items, expression):
    """The item for which the expression is largest."""
    if not items:
        return None
    keys_ = _keys_by(items, expression, "max_by")
    best = max(range(len(items)), key=keys_.__getitem__)
    return items[best]


@function("min_by(items: array, expression: expref) -> any")
def min_by(items, expression):
    """The item for which the expression is smallest."""
    if not items:
        return None
    keys_ = _keys_by(items, expression, "min_by")
    best = min(range(len(items)), key=keys_.__getitem__)
    return items[best]


@function("sort(items: array[number]|array[string]) -> array")
def sort(items):
    """Numbers or strings in ascending order."""
    return sorted(items)


@function("sort_by(items: array, expression: expref) -> array")
def sort_by(items, expression):
    """Items ordered by the expression's value (stable)."""
    keys_ = _keys_by(items, expression, "sort_by")
    order = sorted(range(len(items)), key=keys_.__getitem__)
    return [items[index] for index in order]


@function("merge(first: object, *rest: object) -> object")
def merge(first, *rest):
    """Objects merged left to right (later keys win)."""
    merged = dict(first)
    for obj in rest:
        merged.update(obj)
    return merged


@function("not_null(first: any, *rest: any) -> any")
def not_null(first, *rest):
    """The first argument that is not null."""
    if first is not None:
        return first
    for value in rest:
        if value is not None:
            return value
    return None


@function("reverse(subject: string|array) -> string|array")
def reverse(subject):
    """The string or array in reverse order."""
    return subject[::-1]


@function("sum(items: array[number]) -> number")
def sum_(items):
    """Sum of an array of numbers (0 for an empty array)."""
    return sum(items)


@function("to_array(value: any) -> array")
def to_array(value):
    """The value itself if it is an array, else a one-item array."""
    return value if isinstance(value, list) else [value]


@function("to_number(value: any) -> number|null")
def to_number(value):
    """The value as a number: numbers as is, numeric strings parsed, anything else null."""
    if is_number(value):
        return value
    if isinstance(value, str) and _decimal().fullmatch(value):
        if value.lstrip("+-").isdigit() and len(value) <= 20:  # longer: a float, as Go's ParseFloat gives
            return int(value)
        number = float(value)
        return None if math.isinf(number) else number
    return None


@function("to_string(value: any) -> string")
def to_string(value):
    """Strings as is; anything else as compact JSON (Go's encoding: sorted keys, 3 not 3.0)."""
    if isinstance(value, str):
        return value
    try:
        return to_json(value)
    except JSONTooLongError as error:
        raise LimitError(f"to_string(): {error}") from None
    except ValueError as error:
        raise InvalidValueError(f"to_string(): {error}") from None


@function("type(value: any) -> string")
def type_(value):
    """The JSON type name: string, number, boolean, array, object or null."""
    return type_name(value)
