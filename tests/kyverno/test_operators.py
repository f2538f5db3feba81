"""The value operators of Kyverno pattern leaves (pkg/engine/pattern): types, |, &, ranges, durations, quantities."""

from __future__ import annotations

import math

import pytest

from assertree.languages.kyverno.operators import (
    Operator,
    compare_quantities,
    format_float_e,
    operator_of,
    parse_float,
    parse_int,
    parse_quantity,
    sprint,
    validate_value,
)

# (value, pattern, matches) -- many taken from Kyverno's pattern tests.
CASES = [
    # bool patterns want a bool
    (True, True, True),
    (False, True, False),
    ("true", True, False),
    # int patterns: ints, whole floats, and strings Go's ParseInt reads
    (10, 10, True),
    (8, 10, False),
    (7.0, 7, True),
    (7.5, 7, False),
    ("7", 7, True),
    ("+7", 7, True),
    ("7.0", 7, False),
    (" 7", 7, False),
    (True, 1, False),
    (None, 0, False),
    # float patterns: strings Go's ParseFloat reads
    (7.9914, 7.9914, True),
    (7.9914, 7.99141, False),
    (7, 7.0, True),
    (7, 7.5, False),
    ("7.0", 7.0, True),
    ("7e0", 7.0, True),
    ("1_0", 10.0, False),
    # null accepts zero values only
    ("", None, True),
    ("value", None, False),
    (0, None, True),
    (0.0, None, True),
    (False, None, True),
    (None, None, True),
    ({}, None, False),
    ([], None, False),
    # map patterns in leaf position only want a map; list patterns never match a leaf
    ({"a": 1}, {"b": 2}, True),
    ("a", {}, False),
    (None, [], False),
    # strings: equality, wildcards, | and &
    ("nginx", "nginx", True),
    ("nginx:1.25", "nginx:*", True),
    ("nginx", "!nginx", False),
    ("busybox", "!nginx", True),
    ("10.100.11.54", "192.168.88.1 | 10.100.11.*", True),
    ("10", ">1 & <20", True),
    ("32", ">1 & <20 | >31 & <33", True),
    ("21", ">1 & <20 | >31 & <33", False),
    ("a|b", "a|b", True),  # the whole pattern is tried literally first
    # numbers against numeric operators (quantities)
    (4, ">= 3", True),
    (7.00001, ">7.000001", True),
    (7.00001, "!7", True),
    (7.0, "7", True),
    (6.000000001, "<6", False),  # Go prints the float with %f: 6.000000
    (1024, "1024", True),
    ("2048", "1024", False),
    ("1024Mi", "1Gi", True),
    ("0.2", "200m", True),
    ("1Gi", ">1000Mi", True),
    ("1G", "<1Gi", True),
    ("500m", ">=0.5", True),
    ("500m", ">=0.6", False),
    ("1", ">=500m", True),
    ("0.5", "<=.5", True),
    ("0.2", "!.5", True),
    ("gii", "1024Gi", False),
    ("1024Gi", "", False),
    # durations
    ("12s", "12s", True),
    ("12s", "!15s", True),
    ("12s", "<15s", True),
    ("15s", "<=12s", False),
    ("1h", ">30m", True),
    ("90m", "1h30m", True),
    ("1h", "<60", False),  # 60 is not a duration nor is 1h a quantity: text comparison, which < refuses
    (None, "0", True),  # a missing value reads as 0
    (None, ">0", False),
    # ranges
    (0, "0-2", True),
    (2, "0-2", True),
    (3, "0-2", False),
    (15, "10!-20", False),
    (25, "10!-20", True),
    (0, "0.00001-2.00001", False),
    (2.0001, "0.00001-2.00001", False),
    (2.0001, "0.00001!-2.00001", True),
    (2, "2-2", True),
    (2, "2!-2", False),
    ("256Mi", "128Mi-512Mi", True),
    ("1024Mi", "128Mi-512Mi", False),
    ("64Mi", "128Mi!-512Mi", True),
    (-9, "-10-8", True),
    (9, "-10--8", False),
    (9, "-10!--8", True),
    ("-9Mi", "-10Mi-8Mi", True),
    (0, "-10-+8", True),
    ("1025Mi", "+0Mi!-+1024Mi", True),
    # text comparison of other types
    (True, "true", True),
    (False, "!true", True),
    (1.5, "1.5E+00", True),  # Go prints floats as 'E' for text comparison
    (1.5, "*", True),
    ({"a": 1}, "*", False),
    (None, "*", False),
    (None, "", False),
    ([1], "!x", False),
]


@pytest.mark.parametrize(("value", "pattern", "matches"), CASES)
def test_validate_value(value: object, pattern: object, matches: bool) -> None:
    assert validate_value(value, pattern) is matches


@pytest.mark.parametrize(
    ("pattern", "operator"),
    [
        ("f", Operator.EQUAL),
        ("", Operator.EQUAL),
        (">", Operator.EQUAL),
        (">=1", Operator.MORE_EQUAL),
        ("<=1", Operator.LESS_EQUAL),
        (">1", Operator.MORE),
        ("<1", Operator.LESS),
        ("!1", Operator.NOT_EQUAL),
        ("!-1", Operator.NOT_EQUAL),
        ("1-5", Operator.IN_RANGE),
        ("1Mi!-5Mi", Operator.NOT_IN_RANGE),
        ("-1--5", Operator.IN_RANGE),
        ("a-b", Operator.EQUAL),
        ("1-5-7", Operator.EQUAL),
        ("1٣-5", Operator.EQUAL),  # Go's \d is ASCII only
    ],
)
def test_operator_of(pattern: str, operator: Operator) -> None:
    assert operator_of(pattern) is operator


def test_parse_float_follows_go() -> None:
    assert parse_float("1.5") == 1.5
    assert parse_float(".5") == 0.5
    assert parse_float("5.") == 5.0
    assert parse_float("-1e3") == -1000.0
    assert parse_float("0x1p-2") == 0.25
    assert parse_float("Inf") == math.inf and parse_float("-infinity") == -math.inf
    assert math.isnan(parse_float("NaN"))
    for bad in ("", " 1", "1 ", "1_000", "1e", "e5", "1e400", "0x1", "abc", "١"):
        assert parse_float(bad) is None, bad


def test_parse_int_follows_go() -> None:
    assert parse_int("-42") == -42 and parse_int("+7") == 7
    assert parse_int("9223372036854775807") == 2**63 - 1
    for bad in ("9223372036854775808", "1.0", "", "0x10", "1_0"):
        assert parse_int(bad) is None, bad


def test_format_float_e() -> None:
    assert format_float_e(1.5) == "1.5E+00"
    assert format_float_e(1234.0) == "1.234E+03"
    assert format_float_e(0.0001) == "1E-04"
    assert format_float_e(0.0) == "0E+00"
    assert format_float_e(-2.5e100) == "-2.5E+100"
    assert format_float_e(math.inf) == "+Inf"


def test_compare_quantities_is_exact_across_formats_and_scales() -> None:
    def cmp(a: str, b: str) -> int:
        left, right = parse_quantity(a), parse_quantity(b)
        assert left is not None and right is not None
        return compare_quantities(left, right)

    assert cmp("1Gi", "1024Mi") == 0
    assert cmp("1G", "1Gi") == -1
    assert cmp("-1", "-2") == 1
    assert cmp("0", "-1m") == 1
    assert cmp("1e9999", "1") == 1
    assert cmp("1n", "0") == 1
    assert parse_quantity("abc") is None


def test_sprint_prints_like_go() -> None:
    assert sprint(None) == "<nil>"
    assert sprint([1, "a", True, 2.5, 1e21]) == "[1 a true 2.5 1e+21]"
    assert sprint({"b": 1, "a": [None]}) == "map[a:[<nil>] b:1]"
