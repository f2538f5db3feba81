"""Cron schedules as robfig/cron's ParseStandard reads them (cleanup policies' ``schedule``)."""

from __future__ import annotations

import pytest

from assertree.languages.kyverno.cron import schedule_problem


@pytest.mark.parametrize("spec", ["* * * * *", "*/5 * * * *", "0 3 * JAN-mar mon-FRI", "5/15 * * * *", "? ? * * *",
                                  "0,30 8-18 1-31/2 * 0-6", "@hourly", "@every 1h30m", "CRON_TZ=UTC 0 3 * * *"])
def test_schedules_kyverno_accepts(spec):
    assert schedule_problem(spec) is None


@pytest.mark.parametrize(("spec", "problem"), [
    ("", "empty spec string"),
    ("0 0 * * * *", "expected exactly 5 fields, found 6: 0 0 * * * *"),
    ("60 * * * *", "end of range (60) above maximum (59): 60"),
    ("0 0 0 * *", "beginning of range (0) below minimum (1): 0"),
    ("0 0 * * 7", "end of range (7) above maximum (6): 7"),
    ("5-1 * * * *", "beginning of range (5) beyond end of range (1): 5-1"),
    ("*/0 * * * *", "step of range should be a positive number: */0"),
    ("1-2-3 * * * *", "too many hyphens: 1-2-3"),
    ("1/2/3 * * * *", "too many slashes: 1/2/3"),
    ("x * * * *", 'failed to parse int from x: strconv.Atoi: parsing "x": invalid syntax'),
    ("@fortnightly", "unrecognized descriptor: @fortnightly"),
    ("@every soon", 'failed to parse duration @every soon: time: invalid duration "soon"'),
])
def test_schedules_kyverno_refuses_and_why(spec, problem):
    assert schedule_problem(spec) == problem
