"""Kyverno's string functions: Go's ``strings`` semantics where Python's differ, beyond the shared vectors."""

from __future__ import annotations

import pytest

from assertree import jp
from assertree.jp.functions.unicase import simple_fold, simple_lower, simple_upper
from assertree.jp.registry import lookup


def call(name: str, *args):
    return lookup(name)(*args)


# -- case mapping: simple, one code point at a time ------------------------------------------------


@pytest.mark.parametrize(
    ("text", "upper", "lower"),
    [
        ("Hello, World", "HELLO, WORLD", "hello, world"),
        ("straße", "STRAßE", "straße"),  # Python's upper() gives STRASSE
        ("ẞ", "ẞ", "ß"),
        ("İstanbul", "İSTANBUL", "istanbul"),  # Python's lower() gives i + combining dot
        ("ı", "I", "ı"),
        ("ΑΣ", "ΑΣ", "ασ"),  # no final-sigma rule
        ("ὀδυσσεύς", "ὈΔΥΣΣΕΎΣ", "ὀδυσσεύς"),
        ("ǆ ǅ Ǆ", "Ǆ Ǆ Ǆ", "ǆ ǆ ǆ"),
        ("ᾀ ᾳ ῳ", "ᾈ ᾼ ῼ", "ᾀ ᾳ ῳ"),  # ypogegrammeni: simple uppercase is the titlecase letter
        ("ᾈ ᾼ", "ᾈ ᾼ", "ᾀ ᾳ"),
        ("ŉ ǰ ﬀ ﬁ և", "ŉ ǰ ﬀ ﬁ և", "ŉ ǰ ﬀ ﬁ և"),  # full mappings only: unchanged
        ("K Å", "K Å", "k å"),  # Kelvin and Angstrom signs
        ("ꭰ Ꭰ", "Ꭰ Ꭰ", "ꭰ ꭰ"),  # Cherokee
        ("𐐨 𐐀", "𐐀 𐐀", "𐐨 𐐨"),  # Deseret, outside the BMP
        ("", "", ""),
    ],
)
def test_case_mapping(text, upper, lower):
    assert call("to_upper", text) == upper
    assert call("to_lower", text) == lower


def test_case_mapping_never_changes_the_length():
    # every cased letter is below U+20000
    every = "".join(chr(code) for code in range(0x20000) if not 0xD800 <= code <= 0xDFFF)
    assert len(simple_upper(every)) == len(simple_lower(every)) == len(simple_fold(every)) == len(every)


@pytest.mark.parametrize(
    ("a", "b", "equal"),
    [
        ("Go", "GO", True),
        ("straße", "STRASSE", False),  # Python's casefold() says equal
        ("ß", "ẞ", True),
        ("K", "k", True),  # Kelvin sign
        ("ſ", "S", True),  # long s
        ("σ", "ς", True),
        ("Σ", "ς", True),
        ("ϑ", "Θ", True),
        ("ᾀ", "ᾈ", True),
        ("ᾳ", "ᾼ", True),
        ("İ", "i", False),  # U+0130 folds to nothing but itself
        ("ı", "I", False),
        ("ı", "i", False),
        ("ǅ", "ǆ", True),
        ("a", "ab", False),
        ("", "", True),
    ],
)
def test_equal_fold(a, b, equal):
    assert call("equal_fold", a, b) is equal
    assert call("equal_fold", b, a) is equal


@pytest.mark.parametrize(
    ("a", "b", "result"),
    [
        ("a", "a", 0),
        ("a", "B", 1),  # bytes, not letters
        ("é", "f", 1),
        ("", "a", -1),
        ("ab", "a", 1),
        ("\uffff", "𐀀", -1),  # UTF-8 byte order is code point order (UTF-16 order would say 1)
    ],
)
def test_compare(a, b, result):
    assert call("compare", a, b) == result


# -- replace, trim, split, truncate ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("aaa", "a", "b", 2), "bba"),
        (("aaa", "a", "b", 0), "aaa"),
        (("aaa", "a", "b", -1), "bbb"),
        (("aaa", "a", "b", -5), "bbb"),
        (("aaa", "a", "b", 1.9), "baa"),
        (("aaa", "a", "b", -0.5), "aaa"),
        (("aaa", "a", "b", 1e30), "bbb"),
        (("aaa", "aa", "b", -1), "ba"),  # non-overlapping, left to right
        (("aaa", "", "-", -1), "-a-a-a-"),
        (("aaa", "", "-", 2), "-a-aa"),
        (("héé", "", "-", -1), "-h-é-é-"),  # after every code point, not every byte
        (("", "", "x", -1), "x"),
        (("", "", "x", 0), ""),
    ],
)
def test_replace(args, expected):
    assert call("replace", *args) == expected


def test_replace_all():
    assert call("replace_all", "a.b.c", ".", "::") == "a::b::c"


@pytest.mark.parametrize(
    ("text", "cutset", "expected"),
    [
        ("¡¡¡Hello, Gophers!!!", "!¡", "Hello, Gophers"),
        ("abcba", "ab", "c"),
        ("  abc  ", "", "  abc  "),  # an empty cutset trims nothing, not white space
        ("\t abc \n", " ", "\t abc \n"),
        ("aaa", "a", ""),
    ],
)
def test_trim(text, cutset, expected):
    assert call("trim", text, cutset) == expected


@pytest.mark.parametrize(
    ("text", "prefix", "expected"),
    [("abcabc", "abc", "abc"), ("abc", "", "abc"), ("abc", "abcd", "abc"), ("ABC", "abc", "ABC")],
)
def test_trim_prefix(text, prefix, expected):
    assert call("trim_prefix", text, prefix) == expected


@pytest.mark.parametrize(
    ("text", "separator", "expected"),
    [
        ("a,b,,c", ",", ["a", "b", "", "c"]),
        (",a,", ",", ["", "a", ""]),
        ("", ",", [""]),
        ("abc", "", ["a", "b", "c"]),
        ("h𐐀llo", "", ["h", "𐐀", "l", "l", "o"]),
        ("", "", []),
        ("a::b", "::", ["a", "b"]),
    ],
)
def test_split(text, separator, expected):
    assert call("split", text, separator) == expected


@pytest.mark.parametrize(
    ("text", "length", "expected"),
    [
        ("héllo", 2, "hé"),
        ("abc", 2.6, "ab"),
        ("abc", -0.5, ""),
        ("abc", -1, ""),
        ("abc", 3, "abc"),
        ("abc", 1e300, "abc"),
        ("𐐀𐐁", 1, "𐐀"),  # code points, not bytes or UTF-16 units
    ],
)
def test_truncate(text, length, expected):
    assert call("truncate", text, length) == expected


# -- path_canonicalize, to_boolean ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("", ""),  # posixpath.normpath gives "."
        ("//a", "/a"),  # posixpath.normpath keeps the double slash
        ("//", "/"),
        ("//a/../..", "/"),
        ("///", "/"),
        (".", "."),
        ("a/..", "."),
        ("a/../..", ".."),
        ("../a/..", ".."),
        ("/../../x", "/x"),
        ("./a/./b/", "a/b"),
        ("a//b/../c/.", "a/c"),
        ("/etc*/", "/etc*"),
        ("C:\\dir\\..\\x", "C:\\dir\\..\\x"),  # Linux rules: a backslash is an ordinary character
    ],
)
def test_path_canonicalize(path, expected):
    assert call("path_canonicalize", path) == expected


@pytest.mark.parametrize(("text", "expected"), [("true", True), ("TRUE", True), ("fAlSe", False)])
def test_to_boolean(text, expected):
    assert call("to_boolean", text) is expected


@pytest.mark.parametrize("text", ["", " true", "true\n", "yes", "1", "truee"])
def test_to_boolean_refuses_anything_else(text):
    with pytest.raises(jp.FunctionError) as caught:
        call("to_boolean", text)
    assert str(caught.value) == (
        f"JMESPath function 'to_boolean': lowercase argument must be 'true' or 'false' (provided: '{text}')"
    )


# -- through the expression language ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("split('a,b', ',')", ["a", "b"]),
        ("trim('xxaxx', 'x')", "a"),
        ("replace('aaa', 'a', 'b', `1`)", "baa"),
        ("to_upper('straße')", "STRAßE"),
        ("compare('b', 'a') == `1`", True),  # an ordinary number, not a Go int
    ],
)
def test_in_expressions(expression, expected):
    assert jp.search(expression, None) == expected


@pytest.mark.parametrize(
    "expression",
    [
        "split('a,b', ',', `1`)",  # the community split's count is gone
        "trim('  a  ')",  # the cutset is required
        "replace('abc', 'b', 'x')",  # so is the count
        "to_upper(`1`)",
        "truncate('abc', '1')",
        "compare('a', `null`)",
    ],
)
def test_kyverno_signatures(expression):
    with pytest.raises((jp.ArityError, jp.InvalidTypeError)):
        jp.search(expression, None)
