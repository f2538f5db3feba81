"""Kyverno's time functions, through the expression language, beyond the shared vectors."""

from __future__ import annotations

import re
import time

import pytest
from support import fails_with, run

from assertree import jp


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        # time_add keeps the offset and drops the fraction
        ("time_add('2023-03-12T01:30:00-08:00', '1h')", "2023-03-12T02:30:00-08:00"),  # fixed offset: no DST jump
        ("time_add('2023-01-01T00:00:00.5Z', '499ms')", "2023-01-01T00:00:00Z"),
        ("time_add('9999-12-31T23:59:59Z', '1s')", "10000-01-01T00:00:00Z"),
        ("time_add('0000-01-01T00:00:00Z', '-1s')", "-0001-12-31T23:59:59Z"),
        # time_utc
        ("time_utc('2023-01-01T00:30:00+05:30')", "2022-12-31T19:00:00Z"),
        ("time_utc('0000-01-01T00:00:00+01:00')", "-0001-12-31T23:00:00Z"),
        # time_diff: Go durations, saturated
        ("time_diff('2023-01-01T00:00:00Z', '2023-01-01T00:00:00.000001Z')", "1\u00b5s"),
        ("time_diff('2023-01-01T00:00:00Z', '2023-01-01T00:01:40Z')", "1m40s"),
        ("time_diff('9999-01-01T00:00:00Z', '0001-01-01T00:00:00Z')", "-2562047h47m16.854775808s"),
        # time_since with layouts
        ("time_since('Jan 2 2006', 'Jan 1 2023', 'Jan 2 2023')", "24h0m0s"),
        ("time_since('15:04 -0700', '10:00 +0100', '10:00 +0000')", "1h0m0s"),
        # comparisons use the instant
        ("time_before('2023-01-01T00:00:00+01:00', '2023-01-01T00:00:00Z')", True),
        ("time_after('2023-01-01T00:00:00.000000001Z', '2023-01-01T00:00:00Z')", True),
        ("time_between('2023-01-01T00:30:00+01:00', '2022-12-31T23:00:00Z', '2023-01-01T00:00:00Z')", True),
        ("time_between('2023-01-01T00:00:00Z', '2022-12-31T23:00:00Z', '2023-01-01T00:00:00Z')", False),
        # time_truncate on the absolute time line, in the time's offset
        ("time_truncate('2023-02-02T15:04:05.999Z', '1s')", "2023-02-02T15:04:05Z"),
        ("time_truncate('2023-02-02T15:04:05+05:45', '1h')", "2023-02-02T14:45:00+05:45"),
        ("time_truncate('2023-02-02T15:04:05Z', '168h')", "2023-01-30T00:00:00Z"),  # weeks start on Mondays
        # time_to_cron in the time's own offset
        ("time_to_cron('2023-12-31T23:05:00-01:00')", "5 23 31 12 0"),
        ("time_to_cron('2024-02-29T00:00:00Z')", "0 0 29 2 4"),
        # time_parse
        ("time_parse('2006-01-02T15:04:05.000Z07:00', '2023-02-02T15:04:05.123Z')", "2023-02-02T15:04:05Z"),
        ("time_parse('Mon Jan _2 15:04:05 2006', 'Thu Feb  2 15:04:05 2023')", "2023-02-02T15:04:05Z"),
        ("time_parse('1', '-1')", "1969-12-31T23:59:59Z"),  # an integer layout means Unix seconds
        ("time_parse('+0', '0')", "1970-01-01T00:00:00Z"),
        ("time_parse('2006', '2023')", "1970-01-01T00:33:43Z"),  # so a year-only layout is Unix seconds too
    ],
)
def test_results(expression, expected):
    assert run(expression) == expected


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        (
            "time_add('2023-01-01', '1h')",
            'parsing time "2023-01-01" as "2006-01-02T15:04:05Z07:00": cannot parse "" as "T"',
        ),
        ("time_add('2023-01-01T00:00:00Z', '1d')", 'time: unknown unit "d" in duration "1d"'),
        ("time_truncate('2023-01-01T00:00:00Z', '')", 'time: invalid duration ""'),
        ("time_utc('2023-02-30T00:00:00Z')", 'parsing time "2023-02-30T00:00:00Z": day out of range'),
        (
            "time_since('2006-01-02', '2023-01-01', '2023-1-1')",
            'parsing time "2023-1-1" as "2006-01-02": cannot parse "1-1" as "01"',
        ),
        ("time_diff('x', 'y')", 'parsing time "x" as "2006-01-02T15:04:05Z07:00": cannot parse "x" as "2006"'),
        ("time_parse('2006-01', '2023-01 ')", 'parsing time "2023-01 ": extra text: " "'),
        ("time_parse('1702691171', 'yesterday')", 'strconv.ParseInt: parsing "yesterday": invalid syntax'),
        (
            "time_parse('0', '9223372036854775808')",
            'strconv.ParseInt: parsing "9223372036854775808": value out of range',
        ),
    ],
)
def test_errors_are_gos(expression, message):
    fails_with(expression, message)


def test_an_argument_of_the_wrong_type_is_rejected_before_parsing():
    with pytest.raises(jp.JMESPathError, match="must be string"):
        run("time_to_cron(`1`)")


def test_time_now_takes_any_arguments():
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(Z|[+-]\d\d:\d\d)", run("time_now(`null`, 'x')"))
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", run("time_now_utc('ignored', `1`)"))


def test_time_now_agrees_with_the_clock():
    before = time.time()
    now = run("time_diff('1970-01-01T00:00:00Z', time_now_utc())")
    after = time.time()
    hours, minutes, seconds = re.fullmatch(r"(\d+)h(\d+)m(\d+)s", now).groups()
    assert int(before) <= int(hours) * 3600 + int(minutes) * 60 + int(seconds) <= after


def test_time_since_an_empty_end_means_now():
    elapsed = run("time_since('', time_now_utc(), '')")
    assert re.fullmatch(r"\d+(\.\d+)?(ns|\u00b5s|ms|s)", elapsed), elapsed
