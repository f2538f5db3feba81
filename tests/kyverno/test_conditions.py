"""Kyverno's condition operators and blocks (pkg/engine/variables/operator, pkg/engine/variables/evaluate.go)."""

from __future__ import annotations

from typing import Any

import pytest

from assertree.languages.kyverno.conditions import (
    OPERATORS,
    Condition,
    ConditionsResult,
    evaluate_condition,
    evaluate_conditions,
    evaluate_operator,
    is_known_operator,
)

# (operator, key, value, holds); many from Kyverno's operator tests.
CASES = [
    # Equals: same types, numbers against numeric strings, durations, quantities, value as wildcard
    ("Equals", "a", "a", True),
    ("Equals", "nginx:1.25", "nginx:*", True),
    ("Equals", "nginx:*", "nginx:1.25", False),  # only the value is a pattern
    ("Equals", 1, 1.0, True),
    ("Equals", 1, "1", True),
    ("Equals", 1, "1.0", True),  # top-level numbers are float64: ParseFloat
    ("Equals", 1.5, 1, False),
    ("Equals", "1", 1, False),  # a quantity key wants a string value, and no wildcard then
    ("Equals", "1Gi", "1024Mi", True),
    ("Equals", "1Gi", "abc", False),
    ("Equals", "1h", "60m", True),
    ("Equals", "1m", 60, True),  # a number against a duration is seconds
    ("Equals", "0", "0s", False),  # "0" is not taken as a duration, and "0s" is no quantity
    ("Equals", True, True, True),
    ("Equals", True, "true", False),
    ("Equals", None, None, False),
    ("Equals", {"a": [1, "x"]}, {"a": [1, "x"]}, True),
    ("Equals", {"a": 1}, {"a": 1.0}, False),  # reflect.DeepEqual tells int64 from float64 inside maps
    ("Equals", ["a"], "a", False),
    ("Equal", "a", "a", True),
    ("equals", "a", "a", True),
    # NotEquals: true wherever Kyverno cannot compare
    ("NotEquals", "a", "b", True),
    ("NotEquals", "a", "a*", False),
    ("NotEquals", "x.mycompany.com", "*.mycompany.com", False),
    ("NotEquals", "", "", False),
    ("NotEquals", "1", "", True),
    ("NotEquals", "1", "x", True),
    ("NotEquals", "1", "1.0", False),
    ("NotEquals", "a", 1, True),
    ("NotEquals", True, "true", True),
    ("NotEquals", 1, "x", True),
    ("NotEquals", 1, "1", False),
    ("NotEquals", 1.5, [1], True),
    ("NotEquals", ["a"], ["a"], False),
    ("NotEquals", ["a"], "a", True),
    ("NotEquals", None, "a", False),
    ("NotEqual", "a", "b", True),
    # AnyIn / AllIn / AnyNotIn / AllNotIn
    ("AnyIn", "kube-system", ["default", "kube-*"], True),
    ("AnyIn", "kube-*", ["kube-system"], True),  # wildcards both ways
    ("AnyIn", "kyverno", "kyverno", True),
    ("AnyIn", "b", '["a", "b"]', True),
    ("AnyIn", "b", '["a", 1]', False),
    ("AnyIn", "5", "1-10", True),
    ("AnyIn", "11", "1-10", False),
    ("AnyIn", 64, "64", True),
    ("AnyIn", 2.2, [1.1, 2.2, 3.3], True),
    ("AnyIn", True, ["true"], True),
    ("AnyIn", "a", 1, False),
    ("AnyIn", None, ["a"], False),
    ("AnyIn", ["kube-system", "default"], "kube-system", True),
    ("AnyIn", ["default", "kyverno"], "kube-*", False),
    ("AnyIn", [1, 2, 3], 2, True),
    ("AnyIn", [1.1, 2.2], 1.1, True),
    ("AnyIn", [True, False], True, True),
    ("AnyIn", ["default", "kyverno"], ["kube-*", "ky*"], True),
    ("AnyIn", [], ["a"], False),
    ("AnyIn", ["3", "20"], "1-10", True),
    ("AllIn", ["kube-system", "kube-public"], "kube-*", True),
    ("AllIn", ["kube-system", "default"], "kube-*", False),
    ("AllIn", ["a", "b"], ["a", "b", "c"], True),
    ("AllIn", [], ["a"], True),
    ("AllIn", [1, 2], 1, False),  # AllIn has no number case for the value
    ("AllIn", ["3", "20"], "1-10", False),
    ("AllIn", ["3", "5"], "1-10", True),
    ("AnyNotIn", "kube-system", ["default", "kube-*"], False),
    ("AnyNotIn", "kyverno", "default", True),
    ("AnyNotIn", 64, "64", False),
    ("AnyNotIn", ["kube-system", "default"], "kube-*", True),
    ("AnyNotIn", ["kube-system", "default"], "kube-system", True),
    ("AnyNotIn", ["a"], "a", False),
    ("AnyNotIn", [1, 2, 3], 4, True),
    ("AnyNotIn", [True], False, True),
    ("AnyNotIn", [], ["a"], False),
    ("AnyNotIn", ["3", "20"], "1-10", True),
    ("AnyNotIn", "a", 1, False),
    ("AllNotIn", "kyverno", "default", True),
    ("AllNotIn", "kube-system", ["default", "kube-*"], False),
    ("AllNotIn", ["default", "kyverno"], ["kube-*", "kube-system"], True),
    ("AllNotIn", ["default", "kyverno"], ["kube-*", "ky*"], False),
    ("AllNotIn", ["3", "20"], "1-10", False),
    ("AllNotIn", ["30", "20"], "1-10", True),
    ("AllNotIn", "a", None, False),
    # the deprecated In / NotIn: exact sets, JSON array strings
    ("In", "apple", ["apple", "banana"], True),
    ("In", "apple", [], False),
    ("In", "hello-world", "hello-*", True),
    ("In", "apple", '["apple", "banana"]', True),
    ("In", "apple", "not json", False),
    ("In", 42, ["42", "43"], True),
    ("In", True, ["true"], True),
    ("In", ["apple", "banana"], ["apple", "banana", "cherry"], True),
    ("In", ["apple", "grape"], ["apple", "banana", "cherry"], False),
    ("In", ["app*"], ["apple"], False),
    ("In", ["apple", "banana"], '["apple", "banana", "cherry"]', True),
    ("In", {"foo": "bar"}, ["a"], False),
    ("In", "apple", 12345, False),
    ("NotIn", "grape", ["apple"], True),
    ("NotIn", "apple", ["apple"], False),
    ("NotIn", ["a", "b"], ["a"], True),
    ("NotIn", ["a"], "a", True),  # Kyverno answers true here (its single-string shortcut ignores NotIn)
    ("NotIn", "a", 1, False),
    # GreaterThan and friends: numbers, numeric strings, quantities, durations, versions
    ("GreaterThan", 10, 5, True),
    ("GreaterThan", 5, 5, False),
    ("GreaterThanOrEquals", 10, 10, True),
    ("LessThan", 5, 10, True),
    ("LessThanOrEquals", 5, 5, True),
    ("GreaterThan", 10.5, 10.4, True),
    ("GreaterThan", "100", 50, True),
    ("LessThan", "50", "100", True),
    ("GreaterThan", "1.2.3", "1.2.2", True),
    ("LessThan", "1.1.0", "1.2.0", True),
    ("GreaterThanOrEquals", "1.2.0", "1.2.0", True),
    ("LessThan", "1.2.0-rc.1", "1.2.0", True),
    ("GreaterThan", "1.2.3", 1, False),
    ("GreaterThan", "200Mi", "100Mi", True),
    ("LessThan", "1Gi", "2Gi", True),
    ("GreaterThanOrEquals", "500m", "0.5", True),
    ("LessThan", "900Mi", "1Gi", True),
    ("GreaterThan", "2h", "90m", True),
    ("GreaterThan", 120, "1m", True),
    ("LessThan", "30s", 60, True),
    ("GreaterThan", 5, "x", False),
    ("GreaterThan", 5, "7", False),
    ("GreaterThan", True, 5, False),
    ("GreaterThan", "not-a-number", 5, False),
    ("GreaterThan", None, 5, False),
    ("greaterthan", 10, 5, False),  # accepted, but only the exact spelling orders
    # Duration*: seconds for numbers (truncated), Go durations for strings
    ("DurationGreaterThan", "2h", "1h", True),
    ("DurationGreaterThan", "60m", "1h", False),
    ("DurationGreaterThan", "61m", "1h", True),
    ("DurationGreaterThan", 120, 60, True),
    ("DurationGreaterThan", 120, "1m", True),
    ("DurationGreaterThan", 120.5, 60.5, True),
    ("DurationGreaterThan", 60.9, 60, False),  # Go truncates 60.9 to 60 seconds
    ("DurationGreaterThan", True, False, False),
    ("DurationGreaterThanOrEquals", "1h", "60m", True),
    ("DurationLessThanOrEquals", 60, 60, True),
    ("DurationLessThan", "30m", "1h", True),
    ("DurationLessThan", "x", "1h", False),
    ("DurationLessThan", "1h", "x", False),
    ("DurationLessThan", "1h", None, False),
]


@pytest.mark.parametrize(("operator", "key", "value", "holds"), CASES)
def test_evaluate_operator(operator: str, key: Any, value: Any, holds: bool) -> None:
    assert evaluate_operator(operator, key, value) is holds


def test_every_documented_operator_is_known() -> None:
    assert len(OPERATORS) == 18
    assert all(is_known_operator(name) and is_known_operator(name.upper()) for name in OPERATORS)
    assert not is_known_operator("Matches")
    with pytest.raises(ValueError, match="unknown condition operator"):
        evaluate_operator("Matches", "a", "a")


def test_legacy_in_with_a_non_string_key_item_is_a_panic() -> None:
    with pytest.raises(RuntimeError, match="is int64, not string"):
        evaluate_operator("In", ["a", 1], ["a"])


# -- blocks -------------------------------------------------------------------------------------------


def cond(key: Any, operator: str, value: Any, message: str = "") -> dict:
    raw = {"key": key, "operator": operator, "value": value}
    if message:
        raw["message"] = message
    return raw


def test_no_conditions_hold() -> None:
    assert evaluate_conditions(None) == ConditionsResult(True)
    assert evaluate_conditions({}).passed
    assert evaluate_conditions([]).passed


def test_all_needs_every_condition_and_reports_the_failing_one() -> None:
    block = {"all": [cond("a", "Equals", "a", "first"), cond("b", "Equals", "c", "second"), cond(1, "Equals", 1)]}
    result = evaluate_conditions(block)
    assert not result.passed
    assert result.message == "second"
    assert result.failed == Condition("b", "Equals", "c", "second")
    passed = evaluate_conditions({"all": [cond("a", "Equals", "a", "first"), cond("b", "Equals", "b", "two")]})
    assert passed.passed and passed.message == "first; two" and passed.failed is None


def test_any_needs_one_condition() -> None:
    block = {"any": [cond("a", "Equals", "x", "no x"), cond("a", "Equals", "a", "is a"), cond("b", "Equals", "y")]}
    result = evaluate_conditions(block)
    assert result.passed and result.message == "is a"
    failing = evaluate_conditions({"any": [cond("a", "Equals", "x", "no x"), cond("a", "Equals", "y", "no y")]})
    assert not failing.passed and failing.message == "no x; no y"
    assert failing.failed == Condition("a", "Equals", "x", "no x")


def test_an_empty_any_list_is_false_but_a_null_one_is_absent() -> None:
    assert not evaluate_conditions({"any": []}).passed
    assert evaluate_conditions({"any": None, "all": [cond(1, "Equals", 1)]}).passed


def test_any_and_all_must_both_hold() -> None:
    block = {"any": [cond("a", "Equals", "x", "any missed"), cond("a", "Equals", "a")],
             "all": [cond("b", "Equals", "c", "all missed")]}
    result = evaluate_conditions(block)
    assert not result.passed
    assert result.message == "any missed; all missed"
    assert result.failed == Condition("b", "Equals", "c", "all missed")


def test_the_legacy_list_form() -> None:
    result = evaluate_conditions([cond("a", "Equals", "a", "one"), cond("a", "Equals", "a", "two")])
    assert result.passed and result.message == "one;two"
    failing = evaluate_conditions([cond("a", "Equals", "b", "first fails"), cond("x", "Bogus", "y")])
    assert not failing.passed and failing.message == "first fails" and failing.error is None


def test_resolve_is_called_lazily_in_kyverno_order() -> None:
    seen: list[Any] = []

    def resolve(raw: Any) -> Any:
        seen.append(raw)
        return {"{{ kind }}": "Pod", "{{ name }}": "web"}.get(raw, raw) if isinstance(raw, str) else raw

    block = {"any": [cond("{{ kind }}", "Equals", "Pod"), cond("{{ name }}", "Equals", "web")],
             "all": [cond("{{ name }}", "Equals", "web")]}
    assert evaluate_conditions(block, resolve).passed
    assert seen == ["{{ kind }}", "Pod", "{{ name }}", "web"]  # the second `any` condition is never substituted


class Unresolved(Exception):
    pass


def test_a_substitution_failure_is_an_error_result() -> None:
    def resolve(raw: Any) -> Any:
        if raw == "{{ missing }}":
            raise Unresolved("Unknown key \"missing\" in path")
        return raw

    key_error = evaluate_conditions({"all": [cond("{{ missing }}", "Equals", "a")]}, resolve)
    assert not key_error.passed and key_error.error is not None
    assert key_error.error.message == 'failed to substitute variables in condition key: Unknown key "missing" in path'
    assert isinstance(key_error.error.cause, Unresolved)
    value_error = evaluate_conditions([cond("a", "Equals", "{{ missing }}")], resolve)
    assert value_error.error is not None
    assert value_error.error.message.startswith("failed to substitute variables in condition value")
    # a short-circuited condition is never substituted, so it cannot fail
    lazy = {"any": [cond("a", "Equals", "a"), cond("{{ missing }}", "Equals", "a")]}
    assert evaluate_conditions(lazy, resolve).passed


def test_an_unknown_operator_is_an_error() -> None:
    holds, error = evaluate_condition(Condition("a", "Matches", "a"))
    assert not holds and error is not None
    assert error.message == "failed to create handler for condition operator: %!w(<nil>)"


def test_malformed_blocks_are_errors() -> None:
    assert evaluate_conditions("yes").error is not None
    assert evaluate_conditions({"all": ["not a map"]}).error is not None
    assert evaluate_conditions({"any": {"key": 1}}).error is not None


def test_a_panic_is_an_error_result() -> None:
    result = evaluate_conditions([cond(["a", 1], "In", ["a"])])
    assert result.error is not None and "not string" in result.error.message
