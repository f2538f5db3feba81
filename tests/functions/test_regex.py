"""Kyverno's regex_* and pattern_match functions, beyond the shared vectors: Go's regexp, not Python's."""

from __future__ import annotations

import time

import pytest
from support import call, call_fails_with

from assertree import jp
from assertree.jp.functions.regex import compile_go
from assertree.jp.functions.wildcard import wildcard_match
from assertree.jp.registry import lookup

# -- Go replacement templates --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "text", "template", "expected"),
    [
        ("a(b)", "abab", "$1x", ""),  # the longest name wins: group "1x", which does not exist
        ("a(b)", "abab", "${1}x", "bxbx"),
        ("a(?P<n>b)", "abab", "<$n>", "<b><b>"),
        ("a(?P<n>b)", "abab", "<${n}>", "<b><b>"),
        ("(?P<1x>b)", "ab", "[$1x]", "a[b]"),  # a group may be named "1x"
        ("(?P<é>b)", "ab", "[$é]", "a[b]"),  # names are Unicode letters, digits and _
        ("a", "aa", "$0$0", "aaaa"),
        ("(a)", "a", "$00000001", "a"),  # a numeric name is read as a number
        ("(a)", "a", "$1234567890|", "|"),  # too large to be an index: a name, and no such group
        ("(a)", "a", "$2|$10|${x}", "||"),  # out-of-range indexes and unknown names insert nothing
        ("(a)|b", "ab", "[$1]", "[a][]"),  # a group that did not take part inserts nothing
        ("b", "abc", "$$", "a$c"),
        ("b", "abc", "$", "a$c"),  # a $ that starts no name is kept
        ("b", "abc", "${", "a${c"),
        ("b", "abc", "${}", "a${}c"),
        ("b", "abc", "${1", "a${1c"),
        ("b", "abc", "$-", "a$-c"),
        ("(b)", "abc", "\\1", "a\\1c"),  # backslashes mean nothing
        ("(b)", "abc", "\\g<1>", "a\\g<1>c"),
    ],
)
def test_replacement_templates(pattern, text, template, expected):
    assert call("regex_replace_all", pattern, text, template) == expected


@pytest.mark.parametrize("template", ["$1", "${1}", "$$", "\\1", "$"])
def test_literal_replacement_is_verbatim(template):
    assert call("regex_replace_all_literal", "a(b)", "xab", template) == "x" + template


# -- Go's match loop: empty matches, byte offsets, anchors ----------------------------------------


@pytest.mark.parametrize(
    ("pattern", "text", "expected"),
    [
        ("a*", "baaac", "XbXcX"),  # no empty match right after a match (Python's re gives XbXXcX)
        ("", "abc", "XaXbXcX"),
        ("", "héé", "XhXéXéX"),  # empty matches fall between code points, never inside one
        ("x*", "日本", "X日X本X"),
        ("é", "héé", "hXX"),
        ("^", "ab", "Xab"),
        ("$", "ab", "abX"),
        ("(?m)^", "a\nb", "Xa\nXb"),
        ("\\b", "ab cd", "XabX XcdX"),
        ("a+?", "aaa", "XXX"),
        ("(?U)a+", "aaa", "XXX"),
        ("a|ab", "ab", "Xb"),  # leftmost-first, not leftmost-longest
        ("z", "abc", "abc"),
    ],
)
def test_replace_all_matches_like_go(pattern, text, expected):
    assert call("regex_replace_all", pattern, text, "X") == expected
    assert call("regex_replace_all_literal", pattern, text, "X") == expected


@pytest.mark.parametrize(
    ("pattern", "text", "expected"),
    [
        ("b", "abc", True),  # a search, not a full match
        ("^b", "abc", False),
        ("^\\w+$", "héllo", False),  # \w, \d, \s, \b are ASCII only
        ("^\\d$", "٣", False),
        ("^\\s$", "\u00a0", False),
        ("^\\pL+$", "héllo", True),
        ("^\\p{Greek}+$", "αβγ", True),
        ("^[[:alpha:]]+$", "abc", True),
        ("^a$", "a\n", False),  # $ is the very end of the text
        ("(?m)^a$", "a\nb", True),
        ("a.c", "a\nc", False),
        ("(?s)a.c", "a\nc", True),
        ("(?i)straße", "STRASSE", False),  # simple case folding only
        ("(?i)k", "\u212a", True),  # Kelvin sign folds to k
        ("\\Aabc\\z", "abc", True),
        ("(?<n>a)", "a", True),  # Go 1.22 syntax for named groups
        ("\\Q.*\\E", "a.*b", True),
        ("\\Q.*\\E", "ab", False),
    ],
)
def test_regex_match_uses_re2_syntax(pattern, text, expected):
    assert call("regex_match", pattern, text) is expected


@pytest.mark.parametrize(
    ("function", "args", "expected"),
    [
        ("regex_match", ("^123456790$", 123456789), True),  # numbers are printed as float32
        ("regex_match", ("^1.5$", 1.5), True),
        ("regex_match", ("^-0$", -0.0), True),
        ("regex_match", ("^1000000000000000000000$", 1e21), True),
        ("regex_replace_all", ("2", 123, 9), "193"),
        ("regex_replace_all", ("6$", 16777217, 0.5), "1677721" + "0.5"),
        ("regex_replace_all_literal", ("^", 12, 3.25), "3.2512"),
        ("pattern_match", ("1677721?", 16777217), True),
        ("pattern_match", ("1.5*", 1.5), True),
    ],
)
def test_numbers_become_float32_text(function, args, expected):
    assert call(function, *args) == expected


def test_lone_surrogates_are_replaced_as_go_would():
    assert call("regex_replace_all", "x", "a\ud800x", "y") == "a\ufffdy"


# -- errors ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "go_error"),
    [
        ("[", "error parsing regexp: missing closing ]: `[`"),
        ("(a", "error parsing regexp: missing closing ): `(a`"),
        ("a)", "error parsing regexp: unexpected ): `a)`"),
        ("a{1001}", "error parsing regexp: invalid repeat count: `{1001}`"),
        ("(a)\\1", "error parsing regexp: invalid escape sequence: `\\1`"),
        ("a(?=b)", "error parsing regexp: invalid or unsupported Perl syntax: `(?=`"),
        ("a(?<!b)", "error parsing regexp: invalid or unsupported Perl syntax: `(?<!`"),
        ("*", "error parsing regexp: missing argument to repetition operator: `*`"),
        ("a**", "error parsing regexp: invalid nested repetition operator: `**`"),
        ("[z-a]", "error parsing regexp: invalid character class range: `z-a`"),
        ("\\", "error parsing regexp: trailing backslash at end of expression: ``"),
        ("\\Z", "error parsing regexp: invalid escape sequence: `\\Z`"),
        ("\\C", "error parsing regexp: invalid escape sequence: `\\C`"),  # RE2 has \C, Go does not
    ],
)
def test_bad_patterns_give_go_errors(pattern, go_error):
    call_fails_with(go_error, "regex_match", pattern, "a")  # Kyverno returns regexp's error as it is
    call_fails_with(f"JMESPath function 'regex_replace_all': {go_error}", "regex_replace_all", pattern, "a", "b")
    call_fails_with(
        f"JMESPath function 'regex_replace_all_literal': {go_error}", "regex_replace_all_literal", pattern, "a", "b"
    )


def test_quoted_any_byte_escape_is_literal():
    assert call("regex_match", "^\\Q\\C\\E$", "\\C") is True


@pytest.mark.parametrize(
    ("function", "args"),
    [
        ("regex_match", (1, "1")),
        ("regex_match", ("a", True)),
        ("regex_match", ("a", None)),
        ("regex_replace_all", ("a", "a", ["b"])),
        ("regex_replace_all_literal", ("a", {}, "b")),
        ("pattern_match", (1, "1")),
        ("pattern_match", ("a", False)),
    ],
)
def test_argument_types(function, args):
    with pytest.raises(jp.InvalidTypeError):
        call(function, *args)


def test_compiled_patterns_are_cached():
    assert compile_go("ab+c") is compile_go("ab+c")


def test_bad_pattern_messages_are_not_logged(capfd):
    with pytest.raises(jp.JMESPathError):
        call("regex_match", "(", "a")
    assert capfd.readouterr().err == ""


# -- wildcards ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "name", "expected"),
    [
        ("*", "", True),
        ("*", "anything/at.all", True),
        ("", "", True),
        ("", "a", False),
        ("?", "", False),
        ("?", "é", True),  # ? is one code point, not one byte
        ("??", "é", False),
        ("a*b*c", "axxbyyc", True),
        ("a*b*c", "axxbyy", False),
        ("*.svc", "a.b.svc", True),
        ("*.svc", "a.b.svc.x", False),
        ("*?", "", False),
        ("*?", "x", True),
        ("**", "", True),
        ("[a]", "a", False),  # brackets, backslashes and every other character are literal
        ("[a]", "[a]", True),
        ("\\*", "*", False),
        ("\\*", "\\x", True),
        ("a*", "A", False),  # case-sensitive
        ("*a*a*a*a*b", "a" * 60, False),
    ],
)
def test_wildcards(pattern, name, expected):
    assert wildcard_match(pattern, name) is expected
    assert call("pattern_match", pattern, name) is expected
    assert call("wildcard", pattern, name) is expected


def test_wildcards_never_backtrack_exponentially():
    started = time.perf_counter()
    assert wildcard_match("*a" * 30 + "b", "a" * 2000) is False
    assert time.perf_counter() - started < 1.0


def test_registered_groups():
    assert lookup("regex_match").group == "regex"
    assert lookup("pattern_match").group == "regex"
    assert lookup("regex_replace_all").signature == (
        "regex_replace_all(pattern: string, text: string|number, replacement: string|number) -> string"
    )
