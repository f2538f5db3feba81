"""Go durations: parsing and printing exactly as time.ParseDuration and Duration.String do."""

from __future__ import annotations

import pytest

from assertree.jp.functions.duration import (
    HOUR,
    MAX_DURATION,
    MICROSECOND,
    MILLISECOND,
    MIN_DURATION,
    MINUTE,
    SECOND,
    duration_seconds,
    format_duration,
    parse_duration,
)


@pytest.mark.parametrize(
    ("text", "nanoseconds"),
    [
        ("0", 0),
        ("-0", 0),
        ("+0", 0),
        ("0s", 0),
        ("1ns", 1),
        ("1us", MICROSECOND),
        ("1\u00b5s", MICROSECOND),  # micro sign
        ("1\u03bcs", MICROSECOND),  # Greek mu
        ("1ms", MILLISECOND),
        ("1s", SECOND),
        ("1m", MINUTE),
        ("1h", HOUR),
        ("1h30m", 90 * MINUTE),
        ("1.5h", 90 * MINUTE),
        ("-1m30s", -90 * SECOND),
        ("+5s", 5 * SECOND),
        (".5s", 500 * MILLISECOND),
        ("1.s", SECOND),
        ("1.001us", 1001),
        ("2h45m3.5s", 2 * HOUR + 45 * MINUTE + 3500 * MILLISECOND),
        ("1s1s", 2 * SECOND),
        ("007s", 7 * SECOND),
        ("0.000000001s", 1),
        ("0.0000000001s", 0),  # below a nanosecond: truncated
        ("1.0000000000000000000000001s", SECOND),  # long fractions stop gaining precision
        ("9223372036854775807ns", MAX_DURATION),
        ("-9223372036854775808ns", MIN_DURATION),
        ("2562047h47m16.854775807s", MAX_DURATION),
    ],
)
def test_parse(text, nanoseconds):
    assert parse_duration(text) == nanoseconds


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", 'time: invalid duration ""'),
        ("-", 'time: invalid duration "-"'),
        ("1", 'time: missing unit in duration "1"'),
        ("1.5", 'time: missing unit in duration "1.5"'),
        ("1d", 'time: unknown unit "d" in duration "1d"'),
        ("1w", 'time: unknown unit "w" in duration "1w"'),
        ("1H", 'time: unknown unit "H" in duration "1H"'),
        ("1S", 'time: unknown unit "S" in duration "1S"'),
        ("1h 30m", 'time: unknown unit "h " in duration "1h 30m"'),
        (" 1s", 'time: invalid duration " 1s"'),
        ("h", 'time: invalid duration "h"'),
        (".s", 'time: invalid duration ".s"'),
        ("-.s", 'time: invalid duration "-.s"'),
        ("1e3s", 'time: unknown unit "e" in duration "1e3s"'),
        ("1\u00b5", 'time: unknown unit "\\xc2\\xb5" in duration "1\\xc2\\xb5"'),  # Go quotes non-ASCII as bytes
        ('1"', 'time: unknown unit "\\"" in duration "1\\""'),
        ("9223372036854775808ns", 'time: invalid duration "9223372036854775808ns"'),
        ("2562047h47m16.854775808s", 'time: invalid duration "2562047h47m16.854775808s"'),
        ("2562048h", 'time: invalid duration "2562048h"'),
        ("99999999999999999999s", 'time: invalid duration "99999999999999999999s"'),
    ],
)
def test_parse_errors_use_go_text(text, message):
    with pytest.raises(ValueError) as caught:
        parse_duration(text)
    assert str(caught.value) == message


@pytest.mark.parametrize(
    ("nanoseconds", "text"),
    [
        (0, "0s"),
        (1, "1ns"),
        (999, "999ns"),
        (MICROSECOND, "1\u00b5s"),
        (1001, "1.001\u00b5s"),
        (1500 * MICROSECOND, "1.5ms"),
        (333_333_333, "333.333333ms"),
        (SECOND, "1s"),
        (1500 * MILLISECOND, "1.5s"),
        (MINUTE, "1m0s"),
        (100 * SECOND, "1m40s"),
        (HOUR, "1h0m0s"),
        (2 * HOUR, "2h0m0s"),
        (90 * MINUTE, "1h30m0s"),
        (100 * HOUR, "100h0m0s"),
        (180 * HOUR + 10 * MINUTE + 11 * SECOND, "180h10m11s"),
        (8 * MINUTE + 34_285_714_285, "8m34.285714285s"),
        (-90 * SECOND, "-1m30s"),
        (-1, "-1ns"),
        (-1500 * MICROSECOND, "-1.5ms"),
        (MAX_DURATION, "2562047h47m16.854775807s"),
        (MIN_DURATION, "-2562047h47m16.854775808s"),
    ],
)
def test_format(nanoseconds, text):
    assert format_duration(nanoseconds) == text


def test_micro_sign_is_u00b5():
    assert format_duration(1001).encode() == b"1.001\xc2\xb5s"


@pytest.mark.parametrize(
    "nanoseconds", [1, 1001, 1_500_000, SECOND + 1, 90 * MINUTE, -HOUR - 1, MAX_DURATION, MIN_DURATION]
)
def test_printed_durations_parse_back(nanoseconds):
    assert parse_duration(format_duration(nanoseconds)) == nanoseconds


@pytest.mark.parametrize("nanoseconds", [MAX_DURATION + 1, MIN_DURATION - 1])
def test_format_refuses_values_beyond_64_bits(nanoseconds):
    with pytest.raises(ValueError):
        format_duration(nanoseconds)


@pytest.mark.parametrize(
    ("nanoseconds", "seconds"),
    [(0, 0.0), (1500 * MILLISECOND, 1.5), (-1500 * MILLISECOND, -1.5), (1, 1e-9), (HOUR, 3600.0)],
)
def test_seconds(nanoseconds, seconds):
    assert duration_seconds(nanoseconds) == seconds
