"""The value operators of Kyverno pattern leaves: how one scalar of a resource meets one scalar of a pattern.

A leaf of a ``validate.pattern`` is not compared by plain equality. Kyverno
(``pkg/engine/pattern/pattern.go`` with ``pkg/engine/operator``) reads a
string leaf as a small language:

* ``a | b`` (any alternative holds) of ``a & b`` (every part holds), each
  part trimmed of spaces;
* each part is ``>x``, ``<x``, ``>=x``, ``<=x``, ``!x`` (not equal), a range
  ``1-10`` (inclusive) or ``1!-10`` (outside), or a plain value;
* the operand is compared as a Go duration (``1h30m``) when both sides parse
  as one, else as a Kubernetes quantity (``100Mi``, ``500m``, ``0.5``) when
  both parse as one, else (only for equal / not equal) as text with
  wildcards (``nginx:*``). A missing value (``None``) reads as ``"0"`` for the
  duration and quantity tries.

Non-string leaves compare by Go type: a bool pattern wants that bool; a
number wants an equal number, or a string that Go's ``strconv`` reads as that
number; ``null`` accepts every zero value (``0``, ``""``, ``false``, missing);
a map pattern in leaf position only wants a map. Python ``bool`` is Go's
bool, ``int`` (within 64 bits) Go's int64 and ``float`` Go's float64; a loader
that mirrors Kyverno's JSON decoding gives whole numbers as ``int``.

The Go conversions this needs (``strconv.ParseFloat``/``ParseInt``,
``FormatFloat(f, 'E', -1, 64)``, ``%f``) are public here because condition
operators (`conditions`) read numbers the same way. Quantities and durations
come from the JMESPath function library (`assertree.jp.functions.quantity`,
`assertree.jp.functions.duration`), which already mirror apimachinery and Go.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from decimal import Decimal
from enum import Enum
from typing import Any

from assertree.jp.functions.conversions import INT64_MAX, INT64_MIN, go_float_text
from assertree.jp.functions.duration import parse_duration
from assertree.jp.functions.quantity import Quantity
from assertree.languages.kyverno import wildcard

__all__ = [
    "Operator",
    "alternatives_hold",
    "compare_quantities",
    "format_float_e",
    "go_type_name",
    "is_go_float",
    "is_go_int",
    "operator_of",
    "parse_duration_text",
    "parse_float",
    "parse_int",
    "parse_quantity",
    "sprint",
    "validate_value",
]


class Operator(Enum):
    """The operator a string leaf starts with (``""`` is plain equality)."""

    EQUAL = ""
    MORE_EQUAL = ">="
    LESS_EQUAL = "<="
    NOT_EQUAL = "!"
    MORE = ">"
    LESS = "<"
    IN_RANGE = "-"
    NOT_IN_RANGE = "!-"


_ENDPOINT = r"[-|+]?[0-9]+(?:\.[0-9]+)?[A-Za-z]*"
IN_RANGE = re.compile(rf"^({_ENDPOINT})-({_ENDPOINT})$")
NOT_IN_RANGE = re.compile(rf"^({_ENDPOINT})!-({_ENDPOINT})$")
_PREFIXES = (Operator.MORE_EQUAL, Operator.LESS_EQUAL, Operator.MORE, Operator.LESS, Operator.NOT_EQUAL)


def operator_of(pattern: str) -> Operator:
    """The operator `pattern` is written with (``">= 1Gi"`` -> MORE_EQUAL, ``"1-5"`` -> IN_RANGE)."""
    if len(pattern) < 2:
        return Operator.EQUAL
    for operator in _PREFIXES:
        if pattern.startswith(operator.value):
            return operator
    if NOT_IN_RANGE.match(pattern):
        return Operator.NOT_IN_RANGE
    if IN_RANGE.match(pattern):
        return Operator.IN_RANGE
    return Operator.EQUAL


# -- Go number reading and printing ---------------------------------------------------------------

_DECIMAL_FLOAT = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_HEX_FLOAT = re.compile(r"[+-]?0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)[pP][+-]?[0-9]+")
_SPECIAL_FLOATS = {"inf": math.inf, "+inf": math.inf, "-inf": -math.inf, "infinity": math.inf,
                   "+infinity": math.inf, "-infinity": -math.inf, "nan": math.nan, "+nan": math.nan, "-nan": math.nan}
_DECIMAL_INT = re.compile(r"[+-]?[0-9]+")


def is_go_int(value: Any) -> bool:
    """Whether `value` is what Go decodes as an int64 (a Python int, not a bool, within 64 bits)."""
    return type(value) is int and INT64_MIN <= value <= INT64_MAX


def is_go_float(value: Any) -> bool:
    """Whether `value` is what Go decodes as a float64 (a float, or an int beyond 64 bits)."""
    return type(value) is float or (type(value) is int and not INT64_MIN <= value <= INT64_MAX)


def parse_float(text: str) -> float | None:
    """Go's ``strconv.ParseFloat(text, 64)``, or None where Go reports an error (bad syntax, overflow)."""
    special = _SPECIAL_FLOATS.get(text.lower())
    if special is not None:
        return special
    if _DECIMAL_FLOAT.fullmatch(text):
        number = float(text)
    elif _HEX_FLOAT.fullmatch(text):
        sign = -1.0 if text[0] == "-" else 1.0
        try:
            number = sign * float.fromhex(text.lstrip("+-"))
        except OverflowError:
            return None
    else:
        return None
    return None if math.isinf(number) else number


def parse_int(text: str) -> int | None:
    """Go's ``strconv.ParseInt(text, 10, 64)``, or None on bad syntax or overflow."""
    if not _DECIMAL_INT.fullmatch(text):
        return None
    number = int(text)
    return number if INT64_MIN <= number <= INT64_MAX else None


def format_float_e(number: float) -> str:
    """Go's ``strconv.FormatFloat(f, 'E', -1, 64)``: shortest digits in exponent form (``1.5E+00``)."""
    if math.isnan(number):
        return "NaN"
    if math.isinf(number):
        return "+Inf" if number > 0 else "-Inf"
    sign = "-" if math.copysign(1.0, number) < 0 else ""
    if number == 0:
        return f"{sign}0E+00"
    _, digit_tuple, exponent = Decimal(repr(abs(number))).normalize().as_tuple()
    digits = "".join(map(str, digit_tuple))
    power = len(digits) - 1 + int(exponent)
    fraction = f".{digits[1:]}" if len(digits) > 1 else ""
    return f"{sign}{digits[0]}{fraction}E{'-' if power < 0 else '+'}{abs(power):02d}"


def sprint(value: Any) -> str:
    """A JSON value as Go's ``fmt.Sprint`` prints it: ``<nil>``, ``true``, ``1.5``, ``[a b]``, ``map[k:v]``.

    Kyverno prints values this way in messages and turns list items into
    text this way before set operators compare them.
    """
    if value is None:
        return "<nil>"
    if type(value) is bool:
        return "true" if value else "false"
    if is_go_int(value):
        return str(value)
    if is_go_float(value):
        return go_float_text(float(value))
    if isinstance(value, str):
        return value
    if isinstance(value, list | tuple):
        return "[" + " ".join(sprint(item) for item in value) + "]"
    if isinstance(value, dict):
        return "map[" + " ".join(f"{key}:{sprint(value[key])}" for key in sorted(value)) + "]"
    return str(value)


def go_type_name(value: Any) -> str:
    """Go's ``%T`` of a decoded JSON value: ``<nil>``, ``bool``, ``int64``, ``float64``, ``string``, ..."""
    if value is None:
        return "<nil>"
    if type(value) is bool:
        return "bool"
    if is_go_int(value):
        return "int64"
    if is_go_float(value):
        return "float64"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list | tuple):
        return "[]interface {}"
    if isinstance(value, dict):
        return "map[string]interface {}"
    return type(value).__name__


def _fixed_text(number: float) -> str:
    """Go's ``fmt.Sprintf("%f", f)``."""
    if math.isnan(number):
        return "NaN"
    if math.isinf(number):
        return "+Inf" if number > 0 else "-Inf"
    return f"{number:f}"


def parse_quantity(text: str) -> Quantity | None:
    """apimachinery's ``resource.ParseQuantity``, or None where it returns an error."""
    try:
        return Quantity.parse(text)
    except (ValueError, OverflowError):
        return None


def parse_duration_text(text: str) -> int | None:
    """Go's ``time.ParseDuration`` in nanoseconds, or None where it returns an error."""
    try:
        return parse_duration(text)
    except ValueError:
        return None


def compare_quantities(left: Quantity, right: Quantity) -> int:
    """apimachinery's ``Quantity.Cmp``: -1, 0 or 1 on the exact values (formats do not matter)."""
    a_sign = (left.unscaled > 0) - (left.unscaled < 0)
    b_sign = (right.unscaled > 0) - (right.unscaled < 0)
    if a_sign != b_sign or a_sign == 0:
        return (a_sign > b_sign) - (a_sign < b_sign)
    a_mag, b_mag = abs(left.unscaled), abs(right.unscaled)
    # Compare orders of magnitude first so that wildly different exponents never build huge integers.
    a_order = len(str(a_mag)) + left.exponent
    b_order = len(str(b_mag)) + right.exponent
    if a_order != b_order:
        result = 1 if a_order > b_order else -1
    else:
        low = min(left.exponent, right.exponent)
        a_val = a_mag * 10 ** (left.exponent - low)
        b_val = b_mag * 10 ** (right.exponent - low)
        result = (a_val > b_val) - (a_val < b_val)
    return result * a_sign


# -- pattern.Validate ------------------------------------------------------------------------------


def validate_value(value: Any, pattern: Any) -> bool:
    """Whether the resource `value` satisfies the pattern leaf `pattern` (Kyverno's ``pattern.Validate``).

    `pattern` is a scalar (or, in leaf position, a map: any map value passes);
    a list pattern never matches here (pattern lists are walked by the
    pattern validator, not compared as leaves).
    """
    if type(pattern) is bool:
        return type(value) is bool and value is pattern
    if is_go_int(pattern):
        return _validate_int(value, pattern)
    if is_go_float(pattern):
        return _validate_float(value, float(pattern))
    if pattern is None:
        return _validate_nil(value)
    if isinstance(pattern, dict):
        return isinstance(value, dict)
    if isinstance(pattern, str):
        return _validate_string_patterns(value, pattern)
    return False


def _validate_int(value: Any, pattern: int) -> bool:
    if is_go_int(value):
        return value == pattern
    if is_go_float(value):
        number = float(value)
        return number.is_integer() and _go_int64(number) == pattern
    if isinstance(value, str):
        parsed = parse_int(value)
        return parsed is not None and parsed == pattern
    return False


def _go_int64(number: float) -> int:
    """Go's ``int64(f)`` for a whole float (saturating where Go's conversion is undefined)."""
    return max(INT64_MIN, min(INT64_MAX, int(number)))


def _validate_float(value: Any, pattern: float) -> bool:
    if is_go_int(value):
        return pattern.is_integer() and _go_int64(pattern) == value
    if is_go_float(value):
        return float(value) == pattern
    if isinstance(value, str):
        parsed = parse_float(value)
        return parsed is not None and parsed == pattern
    return False


def _validate_nil(value: Any) -> bool:
    if value is None:
        return True
    if type(value) is bool:
        return not value
    if isinstance(value, int | float):
        return value == 0
    if isinstance(value, str):
        return value == ""
    return False


def _validate_string_patterns(value: Any, pattern: str) -> bool:
    if isinstance(value, str) and value == pattern:
        return True
    return alternatives_hold(value, pattern)


def alternatives_hold(value: Any, pattern: str) -> bool:
    """Whether `value` satisfies the string leaf `pattern` read as its operator language alone (``a | b`` of
    ``c & d`` parts), without the exact-text shortcut `validate_value` takes first."""
    return any(_validate_all(value, alternative.strip(" ")) for alternative in pattern.split("|"))


def _validate_all(value: Any, pattern: str) -> bool:
    return all(_validate_string_pattern(value, part.strip(" ")) for part in pattern.split("&"))


def _validate_string_pattern(value: Any, pattern: str) -> bool:
    operator = operator_of(pattern)
    if operator is Operator.IN_RANGE:
        found = IN_RANGE.match(pattern)
        if found is None:
            return False
        return _validate_string_pattern(value, f">= {found.group(1)}") and _validate_string_pattern(
            value, f"<= {found.group(2)}"
        )
    if operator is Operator.NOT_IN_RANGE:
        found = NOT_IN_RANGE.match(pattern)
        if found is None:
            return False
        return _validate_string_pattern(value, f"< {found.group(1)}") or _validate_string_pattern(
            value, f"> {found.group(2)}"
        )
    operand = pattern[len(operator.value):].strip()
    return _validate_string(value, operand, operator)


def _validate_string(value: Any, operand: str, operator: Operator) -> bool:
    decided = _compare_durations(value, operand, operator)
    if decided is not None:
        return decided
    decided = _compare_quantities(value, operand, operator)
    if decided is not None:
        return decided
    return _compare_text(value, operand, operator)


def _number_text(value: Any) -> str | None:
    """Kyverno's ``convertNumberToString``: missing is ``"0"``, floats print with ``%f``; others are no number."""
    if value is None:
        return "0"
    if isinstance(value, str):
        return value
    if is_go_int(value):
        return str(value)
    if is_go_float(value):
        return _fixed_text(float(value))
    return None


_ORDERINGS = {
    Operator.EQUAL: lambda c: c == 0,
    Operator.NOT_EQUAL: lambda c: c != 0,
    Operator.MORE: lambda c: c > 0,
    Operator.LESS: lambda c: c < 0,
    Operator.MORE_EQUAL: lambda c: c >= 0,
    Operator.LESS_EQUAL: lambda c: c <= 0,
}


def _compare_durations(value: Any, operand: str, operator: Operator) -> bool | None:
    return _compare_parsed(value, operand, operator, parse_duration_text,
                           lambda actual, expected: (actual > expected) - (actual < expected))


def _compare_quantities(value: Any, operand: str, operator: Operator) -> bool | None:
    return _compare_parsed(value, operand, operator, parse_quantity, compare_quantities)


def _compare_parsed(value: Any, operand: str, operator: Operator, parse: Callable[[str], Any],
                    compare: Callable[[Any, Any], int]) -> bool | None:
    """`operator` applied to `value` and `operand` both read by `parse`; None when either does not parse
    (or the operator is no ordering), so the caller tries the next reading."""
    expected = parse(operand)
    if expected is None:
        return None
    text = _number_text(value)
    actual = None if text is None else parse(text)
    if actual is None or operator not in _ORDERINGS:
        return None
    return _ORDERINGS[operator](compare(actual, expected))


def _compare_text(value: Any, operand: str, operator: Operator) -> bool:
    if operator not in (Operator.EQUAL, Operator.NOT_EQUAL):
        return False  # >, <, >=, <= mean nothing for text
    if type(value) is bool:
        text = "true" if value else "false"
    elif isinstance(value, str):
        text = value
    elif is_go_int(value):
        text = str(value)
    elif is_go_float(value):
        text = format_float_e(float(value))
    else:
        return False
    matched = wildcard.match(operand, text)
    return not matched if operator is Operator.NOT_EQUAL else matched
