"""Go's number-to-text conversions that leak into Kyverno function results.

Kyverno's `regex_*`, `pattern_match` and `object_from_lists` accept a number
where a string is expected and print it with ``strconv.FormatFloat(f, 'f', -1,
32)``: rounded to the nearest IEEE single, then the shortest decimal that
reads back as that single, positional, no trailing ``.0``
(``123456789`` -> ``"123456790"``). Python has no float32 type in the standard
library, so the rounding goes through `struct`.
"""

from __future__ import annotations

import math
import struct
from decimal import Decimal

_FLOAT32_MAX = 3.4028234663852886e38


def to_float32(value: float) -> float:
    """`value` rounded to the nearest IEEE 754 single, as a Python float (inf when out of range)."""
    if math.isnan(value) or math.isinf(value):
        return value
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
    text = format(Decimal(candidate), "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text
