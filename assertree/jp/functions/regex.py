"""Kyverno's regular expressions and wildcard patterns, with Go's semantics.

Kyverno compiles patterns with Go's `regexp`: RE2 syntax (no backreferences
or lookaround, ASCII ``\\d\\w\\s``, ``$`` only at the very end), leftmost-first
matching. google-re2 is the same engine, so matching is delegated to it; what
Python's `re2` wrapper does differently from Go is written out here:

* replacement templates follow Go's ``Regexp.Expand`` (``$name`` takes the
  longest run of letters, digits and ``_``, ``${name}``, ``$$``; unknown
  groups insert nothing), not Python's ``\\1``;
* ``ReplaceAll`` skips an empty match right after the previous match
  (``a*`` on ``baaac`` gives ``XbXcX``), which needs our own match loop;
  it runs on UTF-8 bytes, as Go does, so offsets never need converting;
* compile errors read as Go's (``error parsing regexp: missing closing ]:
  `[` ``), and ``\\C`` (any byte), which RE2 accepts and Go does not, is
  rejected.

Numbers given where text is expected are printed with float32 precision
(`float32_text`), as Kyverno does. Compiled patterns and parsed templates are
cached, since policies apply the same few patterns to every resource.

``pattern_match`` matches with `assertree.jp.functions.wildcard` (kyverno-json's
``wildcard`` matcher too).
"""

from __future__ import annotations

import functools
import json
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:  # re2 is imported with the first pattern: wildcard-only scans never load it
    import re2

from assertree.jp.errors import FunctionError, LimitError
from assertree.jp.functions.conversions import float32_text, utf8_bytes
from assertree.jp.functions.wildcard import wildcard_match
from assertree.jp.limits import MAX_REGEX_MATCHES, MAX_STRING_LENGTH, check_string_length
from assertree.jp.registry import function

# RE2's wording of a compile error -> Go's (regexp/syntax ErrorCode texts).
_GO_ERROR_CODES = {
    "unexpected error": "regexp/syntax: internal error",
    "invalid escape sequence": "invalid escape sequence",
    "invalid character class": "invalid character class",
    "invalid character class range": "invalid character class range",
    "missing ]": "missing closing ]",
    "missing )": "missing closing )",
    "unexpected )": "unexpected )",
    "trailing \\": "trailing backslash at end of expression",
    "no argument for repetition operator": "missing argument to repetition operator",
    "invalid repetition size": "invalid repeat count",
    "bad repetition operator": "invalid nested repetition operator",
    "invalid perl operator": "invalid or unsupported Perl syntax",
    "invalid UTF-8": "invalid UTF-8",
    "invalid named capture group": "invalid named capture",
}


class RegexError(ValueError):
    """A pattern Go's `regexp` would not compile; the text is Go's message."""


@functools.cache
def _re2() -> tuple[Any, Any]:
    """The re2 module and the options every pattern is compiled with."""
    import re2

    options = re2.Options()
    options.log_errors = False  # RE2 otherwise logs every bad pattern to stderr
    return re2, options


class _Compiled(NamedTuple):
    regex: re2._Regexp
    groups: dict[str, int]


@functools.lru_cache(maxsize=512)
def compile_go(pattern: str) -> _Compiled:
    """`pattern` compiled with Go's syntax rules; RegexError with Go's message if it is invalid."""
    re2, options = _re2()
    try:
        regex = re2.compile(pattern, options)
    except re2.error as error:
        raise RegexError(_go_error_text(error)) from None
    if _has_any_byte_escape(pattern):
        raise RegexError("error parsing regexp: invalid escape sequence: `\\C`")
    return _Compiled(regex, regex.groupindex)


def _go_error_text(error: re2.error) -> str:
    message = error.args[0] if error.args else ""
    if isinstance(message, bytes):
        message = message.decode("utf-8", "replace")
    code, _, argument = message.partition(": ")
    if code.startswith("pattern too large"):
        return "error parsing regexp: expression too large"
    return f"error parsing regexp: {_GO_ERROR_CODES.get(code, code)}: {_go_backquote(argument)}"


def _go_backquote(text: str) -> str:
    """Go's ``%#q``: backquoted when that is possible, else double-quoted."""
    if "`" not in text and all(ch == "\t" or ch.isprintable() for ch in text):
        return f"`{text}`"
    return json.dumps(text, ensure_ascii=False)


def _has_any_byte_escape(pattern: str) -> bool:
    """Whether `pattern` uses ``\\C`` outside a ``\\Q…\\E`` quote."""
    index = 0
    while (index := pattern.find("\\", index)) != -1:
        escaped = pattern[index + 1 : index + 2]
        if escaped == "C":
            return True
        if escaped == "Q":
            end = pattern.find("\\E", index + 2)
            if end == -1:
                return False
            index = end
        index += 2
    return False


def _as_text(value: str | int | float) -> str:
    return value if isinstance(value, str) else float32_text(value)


# -- Go's Regexp.Expand --------------------------------------------------------------------------


@functools.lru_cache(maxsize=512)
def _parse_template(template: str) -> tuple[bytes | int | str, ...]:
    """Split a Go replacement template into literal bytes and group references (index or name)."""
    pieces: list[bytes | int | str] = []
    literal: list[str] = []
    rest = template
    while (dollar := rest.find("$")) != -1:
        literal.append(rest[:dollar])
        rest = rest[dollar + 1 :]
        if rest.startswith("$"):
            literal.append("$")
            rest = rest[1:]
            continue
        reference = _group_reference(rest)
        if reference is None:  # malformed: the $ is kept as text
            literal.append("$")
            continue
        group, rest = reference
        if literal:
            pieces.append(utf8_bytes("".join(literal)))
            literal = []
        pieces.append(group)
    literal.append(rest)
    if text := "".join(literal):
        pieces.append(utf8_bytes(text))
    return tuple(pieces)


def _group_reference(text: str) -> tuple[int | str, str] | None:
    """The group named right after a ``$`` and the text after it, or None if there is no valid name."""
    braced = text.startswith("{")
    start = 1 if braced else 0
    end = start
    while end < len(text) and (text[end].isalpha() or text[end].isdecimal() or text[end] == "_"):
        end += 1
    if end == start:
        return None
    name = text[start:end]
    if braced:
        if not text.startswith("}", end):
            return None
        end += 1
    return _group_index(name), text[end:]


def _group_index(name: str) -> int | str:
    """A numeric name is a group index, unless Go's parse gives up on it (10^8 and over) and keeps the name."""
    number = 0
    for digit in name:
        if not "0" <= digit <= "9" or number >= 100_000_000:
            return name
        number = number * 10 + int(digit)
    return number


def _expander(compiled: _Compiled, template: str):
    pieces = _parse_template(template)
    indexes: list[bytes | int] = []
    for piece in pieces:
        if isinstance(piece, str):
            piece = compiled.groups.get(piece, -1)
        indexes.append(piece)
    groups = compiled.regex.groups

    def expand(match, data: bytes, out: bytearray) -> None:
        for piece in indexes:
            if isinstance(piece, bytes):
                out += piece
            elif 0 <= piece <= groups:
                start, end = match.span(piece)
                if start >= 0:
                    out += data[start:end]

    return expand


def _replace_all(compiled: _Compiled, text: str, insert) -> str:
    """Go's ``ReplaceAll``: every match replaced, but not an empty match right after the previous one."""
    data = utf8_bytes(text)
    out = bytearray()
    regex = compiled.regex
    search_at = 0
    last_end = 0
    size = len(data)
    matches = 0
    while search_at <= size:
        match = regex.search(data, search_at)
        if match is None:
            break
        matches += 1
        if matches > MAX_REGEX_MATCHES:  # each match is a step of this loop: bound the time as well as the text
            raise LimitError(f"regex_replace_all(): more than {MAX_REGEX_MATCHES:,} matches, assertree's limit")
        start, end = match.span()
        out += data[last_end:start]
        if end > last_end or start == 0:
            insert(match, data, out)
            if len(out) > MAX_STRING_LENGTH:  # `$0$0$0...` for every empty match multiplies the text
                check_string_length("regex_replace_all()", len(out))
        last_end = end
        step = _rune_width(data, search_at)
        search_at = search_at + step if search_at + step > end else end
    out += data[last_end:]
    return out.decode("utf-8")


def _rune_width(data: bytes, at: int) -> int:
    if at >= len(data):
        return 1
    lead = data[at]
    if lead < 0xC0:
        return 1
    if lead < 0xE0:
        return 2
    return 3 if lead < 0xF0 else 4


# -- the functions --------------------------------------------------------------------------------


@function("regex_match(pattern: string, text: string|number) -> boolean")
def regex_match(pattern, text):
    """Whether the Go (RE2) regular expression `pattern` matches anywhere in `text`."""
    try:
        compiled = compile_go(pattern)
    except RegexError as error:
        raise FunctionError(str(error)) from None
    return compiled.regex.search(utf8_bytes(_as_text(text))) is not None


@function("regex_replace_all(pattern: string, text: string|number, replacement: string|number) -> string")
def regex_replace_all(pattern, text, replacement):
    """Replaces every match of `pattern` in `text`; `$1`, `${name}` in `replacement` insert groups."""
    compiled = _compiled_for("regex_replace_all", pattern)
    return _replace_all(compiled, _as_text(text), _expander(compiled, _as_text(replacement)))


@function("regex_replace_all_literal(pattern: string, text: string|number, replacement: string|number) -> string")
def regex_replace_all_literal(pattern, text, replacement):
    """Replaces every match of `pattern` in `text` with `replacement`, inserted verbatim."""
    compiled = _compiled_for("regex_replace_all_literal", pattern)
    literal = utf8_bytes(_as_text(replacement))

    def insert(match, data: bytes, out: bytearray) -> None:
        out += literal

    return _replace_all(compiled, _as_text(text), insert)


def _compiled_for(name: str, pattern: str) -> _Compiled:
    try:
        return compile_go(pattern)
    except RegexError as error:
        raise FunctionError.kyverno(name, str(error)) from None


@function("pattern_match(pattern: string, text: string|number) -> boolean")
def pattern_match(pattern, text):
    """Whether `text` matches the wildcard `pattern` (`*` any run, `?` one character)."""
    return wildcard_match(pattern, _as_text(text))
