"""Go durations: ``time.ParseDuration`` and ``Duration.String``, to the nanosecond.

Kyverno's arithmetic and time functions take and return Go duration strings
(``1h30m0s``, ``1.5ms``, ``1.001µs``), so users see Go's exact text and Go's
exact error messages (``time: unknown unit "d" in duration "1d"``). A duration
is a signed 64-bit count of nanoseconds; here it is a Python ``int`` in that
range.

Written by hand because no maintained Python library parses or prints Go's
format: ISO 8601 libraries (``isodate``) and ``datetime.timedelta`` use other
syntaxes, have no nanoseconds, and accept days. The parser follows Go's
algorithm step by step, including its float64 arithmetic for fractions
(``1.5h`` is exact, very long fractions stop accumulating precision), its
overflow checks and its unsigned 64-bit running total.
"""

from __future__ import annotations

NANOSECOND = 1
MICROSECOND = 1000 * NANOSECOND
MILLISECOND = 1000 * MICROSECOND
SECOND = 1000 * MILLISECOND
MINUTE = 60 * SECOND
HOUR = 60 * MINUTE

MIN_DURATION = -(1 << 63)
MAX_DURATION = (1 << 63) - 1

_UNITS = {
    "ns": NANOSECOND,
    "us": MICROSECOND,
    "\u00b5s": MICROSECOND,  # micro sign
    "\u03bcs": MICROSECOND,  # Greek small letter mu
    "ms": MILLISECOND,
    "s": SECOND,
    "m": MINUTE,
    "h": HOUR,
}
_DIGITS = frozenset("0123456789")
_UINT64 = (1 << 64) - 1
_LIMIT = 1 << 63


def time_quote(text: str) -> str:
    """Go's ``time.quote``: double quotes, and every byte of a non-ASCII or control character as ``\\xNN``."""
    out = ['"']
    for char in text:
        if char < " " or char >= "\x80":
            out.extend(f"\\x{byte:02x}" for byte in char.encode("utf-8", "surrogatepass"))
        else:
            if char in '"\\':
                out.append("\\")
            out.append(char)
    out.append('"')
    return "".join(out)


def _leading_int(text: str, pos: int) -> tuple[int, int] | None:
    """Go's ``leadingInt``: the digits at `pos` as an integer, or None past 2^63."""
    value = 0
    end = len(text)
    while pos < end and text[pos] in _DIGITS:
        if value > _LIMIT // 10:
            return None
        value = value * 10 + ord(text[pos]) - 48
        if value > _LIMIT:
            return None
        pos += 1
    return value, pos


def _leading_fraction(text: str, pos: int) -> tuple[int, float, int]:
    """Go's ``leadingFraction``: digits after the point, and 10^n as a float64; stops gaining precision past 2^63."""
    value = 0
    scale = 1.0
    overflow = False
    end = len(text)
    while pos < end and text[pos] in _DIGITS:
        if not overflow:
            if value > (_LIMIT - 1) // 10:
                overflow = True
            else:
                candidate = value * 10 + ord(text[pos]) - 48
                if candidate > _LIMIT:
                    overflow = True
                else:
                    value = candidate
                    scale *= 10
        pos += 1
    return value, scale, pos


def parse_duration(text: str) -> int:
    """Nanoseconds in a Go duration string such as ``1h30m``, ``-1.5s`` or ``300ms``.

    Raises ValueError with Go's own message (``time: invalid duration "x"``,
    ``time: missing unit in duration "1"``, ``time: unknown unit "d" in
    duration "1d"``) when `text` is not a duration or does not fit in 64 bits.
    """
    invalid = f"time: invalid duration {time_quote(text)}"
    pos = 0
    end = len(text)
    negative = False
    if text and text[0] in "+-":
        negative = text[0] == "-"
        pos = 1
    if text[pos:] == "0":
        return 0
    if pos == end:
        raise ValueError(invalid)
    total = 0
    while pos < end:
        if not (text[pos] == "." or text[pos] in _DIGITS):
            raise ValueError(invalid)
        start = pos
        leading = _leading_int(text, pos)
        if leading is None:
            raise ValueError(invalid)
        whole, pos = leading
        had_whole = pos != start
        fraction, scale, had_fraction = 0, 1.0, False
        if pos < end and text[pos] == ".":
            pos += 1
            start = pos
            fraction, scale, pos = _leading_fraction(text, pos)
            had_fraction = pos != start
        if not had_whole and not had_fraction:
            raise ValueError(invalid)
        start = pos
        while pos < end and not (text[pos] == "." or text[pos] in _DIGITS):
            pos += 1
        if pos == start:
            raise ValueError(f"time: missing unit in duration {time_quote(text)}")
        unit_name = text[start:pos]
        unit = _UNITS.get(unit_name)
        if unit is None:
            raise ValueError(f"time: unknown unit {time_quote(unit_name)} in duration {time_quote(text)}")
        if whole > _LIMIT // unit:
            raise ValueError(invalid)
        value = whole * unit
        if fraction > 0:
            # Go computes the fraction in float64 (exact to the nanosecond for hours) and truncates.
            value += int(float(fraction) * (float(unit) / scale))
            if value > _LIMIT:
                raise ValueError(invalid)
        total = (total + value) & _UINT64  # Go's running total is a uint64 and can wrap
        if total > _LIMIT:
            raise ValueError(invalid)
    if negative:
        return -total
    if total > MAX_DURATION:
        raise ValueError(invalid)
    return total


def _fraction(value: int, precision: int) -> tuple[str, int]:
    """Go's ``fmtFrac``: the last `precision` digits of `value` as ``.ddd`` without trailing zeros."""
    digits = []
    printed = False
    for _ in range(precision):
        digit = value % 10
        printed = printed or digit != 0
        if printed:
            digits.append(str(digit))
        value //= 10
    text = "." + "".join(reversed(digits)) if printed else ""
    return text, value


def format_duration(nanoseconds: int) -> str:
    """A duration as Go's ``Duration.String`` writes it: ``1h30m0s``, ``1.5ms``, ``1.001µs``, ``0s``, ``-1m30s``.

    Below one second a single unit with a decimal fraction is used (µ is
    U+00B5); from one second up, ``[Hh][Mm]S[.f]s`` with the minutes shown
    whenever hours are. `nanoseconds` must be within the signed 64-bit range.
    """
    if not MIN_DURATION <= nanoseconds <= MAX_DURATION:
        raise ValueError(f"duration {nanoseconds}ns is outside the signed 64-bit range")
    magnitude = abs(nanoseconds)
    sign = "-" if nanoseconds < 0 else ""
    if magnitude == 0:
        return "0s"
    if magnitude < SECOND:
        if magnitude < MICROSECOND:
            precision, unit = 0, "ns"
        elif magnitude < MILLISECOND:
            precision, unit = 3, "\u00b5s"
        else:
            precision, unit = 6, "ms"
        fraction, whole = _fraction(magnitude, precision)
        return f"{sign}{whole}{fraction}{unit}"
    fraction, seconds = _fraction(magnitude, 9)
    minutes, seconds = divmod(seconds, 60)
    text = f"{seconds}{fraction}s"
    if minutes:
        hours, minutes = divmod(minutes, 60)
        text = f"{minutes}m{text}"
        if hours:
            text = f"{hours}h{text}"
    return sign + text


def duration_seconds(nanoseconds: int) -> float:
    """Go's ``Duration.Seconds``: whole seconds plus the nanosecond remainder / 1e9, in float64."""
    whole = abs(nanoseconds) // SECOND
    rest = abs(nanoseconds) % SECOND
    if nanoseconds < 0:  # Go divides toward zero
        whole, rest = -whole, -rest
    return float(whole) + float(rest) / 1e9
