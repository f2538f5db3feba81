"""Kyverno's arithmetic: add, subtract, multiply, divide, modulo, sum and round.

The first five (and `sum`, element by element) work on three kinds of
operand, decided in this order: a JSON number is a *scalar* (float64), a
string that parses as a Kubernetes quantity is a *quantity* (so ``'1m'`` is
0.001, not a minute), a string that parses as a Go duration is a *duration*,
and anything else is ``invalid operand``. Which pairs combine, and what they
give, follows Kyverno's table (quantity ÷ quantity is a plain number,
quantity ÷ number truncates at the operands' decimal places, ...); every other
pair is ``Types mismatch``. Quantity results are apimachinery's canonical
strings (`quantity`), duration results Go's duration strings (`duration`).

Go's machine arithmetic shows through and is reproduced: scalars are float64
(``0.1 + 0.2`` is ``0.30000000000000004``), duration sums wrap at 64 bits,
float-to-integer conversions truncate toward zero and, out of range, give
the most negative int64 as Go does on amd64, and remainders keep the
dividend's sign.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

from assertree.jp.errors import FunctionError
from assertree.jp.functions.conversions import INT64_MIN
from assertree.jp.functions.duration import SECOND, duration_seconds, format_duration, parse_duration
from assertree.jp.functions.quantity import Quantity
from assertree.jp.registry import function
from assertree.jp.values import is_number

_EXACT_INTEGERS = 2.0**53


class _Scalar(NamedTuple):
    value: float
    integral: bool  # the JSON number was an int: integral results are returned as ints


class _Duration(NamedTuple):
    nanoseconds: int


_Operand = _Scalar | Quantity | _Duration


class _Mismatch(Exception):
    """The two operands do not combine under this operation (reported as ``Types mismatch``)."""


def _to_float(number: int | float) -> float:
    try:
        return float(number)
    except OverflowError:  # an integer literal beyond float64: Go would have made it infinite
        return math.inf if number > 0 else -math.inf


def _operand(value: Any, name: str) -> _Operand:
    """Classify one argument: scalar, then quantity, then duration, else ``invalid operand``."""
    if is_number(value):
        return _Scalar(_to_float(value), isinstance(value, int))
    if isinstance(value, str):
        try:
            return Quantity.parse(value)
        except ValueError:
            pass
        try:
            return _Duration(parse_duration(value))
        except ValueError:
            pass
    raise FunctionError.kyverno(name, "invalid operand")


def _go_int64(number: float) -> int:
    """Go's ``int64(f)``: truncation toward zero; NaN and out-of-range values give the most negative int64 (amd64)."""
    if math.isnan(number) or not -(2.0**63) <= number < 2.0**63:
        return INT64_MIN
    return int(number)


def _wrap64(number: int) -> int:
    """`number` wrapped to a Go int64."""
    return ((number - INT64_MIN) & ((1 << 64) - 1)) + INT64_MIN


def _remainder(dividend: int, divisor: int) -> int:
    """Go's ``%`` on int64: truncated division, so the remainder has the dividend's sign."""
    remainder = abs(dividend) % abs(divisor)
    return -remainder if dividend < 0 else remainder


def _number(result: float, *operands: _Scalar) -> int | float:
    """A float64 result, as an int when it is integral and every operand was an integer."""
    if all(op.integral for op in operands) and result.is_integer() and abs(result) < _EXACT_INTEGERS:
        return int(result)
    return result


def _duration_text(nanoseconds: float) -> str:
    """Go's ``time.Duration(f).String()`` for a float count of nanoseconds."""
    return format_duration(_go_int64(nanoseconds))


def _scalar_quantity(scalar: _Scalar) -> Quantity:
    """A number as Kyverno makes it a quantity (its ``%v`` text, parsed); Go's parse error text if it cannot."""
    try:
        return Quantity.from_number(scalar.value)
    except ValueError as error:  # only NaN and the infinities
        raise FunctionError(str(error)) from None


def _calculate(name: str, operation, left: Any, right: Any) -> Any:
    """Classify both arguments, apply `operation`, and word its failures as Kyverno does."""
    try:
        return operation(_operand(left, name), _operand(right, name), name)
    except _Mismatch:
        raise FunctionError.kyverno(name, "Types mismatch") from None
    except OverflowError as error:
        raise FunctionError.kyverno(name, str(error)) from None


def _zero_divisor(name: str) -> FunctionError:
    return FunctionError.kyverno(name, "Zero divisor passed")


def _non_integer(name: str) -> FunctionError:
    return FunctionError.kyverno(name, "Non-integer argument(s) passed for modulo")


def _add(a: _Operand, b: _Operand, name: str) -> Any:
    if isinstance(a, _Scalar) and isinstance(b, _Scalar):
        return _number(a.value + b.value, a, b)
    if isinstance(a, Quantity) and isinstance(b, Quantity):
        return str(a.plus(b))
    if isinstance(a, _Duration) and isinstance(b, _Duration):
        return format_duration(_wrap64(a.nanoseconds + b.nanoseconds))
    raise _Mismatch


def _subtract(a: _Operand, b: _Operand, name: str) -> Any:
    if isinstance(a, _Scalar) and isinstance(b, _Scalar):
        return _number(a.value - b.value, a, b)
    if isinstance(a, Quantity) and isinstance(b, Quantity):
        return str(a.minus(b))
    if isinstance(a, _Duration) and isinstance(b, _Duration):
        return format_duration(_wrap64(a.nanoseconds - b.nanoseconds))
    raise _Mismatch


def _multiply(a: _Operand, b: _Operand, name: str) -> Any:
    if isinstance(a, _Scalar) and isinstance(b, _Scalar):
        return _number(a.value * b.value, a, b)
    if isinstance(a, _Scalar):  # a number times a quantity or duration is computed the other way round
        a, b = b, a
    if isinstance(b, _Scalar):
        if isinstance(a, Quantity):
            return str(a.times(_scalar_quantity(b)))
        if isinstance(a, _Duration):
            return _duration_text(duration_seconds(a.nanoseconds) * b.value * SECOND)
    raise _Mismatch


def _divide(a: _Operand, b: _Operand, name: str) -> Any:
    if isinstance(a, _Scalar) and isinstance(b, _Scalar):
        if b.value == 0:
            raise _zero_divisor(name)
        return a.value / b.value
    if isinstance(a, Quantity) and isinstance(b, Quantity):
        divisor = b.approximate_float()
        if divisor == 0:
            raise _zero_divisor(name)
        return a.approximate_float() / divisor
    if isinstance(a, Quantity) and isinstance(b, _Scalar):
        if b.value == 0:
            raise _zero_divisor(name)
        quantity = _scalar_quantity(b)
        return str(a.divide_by(quantity, max(a.places, quantity.places)))
    if isinstance(a, _Duration) and isinstance(b, _Duration):
        if b.nanoseconds == 0:
            raise _zero_divisor(name)
        return duration_seconds(a.nanoseconds) / duration_seconds(b.nanoseconds)
    if isinstance(a, _Duration) and isinstance(b, _Scalar):
        if b.value == 0:
            raise _zero_divisor(name)
        return _duration_text(duration_seconds(a.nanoseconds) / b.value * SECOND)
    raise _Mismatch


def _integers(first: float, second: float, name: str) -> tuple[int, int]:
    """Both floats as Go int64s, refusing fractions (Kyverno's modulo check)."""
    left, right = _go_int64(first), _go_int64(second)
    if first != left or second != right:
        raise _non_integer(name)
    return left, right


def _modulo(a: _Operand, b: _Operand, name: str) -> Any:
    if isinstance(a, _Scalar) and isinstance(b, _Scalar):
        left, right = _integers(a.value, b.value, name)
        if right == 0:
            raise _zero_divisor(name)
        return _remainder(left, right)
    if isinstance(a, Quantity) and isinstance(b, Quantity):
        left, right = _integers(a.approximate_float(), b.approximate_float(), name)
        if right == 0:
            raise _zero_divisor(name)
        return str(Quantity.from_int(_remainder(left, right), a.format))
    if isinstance(a, _Duration) and isinstance(b, _Duration):
        if b.nanoseconds == 0:
            raise _zero_divisor(name)
        return format_duration(_remainder(a.nanoseconds, b.nanoseconds))
    raise _Mismatch


@function("add(a: any, b: any) -> any")
def add(a, b):
    """Sum of two numbers, two quantities or two durations (quantities and durations as strings)."""
    return _calculate("add", _add, a, b)


@function("subtract(a: any, b: any) -> any")
def subtract(a, b):
    """Difference of two numbers, two quantities or two durations."""
    return _calculate("subtract", _subtract, a, b)


@function("multiply(a: any, b: any) -> any")
def multiply(a, b):
    """Product of two numbers, or of a quantity or duration and a number."""
    return _calculate("multiply", _multiply, a, b)


@function("divide(a: any, b: any) -> any")
def divide(a, b):
    """Quotient of numbers, of a quantity or duration by a number, or of two quantities or durations (a number)."""
    return _calculate("divide", _divide, a, b)


@function("modulo(a: any, b: any) -> any")
def modulo(a, b):
    """Remainder (sign of the dividend) of two integral numbers, quantities or durations."""
    return _calculate("modulo", _modulo, a, b)


@function("sum(items: array) -> any", replaces=True)
def sum_(items):
    """Sum of an array of numbers, quantities or durations, added left to right as `add` does."""
    if not items:
        raise FunctionError.kyverno("sum", "at least one element in the array is required")
    result = items[0]  # a single element is returned as it is, unchecked, like Kyverno
    for item in items[1:]:
        result = _calculate("sum", _add, result, item)
    return result


def _go_pow(base: float, exponent: int) -> float:
    """Go's ``math.Pow(base, n)`` for a non-negative integer `n` (repeated squaring on frexp mantissas)."""
    if exponent == 0 or base == 1:
        return 1.0
    if exponent == 1:
        return base
    mantissa, power = 1.0, 0
    x, x_exponent = math.frexp(base)
    bits = exponent
    while bits:
        if not -(1 << 12) <= x_exponent <= 1 << 12:
            power += x_exponent  # catastrophic overflow: leave it to ldexp
            break
        if bits & 1:
            mantissa *= x
            power += x_exponent
        x *= x
        x_exponent <<= 1
        if x < 0.5:
            x += x
            x_exponent -= 1
        bits >>= 1
    try:
        return math.ldexp(mantissa, power)
    except OverflowError:
        return math.copysign(math.inf, mantissa)


def _round_half_away(number: float) -> float:
    """Go's ``math.Round``: to the nearest integer, halves away from zero (Python's round() is half-even)."""
    if math.isnan(number) or math.isinf(number):
        return number
    whole = math.trunc(number)
    if abs(number - whole) >= 0.5:
        whole += 1 if number > 0 else -1
    return math.copysign(float(whole), number)


@function("round(value: number, places: number) -> number")
def round_(value, places):
    """`value` rounded half away from zero to `places` decimal places (places an integer, at least 0)."""
    digits = _to_float(places)
    if not math.isfinite(digits) or not digits.is_integer() or not -(2.0**63) <= digits < 2.0**63:
        raise FunctionError.kyverno("round", "Non-integer argument(s) passed for round off")
    if digits < 0:
        # Kyverno's message for this case is missing its arguments; kept as users see it.
        raise FunctionError.kyverno("round", "%!d(MISSING) argument is out of bounds (%!d(MISSING))")
    shift = _go_pow(10.0, int(digits))
    return _round_half_away(_to_float(value) * shift) / shift
