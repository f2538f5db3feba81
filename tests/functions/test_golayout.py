"""Go time layouts: parsing and printing as time.Parse and Time.Format do."""

from __future__ import annotations

import datetime
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from assertree.jp.functions.golayout import RFC3339, GoTime, parse

NANO_LAYOUT = "2006-01-02T15:04:05.999999999Z07:00"
# 2023-11-08T21:07:06.123456789-07:00, a Wednesday, day 312 of the year
SAMPLE = GoTime(1_699_502_826_123_456_789, -7 * 3600, "")


@pytest.fixture
def local_zone(monkeypatch):
    """Run with the process's local zone set to a named IANA zone."""

    def use(name: str) -> None:
        monkeypatch.setenv("TZ", name)
        time.tzset()

    yield use
    monkeypatch.undo()
    time.tzset()


def rfc3339(layout: str, value: str) -> str:
    return parse(layout, value).format(RFC3339)


# -- parsing ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("layout", "value", "expected"),
    [
        # RFC 3339 and its leniencies
        (RFC3339, "2023-02-02T15:04:05Z", "2023-02-02T15:04:05Z"),
        (RFC3339, "2023-02-02T15:04:05.5+05:30", "2023-02-02T15:04:05+05:30"),  # fraction the layout lacks
        (RFC3339, "2023-02-02T15:04:05-00:00", "2023-02-02T15:04:05Z"),
        (RFC3339, "2023-02-02T5:04:05Z", "2023-02-02T05:04:05Z"),  # `15` reads one digit too
        (RFC3339, "0000-01-01T00:00:00Z", "0000-01-01T00:00:00Z"),
        (RFC3339, "2024-02-29T00:00:00Z", "2024-02-29T00:00:00Z"),
        # months, days, names
        ("Jan 2 2006", "FEB 3 2023", "2023-02-03T00:00:00Z"),
        ("January 2, 2006", "september 30, 2023", "2023-09-30T00:00:00Z"),
        ("Monday, 02-Jan-06", "Sunday, 03-Feb-23", "2023-02-03T00:00:00Z"),  # weekday not checked
        ("1/2/2006", "12/31/1999", "1999-12-31T00:00:00Z"),
        ("Jan _2", "Feb  3", "0000-02-03T00:00:00Z"),
        ("Janet 2006", "Janet 2020", "2020-01-01T00:00:00Z"),  # `Jan` before a lower-case letter is literal
        ("_2006", "_0012", "0012-01-01T00:00:00Z"),  # `_2006` is `_` then the year
        ("06-01-02", "68-01-02", "2068-01-02T00:00:00Z"),
        ("06-01-02", "69-01-02", "1969-01-02T00:00:00Z"),
        # days of the year
        ("2006 002", "2024 060", "2024-02-29T00:00:00Z"),
        ("2006 002", "2023 060", "2023-03-01T00:00:00Z"),
        ("2006 __2", "2023   5", "2023-01-05T00:00:00Z"),
        ("2006 002 Jan", "2023 032 Feb", "2023-02-01T00:00:00Z"),
        # hours
        ("3:04PM", "1:30AM", "0000-01-01T01:30:00Z"),
        ("3:04PM", "12:30AM", "0000-01-01T00:30:00Z"),
        ("3:04PM", "12:30PM", "0000-01-01T12:30:00Z"),
        ("03:04 pm", "11:59 pm", "0000-01-01T23:59:00Z"),
        # fractions
        ("15:04:05.000", "10:11:12.123", "0000-01-01T10:11:12Z"),
        ("15:04:05.999", "10:11:12", "0000-01-01T10:11:12Z"),
        ("15:04:05,999", "10:11:12,5", "0000-01-01T10:11:12Z"),
        # zones
        ("2006-01-02 15:04:05 -0700", "2023-02-02 15:04:05 +0530", "2023-02-02T15:04:05+05:30"),
        ("15:04 -07", "10:00 -03", "0000-01-01T10:00:00-03:00"),
        ("15:04 Z0700", "10:00 Z", "0000-01-01T10:00:00Z"),
        ("15:04 Z07:00:00", "10:00 +01:02:03", "0000-01-01T10:00:00+01:02"),  # RFC 3339 drops offset seconds
        ("15:04 -070000", "10:00 -010203", "0000-01-01T10:00:00-01:02"),
        ("15:04 MST", "10:00 UTC", "0000-01-01T10:00:00Z"),
        ("15:04 MST", "10:00 GMT+3", "0000-01-01T10:00:00+03:00"),
        ("15:04 MST", "10:00 XYZT", "0000-01-01T10:00:00Z"),
        # white space and empty input
        ("2006-01-02 15:04", "2020-01-02   10:04", "2020-01-02T10:04:00Z"),
        ("", "", "0000-01-01T00:00:00Z"),
    ],
)
def test_parse(layout, value, expected):
    assert rfc3339(layout, value) == expected


def test_now_is_in_the_local_zone(local_zone):
    local_zone("Asia/Kolkata")
    now = GoTime.now()
    assert (now.offset, now.zone) == (5 * 3600 + 1800, "IST")
    assert abs(now.unix_nanos - time.time_ns()) < 10**9
    assert now.utc().format("Z07:00 MST") == "Z UTC"


def test_unknown_zone_abbreviation_means_offset_zero(local_zone):
    local_zone("UTC")
    assert rfc3339("02 Jan 06 15:04 MST", "02 Feb 23 15:04 PST") == "2023-02-02T15:04:00Z"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("02 Feb 23 15:04 PST", "2023-02-02T15:04:00-08:00"),
        ("02 Jul 23 15:04 PDT", "2023-07-02T15:04:00-07:00"),
        ("02 Jul 23 15:04 PST", "2023-07-02T15:04:00-08:00"),  # the zone's standard offset, out of season
        ("02 Jul 23 15:04 CET", "2023-07-02T15:04:00Z"),  # not the local zone's
    ],
)
def test_local_zone_abbreviations(local_zone, value, expected):
    local_zone("America/Los_Angeles")
    assert rfc3339("02 Jan 06 15:04 MST", value) == expected


@pytest.mark.parametrize(
    ("layout", "value", "message"),
    [
        (RFC3339, "2023-01-01", 'parsing time "2023-01-01" as "2006-01-02T15:04:05Z07:00": cannot parse "" as "T"'),
        (
            RFC3339,
            "2023-01-01t00:00:00z",
            'parsing time "2023-01-01t00:00:00z" as "2006-01-02T15:04:05Z07:00": cannot parse "t00:00:00z" as "T"',
        ),
        (
            RFC3339,
            "2023-01-01T00:00:00+0100",
            'parsing time "2023-01-01T00:00:00+0100" as "2006-01-02T15:04:05Z07:00": cannot parse "+0100" as "Z07:00"',
        ),
        (RFC3339, "2023-02-30T00:00:00Z", 'parsing time "2023-02-30T00:00:00Z": day out of range'),
        (RFC3339, "2023-02-29T00:00:00Z", 'parsing time "2023-02-29T00:00:00Z": day out of range'),
        (RFC3339, "2023-13-01T00:00:00Z", 'parsing time "2023-13-01T00:00:00Z": month out of range'),
        (RFC3339, "2023-01-01T24:00:00Z", 'parsing time "2023-01-01T24:00:00Z": hour out of range'),
        (RFC3339, "2023-01-01T00:60:00Z", 'parsing time "2023-01-01T00:60:00Z": minute out of range'),
        (RFC3339, "2016-12-31T23:59:60Z", 'parsing time "2016-12-31T23:59:60Z": second out of range'),
        (
            RFC3339,
            "2023-01-01T00:00:00+25:00",
            'parsing time "2023-01-01T00:00:00+25:00": time zone offset hour out of range',
        ),
        ("2006-01-02", "2023-2-2", 'parsing time "2023-2-2" as "2006-01-02": cannot parse "2-2" as "01"'),
        ("2006-01-02", "2023-02-02 extra", 'parsing time "2023-02-02 extra": extra text: " extra"'),
        ("1702691171", "1702691171", 'parsing time "1702691171": month out of range'),
        (
            "Mon, 02 Jan 2006",
            "Xyz, 03 Feb 2023",
            'parsing time "Xyz, 03 Feb 2023" as "Mon, 02 Jan 2006": cannot parse "Xyz, 03 Feb 2023" as "Mon"',
        ),
        ("15:04:05.000", "10:11:12.12", 'parsing time "10:11:12.12" as "15:04:05.000": cannot parse ".12" as ".000"'),
        ("3PM", "3XM", 'parsing time "3XM" as "3PM": cannot parse "XM" as "PM"'),
        ("3PM", "13PM", 'parsing time "13PM": hour out of range'),
        ("2006 002", "2023 366", 'parsing time "2023 366": day-of-year out of range'),
        ("2006 002 Jan", "2023 032 Jan", 'parsing time "2023 032 Jan": day-of-year does not match month'),
        ("2006 002 _2", "2023 032  2", 'parsing time "2023 032  2": day-of-year does not match day'),
        ("15:04 MST", "10:00 pst", 'parsing time "10:00 pst" as "15:04 MST": cannot parse "pst" as "MST"'),
        (
            "15:04 -07:00",
            "10:00 07:00",
            'parsing time "10:00 07:00" as "15:04 -07:00": cannot parse "07:00" as "-07:00"',
        ),
        ("2006", "\u00e9", 'parsing time "\\xc3\\xa9" as "2006": cannot parse "\\xc3\\xa9" as "2006"'),
    ],
)
def test_parse_errors(layout, value, message):
    with pytest.raises(ValueError) as caught:
        parse(layout, value)
    assert str(caught.value) == message


# -- printing --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("layout", "expected"),
    [
        (RFC3339, "2023-11-08T21:07:06-07:00"),
        (NANO_LAYOUT, "2023-11-08T21:07:06.123456789-07:00"),
        ("January Jan 1 01 Monday Mon", "November Nov 11 11 Wednesday Wed"),
        ("2 _2 02 002 __2 06 2006", "8  8 08 312 312 23 2023"),
        ("15 3 03 4 04 5 05 PM pm", "21 9 09 7 07 6 06 PM pm"),
        (".000 ,999 .9 .000000000000", ".123 ,123 .1 .123456789"),
        ("Z07:00 Z0700 Z07 Z07:00:00 Z070000", "-07:00 -0700 -07 -07:00:00 -070000"),
        ("-07:00 -0700 -07", "-07:00 -0700 -07"),
        ("MST", "-0700"),  # no abbreviation known: the numeric offset
        ("Janet Month", "Janet Month"),  # literal text
    ],
)
def test_format(layout, expected):
    assert SAMPLE.format(layout) == expected


@pytest.mark.parametrize(
    ("when", "layout", "expected"),
    [
        (GoTime(0), RFC3339, "1970-01-01T00:00:00Z"),
        (GoTime(0), "Z07:00 -07:00 MST", "Z +00:00 UTC"),
        (GoTime(0, 3600 + 1800, "X"), "Z07:00 MST", "+01:30 X"),
        (GoTime(0, -30, ""), "Z07:00", "+00:00"),  # Go truncates the offset to minutes before the sign
        (GoTime(0), "3:04 PM.999", "12:00 AM"),  # no fraction: nothing, separator included
        (GoTime(12 * 3600 * 10**9), "3 03 pm", "12 12 pm"),
        (GoTime.from_unix(253_402_300_800), RFC3339, "10000-01-01T00:00:00Z"),
        (GoTime.from_unix(-62_198_755_200), "2006 06 Mon", "-0001 -01 Fri"),
    ],
)
def test_format_edges(when, layout, expected):
    assert when.format(layout) == expected


# -- arithmetic ------------------------------------------------------------------------------------


def test_truncate_counts_from_the_zero_time_on_the_absolute_time_line():
    start = parse(RFC3339, "2023-02-02T15:04:05-07:00")
    assert start.truncate(24 * 3600 * 10**9).format() == "2023-02-01T17:00:00-07:00"
    assert start.truncate(0) is start
    assert start.truncate(-1) is start
    year_zero = parse(RFC3339, "0000-06-01T10:30:00Z")  # before the zero time: still rounded down
    assert year_zero.truncate(3600 * 10**9).format() == "0000-06-01T10:00:00Z"


def test_sub_saturates():
    early, late = parse(RFC3339, "0001-01-01T00:00:00Z"), parse(RFC3339, "9999-01-01T00:00:00Z")
    assert late.sub(early) == (1 << 63) - 1
    assert early.sub(late) == -(1 << 63)


# -- properties ------------------------------------------------------------------------------------

# instants at least a day inside Python's datetime range, so any offset stays inside it
inner_instants = st.integers(min_value=-62_135_510_400 * 10**9, max_value=253_402_214_399 * 10**9)
offsets = st.integers(min_value=-23 * 60, max_value=23 * 60).map(lambda minutes: minutes * 60)


@given(inner_instants, offsets)
def test_rfc3339_with_nanoseconds_round_trips(nanos, offset):
    when = GoTime(nanos, offset, "")
    again = parse(NANO_LAYOUT, when.format(NANO_LAYOUT))
    assert (again.unix_nanos, again.offset) == (nanos, offset)


@given(inner_instants, offsets)
def test_calendar_agrees_with_python(nanos, offset):
    fields = GoTime(nanos, offset, "").civil()
    expected = datetime.datetime(1, 1, 1) + datetime.timedelta(seconds=nanos // 10**9 + 62_135_596_800 + offset)
    assert (fields.year, fields.month, fields.day, fields.hour, fields.minute, fields.second) == (
        expected.year,
        expected.month,
        expected.day,
        expected.hour,
        expected.minute,
        expected.second,
    )
    assert fields.weekday == expected.isoweekday() % 7
    assert fields.year_day == expected.timetuple().tm_yday
