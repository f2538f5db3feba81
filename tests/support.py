"""Helpers for tests that are not fixtures: comparing JSON the way the suites ask."""

from __future__ import annotations

import math
from typing import Any


def json_equal(actual: Any, expected: Any) -> bool:
    """JSON equality that keeps booleans apart from numbers and compares numbers by value.

    Written independently of `assertree.jp.values.equal`, which is under test.
    """
    if isinstance(expected, bool) or isinstance(actual, bool):
        return type(actual) is type(expected) and actual == expected
    if isinstance(expected, (int, float)) and isinstance(actual, (int, float)):
        if isinstance(expected, float) and isinstance(actual, float) and math.isnan(expected):
            return math.isnan(actual)
        return actual == expected
    if isinstance(expected, list):
        return isinstance(actual, list) and len(actual) == len(expected) and all(
            json_equal(a, e) for a, e in zip(actual, expected)
        )
    if isinstance(expected, dict):
        return isinstance(actual, dict) and actual.keys() == expected.keys() and all(
            json_equal(actual[k], v) for k, v in expected.items()
        )
    return type(actual) is type(expected) and actual == expected
