"""Kubernetes quantities (``resource.Quantity``) as Kyverno's arithmetic uses them.

A quantity such as ``1536Mi``, ``1500m`` or ``1e3`` is an exact decimal that
remembers how it was written (binary SI, decimal SI or decimal exponent), and
Kyverno's results are apimachinery's *canonical* strings of such values
(``add('512Mi', '512Mi')`` is ``"1Gi"``, ``add('0.1', '0.2')`` is ``"300m"``).

Written by hand on Python's exact integers because no maintained Python
library reproduces apimachinery: Python's Kubernetes client only converts
quantities to ``Decimal`` (no canonical formatting, no format memory), and
``decimal`` alone knows nothing of suffixes. Three details of Go's code leak
into results and are kept on purpose:

* the parser's two paths (a fast int64 path and an ``inf.Dec`` path that
  rounds away from zero to 10^-9 and caps binary values at 2^63-1) leave
  different internal scales, which ``divide`` uses as its precision and
  ``AsApproximateFloat64`` uses to build a float;
* canonical strings drop the suffix when the exponent has none (decimal SI
  outside n..E, binary beyond Ei): ``10^21`` prints as ``"1"``;
* a number becomes a quantity by printing it with Go's ``%v`` and parsing the
  text back (`Quantity.from_number`).

Go would compute with arbitrarily long decimals; here an exact value that
needs more than `MAX_DIGITS` digits raises OverflowError instead of taking
unbounded time and memory.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import Enum

from assertree.jp.functions.conversions import INT64_MAX, INT64_MIN, go_float_text


class Format(Enum):
    """How a quantity was written, which decides how results print."""

    DECIMAL_EXPONENT = "DecimalExponent"  # 1e3, 12E-6
    BINARY_SI = "BinarySI"  # Ki Mi Gi Ti Pi Ei
    DECIMAL_SI = "DecimalSI"  # n u m "" k M G T P E, and plain numbers


NOT_A_QUANTITY = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
BAD_NUMBER = "unable to parse numeric part of quantity"
BAD_SUFFIX = "unable to parse quantity's suffix"

MAX_DIGITS = 4000
"""Longest exact integer this module builds (Python's own default int/str limit is 4300 digits)."""

_MAX_BITS = math.ceil(MAX_DIGITS * math.log2(10))
_NANO_PLACES = 9
_DIGITS = frozenset("0123456789")
_SUFFIX_CHARS = frozenset("eEinumkKMGTP")

_DECIMAL_SUFFIXES = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BINARY_SUFFIXES = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DECIMAL_NAMES = {exponent: name for name, exponent in _DECIMAL_SUFFIXES.items()}
_BINARY_NAMES = {power // 10: name for name, power in _BINARY_SUFFIXES.items()}


def _pow10(n: int) -> int:
    if n > MAX_DIGITS:
        raise OverflowError(f"a quantity needs more than {MAX_DIGITS} digits to compute exactly")
    return 10**n


def _int32(n: int) -> int:
    """`n` wrapped to a Go int32, as apimachinery stores exponents."""
    return ((n + (1 << 31)) & 0xFFFFFFFF) - (1 << 31)


def _go_pow10(n: int) -> float:
    """Go's ``math.Pow10``: a product or quotient of two exactly-written powers of ten."""
    if 0 <= n <= 308:
        return float(f"1e{n - n % 32}") * float(f"1e{n % 32}")
    if -323 <= n < 0:
        return float(f"1e-{-n - -n % 32}") / float(f"1e{-n % 32}")
    return math.inf if n > 0 else 0.0


def _int_to_float(n: int) -> float:
    try:
        return float(n)
    except OverflowError:
        return math.inf if n > 0 else -math.inf


@dataclass(frozen=True)
class Quantity:
    """An exact decimal ``unscaled × 10^exponent`` with the format it prints in.

    `exponent` is apimachinery's ``Scale`` (``inf.Dec``'s scale is its
    negation). Two quantities with the same value can differ in
    (`unscaled`, `exponent`) exactly as they would in Go, which matters for
    `approximate_float` and `divide_by`; printing depends only on the value
    and `format`.
    """

    unscaled: int
    exponent: int
    format: Format

    def __post_init__(self) -> None:
        if self.unscaled.bit_length() > _MAX_BITS:
            raise OverflowError(f"a quantity needs more than {MAX_DIGITS} digits to compute exactly")

    # -- construction -------------------------------------------------------------------------

    @classmethod
    def parse(cls, text: str) -> Quantity:
        """apimachinery's ``ParseQuantity``: raises ValueError (with Go's message) if `text` is not a quantity.

        Besides the documented grammar this accepts what Go's scanner does,
        such as ``"."``, ``"-"``, ``"m"`` or ``"Ki"`` (all zero). Non-zero
        values are rounded away from zero to a multiple of 10^-9; binary-SI
        values are capped at 2^63-1.
        """
        if not text:
            raise ValueError(NOT_A_QUANTITY)
        if text == "0":
            return cls(0, 0, Format.DECIMAL_SI)
        positive, value, num, denom, suffix = _scan(text)
        base, exponent, fmt = _interpret(suffix)

        if fmt is Format.BINARY_SI:
            scale = 0
            mantissa = 1 << exponent
            # Go: 15 - len(num) - int32(float32(exponent)*3/10) - 1; exact for exponents 10..60.
            precision = 15 - len(num) - exponent * 3 // 10 - 1 if not denom else -1
        else:
            scale = exponent
            mantissa = 1
            precision = 18 - (len(num) + len(denom))
        if precision >= 0:
            scale = _int32(scale - len(denom))
            if scale >= -_NANO_PLACES:
                result = int(num + denom) * mantissa
                if result <= INT64_MAX:
                    return cls(result if positive else -result, scale, fmt)

        unscaled, places = _decimal(value)
        if base == 10:
            places = _int32(places - exponent)
        else:
            unscaled <<= exponent
        negative = unscaled < 0
        unscaled = abs(unscaled)
        if unscaled:
            # Round up (away from zero: the magnitude is positive) to whole nanounits.
            if places <= _NANO_PLACES:
                unscaled *= _pow10(_NANO_PLACES - places)
            elif places - _NANO_PLACES > MAX_DIGITS + 20:  # far below 10^-9 (the digits are bounded): 1n
                unscaled = 1
            else:
                unscaled = -(-unscaled // _pow10(places - _NANO_PLACES))
            places = _NANO_PLACES
        if fmt is Format.BINARY_SI and unscaled and unscaled > INT64_MAX * 10**_NANO_PLACES:
            unscaled, places = INT64_MAX, 0
        if fmt is Format.BINARY_SI and 0 < unscaled < 10**_NANO_PLACES and places == _NANO_PLACES:
            fmt = Format.DECIMAL_SI
        return cls(-unscaled if negative else unscaled, -places, fmt)

    @classmethod
    def from_number(cls, number: float) -> Quantity:
        """A JSON number as Kyverno turns it into a quantity: Go's ``fmt`` ``%v`` text, parsed back.

        So the quantity is exact on the *printed* value (``0.1`` is exactly
        one tenth) and, like any parsed value, rounded up to 10^-9.
        """
        return cls.parse(go_float_text(float(number)))

    @classmethod
    def from_int(cls, value: int, fmt: Format) -> Quantity:
        """apimachinery's ``NewQuantity``: an integer in the given format."""
        return cls(value, 0, fmt)

    # -- reading ------------------------------------------------------------------------------

    @property
    def is_zero(self) -> bool:
        return self.unscaled == 0

    @property
    def places(self) -> int:
        """Digits after the decimal point as stored (``inf.Dec``'s scale): ``1.5`` has 1, ``500m`` 3, ``1e3`` -3."""
        return -self.exponent

    def approximate_float(self) -> float:
        """apimachinery's ``AsApproximateFloat64``: float(unscaled) × ``math.Pow10(exponent)``."""
        base = _int_to_float(self.unscaled)
        if self.exponent == 0:
            return base
        return base * _go_pow10(self.exponent)

    def _compare_magnitude(self, bound: int) -> int:
        """-1, 0 or 1 as |value| is below, at or above the positive integer `bound`."""
        magnitude = abs(self.unscaled)
        if self.exponent >= 0:
            if self.exponent > len(str(bound)):
                return 1
            left, right = magnitude * 10**self.exponent, bound
        else:
            left, right = magnitude, bound * _pow10(-self.exponent)
        return (left > right) - (left < right)

    def _integer_value(self) -> int | None:
        """The value as an int when it is a whole number, else None."""
        if self.exponent >= 0:
            whole = self.unscaled * _pow10(self.exponent)
            if whole.bit_length() > _MAX_BITS:
                raise OverflowError(f"a quantity needs more than {MAX_DIGITS} digits to compute exactly")
            return whole
        quotient, remainder = divmod(abs(self.unscaled), _pow10(-self.exponent))
        if remainder:
            return None
        return quotient if self.unscaled >= 0 else -quotient

    def __str__(self) -> str:
        """apimachinery's canonical string: ``0``, ``1536Mi``, ``1500m``, ``2k``, ``2e3``.

        Binary SI prints whole multiples of 1024 (at least 1024) with the
        largest binary suffix that divides them, and falls back to decimal SI
        for fractions and small values. Decimal forms strip trailing zeros and
        lower the exponent to a multiple of three; a decimal-SI exponent
        without a suffix (outside n..E) is dropped, as upstream does.
        """
        if self.unscaled == 0:
            return "0"
        fmt = self.format
        if fmt is Format.BINARY_SI:
            whole = self._integer_value() if self._compare_magnitude(1024) >= 0 else None
            if whole is None:
                fmt = Format.DECIMAL_SI
            else:
                magnitude, times = abs(whole), 0
                while magnitude >= 1024 and magnitude % 1024 == 0:
                    magnitude //= 1024
                    times += 1
                sign = "-" if whole < 0 else ""
                return f"{sign}{magnitude}{_BINARY_NAMES.get(times, '')}"
        magnitude, exponent = abs(self.unscaled), self.exponent
        while magnitude % 10 == 0:
            magnitude //= 10
            exponent += 1
        shift = exponent % 3  # Python's modulo is non-negative: this lowers the exponent
        magnitude *= 10**shift
        exponent -= shift
        sign = "-" if self.unscaled < 0 else ""
        if fmt is Format.DECIMAL_EXPONENT:
            suffix = f"e{exponent}" if exponent else ""
        else:
            suffix = _DECIMAL_NAMES.get(exponent, "")
        return f"{sign}{magnitude}{suffix}"

    # -- arithmetic ---------------------------------------------------------------------------

    def _aligned(self, other: Quantity) -> tuple[int, int, int]:
        exponent = min(self.exponent, other.exponent)
        return (
            self.unscaled * _pow10(self.exponent - exponent),
            other.unscaled * _pow10(other.exponent - exponent),
            exponent,
        )

    def plus(self, other: Quantity) -> Quantity:
        """``Quantity.Add``: the exact sum, in this format unless this value is zero (then `other`'s)."""
        left, right, exponent = self._aligned(other)
        fmt = other.format if self.is_zero else self.format
        return Quantity(left + right, exponent, fmt)

    def minus(self, other: Quantity) -> Quantity:
        """``Quantity.Sub``: the exact difference, formatted as `plus` decides."""
        left, right, exponent = self._aligned(other)
        fmt = other.format if self.is_zero else self.format
        return Quantity(left - right, exponent, fmt)

    def times(self, other: Quantity) -> Quantity:
        """The exact product, in this quantity's format and never rounded."""
        return Quantity(self.unscaled * other.unscaled, self.exponent + other.exponent, self.format)

    def divide_by(self, other: Quantity, places: int) -> Quantity:
        """The quotient cut toward zero to `places` decimal places (``inf.Dec.QuoRound`` with ``RoundDown``).

        `other` must not be zero. The result keeps this quantity's format.
        """
        shift = self.exponent - other.exponent + places
        numerator, denominator = abs(self.unscaled), abs(other.unscaled)
        if shift >= 0:
            numerator *= _pow10(shift)
        else:
            denominator *= _pow10(-shift)
        quotient = numerator // denominator
        if (self.unscaled < 0) != (other.unscaled < 0):
            quotient = -quotient
        return Quantity(quotient, -places, self.format)


def _scan(text: str) -> tuple[bool, str, str, str, str]:
    """apimachinery's ``parseQuantityString``: sign, numeric text, integer digits, fraction digits, suffix."""
    end = len(text)
    pos = 0
    positive = True
    if text[0] in "+-":
        positive = text[0] == "+"
        pos = 1
    while pos < end and text[pos] == "0":
        pos += 1
    if pos == end:
        return positive, "0", "0", "", ""
    start = pos
    while pos < end and text[pos] in _DIGITS:
        pos += 1
    num = text[start:pos] or "0"
    if pos == end:
        return positive, text, num, "", ""
    denom = ""
    if text[pos] == ".":
        pos += 1
        start = pos
        while pos < end and text[pos] in _DIGITS:
            pos += 1
        denom = text[start:pos]
        if pos == end:
            return positive, text, num, denom, ""
    value = text[:pos]
    suffix_start = pos
    while pos < end and text[pos] in _SUFFIX_CHARS:
        pos += 1
    if pos < end and text[pos] in "+-":
        pos += 1
    while pos < end and text[pos] in _DIGITS:
        pos += 1
    if pos < end:
        raise ValueError(NOT_A_QUANTITY)
    return positive, value, num, denom, text[suffix_start:]


def _interpret(suffix: str) -> tuple[int, int, Format]:
    """apimachinery's ``suffixHandler.interpret``: base, exponent and format of a suffix."""
    if suffix in _DECIMAL_SUFFIXES:
        return 10, _DECIMAL_SUFFIXES[suffix], Format.DECIMAL_SI
    if suffix in _BINARY_SUFFIXES:
        return 2, _BINARY_SUFFIXES[suffix], Format.BINARY_SI
    if len(suffix) > 1 and suffix[0] in "eE":
        digits = suffix[1:]
        body = digits[1:] if digits[0] in "+-" else digits
        if body and all(c in _DIGITS for c in body):
            parsed = int(digits) if len(body) <= 20 else None
            if parsed is not None and INT64_MIN <= parsed <= INT64_MAX:
                return 10, _int32(parsed), Format.DECIMAL_EXPONENT
    raise ValueError(BAD_SUFFIX)


def _decimal(value: str) -> tuple[int, int]:
    """``inf.Dec.SetString`` on the numeric text: (unscaled, digits after the point)."""
    sign = -1 if value[:1] == "-" else 1
    body = value[1:] if value[:1] in "+-" else value
    whole, _, fraction = body.partition(".")
    digits = whole + fraction
    if not digits:
        raise ValueError(BAD_NUMBER)
    if len(digits) > MAX_DIGITS:
        raise OverflowError(f"a quantity needs more than {MAX_DIGITS} digits to compute exactly")
    return sign * int(digits), len(fraction)
