"""kyverno-json's own functions (at, concat, json_parse, wildcard), beyond the shared vectors."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import call, call_fails_with

from assertree import jp
from assertree.jp.functions.kyverno_json import decode_json, decode_json_exactly
from assertree.jp.registry import lookup

# -- at ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("array", "index", "expected"),
    [
        ([1, 2, 3], 0, 1),
        ([1, 2, 3], 2, 3),
        ([1, 2, 3], 1.9, 2),  # truncated toward zero
        ([1, 2, 3], -0.5, 1),
        ([{"a": 1}, None], 1, None),
    ],
)
def test_at(array, index, expected):
    assert call("at", array, index) == expected


@pytest.mark.parametrize(
    ("array", "index", "message"),
    [
        ([1], -1, "JMESPath function 'at': index out of range [-1] with length 1"),  # no Python negative index
        ([1], 1, "JMESPath function 'at': index out of range [1] with length 1"),
        ([], 0, "JMESPath function 'at': index out of range [0] with length 0"),
        ([1], float("inf"), "JMESPath function 'at': index out of range [inf] with length 1"),
    ],
)
def test_at_out_of_range_is_an_error_not_a_panic(array, index, message):
    call_fails_with(message, "at", array, index)


def test_at_is_what_foreach_indexes_need():
    assert jp.search("at($list, to_number('1'))", None, bindings={"list": ["a", "b"]}) == "b"


# -- concat -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(("a", "b", "expected"), [("a", "b", "ab"), ("", "", ""), ("é", "日", "é日")])
def test_concat(a, b, expected):
    assert call("concat", a, b) == expected


@pytest.mark.parametrize(("name", "args"), [("concat", ("a", 1)), ("concat", (None, "a")), ("wildcard", ("a*", 1))])
def test_strings_only(name, args):
    with pytest.raises(jp.InvalidTypeError):
        call(name, *args)


# -- json_parse -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"a": [1, 2.5, "x", null, true, false]}', {"a": [1, 2.5, "x", None, True, False]}),
        (" \t\n[]\r\n", []),
        ('"\\u00e9\\ud83d\\ude00"', "é😀"),
        ('"\\ud800x"', "\ufffdx"),  # a lone surrogate becomes U+FFFD, as Go decodes it
        ('{"\\udc00": 1}', {"\ufffd": 1}),
        ('{"a":1,"a":2}', {"a": 2}),  # the last duplicate wins
        ("9223372036854775807", 9223372036854775807),  # int64 kept exactly
        ("-9223372036854775808", -9223372036854775808),
        ("9223372036854775808", 9.223372036854776e18),  # beyond int64: float64, as in Go
        ("-0", 0),
    ],
)
def test_json_parse(text, expected):
    assert call("json_parse", text) == expected


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        # Parsed integers are plain numbers (kyverno-json's Go int64 is rejected by all of these).
        ("type(json_parse('1'))", "number"),
        ("json_parse('1') == `1`", True),
        ("abs(json_parse('-1'))", 1),
        ("add(json_parse('1'), `1`)", 2),
        ('to_string(json_parse(\'{"b":1,"a":[1.50,2e2]}\'))', '{"a":[1.5,200],"b":1}'),
    ],
)
def test_json_parse_gives_plain_json_values(expression, expected):
    result = jp.search(expression, None)
    assert result == expected and type(result) is type(expected)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("", "unexpected end of JSON input"),
        ("  ", "unexpected end of JSON input"),
        ('{"a":', "unexpected end of JSON input"),
        ('"abc', "unexpected end of JSON input"),
        ('{"a":1} x', "invalid character 'x' after top-level value"),
        ("x", "invalid character 'x' looking for beginning of value"),
        ("nul", "invalid character ' ' in literal null (expecting 'l')"),
        ("[tru]", "invalid character ']' in literal true (expecting 'e')"),
        ('{"a" 1}', "invalid character '1' after object key"),
        ('{"a":1,}', "invalid character '}' looking for beginning of object key string"),
        ("NaN", "invalid character 'N' looking for beginning of value"),
        ("Infinity", "invalid character 'I' looking for beginning of value"),
        ("'a'", "invalid character '\\'' looking for beginning of value"),
        ("1e400", "json: cannot unmarshal number 1e400 into Go value of type float64"),
        ("[" * 100_000, "exceeded max depth"),
    ],
)
def test_json_parse_errors(text, reason):
    call_fails_with(f"JMESPath function 'json_parse': {reason}", "json_parse", text)


def test_json_parse_other_errors_name_the_offset():
    with pytest.raises(jp.JMESPathError, match=r"^JMESPath function 'json_parse': invalid character '2' at offset 3"):
        call("json_parse", "[1 2]")


# The short cut of decode_json (orjson, unless a run of 19 digits may be an integer beyond int64) held to the
# exact decoder: the same value, type for type (1 is not 1.0, -0.0 is not 0.0), or the same error.
_digits = st.text(alphabet="0123456789", min_size=1, max_size=24)
_number_text = st.builds(
    lambda sign, whole, fraction, exponent: f"{sign}{whole}{fraction}{exponent}",
    st.sampled_from(["", "-"]),
    st.one_of(st.just("0"), _digits.map(lambda digits: digits.lstrip("0") or "0")),
    st.one_of(st.just(""), _digits.map(lambda digits: "." + digits)),
    st.one_of(st.just(""), st.builds(lambda e, sign, n: f"{e}{sign}{n}", st.sampled_from("eE"),
                                     st.sampled_from(["", "+", "-"]), st.integers(0, 400))),
)
_edges = st.sampled_from([2**63 - 1, 2**63, -(2**63), -(2**63) - 1, 2**64 - 1, 2**64, 10**18, 10**19, 10**25])
_leaves = st.one_of(st.none(), st.booleans(), st.integers(), _edges, st.floats(allow_nan=False, allow_infinity=False),
                    st.text(max_size=30), _digits)
_values = st.recursive(_leaves, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                        st.dictionaries(st.text(max_size=8), inner, max_size=4)),
                       max_leaves=12)


def _decoded(decode, text):
    try:
        return repr(decode(text))  # repr: types and the sign of zero count
    except ValueError as error:
        return f"error: {error}"


@settings(max_examples=300, deadline=None)
@given(value=_values, ascii_only=st.booleans(), numbers=st.lists(_number_text, max_size=3))
def test_decode_json_short_cut_equals_the_exact_decoder(value, ascii_only, numbers):
    texts = [json.dumps(value, ensure_ascii=ascii_only), f"[{', '.join([json.dumps(value), *numbers])}]", *numbers]
    for text in texts:
        assert _decoded(decode_json, text) == _decoded(decode_json_exactly, text), text


# -- registration ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "signature",
    [
        "at(array: array, index: number) -> any",
        "concat(a: string, b: string) -> string",
        "json_parse(text: string) -> any",
        "wildcard(pattern: string, name: string) -> boolean",
    ],
)
def test_signatures(signature):
    function = lookup(signature.split("(")[0])
    assert function.signature == signature
    assert function.group == "kyverno_json"
