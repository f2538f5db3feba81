"""kyverno-json's own functions (at, concat, json_parse, wildcard), beyond the shared vectors."""

from __future__ import annotations

import pytest
from support import call, call_fails_with

from assertree import jp
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
