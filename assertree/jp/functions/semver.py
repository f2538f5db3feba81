"""Kyverno's `semver_compare`: github.com/blang/semver v4 versions and ranges.

Written by hand because no Python library speaks blang's range grammar: the
PyPI `semver` package matches one comparator at a time, `node-semver` and
`nodesemver` follow npm (``~``, ``^``, hyphen ranges, prereleases excluded
from ranges), and `packaging` is PEP 440. blang's rules that users can see:

* the version is parsed strictly (``MAJOR.MINOR.PATCH[-PRE][+BUILD]``, no
  ``v``, no leading zeros) and a version that fails to parse is silently
  0.0.0, because Kyverno ignores the parse error;
* a range is words split on spaces (a space right after ``<``, ``>`` or
  ``=`` does not split, and one-character words are dropped, as blang's
  splitter does), ``||`` between AND-groups; comparators are ``<``,
  ``<=``, ``>``, ``>=``, ``=``, ``==``, none (equal), ``!`` and ``!=``;
* any word containing ``x`` goes through blang's wildcard expansion
  (``1.2.x`` -> ``>=1.2.0 <1.3.0``, ``4.x.x`` -> ``>=4.0.0 <4.1.0``,
  ``!1.x`` -> ``<1.0.0 >=2.0.0``, which nothing satisfies), quirks included;
* precedence is semver's, build metadata ignored, and prereleases are not
  excluded (``1.2.3-alpha`` satisfies ``>1.2.2``).

Error texts are blang's own. Parsed ranges are cached: policies compare many
versions against the same few literal ranges.
"""

from __future__ import annotations

import functools
import unicodedata
from collections.abc import Callable
from typing import NamedTuple

from assertree.jp.errors import FunctionError
from assertree.jp.registry import function
from assertree.jp.values import go_quote

_NUMBERS = frozenset("0123456789")
_ALPHANUM = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-")
_UINT64_MAX = (1 << 64) - 1
_INT64_MAX = (1 << 63) - 1


class Version(NamedTuple):
    """A parsed version; `pre` holds ints for numeric identifiers, strings otherwise."""

    major: int
    minor: int
    patch: int
    pre: tuple[int | str, ...] = ()
    build: tuple[str, ...] = ()


ZERO = Version(0, 0, 0)



def _uint(text: str, what: str) -> int:
    if not set(text) <= _NUMBERS:
        raise ValueError(f"Invalid character(s) found in {what} number {go_quote(text)}")
    if len(text) > 1 and text[0] == "0":
        raise ValueError(f"{what.capitalize()} number must not contain leading zeroes {go_quote(text)}")
    return _parse_uint(text)


def _parse_uint(text: str) -> int:
    """Go's ``strconv.ParseUint(text, 10, 64)`` for a string of ASCII digits."""
    if not text:
        raise ValueError('strconv.ParseUint: parsing "": invalid syntax')
    value = int(text)
    if value > _UINT64_MAX:
        raise ValueError(f"strconv.ParseUint: parsing {go_quote(text)}: value out of range")
    return value


def parse_version(text: str) -> Version:
    """Parse a semantic version strictly, raising ValueError with blang's message."""
    if not text:
        raise ValueError("Version string empty")
    parts = text.split(".", 2)
    if len(parts) != 3:
        raise ValueError("No Major.Minor.Patch elements found")
    major = _uint(parts[0], "major")
    minor = _uint(parts[1], "minor")
    rest = parts[2]
    build: list[str] = []
    pre_texts: list[str] = []
    if "+" in rest:
        rest, _, build_text = rest.partition("+")
        build = build_text.split(".")
    if "-" in rest:
        rest, _, pre_text = rest.partition("-")
        pre_texts = pre_text.split(".")
    patch = _uint(rest, "patch")
    pre = tuple(_prerelease(identifier) for identifier in pre_texts)
    for identifier in build:
        if not identifier:
            raise ValueError("Build meta data is empty")
        if not set(identifier) <= _ALPHANUM:
            raise ValueError(f"Invalid character(s) found in build meta data {go_quote(identifier)}")
    return Version(major, minor, patch, pre, tuple(build))


def _prerelease(identifier: str) -> int | str:
    if not identifier:
        raise ValueError("Prerelease is empty")
    if set(identifier) <= _NUMBERS:
        if len(identifier) > 1 and identifier[0] == "0":
            raise ValueError(f"Numeric PreRelease version must not contain leading zeroes {go_quote(identifier)}")
        return _parse_uint(identifier)
    if set(identifier) <= _ALPHANUM:
        return identifier
    raise ValueError(f"Invalid character(s) found in prerelease {go_quote(identifier)}")


def compare(a: Version, b: Version) -> int:
    """Semver precedence: -1, 0 or 1. A prerelease sorts before its release; build is ignored."""
    if a[:3] != b[:3]:
        return -1 if a[:3] < b[:3] else 1
    if not a.pre or not b.pre:
        return (not a.pre) - (not b.pre)
    for x, y in zip(a.pre, b.pre):
        if x == y:
            continue
        if isinstance(x, int) and isinstance(y, int):
            return -1 if x < y else 1
        if isinstance(x, str) and isinstance(y, str):
            return -1 if x < y else 1  # compared by bytes (ASCII)
        return -1 if isinstance(x, int) else 1  # numeric identifiers sort before alphanumeric ones
    return (len(a.pre) > len(b.pre)) - (len(a.pre) < len(b.pre))


_COMPARATORS: dict[str, Callable[[int], bool]] = {
    "": lambda c: c == 0,
    "=": lambda c: c == 0,
    "==": lambda c: c == 0,
    ">": lambda c: c > 0,
    ">=": lambda c: c >= 0,
    "<": lambda c: c < 0,
    "<=": lambda c: c <= 0,
    "!": lambda c: c != 0,
    "!=": lambda c: c != 0,
}

Range = Callable[[Version], bool]


@functools.lru_cache(maxsize=512)
def parse_range(text: str) -> Range:
    """Compile a blang range into a predicate, raising ValueError with blang's message."""
    groups = _split_or(_split_words(text))
    alternatives: list[list[tuple[Callable[[int], bool], Version]]] = []
    for group in _expand_wildcards(groups):
        checks = []
        for word in group:
            operator, version_text = _split_comparator(word)
            test = _COMPARATORS.get(operator)
            if test is None:
                raise ValueError(
                    f"Could not parse Range {go_quote(word)}: Could not parse comparator {go_quote(operator)} "
                    f"in {go_quote(operator + version_text)}"
                )
            try:
                version = parse_version(version_text)
            except ValueError as error:
                raise ValueError(
                    f"Could not parse Range {go_quote(word)}: Could not parse version {go_quote(version_text)} "
                    f"in {go_quote(operator + version_text)}: {error}"
                ) from None
            checks.append((test, version))
        alternatives.append(checks)

    def satisfied(version: Version) -> bool:
        for group in alternatives:
            if not group:  # blang leaves a nil function here and panics when it is reached
                raise ValueError(f"Could not evaluate range {go_quote(text)}: empty group between '||'")
            if all(test(compare(version, bound)) for test, bound in group):
                return True
        return False

    return satisfied


def _split_words(text: str) -> list[str]:
    """blang's splitAndTrim: split on spaces, except a space right after ``<``, ``>`` or ``=``.

    Works on UTF-8 bytes as blang does: its length test (a word must be
    longer than one byte to be kept) counts bytes.
    """
    data = text.encode("utf-8", "surrogatepass")
    words: list[bytes] = []
    last = 0
    last_char = 0
    for i, byte in enumerate(data):
        if byte == 0x20 and last_char not in b"<>=":
            if last < i - 1:
                words.append(data[last:i])
            last = i + 1
        elif byte != 0x20:
            last_char = byte
    if last < len(data) - 1:
        words.append(data[last:])
    return [word.replace(b" ", b"").decode("utf-8", "surrogatepass") for word in words]


def _split_or(words: list[str]) -> list[list[str]]:
    groups: list[list[str]] = []
    last = 0
    for i, word in enumerate(words):
        if word == "||":
            if i == 0:
                raise ValueError("First element in range is '||'")
            groups.append(words[last:i])
            last = i + 1
    if last == len(words):
        raise ValueError("Last element in range is '||'")
    groups.append(words[last:])
    return groups


def _split_comparator(word: str) -> tuple[str, str]:
    """The operator (text before the first Unicode digit, trimmed) and the version after it."""
    for i, char in enumerate(word):
        if unicodedata.category(char) == "Nd":
            return word[:i].strip(), word[i:]
    raise ValueError(f"Could not get version from string: {go_quote(word)}")


def _expand_wildcards(groups: list[list[str]]) -> list[list[str]]:
    """blang's expandWildcardVersion: rewrite every word containing ``x`` into plain comparators.

    The version's last dot-separated part decides the kind: ``x`` after two
    parts is a patch wildcard, after one part a minor wildcard, anything else
    none (then an operator that needs an incremented bound gets an empty
    version, an error later). ``1.x.x`` is first flattened to ``1.0.0`` and
    counts as a patch wildcard, so ``4.x.x`` means ``>=4.0.0 <4.1.0``.
    """
    expanded = []
    for group in groups:
        words: list[str] = []
        for word in group:
            if "x" in word:
                operator, version_text = _split_comparator(word)
                parts = version_text.split(".")
                kind = len(parts) if parts[-1] == "x" else 0  # 3: patch wildcard, 2: minor wildcard
                flat = version_text.replace(".x.x", ".x", 1).replace(".x", ".0", 1)
                if len(flat.split(".")) == 2:
                    flat += ".0"
                increment = True
                if operator == ">":
                    result_operator = ">="
                elif operator == ">=":
                    result_operator, increment = ">=", False
                elif operator == "<":
                    result_operator, increment = "<", False
                elif operator == "<=":
                    result_operator = "<"
                elif operator in ("", "=", "=="):
                    words.append(">=" + flat)
                    result_operator = "<"
                elif operator in ("!=", "!"):
                    words.append("<" + flat)
                    result_operator = ">="
                else:  # blang drops an unknown operator here: `~1.x` becomes `1.0.0`
                    result_operator, increment = "", False
                word = result_operator + (_increment(flat, kind) if increment else flat)
            words.append(word)
        expanded.append(words)
    return expanded


def _increment(version_text: str, kind: int) -> str:
    """Bump the minor (patch wildcard) or major (minor wildcard) part; "" when blang would fail."""
    position = {3: 1, 2: 0}.get(kind)
    if position is None:
        return ""
    parts = version_text.split(".")
    number = _go_atoi(parts[position])
    if number is None:
        return ""
    parts[position] = str(number + 1)
    return ".".join(parts)


def _go_atoi(text: str) -> int | None:
    """Go's ``strconv.Atoi`` on 64 bits: optional sign, ASCII digits, int64 range; None on error."""
    digits = text[1:] if text[:1] in ("+", "-") else text
    if not digits or not set(digits) <= _NUMBERS:
        return None
    value = int(text)
    return value if -_INT64_MAX - 1 <= value <= _INT64_MAX else None


@function("semver_compare(version: string, range: string) -> boolean")
def semver_compare(version, range_):
    """True when `version` satisfies the blang/semver `range` (e.g. `>=1.2.0 <2.0.0 || 3.x`)."""
    try:
        parsed = parse_version(version)
    except ValueError:
        parsed = ZERO  # Kyverno ignores the parse error and compares the zero version
    try:
        return parse_range(range_)(parsed)
    except ValueError as error:
        raise FunctionError(str(error)) from None
