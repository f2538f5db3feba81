"""Kyverno's arithmetic functions, through the expression language, beyond the shared vectors."""

from __future__ import annotations

import contextlib
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import fails_with, run

from assertree import jp
from assertree.jp.registry import lookup

# -- results of each operand pairing -------------------------------------------------------------


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        # quantities: exact decimals, canonical strings, left operand's format
        ("add('1Gi', '512Mi')", "1536Mi"),
        ("add('1', '500m')", "1500m"),
        ("add('1500', '500')", "2k"),
        ("add('1e3', '1e3')", "2e3"),
        ("add('0.1', '0.2')", "300m"),
        ("add('1', '1Ki')", "1025"),
        ("add('0', '1Ki')", "1Ki"),
        ("add('0Ki', '2000')", "2k"),
        ("subtract('1', '1')", "0"),
        ("subtract('500m', '1')", "-500m"),
        ("add('1E', '999E')", "1"),  # 10^21 has no decimal-SI suffix: the exponent is dropped
        # durations
        ("add('1h', '30m0s')", "1h30m0s"),
        ("add('1us', '1ns')", "1.001\u00b5s"),
        ("subtract('0s', '1m30s')", "-1m30s"),
        ("add('2562047h47m16.854775807s', '1ns')", "-2562047h47m16.854775808s"),  # int64 wraps as in Go
        # numbers are float64
        ("add(`0.1`, `0.2`)", 0.30000000000000004),
        ("subtract(`1`, `3`)", -2),
        # quantity × number: exact on the number's printed text, never rounded
        ("multiply('12Ki', `2`)", "24Ki"),
        ("multiply(`2.5`, '12Ki')", "30Ki"),
        ("multiply('1', `0.3333`)", "333300u"),
        ("multiply('1Ki', `0.001`)", "1024m"),
        ("multiply('1n', `0.5`)", "500"),  # 5×10^-10 has no suffix either
        ("multiply('1', `1e-10`)", "1n"),  # the number itself is parsed, so rounded up to 10^-9
        ("multiply('1Ki', `1000000`)", "1000000Ki"),
        # duration × number: float seconds, truncated to nanoseconds
        ("multiply('40s', `2.5`)", "1m40s"),
        ("multiply(`2`, '1h')", "2h0m0s"),
        ("multiply('1s', `0.1`)", "100ms"),
        ("multiply('2562047h', `2`)", "-2562047h47m16.854775808s"),  # out of int64: Go's amd64 result
        # quantity ÷ number truncates at the operands' decimal places
        ("divide('10', `4`)", "2"),
        ("divide('10.0', `4`)", "2500m"),
        ("divide('1.5', `2`)", "700m"),
        ("divide('1.5Gi', `2`)", "768Mi"),
        ("divide('-7', `2`)", "-3"),
        ("divide('1', `0.3`)", "3300m"),
        ("divide('1e3', `1e6`)", "0"),
        # quantity ÷ quantity and duration ÷ duration are numbers
        ("divide('12Ki', '200')", 61.44),
        ("divide('1Gi', '1Mi')", 1024),
        ("divide('12s', '5s')", 2.4),
        ("divide('1h', `7`)", "8m34.285714285s"),
        ("divide('1s', `3`)", "333.333333ms"),
        # remainders keep the dividend's sign
        ("modulo(`-7`, `3`)", -1),
        ("modulo(`7`, `-3`)", 1),
        ("modulo('-7', '3')", "-1"),
        ("modulo('12Ki', '5Ki')", "2Ki"),
        ("modulo('3Ki', '1000')", "72"),
        ("modulo('2000m', '1')", "0"),
        ("modulo('-90s', '1m0s')", "-30s"),
    ],
)
def test_results(expression, expected):
    result = run(expression)
    assert result == expected
    if isinstance(expected, str):
        assert isinstance(result, str)


def test_integer_operands_give_integer_results():
    assert type(run("add(`12`, `13`)")) is int
    assert type(run("modulo(`13`, `5`)")) is int
    assert type(run("add(`12`, `0.5`)")) is float


# -- zero divisors, for every kind of operand ----------------------------------------------------


@pytest.mark.parametrize(
    "expression",
    [
        "divide(`14`, `0`)",
        "divide(`14`, `-0.0`)",
        "divide('4Ki', `0`)",
        "divide('4Ki', '0')",
        "divide('4Ki', '0Ki')",
        "divide('4', '0.000')",
        "divide('4s', `0`)",
        "divide('4s', '0s')",
    ],
)
def test_divide_by_zero(expression):
    fails_with(expression, "JMESPath function 'divide': Zero divisor passed")


@pytest.mark.parametrize(
    "expression", ["modulo(`14`, `0`)", "modulo('4Ki', '0')", "modulo('4', '0Ki')", "modulo('4s', '0s')"]
)
def test_modulo_by_zero(expression):
    fails_with(expression, "JMESPath function 'modulo': Zero divisor passed")


@pytest.mark.parametrize(
    "expression",
    [
        "divide('4s', '0')",  # '0' is a quantity, not a duration
        "divide(`4`, '0')",
        "modulo('4Ki', `0`)",  # quantity % number is not defined at all
        "modulo('4s', `0`)",
    ],
)
def test_zero_of_the_wrong_kind_is_a_type_mismatch(expression):
    name = expression.split("(")[0]
    fails_with(expression, f"JMESPath function '{name}': Types mismatch")


# -- mixed kinds -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "expression",
    [
        "add('1Ki', '1s')",
        "add('1s', '1Ki')",
        "add(`1`, '1Ki')",
        "add('1Ki', `1`)",
        "add(`1`, '1s')",
        "add('1h', '30m')",  # '30m' is 0.03, a quantity
        "add('0', '0s')",
        "subtract('1s', `1`)",
        "multiply('1Ki', '2')",
        "multiply('1s', '1s')",
        "multiply('1Ki', '1s')",
        "divide(`1`, '1Ki')",
        "divide(`1`, '1s')",
        "divide('1Ki', '1s')",
        "divide('1s', '1Ki')",
        "modulo(`5`, '2')",
        "modulo('5s', '2')",
        "sum(['1m', '1s'])",
        "sum([`1`, '1'])",
    ],
)
def test_types_mismatch(expression):
    name = expression.split("(")[0]
    fails_with(expression, f"JMESPath function '{name}': Types mismatch")


# -- operands that are none of the three kinds -------------------------------------------------------


@pytest.mark.parametrize(
    ("expression", "name"),
    [
        ("add(`true`, `1`)", "add"),
        ("add(`1`, `false`)", "add"),
        ("subtract(`null`, `1`)", "subtract"),
        ("multiply(`[1]`, `2`)", "multiply"),
        ("divide(`{}`, `2`)", "divide"),
        ("modulo('abc', `2`)", "modulo"),
        ("add('', '1')", "add"),
        ("add('1d', '1h')", "add"),
        ("add('1K', '1')", "add"),
        ("add('1Ki', 'abc')", "add"),  # the right operand is checked before the kinds are compared
        ("sum(['1', 'x'])", "sum"),
        ("sum([`true`, `1`])", "sum"),
    ],
)
def test_invalid_operand(expression, name):
    fails_with(expression, f"JMESPath function '{name}': invalid operand")


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("modulo(`14.5`, `2`)", "JMESPath function 'modulo': Non-integer argument(s) passed for modulo"),
        ("modulo('1500m', '1')", "JMESPath function 'modulo': Non-integer argument(s) passed for modulo"),
        ("modulo('1e19', '3')", "JMESPath function 'modulo': Non-integer argument(s) passed for modulo"),
        ("sum(`[]`)", "JMESPath function 'sum': at least one element in the array is required"),
    ],
)
def test_other_kyverno_errors(expression, message):
    fails_with(expression, message)


def test_huge_exact_quantities_fail_cleanly():
    with pytest.raises(jp.FunctionError, match=r"^JMESPath function 'add': .*digits"):
        run("add('1e5000', '1')")


# -- sum ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("sum(['1Ki', '1Mi'])", "1025Ki"),
        ("sum(['1h', '30m0s', '15m0s'])", "1h45m0s"),
        ("sum(`[1, 2.5]`)", 3.5),
        ("sum(['hello'])", "hello"),  # one element comes back unchecked
        ("sum([`true`])", True),
        # each partial result is a string parsed again: "512" forgets it was binary
        ("sum(['0.5Ki', '0', '512'])", "1024"),
        ("add('0.5Ki', '512')", "1Ki"),
    ],
)
def test_sum(expression, expected):
    assert run(expression) == expected


def test_sum_requires_an_array():
    with pytest.raises(jp.InvalidTypeError):
        run("sum('1Ki')")


def test_community_sum_is_replaced():
    with pytest.raises(jp.FunctionError):
        run("sum(`[]`)")  # the community sum returns 0


# -- round -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("round(`2.5`, `0`)", 3),
        ("round(`-2.5`, `0`)", -3),
        ("round(`0.5`, `0`)", 1),
        ("round(`-0.5`, `0`)", -1),
        ("round(`3.5`, `0`)", 4),  # Python's round() would give 4 here but 2 for 2.5
        ("round(`0.125`, `2`)", 0.13),
        ("round(`1.005`, `2`)", 1),  # 1.005 × 100 is 100.49999...
        ("round(`9.414675`, `2`)", 9.41),
        ("round(`1234.5678`, `1`)", 1234.6),
        ("round(`1.5`, `1.0`)", 1.5),
        ("round(`7`, `3`)", 7),
    ],
)
def test_round_half_away_from_zero(expression, expected):
    assert run(expression) == expected


def test_round_keeps_negative_zero():
    assert math.copysign(1.0, run("round(`-0.4`, `0`)")) == -1.0


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("round(`14`, `1.5`)", "JMESPath function 'round': Non-integer argument(s) passed for round off"),
        ("round(`14`, `1e19`)", "JMESPath function 'round': Non-integer argument(s) passed for round off"),
        ("round(`14`, `-2`)", "JMESPath function 'round': %!d(MISSING) argument is out of bounds (%!d(MISSING))"),
    ],
)
def test_round_errors(expression, message):
    fails_with(expression, message)


@pytest.mark.parametrize("expression", ["round('1.5', `0`)", "round(`1.5`, '1')", "round(`1`, `null`)"])
def test_round_takes_numbers_only(expression):
    with pytest.raises(jp.InvalidTypeError):
        run(expression)


# -- robustness ----------------------------------------------------------------------------------------

_OPERAND_TEXT = st.text(alphabet="0123456789.+-eEinumkKMGTPhsµ ", max_size=12)
_OPERANDS = st.one_of(
    _OPERAND_TEXT,
    st.sampled_from(
        ["1e400", "1e-2147483648", "1.5e-2147483648", "8Ei", "1e5000", "0e400", "2562047h47m16.854775807s"]
    ),
    st.integers(min_value=-(10**400), max_value=10**400),
    st.floats(allow_nan=False, allow_infinity=False),
    st.booleans(),
    st.none(),
)


@settings(max_examples=300, deadline=None)
@given(
    name=st.sampled_from(["add", "subtract", "multiply", "divide", "modulo"]),
    left=_OPERANDS,
    right=_OPERANDS,
)
def test_any_operands_give_a_value_or_a_jmespath_error(name, left, right):
    with contextlib.suppress(jp.JMESPathError):
        lookup(name)(left, right)
