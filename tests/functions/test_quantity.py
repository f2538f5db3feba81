"""Kubernetes quantities: apimachinery's parsing, internal scale, and canonical strings."""

from __future__ import annotations

import math

import pytest

from assertree.jp.functions.conversions import go_float_text
from assertree.jp.functions.quantity import BAD_SUFFIX, NOT_A_QUANTITY, Format, Quantity


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("0", "0"),
        ("1536Mi", "1536Mi"),
        ("1.5Gi", "1536Mi"),
        ("1024Mi", "1Gi"),
        ("2048", "2048"),  # plain numbers are decimal SI
        ("2000", "2k"),
        ("1500", "1500"),
        ("1.5", "1500m"),
        ("1500m", "1500m"),
        ("0.5", "500m"),
        ("1e3", "1e3"),
        ("1E3", "1e3"),
        ("1.5e3", "1500"),
        ("1E-3", "1e-3"),
        ("12e+6", "12e6"),
        ("1e400", "10e399"),
        ("1.G", "1G"),
        ("007", "7"),
        ("+1", "1"),
        ("-1Ki", "-1Ki"),
        ("0.5Ki", "512"),  # binary below 1024 prints as decimal SI
        ("1.5Ki", "1536"),
        ("100Ki", "100Ki"),
        ("0.1n", "1n"),  # rounded away from zero to nanounits
        ("1.5n", "2n"),
        ("-0.1n", "-1n"),
        ("1e-400", "1e-9"),
        ("-1e-2000000000", "-1e-9"),
        ("1.0000000001", "1000000001n"),
        ("8Ei", "9223372036854775807"),  # binary values are capped at 2^63-1
        ("-8Ei", "-9223372036854775807"),
        ("1E", "1E"),
    ],
)
def test_parse_and_canonical_string(text, canonical):
    assert str(Quantity.parse(text)) == canonical


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", NOT_A_QUANTITY),
        ("1K", BAD_SUFFIX),
        ("1e", BAD_SUFFIX),
        ("1Ki2", BAD_SUFFIX),
        ("1i", BAD_SUFFIX),
        ("1.2.3", NOT_A_QUANTITY),
        (" 1", NOT_A_QUANTITY),
        ("1 ", NOT_A_QUANTITY),
        ("abc", NOT_A_QUANTITY),
        ("1s", NOT_A_QUANTITY),
        ("1h", NOT_A_QUANTITY),
        ("1m30s", NOT_A_QUANTITY),
        ("1e99999999999999999999", BAD_SUFFIX),  # exponent beyond int64
    ],
)
def test_not_quantities(text, message):
    with pytest.raises(ValueError) as caught:
        Quantity.parse(text)
    assert str(caught.value) == message


@pytest.mark.parametrize("text", [".", "-", "+", "m", "k", "Ki", "-Ki", "e3", "0Ki", "-0", "0.000"])
def test_go_scanner_accepts_digitless_and_zero_forms_as_zero(text):
    assert Quantity.parse(text).is_zero


@pytest.mark.parametrize(
    ("text", "fmt"),
    [
        ("1", Format.DECIMAL_SI),
        ("1k", Format.DECIMAL_SI),
        ("1Ki", Format.BINARY_SI),
        ("0.5Ki", Format.BINARY_SI),
        ("0.0005Ki", Format.DECIMAL_SI),  # non-zero binary values below 1 become decimal SI
        ("1e3", Format.DECIMAL_EXPONENT),
    ],
)
def test_format_memory(text, fmt):
    assert Quantity.parse(text).format is fmt


@pytest.mark.parametrize(
    ("text", "places"),
    [("1", 0), ("1.5", 1), ("10.0", 1), ("500m", 3), ("1.5Gi", 9), ("1Gi", 0), ("12Ki", 0), ("1e3", -3), ("1n", 9)],
)
def test_stored_decimal_places_follow_the_parse_path(text, places):
    assert Quantity.parse(text).places == places


@pytest.mark.parametrize(
    ("quantity", "canonical"),
    [
        (Quantity(1, 21, Format.DECIMAL_SI), "1"),  # no suffix beyond E: exponent dropped
        (Quantity(5, -10, Format.DECIMAL_SI), "500"),  # nor below n
        (Quantity(1, 21, Format.DECIMAL_EXPONENT), "1e21"),
        (Quantity(1 << 70, 0, Format.BINARY_SI), "1"),  # no suffix beyond Ei
        (Quantity(15365, -1, Format.BINARY_SI), "1536500m"),  # a binary fraction prints as decimal SI
        (Quantity(-2048, 0, Format.BINARY_SI), "-2Ki"),
        (Quantity(1023, 0, Format.BINARY_SI), "1023"),
        (Quantity(0, 5, Format.BINARY_SI), "0"),
        (Quantity(15, -1, Format.DECIMAL_EXPONENT), "1500e-3"),
        (Quantity(-25, 2, Format.DECIMAL_SI), "-2500"),
    ],
)
def test_canonical_string_of_computed_values(quantity, canonical):
    assert str(quantity) == canonical


@pytest.mark.parametrize(
    ("text", "number"),
    [("12Ki", 12288.0), ("0.1", 0.1), ("1.5Gi", 1610612736.0), ("1e3", 1000.0), ("-500m", -0.5), ("1e400", math.inf)],
)
def test_approximate_float(text, number):
    assert Quantity.parse(text).approximate_float() == number


def test_sum_takes_left_format_unless_left_is_zero():
    one, kibi, zero = Quantity.parse("1"), Quantity.parse("1Ki"), Quantity.parse("0")
    assert str(one.plus(kibi)) == "1025"
    assert str(kibi.plus(one)) == "1025"
    assert str(zero.plus(kibi)) == "1Ki"
    assert str(Quantity.parse("512Mi").plus(Quantity.parse("512Mi"))) == "1Gi"
    assert str(Quantity.parse("1Ki").minus(Quantity.parse("2Ki"))) == "-1Ki"


def test_divide_truncates_toward_zero_at_given_places():
    assert str(Quantity.parse("1.5").divide_by(Quantity.parse("2"), 1)) == "700m"
    assert str(Quantity.parse("-7").divide_by(Quantity.parse("2"), 0)) == "-3"


def test_exact_values_beyond_the_digit_limit_raise_overflow():
    with pytest.raises(OverflowError):
        Quantity.parse("1e5000").plus(Quantity.parse("1"))
    with pytest.raises(OverflowError):
        Quantity.parse("0." + "1" * 5000)
    with pytest.raises(OverflowError):
        str(Quantity(10**3999, 500, Format.BINARY_SI))  # printing would need 4500 digits


@pytest.mark.parametrize(
    ("number", "text"),
    [
        (2.0, "2"),
        (2.5, "2.5"),
        (0.1, "0.1"),
        (100.0, "100"),
        (123456.0, "123456"),
        (1234567.0, "1.234567e+06"),
        (1e6, "1e+06"),
        (1e21, "1e+21"),
        (0.0001, "0.0001"),
        (1e-5, "1e-05"),
        (1e-7, "1e-07"),
        (-0.0, "-0"),
        (-2.5, "-2.5"),
        (1.7976931348623157e308, "1.7976931348623157e+308"),
    ],
)
def test_go_float_text(number, text):
    assert go_float_text(number) == text


def test_numbers_become_quantities_through_their_printed_text():
    assert str(Quantity.from_number(0.1)) == "100m"
    assert Quantity.from_number(1e6).places == -6
    assert str(Quantity.from_number(1e-10)) == "1e-9"  # parsed from "1e-10", so rounded up to 10^-9
