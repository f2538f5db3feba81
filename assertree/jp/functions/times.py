"""Kyverno's time functions: time_now, time_parse, time_add, time_diff, time_truncate and the rest.

Times are strings. Arguments without a layout are read with Go's RFC 3339
layout (upper-case ``T`` and ``Z``, ``±HH:MM`` offsets, any fraction) and
results are printed with it: no fraction, the time's own offset, ``Z`` for
zero. Each time keeps the offset it was written with, so ``time_add``,
``time_truncate`` and ``time_to_cron`` answer in that offset, while
comparisons and differences use the instant. Durations are Go durations
(`duration`); parsing and printing are Go's (`golayout`), and so are the
error messages, which Kyverno passes on unwrapped.

Like Kyverno (and unlike kyverno-json's older copy), a `time_parse` layout
that is a base-10 integer means the value is Unix seconds; a year-only
layout such as ``'2006'`` is therefore read as seconds too.
"""

from __future__ import annotations

import json
from typing import Any

from assertree.jp.errors import FunctionError
from assertree.jp.functions.duration import format_duration, parse_duration
from assertree.jp.functions.golayout import RFC3339, GoTime, parse
from assertree.jp.registry import function

_INT64_MIN = -(1 << 63)
_INT64_MAX = (1 << 63) - 1


def _time(text: str, layout: str = RFC3339) -> GoTime:
    try:
        return parse(layout, text)
    except ValueError as error:
        raise FunctionError(str(error)) from None


def _duration(text: str) -> int:
    try:
        return parse_duration(text)
    except ValueError as error:
        raise FunctionError(str(error)) from None


@function("time_now(*ignored: any) -> string")
def time_now(*ignored: Any) -> str:
    """The current time in the local zone, as RFC 3339 (arguments are ignored, as in Kyverno)."""
    return GoTime.now().format()


@function("time_now_utc(*ignored: any) -> string")
def time_now_utc(*ignored: Any) -> str:
    """The current time in UTC, as RFC 3339 (arguments are ignored, as in Kyverno)."""
    return GoTime.now().utc().format()


@function("time_since(layout: string, start: string, end: string) -> string")
def time_since(layout: str, start: str, end: str) -> str:
    """The Go duration from `start` to `end` (now when ''), both read with `layout` (RFC 3339 when '')."""
    layout = layout or RFC3339
    first = _time(start, layout)
    last = _time(end, layout) if end else GoTime.now()
    return format_duration(last.sub(first))


@function("time_add(time: string, duration: string) -> string")
def time_add(time: str, duration: str) -> str:
    """`time` plus a Go duration, in `time`'s own offset."""
    start = _time(time)
    return start.add(_duration(duration)).format()


def _int64(text: str) -> int:
    """Go's ``strconv.ParseInt(text, 10, 64)``, raising FunctionError with Go's message."""
    digits = text[1:] if text[:1] in ("+", "-") else text
    if not (digits.isascii() and digits.isdigit()):
        raise FunctionError(f"strconv.ParseInt: parsing {json.dumps(text, ensure_ascii=False)}: invalid syntax")
    number = int(text)
    if not _INT64_MIN <= number <= _INT64_MAX:
        raise FunctionError(f"strconv.ParseInt: parsing {json.dumps(text, ensure_ascii=False)}: value out of range")
    return number


@function("time_parse(layout: string, value: string) -> string")
def time_parse(layout: str, value: str) -> str:
    """`value` read with a Go layout (or as Unix seconds when the layout is an integer), as RFC 3339."""
    try:
        _int64(layout)
    except FunctionError:
        return _time(value, layout).format()
    return GoTime.from_unix(_int64(value)).format()


@function("time_utc(time: string) -> string")
def time_utc(time: str) -> str:
    """`time` converted to UTC, as RFC 3339."""
    return _time(time).utc().format()


@function("time_diff(start: string, end: string) -> string")
def time_diff(start: str, end: str) -> str:
    """The Go duration from `start` to `end` (negative when `end` is earlier)."""
    first = _time(start)
    return format_duration(_time(end).sub(first))


@function("time_before(a: string, b: string) -> boolean")
def time_before(a: str, b: str) -> bool:
    """Whether instant `a` is strictly before instant `b`."""
    first = _time(a)
    return first.unix_nanos < _time(b).unix_nanos


@function("time_after(a: string, b: string) -> boolean")
def time_after(a: str, b: str) -> bool:
    """Whether instant `a` is strictly after instant `b`."""
    first = _time(a)
    return first.unix_nanos > _time(b).unix_nanos


@function("time_between(time: string, start: string, end: string) -> boolean")
def time_between(time: str, start: str, end: str) -> bool:
    """Whether `time` is strictly between `start` and `end` (both ends excluded)."""
    instant = _time(time).unix_nanos
    low = _time(start).unix_nanos
    return low < instant < _time(end).unix_nanos


@function("time_truncate(time: string, duration: string) -> string")
def time_truncate(time: str, duration: str) -> str:
    """`time` rounded down to a multiple of the duration since 0001-01-01 UTC, shown in `time`'s offset."""
    start = _time(time)
    return start.truncate(_duration(duration)).format()


@function("time_to_cron(time: string) -> string")
def time_to_cron(time: str) -> str:
    """A cron schedule ``minute hour day month weekday`` for `time`, in its own offset."""
    fields = _time(time).civil()
    return f"{fields.minute} {fields.hour} {fields.day} {fields.month} {fields.weekday}"
