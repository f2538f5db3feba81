"""Go times: ``time.Parse`` and ``Time.Format`` with reference-time layouts, to the nanosecond.

Kyverno's time functions read and print times with Go layouts, where a
layout is the reference time ``Mon Jan 2 15:04:05 MST 2006`` (offset
-0700) written the way the value looks: ``2006-01-02T15:04:05Z07:00`` is
RFC 3339. Users see Go's results and Go's error texts (``parsing time
"2023-02-30T00:00:00Z": day out of range``), so both directions follow Go's
rules: which layout text is an element (``Jan`` but not ``Janet``, ``_2006``
is ``_`` then the year), how each element reads its digits (one or two for
``1``/``2``/``3``/``4``/``5``, exactly two for ``01``…), fractions the layout
does not mention, ``Z`` for UTC in the ``Z07:00`` zones, zone abbreviations
(``UTC``; one the local zone knows; any other means offset zero), range
checks, and the printing of ``Z``, offsets and years beyond 9999.

Written by hand because Python has no parser for this language: ``strptime``
uses ``%``-directives, has no nanoseconds, no year 0, no ``Z07:00`` and no
Go-style errors, and ``dateutil`` guesses formats instead of following one.
Times are kept as a Unix nanosecond count plus a fixed offset (and the zone
abbreviation, for ``MST``), with the proleptic Gregorian calendar computed
on integers, so year 0 and years past 9999 work. Strings are handled as
code points where Go uses bytes; only error texts for non-ASCII input can
differ.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from functools import lru_cache

from assertree.jp.functions.duration import MAX_DURATION, MIN_DURATION, time_quote

RFC3339 = "2006-01-02T15:04:05Z07:00"

_SECOND = 1_000_000_000
_DAY_SECONDS = 86_400
_ZERO_TIME_UNIX = -62_135_596_800
"""Go's zero time, 0001-01-01T00:00:00Z, in Unix seconds: `Time.Truncate` counts from it."""

_LONG_MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
_SHORT_MONTHS = tuple(name[:3] for name in _LONG_MONTHS)
_LONG_DAYS = ("Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday")
_SHORT_DAYS = tuple(name[:3] for name in _LONG_DAYS)
_DAYS_BEFORE = (0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334, 365)

# Zone elements: the part after the sign letter, checked longest first.
_ZONE_SHAPES = ("070000", "07:00:00", "0700", "07:00", "07")
_NUMERIC_ZONES = frozenset("-" + shape for shape in _ZONE_SHAPES)
_ISO_ZONES = frozenset("Z" + shape for shape in _ZONE_SHAPES)

_FIXED_ELEMENTS = {
    "0": ("01", "02", "03", "04", "05", "06", "002"),
    "1": ("15", "1"),
    "2": ("2006", "2"),
    "3": ("3",),
    "4": ("4",),
    "5": ("5",),
    "P": ("PM",),
    "p": ("pm",),
    "-": tuple("-" + shape for shape in _ZONE_SHAPES),
    "Z": tuple("Z" + shape for shape in _ZONE_SHAPES),
}


# -- the calendar ----------------------------------------------------------------------------------


def _is_leap(year: int) -> bool:
    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)


def _days_in(month: int, year: int) -> int:
    if month == 2 and _is_leap(year):
        return 29
    return _DAYS_BEFORE[month] - _DAYS_BEFORE[month - 1]


def _days_from_civil(year: int, month: int, day: int) -> int:
    """Days from 1970-01-01 to a proleptic Gregorian date (any year, 0 and negative included)."""
    y = year - (month <= 2)
    era = y // 400
    year_of_era = y - era * 400
    day_of_year = (153 * ((month + 9) % 12) + 2) // 5 + day - 1
    day_of_era = year_of_era * 365 + year_of_era // 4 - year_of_era // 100 + day_of_year
    return era * 146_097 + day_of_era - 719_468


def _civil_from_days(days: int) -> tuple[int, int, int]:
    """The (year, month, day) `days` after 1970-01-01: the inverse of `_days_from_civil`."""
    z = days + 719_468
    era = z // 146_097
    day_of_era = z - era * 146_097
    year_of_era = (day_of_era - day_of_era // 1460 + day_of_era // 36_524 - day_of_era // 146_096) // 365
    day_of_year = day_of_era - (365 * year_of_era + year_of_era // 4 - year_of_era // 100)
    shifted_month = (5 * day_of_year + 2) // 153
    day = day_of_year - (153 * shifted_month + 2) // 5 + 1
    month = shifted_month + 3 if shifted_month < 10 else shifted_month - 9
    return year_of_era + era * 400 + (month <= 2), month, day


def _local_zone(unix_seconds: int) -> tuple[str, int]:
    """The process's local zone at an instant: (abbreviation, offset east in seconds), as Go's ``Local``."""
    try:
        local = time.localtime(unix_seconds)
    except (OverflowError, OSError, ValueError):
        local = time.localtime()
    return local.tm_zone, local.tm_gmtoff


def _local_offset_named(name: str, unix_seconds: int) -> int | None:
    """The offset the local zone gives abbreviation `name` around an instant (Go's ``lookupName``), or None."""
    known: tuple[tuple[str, int], ...]
    if time.daylight:
        known = ((time.tzname[0], -time.timezone), (time.tzname[1], -time.altzone))
    else:
        known = ((time.tzname[0], -time.timezone),)
    for zone_name, offset in known:
        if zone_name == name:
            in_effect, actual = _local_zone(unix_seconds - offset)
            if in_effect == name:
                return actual
    for zone_name, offset in known:
        if zone_name == name:
            return offset
    return None


# -- times -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Civil:
    """A time's calendar fields in its own offset, as Go's ``Time`` methods give them."""

    year: int
    month: int  # 1-12
    day: int
    hour: int
    minute: int
    second: int
    nanosecond: int
    weekday: int  # 0 = Sunday
    year_day: int  # 1-366


@dataclass(frozen=True)
class GoTime:
    """An instant with the offset (and zone abbreviation) it is shown in, like a Go ``time.Time``.

    Comparisons between times use `unix_nanos` only: equal instants in
    different offsets are equal, as with Go's ``Equal``/``Before``/``After``.
    """

    unix_nanos: int
    offset: int = 0  # seconds east of UTC
    zone: str = "UTC"  # abbreviation; "" for a bare numeric offset

    @classmethod
    def from_unix(cls, seconds: int, nanos: int = 0) -> GoTime:
        """Go's ``time.Unix(seconds, nanos).UTC()``."""
        return cls(seconds * _SECOND + nanos)

    @classmethod
    def now(cls) -> GoTime:
        """Go's ``time.Now()``: the current instant in the process's local zone."""
        nanos = time.time_ns()
        zone, offset = _local_zone(nanos // _SECOND)
        return cls(nanos, offset, zone)

    def utc(self) -> GoTime:
        return GoTime(self.unix_nanos)

    def add(self, nanoseconds: int) -> GoTime:
        """Go's ``Add``: the same offset, `nanoseconds` later (earlier when negative)."""
        return GoTime(self.unix_nanos + nanoseconds, self.offset, self.zone)

    def sub(self, other: GoTime) -> int:
        """Go's ``Sub``: ``self - other`` in nanoseconds, saturated to the int64 duration range."""
        return max(MIN_DURATION, min(MAX_DURATION, self.unix_nanos - other.unix_nanos))

    def truncate(self, nanoseconds: int) -> GoTime:
        """Go's ``Truncate``: rounded down to a multiple of `nanoseconds` since the zero time, in absolute time."""
        if nanoseconds <= 0:
            return self
        since_zero = self.unix_nanos - _ZERO_TIME_UNIX * _SECOND
        return self.add(-(since_zero % nanoseconds))

    def civil(self) -> Civil:
        seconds, nanosecond = divmod(self.unix_nanos, _SECOND)
        days, in_day = divmod(seconds + self.offset, _DAY_SECONDS)
        year, month, day = _civil_from_days(days)
        hour, rest = divmod(in_day, 3600)
        minute, second = divmod(rest, 60)
        return Civil(
            year=year,
            month=month,
            day=day,
            hour=hour,
            minute=minute,
            second=second,
            nanosecond=nanosecond,
            weekday=(days + 4) % 7,  # 1970-01-01 was a Thursday
            year_day=days - _days_from_civil(year, 1, 1) + 1,
        )

    def format(self, layout: str = RFC3339) -> str:
        """Go's ``Format``: the layout with each element replaced by this time's value."""
        fields = self.civil()
        out: list[str] = []
        for literal, element in _chunks(layout):
            out.append(literal)
            if element:
                out.append(_format_element(element, fields, self))
        return "".join(out)


# -- layouts ---------------------------------------------------------------------------------------


def _starts_lower(text: str, pos: int) -> bool:
    return pos < len(text) and "a" <= text[pos] <= "z"


def _is_digit(text: str, pos: int) -> bool:
    return pos < len(text) and "0" <= text[pos] <= "9"


def _element_at(layout: str, pos: int) -> tuple[int, str] | None:
    """The layout element starting at `pos`: (where it starts, its text), or None when `pos` is literal.

    ``_2006`` is a literal ``_`` and then ``2006``, so the start can be past `pos`.
    """
    char = layout[pos]
    rest = layout[pos:]
    if char == "J" and rest.startswith("Jan"):
        if rest.startswith("January"):
            return pos, "January"
        if not _starts_lower(layout, pos + 3):
            return pos, "Jan"
    elif char == "M":
        if rest.startswith("Mon"):
            if rest.startswith("Monday"):
                return pos, "Monday"
            if not _starts_lower(layout, pos + 3):
                return pos, "Mon"
        if rest.startswith("MST"):
            return pos, "MST"
    elif char == "_":
        if rest.startswith("_2006"):
            return pos + 1, "2006"
        if rest.startswith("_2"):
            return pos, "_2"
        if rest.startswith("__2"):
            return pos, "__2"
    elif char in ".," and pos + 1 < len(layout) and layout[pos + 1] in "09":
        end = pos + 1
        while end < len(layout) and layout[end] == layout[pos + 1]:
            end += 1
        if not _is_digit(layout, end):  # a fraction only if the run of 0s or 9s ends the digits
            return pos, layout[pos:end]
    else:
        for text in _FIXED_ELEMENTS.get(char, ()):
            if rest.startswith(text):
                return pos, text
    return None


@lru_cache(maxsize=256)
def _chunks(layout: str) -> tuple[tuple[str, str], ...]:
    """The layout as (literal text, element) pairs; the last pair's element is "" (Go's ``nextStdChunk``)."""
    chunks = []
    literal_start = pos = 0
    while pos < len(layout):
        found = _element_at(layout, pos)
        if found is None:
            pos += 1
            continue
        start, element = found
        chunks.append((layout[literal_start:start], element))
        pos = literal_start = start + len(element)
    chunks.append((layout[literal_start:], ""))
    return tuple(chunks)


def _is_fraction(element: str) -> bool:
    return len(element) > 1 and element[0] in ".," and element[1] in "09"


def _pad(number: int, width: int) -> str:
    """Go's ``appendInt``: zero-padded to `width` digits, with ``-`` before the padding."""
    sign = "-" if number < 0 else ""
    return sign + str(abs(number)).rjust(width, "0")


def _go_div(a: int, b: int) -> int:
    """Go's integer division (toward zero)."""
    quotient = abs(a) // abs(b)
    return quotient if (a < 0) == (b < 0) else -quotient


def _format_zone(element: str, offset: int) -> str:
    shape = element[1:]
    if element[0] == "Z" and offset == 0:
        return "Z"
    minutes = _go_div(offset, 60)  # Go truncates: an offset of -30s prints as +00:00
    sign = "-" if minutes < 0 else "+"
    minutes = abs(minutes)
    out = [sign, _pad(minutes // 60, 2)]
    if shape != "07":
        if ":" in shape:
            out.append(":")
        out.append(_pad(minutes % 60, 2))
    if shape in ("070000", "07:00:00"):
        if ":" in shape:
            out.append(":")
        out.append(_pad(abs(offset) % 60, 2))
    return "".join(out)


def _format_fraction(element: str, nanosecond: int) -> str:
    digits = min(len(element) - 1, 9)
    text = _pad(nanosecond, 9)[:digits]
    if element[1] == "9":
        text = text.rstrip("0")
        if not text:
            return ""
    return element[0] + text


def _format_element(element: str, f: Civil, t: GoTime) -> str:
    if _is_fraction(element):
        return _format_fraction(element, f.nanosecond)
    if element in _ISO_ZONES or element in _NUMERIC_ZONES:
        return _format_zone(element, t.offset)
    hour12 = f.hour % 12 or 12
    match element:
        case "2006":
            return _pad(f.year, 4)
        case "06":
            return _pad(f.year - _go_div(f.year, 100) * 100, 2)
        case "January":
            return _LONG_MONTHS[f.month - 1]
        case "Jan":
            return _SHORT_MONTHS[f.month - 1]
        case "1":
            return str(f.month)
        case "01":
            return _pad(f.month, 2)
        case "Monday":
            return _LONG_DAYS[f.weekday]
        case "Mon":
            return _SHORT_DAYS[f.weekday]
        case "2":
            return str(f.day)
        case "_2":
            return str(f.day).rjust(2)
        case "02":
            return _pad(f.day, 2)
        case "__2":
            return str(f.year_day).rjust(3)
        case "002":
            return _pad(f.year_day, 3)
        case "15":
            return _pad(f.hour, 2)
        case "3":
            return str(hour12)
        case "03":
            return _pad(hour12, 2)
        case "4":
            return str(f.minute)
        case "04":
            return _pad(f.minute, 2)
        case "5":
            return str(f.second)
        case "05":
            return _pad(f.second, 2)
        case "PM":
            return "PM" if f.hour >= 12 else "AM"
        case "pm":
            return "pm" if f.hour >= 12 else "am"
        case "MST":
            if t.zone:
                return t.zone
            return _format_zone("-0700", t.offset)
    raise AssertionError(f"unhandled layout element {element!r}")


# -- parsing ---------------------------------------------------------------------------------------


class _Bad(Exception):
    """The value does not fit the element being read (Go's ``errBad``)."""


class _OutOfRange(Exception):
    """A field was read but its value is impossible (Go's ``rangeErrString``)."""


def _get_number(value: str, fixed: bool) -> tuple[int, str]:
    """Go's ``getnum``: one or two digits (exactly two when `fixed`)."""
    if not _is_digit(value, 0):
        raise _Bad
    if not _is_digit(value, 1):
        if fixed:
            raise _Bad
        return int(value[0]), value[1:]
    return int(value[:2]), value[2:]


def _get_number3(value: str, fixed: bool) -> tuple[int, str]:
    """Go's ``getnum3``: one to three digits (exactly three when `fixed`)."""
    count = 0
    while count < 3 and _is_digit(value, count):
        count += 1
    if count == 0 or (fixed and count != 3):
        raise _Bad
    return int(value[:count]), value[count:]


def _atoi(text: str) -> int:
    """Go's ``time.atoi``: an optional sign and digits; an empty digit string reads as 0, as in Go."""
    negative = False
    if text and text[0] in "+-":
        negative = text[0] == "-"
        text = text[1:]
    if any(not ("0" <= char <= "9") for char in text):
        raise _Bad
    number = int(text) if text else 0
    return -number if negative else number


def _lookup(names: tuple[str, ...], value: str) -> tuple[int, str]:
    """Go's ``lookup``: the index of the name `value` starts with, ASCII case-insensitively."""
    for index, name in enumerate(names):
        prefix = value[: len(name)]
        if len(prefix) == len(name) and prefix.encode().lower() == name.encode().lower():
            return index, value[len(name) :]
    raise _Bad


def _nanoseconds(value: str, length: int) -> int:
    """Go's ``parseNanoseconds``: the separator and digits in ``value[:length]``, kept to 9 digits."""
    if value[0] not in ".,":
        raise _Bad
    length = min(length, 10)
    nanos = _atoi(value[1:length])
    if nanos < 0:
        raise _OutOfRange("fractional second")
    return nanos * 10 ** (10 - length)


def _signed_offset_length(value: str) -> int:
    """Go's ``parseSignedOffset``: the length of ``+h``/``-hh`` (hours at most 23) at the start, or 0."""
    if not value or value[0] not in "+-":
        return 0
    end = 1
    while _is_digit(value, end):
        end += 1
    if end == 1 or int(value[1:end]) > 23:
        return 0
    return end


def _zone_name_length(value: str) -> int:
    """Go's ``parseTimeZone``: how long the zone abbreviation at the start of `value` is, or 0."""
    if len(value) < 3:
        return 0
    if value[:4] in ("ChST", "MeST"):
        return 4
    if value[:3] == "GMT":
        return 3 + _signed_offset_length(value[3:])
    if value[0] in "+-":
        return _signed_offset_length(value)
    upper = 0
    while upper < min(6, len(value)) and "A" <= value[upper] <= "Z":
        upper += 1
    if upper == 3:
        return 3
    if upper == 4 and (value[3] == "T" or value[:4] == "WITA"):
        return 4
    if upper == 5 and value[4] == "T":
        return 5
    return 0


class _Fields:
    """What the elements of one parse have read so far (Go's locals in ``time.parse``)."""

    def __init__(self) -> None:
        self.year = 0
        self.month = -1
        self.day = -1
        self.year_day = -1
        self.hour = self.minute = self.second = self.nanosecond = 0
        self.pm: bool | None = None
        self.utc = False
        self.offset: int | None = None
        self.zone = ""

    def read(self, element: str, value: str, next_element: str) -> str:
        """Read `element` at the start of `value`; return the rest of `value`."""
        if _is_fraction(element):
            return self._read_fraction(element, value)
        if element in _ISO_ZONES or element in _NUMERIC_ZONES:
            return self._read_offset(element, value)
        match element:
            case "2006":
                if len(value) < 4 or not _is_digit(value, 0):
                    raise _Bad
                self.year = _atoi(value[:4])
                return value[4:]
            case "06":
                if len(value) < 2:
                    raise _Bad
                year = _atoi(value[:2])
                self.year = year + (1900 if year >= 69 else 2000)
                return value[2:]
            case "January" | "Jan":
                index, value = _lookup(_LONG_MONTHS if element == "January" else _SHORT_MONTHS, value)
                self.month = index + 1
                return value
            case "1" | "01":
                self.month, value = _get_number(value, element == "01")
                if not 1 <= self.month <= 12:
                    raise _OutOfRange("month")
                return value
            case "Monday" | "Mon":  # a day name is required but not checked against the date
                return _lookup(_LONG_DAYS if element == "Monday" else _SHORT_DAYS, value)[1]
            case "2" | "_2" | "02":
                if element == "_2" and value[:1] == " ":
                    value = value[1:]
                self.day, value = _get_number(value, element == "02")
                return value
            case "__2" | "002":
                if element == "__2":
                    for _ in range(2):
                        if value[:1] == " ":
                            value = value[1:]
                self.year_day, value = _get_number3(value, element == "002")
                return value
            case "15" | "3" | "03":
                self.hour, value = _get_number(value, element == "03")
                if self.hour >= (24 if element == "15" else 13):
                    raise _OutOfRange("hour")
                return value
            case "4" | "04":
                self.minute, value = _get_number(value, element == "04")
                if self.minute >= 60:
                    raise _OutOfRange("minute")
                return value
            case "5" | "05":
                self.second, value = _get_number(value, element == "05")
                if self.second >= 60:
                    raise _OutOfRange("second")
                # A fraction after the seconds is read even when the layout has none.
                if len(value) >= 2 and value[0] in ".," and _is_digit(value, 1) and not _is_fraction(next_element):
                    end = 2
                    while _is_digit(value, end):
                        end += 1
                    self.nanosecond = _nanoseconds(value, end)
                    value = value[end:]
                return value
            case "PM" | "pm":
                if len(value) < 2:
                    raise _Bad
                marker = value[:2]
                if marker == ("PM" if element == "PM" else "pm"):
                    self.pm = True
                elif marker == ("AM" if element == "PM" else "am"):
                    self.pm = False
                else:
                    raise _Bad
                return value[2:]
            case "MST":
                if value[:3] == "UTC":
                    self.utc = True
                    return value[3:]
                length = _zone_name_length(value)
                if not length:
                    raise _Bad
                self.zone = value[:length]
                return value[length:]
        raise AssertionError(f"unhandled layout element {element!r}")

    def _read_fraction(self, element: str, value: str) -> str:
        if element[1] == "0":  # a fixed number of digits
            length = len(element)
            if len(value) < length:
                raise _Bad
            self.nanosecond = _nanoseconds(value, length)
            return value[length:]
        if len(value) < 2 or value[0] not in ".," or not _is_digit(value, 1):
            return value  # an optional fraction that is absent
        end = 1
        while _is_digit(value, end):
            end += 1
        self.nanosecond = _nanoseconds(value, end)
        return value[end:]

    def _read_offset(self, element: str, value: str) -> str:
        if element[0] == "Z" and value[:1] == "Z":
            self.utc = True
            return value[1:]
        shape = element[1:]
        if len(value) < len(shape) + 1:
            raise _Bad
        if any(char == ":" and value[1 + i] != ":" for i, char in enumerate(shape)):
            raise _Bad
        step = 3 if ":" in shape else 2
        parts = [value[1 + i : 3 + i] for i in range(0, len(shape), step)] + ["00", "00"]
        numbers = [0, 0, 0]
        bad = value[0] not in "+-"
        try:  # like Go, numbers read before a bad one are still range-checked
            for index, part in enumerate(parts[:3]):
                numbers[index] = _get_number(part, True)[0]
        except _Bad:
            bad = True
        hours, minutes, seconds = numbers
        for amount, limit, unit in ((seconds, 60, "second"), (minutes, 60, "minute"), (hours, 24, "hour")):
            if amount > limit:
                raise _OutOfRange(f"time zone offset {unit}")
        if bad:
            raise _Bad
        offset = (hours * 60 + minutes) * 60 + seconds
        if value[0] == "-":
            offset = -offset
        self.offset = offset
        return value[1 + len(shape) :]

    def settle_date(self) -> str:
        """Fill in defaults, resolve the day of the year and check the day; an error suffix or ""."""
        if self.pm is True and self.hour < 12:
            self.hour += 12
        elif self.pm is False and self.hour == 12:
            self.hour = 0
        if self.year_day >= 0:
            year_day, month, day = self.year_day, 0, 0
            if _is_leap(self.year):
                if year_day == 31 + 29:
                    month, day = 2, 29
                elif year_day > 31 + 29:
                    year_day -= 1
            if not 1 <= year_day <= 365:
                return "day-of-year out of range"
            if month == 0:
                month = (year_day - 1) // 31 + 1
                if _DAYS_BEFORE[month] < year_day:
                    month += 1
                day = year_day - _DAYS_BEFORE[month - 1]
            if self.month >= 0 and self.month != month:
                return "day-of-year does not match month"
            if self.day >= 0 and self.day != day:
                return "day-of-year does not match day"
            self.month, self.day = month, day
        else:
            self.month = max(self.month, 1)
            self.day = self.day if self.day >= 0 else 1
        if not 1 <= self.day <= _days_in(self.month, self.year):
            return "day out of range"
        return ""

    def to_time(self) -> GoTime:
        days = _days_from_civil(self.year, self.month, self.day)
        wall = (days * _DAY_SECONDS + self.hour * 3600 + self.minute * 60 + self.second) * _SECOND + self.nanosecond
        if self.utc:
            return GoTime(wall)
        if self.offset is not None:
            instant = wall - self.offset * _SECOND
            local_name, local_offset = _local_zone(instant // _SECOND)
            if local_offset == self.offset and self.zone in ("", local_name):
                return GoTime(instant, local_offset, local_name)
            return GoTime(instant, self.offset, self.zone)
        if self.zone:
            known = _local_offset_named(self.zone, wall // _SECOND)
            if known is not None:
                return GoTime(wall - known * _SECOND, known, self.zone)
            offset = 0  # an abbreviation the local zone does not know: Go keeps the clock reading, offset zero
            if len(self.zone) > 3 and self.zone.startswith("GMT"):
                offset = int(self.zone[3:]) * 3600
            return GoTime(wall - offset * _SECOND, offset, self.zone)
        return GoTime(wall)


def parse(layout: str, value: str) -> GoTime:
    """Go's ``time.Parse(layout, value)``: UTC unless the value names a zone or an offset.

    Raises ValueError with Go's message: ``parsing time "V" as "L": cannot
    parse "REST" as "ELEMENT"``, ``parsing time "V": month out of range``,
    ``parsing time "V": extra text: "REST"``.
    """
    fields = _Fields()
    rest = value
    chunks = _chunks(layout)
    for index, (literal, element) in enumerate(chunks):
        try:
            rest = _skip(rest, literal)
        except _Bad as failure:
            raise _cannot_parse(layout, value, str(failure.args[0]), literal) from None
        if not element:
            if rest:
                raise ValueError(f"parsing time {time_quote(value)}: extra text: {time_quote(rest)}")
            break
        next_element = chunks[index + 1][1] if index + 1 < len(chunks) else ""
        try:
            rest = fields.read(element, rest, next_element)
        except _Bad:
            raise _cannot_parse(layout, value, rest, element) from None
        except _OutOfRange as problem:
            raise ValueError(f"parsing time {time_quote(value)}: {problem.args[0]} out of range") from None
    unsettled = fields.settle_date()
    if unsettled:
        raise ValueError(f"parsing time {time_quote(value)}: {unsettled}")
    return fields.to_time()


def _skip(value: str, literal: str) -> str:
    """Go's ``skip``: `value` after the literal; a space in the literal matches any run of spaces."""
    while literal:
        if literal[0] == " ":
            if value and value[0] != " ":
                raise _Bad(value)
            literal = literal.lstrip(" ")
            value = value.lstrip(" ")
            continue
        if not value or value[0] != literal[0]:
            raise _Bad(value)
        literal, value = literal[1:], value[1:]
    return value


def _cannot_parse(layout: str, value: str, rest: str, element: str) -> ValueError:
    quoted_value, quoted_layout, quoted_rest, quoted_element = map(time_quote, (value, layout, rest, element))
    return ValueError(f"parsing time {quoted_value} as {quoted_layout}: cannot parse {quoted_rest} as {quoted_element}")
