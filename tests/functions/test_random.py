"""random(pattern): Go's regexp syntax without Perl extensions, beyond the shared vectors."""

from __future__ import annotations

import re

import pytest

from assertree import jp
from assertree.jp.functions.randomness import MAX_UNBOUNDED


def generate(pattern: str) -> str:
    return jp.search("random(@)", pattern)


@pytest.mark.parametrize(
    ("pattern", "check"),
    [
        ("[a-z0-9]{8}", r"[a-z0-9]{8}"),
        ("(ab|cd){3}", r"(?:ab|cd){3}"),
        ("x?y+z*", r"x?y+z*"),
        ("[[:upper:][:digit:]]{6}", r"[A-Z0-9]{6}"),
        ("[[:^alpha:]]{6}", r"[^A-Za-z]{6}"),
        ("[]a]{4}", r"[\]a]{4}"),  # ] first in a class is a literal
        ("[a-]{4}", r"[a\-]{4}"),  # - last in a class is a literal
        ("[^a-z]{20}", r"[^a-z\n]{20}"),  # negated classes never give a newline
        (".{20}", r"[^\n]{20}"),
        ("\\x41\\x{1F600}\\101\\.\\n", "A\U0001f600A\\.\n"),
        ("a{,2}", r"a\{,2\}"),  # not a repeat count: literal text
        ("a{02}", r"a\{02\}"),
        ("^abc$", r"abc"),
        ("[[:word]]", r"[\[:word]\]"),  # no ":]": a plain class followed by a literal ]
        ("()x", r"x"),
        ("a|", r"a?"),
        ("a**", None),  # stacked repetitions are allowed without Perl syntax, but too long
    ],
)
def test_generated_text_matches(pattern, check):
    if check is None:
        with pytest.raises(jp.JMESPathError, match="can generate more than"):
            generate(pattern)
        return
    for _ in range(20):
        assert re.fullmatch(check, generate(pattern)) is not None


def test_unbounded_repeats_stop_at_4096():
    lengths = {len(generate("a*")) for _ in range(30)}
    assert max(lengths) <= MAX_UNBOUNDED and len(lengths) > 1


def test_outputs_differ():
    assert len({generate("[a-z]{16}") for _ in range(10)}) == 10


@pytest.mark.parametrize(
    ("pattern", "message"),
    [
        ("\\d", "error parsing regexp: invalid escape sequence: `\\d`"),
        ("\\w+", "error parsing regexp: invalid escape sequence: `\\w`"),
        ("\\A", "error parsing regexp: invalid escape sequence: `\\A`"),
        ("\\pL", "error parsing regexp: invalid escape sequence: `\\p`"),
        ("\\1", "error parsing regexp: invalid escape sequence: `\\1`"),
        ("\\x{110000}", "error parsing regexp: invalid escape sequence: `\\x{110000`"),
        ("\\xZ1", "error parsing regexp: invalid escape sequence: `\\xZ1`"),
        ("(?i)a", "error parsing regexp: missing argument to repetition operator: `?`"),
        ("a|*", "error parsing regexp: missing argument to repetition operator: `*`"),
        ("{2}", "error parsing regexp: missing argument to repetition operator: `{2}`"),
        ("a{1001}", "error parsing regexp: invalid repeat count: `{1001}`"),
        ("a{3,2}", "error parsing regexp: invalid repeat count: `{3,2}`"),
        ("(a{100}){11}", "error parsing regexp: invalid repeat count: `{11}`"),
        ("[z-a]", "error parsing regexp: invalid character class range: `z-a`"),
        ("[a-c-e]", "error parsing regexp: invalid character class range: `-e`"),
        ("[[:wort:]]", "error parsing regexp: invalid character class range: `[:wort:]`"),
        ("[abc", "error parsing regexp: missing closing ]: `[abc`"),
        ("(ab", "error parsing regexp: missing closing ): `(ab`"),
        ("ab)", "error parsing regexp: unexpected ): `ab)`"),
        ("ab\\", "error parsing regexp: trailing backslash at end of expression: ``"),
        ("(" * 300 + ")" * 300, "error parsing regexp: expression nests too deeply"),
        ("[^\\x00-\\x{10FFFF}]", "invalid generator pattern"),
        ("", "no pattern provided"),
    ],
)
def test_errors(pattern, message):
    with pytest.raises(jp.JMESPathError) as caught:
        generate(pattern)
    assert message in str(caught.value)
