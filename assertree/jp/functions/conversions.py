"""Go's conversions that leak into Kyverno function results: numbers to text, strings to bytes.

Kyverno's `regex_*`, `pattern_match` and `object_from_lists` accept a number
where a string is expected and print it with ``strconv.FormatFloat(f, 'f', -1,
32)``: rounded to the nearest IEEE single, then the shortest decimal that
reads back as that single, positional, no trailing ``.0``
(``123456789`` -> ``"123456790"``). Python has no float32 type in the standard
library, so the rounding goes through `struct`. Error texts print float64s
with ``%v`` (`go_float_text`), and sigs.k8s.io/yaml float32 keys with ``'g'``;
both use Go's shortest ``%g`` layout (`go_g_layout`).

Strings are UTF-8 bytes to Go, so both directions go through two helpers:
`utf8_bytes` (a lone surrogate, which only a ``\\ud800`` JSON escape can
make, is U+FFFD as Go's decoder makes it) and `go_string` (bytes that are
not UTF-8 read back with one U+FFFD per bad byte, as Go prints them).
"""

from __future__ import annotations

import math
import re

INT64_MIN = -(1 << 63)
INT64_MAX = (1 << 63) - 1

_FLOAT32_MAX = 3.4028234663852886e38


def to_float32(value: float) -> float:
    """`value` rounded to the nearest IEEE 754 single, as a Python float (inf when out of range)."""
    if math.isnan(value) or math.isinf(value):
        return value
    import struct  # here: only Kyverno's functions given a number for a string need it

    try:
        return struct.unpack("<f", struct.pack("<f", value))[0]
    except OverflowError:
        # struct refuses to round values past the largest single; Go rounds them to infinity
        # unless they are within half an ulp of the maximum.
        return math.copysign(math.inf, value)


def _reads_back(text: str, single: float) -> bool:
    return to_float32(float(text)) == single


def float32_text(value: int | float) -> str:
    """A number as Go's ``FormatFloat(v, 'f', -1, 32)`` writes it: ``1.5``, ``12``, ``-0``, ``123456790``."""
    single = to_float32(float(value))
    if math.isnan(single):
        return "NaN"
    if math.isinf(single):
        return "+Inf" if single > 0 else "-Inf"
    if single == 0:
        return "-0" if math.copysign(1.0, single) < 0 else "0"
    for digits in range(1, 10):
        candidate = f"{single:.{digits}g}"
        if _reads_back(candidate, single):
            break
    from decimal import Decimal  # here: only a float32's text needs it (~1.3 ms of every start-up otherwise)

    text = format(Decimal(candidate), "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


def go_g_layout(shortest: str) -> str:
    """Go's ``%g`` layout at shortest precision, given a finite number's shortest decimal
    digits (``repr`` of a float64, `float32_text` of a float32): exponent form (``1e+06``,
    ``-1.5e-05``) when the leading digit's power of ten is below -4 or at least 6, else positional."""
    from decimal import Decimal

    number = Decimal(shortest).normalize()
    sign, digit_tuple, exponent = number.as_tuple()
    assert isinstance(exponent, int)  # a finite number's exponent ("n", "N", "F" mark NaN and infinity)
    digits = "".join(map(str, digit_tuple))
    magnitude = len(digits) - 1 + exponent  # the power of ten of the leading digit
    if -4 <= magnitude < 6:
        return format(number, "f")
    fraction = f".{digits[1:]}" if len(digits) > 1 else ""
    return f"{'-' if sign else ''}{digits[0]}{fraction}e{'-' if magnitude < 0 else '+'}{abs(magnitude):02d}"


def go_float_text(number: float) -> str:
    """A float as Go's ``fmt.Sprintf("%v", f)`` prints it: ``2``, ``2.5``, ``1e+06``, ``1e-05``, ``-0``."""
    if math.isnan(number):
        return "NaN"
    if math.isinf(number):
        return "+Inf" if number > 0 else "-Inf"
    if number == 0:
        return "-0" if math.copysign(1.0, number) < 0 else "0"
    return go_g_layout(repr(number))


# -- Go strings --------------------------------------------------------------------------------------

# Patterns, not compiled ones: compiled (and cached by `re`) when a bad string first needs them, not at every start-up.
_LONE_SURROGATE = "[\ud800-\udfff]"
_ESCAPED_BYTE = "[\udc80-\udcff]"


def utf8_bytes(text: str) -> bytes:
    """`text` as the UTF-8 bytes of the Go string it stands for (lone surrogates become U+FFFD)."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return re.sub(_LONE_SURROGATE, "\ufffd", text).encode("utf-8")


def go_string(data: bytes) -> str:
    """Bytes read as a Go string is printed: each byte that is not part of valid UTF-8 becomes U+FFFD."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:  # surrogateescape gives one escape per bad byte, as Go's decoder does
        return re.sub(_ESCAPED_BYTE, "\ufffd", data.decode("utf-8", "surrogateescape"))
