"""Kyverno's decoding and hashing functions: Go's base64, sigs.k8s.io/yaml and digests, beyond the shared vectors."""

from __future__ import annotations

import base64

import pytest
from hypothesis import given
from hypothesis import strategies as st

from assertree import jp
from assertree.jp.functions.conversions import go_string, utf8_bytes
from assertree.jp.functions.encoding import decode_base64
from assertree.jp.registry import lookup


def call(name: str, *args):
    return lookup(name)(*args)


def fails_with(name: str, argument, message: str) -> None:
    with pytest.raises(jp.FunctionError) as caught:
        call(name, argument)
    assert str(caught.value) == message


# -- Go strings --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "text"),
    [
        (b"plain", "plain"),
        (b"\xff", "\ufffd"),
        (b"\xe2\x82", "\ufffd\ufffd"),  # one U+FFFD per bad byte, as Go (Python's "replace" gives one)
        (b"\xed\xa0\x80", "\ufffd\ufffd\ufffd"),  # an encoded surrogate is not UTF-8
        (b"a\xc3(b", "a\ufffd(b"),
    ],
)
def test_go_string(data, text):
    assert go_string(data) == text


def test_utf8_bytes_turns_lone_surrogates_into_replacement_characters():
    assert utf8_bytes("a\ud800b") == "a\ufffdb".encode()
    assert utf8_bytes("é") == b"\xc3\xa9"


# -- base64 ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("encoded", "decoded"),
    [
        ("", ""),
        ("QQ==", "A"),
        ("QUI=", "AB"),
        ("QUJD", "ABC"),
        ("QUJD\r\nREVG", "ABCDEF"),  # CR and LF are skipped anywhere
        ("Q\nQ\n=\n=\n", "A"),
        ("QR==", "A"),  # left-over bits are ignored (Go's standard decoder is not strict)
        ("w6k=", "é"),
        ("/w==", "\ufffd"),
        ("4oI=", "\ufffd\ufffd"),
    ],
)
def test_base64_decode(encoded, decoded):
    assert call("base64_decode", encoded) == decoded


@pytest.mark.parametrize(
    ("encoded", "offset"),
    [
        ("QQ", 0),  # padding is mandatory: the quantum that was cut short
        ("QUJDQQ", 4),
        ("Q", 0),
        ("QQ=", 3),
        ("QQ=\n", 4),
        ("QQ=x", 2),
        ("=", 0),
        ("Q===", 1),
        ("QQ==x", 4),  # nothing may follow the padding
        ("QQ==\nQQ==", 5),
        ("SGVs bG8=", 4),
        ("_-8=", 0),  # the URL alphabet is not accepted
        ("QUJD\tQQ==", 4),
        ("éé==", 0),
    ],
)
def test_base64_decode_errors_name_go_offsets(encoded, offset):
    fails_with("base64_decode", encoded, f"illegal base64 data at input byte {offset}")


@given(st.binary(max_size=64))
def test_base64_round_trip(data):
    encoded = base64.b64encode(data)
    assert decode_base64(encoded) == data
    wrapped = b"\r\n".join(encoded[i : i + 5] for i in range(0, len(encoded), 5))
    assert decode_base64(wrapped) == data


@pytest.mark.parametrize(("text", "encoded"), [("", ""), ("é", "w6k="), ("Hello", "SGVsbG8="), ("\ud800", "77+9")])
def test_base64_encode(text, encoded):
    assert call("base64_encode", text) == encoded


# -- digests ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "digest"),
    [
        ("sha256", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        ("sha1", "da39a3ee5e6b4b0d3255bfef95601890afd80709"),
        ("md5", "d41d8cd98f00b204e9800998ecf8427e"),
    ],
)
def test_digests_of_the_empty_string(name, digest):
    assert call(name, "") == digest


def test_digests_hash_utf8():
    assert call("md5", "é") == "66ddcd97cfdeabb2f6fb8a999b4bc76f"
    assert call("md5", "\ud800") == call("md5", "\ufffd")


# -- parse_json ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("null", None),
        (' [1, 2.5, "x", true] ', [1, 2.5, "x", True]),
        ('{"a":1,"a":2}', {"a": 2}),
        ("9223372036854775807", 9223372036854775807),
    ],
)
def test_parse_json(text, expected):
    assert call("parse_json", text) == expected


@pytest.mark.parametrize("text", ["", "nul", "NaN", "[1,]", "{'a': 1}", '{"a":1} x', "1e400", "// x\n1"])
def test_parse_json_refuses_what_go_refuses(text):
    with pytest.raises(jp.FunctionError) as caught:
        call("parse_json", text)
    assert not str(caught.value).startswith("JMESPath function")  # Go's decoder text, unprefixed


def test_parse_json_numbers_are_ordinary_numbers():
    assert jp.search("type(parse_json('1'))", None) == "number"
    assert jp.search("parse_json('{\"a\":1}').a == `1`", None) is True


# -- parse_yaml: go-yaml v2 scalars ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("scalar", "value"),
    [
        # YAML 1.1 booleans, in go-yaml's three casings
        ("y", True),
        ("Yes", True),
        ("ON", True),
        ("n", False),
        ("Off", False),
        ("yEs", "yEs"),
        # nulls
        ("~", None),
        ("", None),
        ("Null", None),
        ("nULL", "nULL"),
        # integers: Go's base prefixes and a leading zero for octal, underscores ignored
        ("017", 15),
        ("0o17", 15),
        ("0x1F", 31),
        ("-0x1F", -31),
        ("0b101", 5),
        ("1_000", 1000),
        ("08", 8),  # not octal: read as a float, which is integral
        ("+12", 12),
        ("9223372036854775807", 9223372036854775807),
        ("-9223372036854775809", -9223372036854775808),  # a float, back through JSON as an int64
        ("18446744073709551615", 18446744073709551615.0),  # a uint64 is a float once through JSON
        # floats
        ("1e3", 1000),
        ("1.5", 1.5),
        (".5", 0.5),
        ("-.5e1", -5),
        ("1.0", 1),
        ("0.1", 0.1),
        # strings
        ("1e400", "1e400"),  # out of float64 range: not a number
        ("1:20", "1:20"),  # no base-60 numbers (PyYAML reads 80)
        ("2001-12-14", "2001-12-14"),  # timestamps stay text
        ("2001-12-14t21:59:43.10-05:00", "2001-12-14t21:59:43.10-05:00"),
        ("0x", "0x"),
        ("1.2.3", "1.2.3"),
        (".", "."),
        ("<<", "<<"),
        ("true_", "true_"),
    ],
)
def test_parse_yaml_plain_scalars(scalar, value):
    result = call("parse_yaml", f"a: {scalar}")["a"]
    assert result == value and type(result) is type(value)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a: 'yes'", {"a": "yes"}),
        ('a: "1"', {"a": "1"}),
        ("a: !!str 1", {"a": "1"}),
        ("a: !!int '12'", {"a": 12}),
        ("a: !!float 1", {"a": 1}),
        ("a: !!bool 'on'", {"a": True}),
        ("a: !!null ''", {"a": None}),
        ("a: !!timestamp 2001-12-14", {"a": "2001-12-14"}),
        ("a: !custom 12", {"a": "12"}),  # unknown tags keep the text
        ("a: ! 12", {"a": "12"}),
        ("a: !!binary aGk=", {"a": "hi"}),
        ("a: !!binary |\n  aG\n  k=", {"a": "hi"}),
        ("a: !!binary /w==", {"a": "\ufffd"}),
    ],
)
def test_parse_yaml_tags(text, expected):
    assert call("parse_yaml", text) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a: !!int abc", "yaml: cannot decode !!str `abc` as a !!int"),
        ("a: !!bool 1", "yaml: cannot decode !!int `1` as a !!bool"),
        ("a: !!timestamp abc", "yaml: cannot decode !!str `abc` as a !!timestamp"),
        ("a: !!binary 'a b'", "yaml: !!binary value contains invalid base64 data"),
    ],
)
def test_parse_yaml_tag_errors(text, message):
    fails_with("parse_yaml", text, message)


# -- parse_yaml: structure -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", None),
        ("# only a comment", None),
        ("---", None),
        ("a: 1\n---\nb: 2", {"a": 1}),
        ("a: 1\n---\n{", {"a": 1}),  # later documents are not even parsed
        ("[a]]", ["a"]),  # nor is anything after the first document's end
        ("- 1\n- [2, {b: c}]", [1, [2, {"b": "c"}]]),
        ("a: &x {b: 1}\nc: *x", {"a": {"b": 1}, "c": {"b": 1}}),
        ("a: 1\na: 2", {"a": 2}),  # go-yaml v2 keeps the last of repeated keys
        # keys become strings as sigs.k8s.io/yaml writes them
        ("1: a\ntrue: b\n0x1F: c", {"1": "a", "true": "b", "31": "c"}),
        (
            "1.5: a\n1e6: b\n123456789.0: c\n0.00001: d\n.inf: e",
            {
                "1.5": "a",
                "1e+06": "b",
                "1.2345679e+08": "c",
                "1e-05": "d",
                ".inf": "e",
            },
        ),
        ("2001-12-14: a", {"2001-12-14": "a"}),
        # merge keys: explicit keys and earlier maps win over later ones
        ("<<: {a: 1, b: 1}\nb: 2", {"a": 1, "b": 2}),
        (
            "b: &b {a: 1, c: 1}\nx:\n  <<: [*b, {a: 2, d: 2}]\n  c: 3",
            {
                "b": {"a": 1, "c": 1},
                "x": {"a": 1, "c": 3, "d": 2},
            },
        ),
        ("'<<': {a: 1}", {"<<": {"a": 1}}),  # a quoted << is an ordinary key
        ('a: "\\u00e9"', {"a": "é"}),
    ],
)
def test_parse_yaml_documents(text, expected):
    assert call("parse_yaml", text) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a: *x", "yaml: unknown anchor 'x' referenced"),
        ("&a [*a]", "yaml: anchor 'a' value contains itself"),
        ("<<: 1", "yaml: map merge requires map or sequence of maps as the value"),
        ("a: .inf", "json: unsupported value: +Inf"),
        ("a: [-.inf]", "json: unsupported value: -Inf"),
        (".nan", "json: unsupported value: NaN"),
        ("~: a", "yaml: a null map key has no JSON equivalent"),
        ("[a]: b", "yaml: invalid map key: a map key must be a scalar"),
        ("[" * 1025 + "]" * 1025, "yaml: nested more than 1024 levels deep"),
        ("- " * 1025 + "x", "yaml: nested more than 1024 levels deep"),
    ],
)
def test_parse_yaml_errors(text, message):
    fails_with("parse_yaml", text, message)


@pytest.mark.parametrize(("text", "prefix"),
                         [("{", "yaml: line 1: "), ("a: b: c", "yaml: "), ("a:\n\tb", "yaml: line 2: ")])
def test_parse_yaml_syntax_errors_are_worded_as_go_yaml_words_them(text, prefix):
    """go-yaml's shape (``yaml: line N: <problem>``); the problem text itself is libyaml's, as in go-yaml,
    which was ported from it (``did not find expected node content``), so it is not pinned here."""
    with pytest.raises(jp.FunctionError) as caught:
        call("parse_yaml", text)
    assert str(caught.value).startswith(prefix) and len(str(caught.value)) > len(prefix) + 10


def test_parse_yaml_stops_early_on_very_deep_input():
    # libyaml's own composer crashes around this depth; here the value is built from events
    fails_with("parse_yaml", "[" * 200_000 + "]" * 200_000, "yaml: nested more than 1024 levels deep")
    assert call("parse_yaml", "[" * 1024 + "]" * 1024) is not None


def test_parse_yaml_aliases_share_work_within_go_yamls_budget():
    def laughs(levels: int) -> str:
        return "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
            f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 9)}]\n" for i in range(levels)
        )

    result = call("parse_yaml", laughs(2))  # 9**3 values described, each alias expanded once
    assert len(result["c"]) == 9 and result["c"][0] is result["c"][1]
    with pytest.raises(jp.LimitError, match="excessive aliasing"):  # the "billion laughs": 9**9 values
        call("parse_yaml", laughs(8))


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_parse_yaml_floats_read_as_json_numbers(number):
    value = call("parse_yaml", repr(number))
    assert value == number
    assert isinstance(value, int) == (number.is_integer() and abs(number) < 2**63)
