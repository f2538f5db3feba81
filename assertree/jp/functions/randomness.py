"""Kyverno's `random(pattern)`: a random string matching a Go regular expression.

Kyverno hands the pattern to github.com/zach-klippenstein/goregen, which
parses it with Go's `regexp/syntax` and **no flags**: POSIX-style syntax
without Perl extensions. So ``[a-z0-9]{8}``, ``(ab|cd)+``, ``[[:alpha:]]``
and ``\\x41`` work, while ``\\d``, ``\\w``, ``\\A``, ``(?:…)``, ``(?i)``
and ``\\pL`` are errors with Go's messages (``error parsing regexp: invalid
escape sequence: `\\d```), and a negated class never yields a newline.

No Python library parses that dialect (``re``'s parser accepts Perl syntax,
RE2 has no generator), so the parser is written here, following Go's rules
for repeat counts (at most 1000, also when nested), literal ``{``, ``-``
placement in classes and error texts. Generation follows goregen:
alternatives and class members are drawn uniformly, ``x{n,m}`` repeats
uniformly in n..m, unbounded repeats up to 4096 times, anchors produce
nothing, ``.`` is any code point but ``\\n`` (goregen's ``.`` mostly yields
U+FFFD; here every code point is equally likely). Surrogates are never
produced. Two limits keep a policy from hanging a scan: patterns nest at
most 200 levels deep, and a pattern whose output could exceed ten million characters
(``(a*)*``) is rejected. Randomness comes from `secrets`, so names and
tokens made with `random` are unpredictable.
"""

from __future__ import annotations

import functools
import secrets
from dataclasses import dataclass, field
from typing import Protocol

from assertree.jp.errors import FunctionError
from assertree.jp.limits import MAX_STRING_LENGTH
from assertree.jp.registry import function

MAX_UNBOUNDED = 4096
MAX_REPEAT = 1000
MAX_HEIGHT = 200
MAX_LENGTH = MAX_STRING_LENGTH  # a pattern that could generate more is refused before generating
_MAX_RUNE = 0x10FFFF
_SURROGATES = (0xD800, 0xDFFF)

_RNG = secrets.SystemRandom()

_POSIX_CLASSES: dict[str, list[tuple[int, int]]] = {
    "alnum": [(0x30, 0x39), (0x41, 0x5A), (0x61, 0x7A)],
    "alpha": [(0x41, 0x5A), (0x61, 0x7A)],
    "ascii": [(0x00, 0x7F)],
    "blank": [(0x09, 0x09), (0x20, 0x20)],
    "cntrl": [(0x00, 0x1F), (0x7F, 0x7F)],
    "digit": [(0x30, 0x39)],
    "graph": [(0x21, 0x7E)],
    "lower": [(0x61, 0x7A)],
    "print": [(0x20, 0x7E)],
    "punct": [(0x21, 0x2F), (0x3A, 0x40), (0x5B, 0x60), (0x7B, 0x7E)],
    "space": [(0x09, 0x0D), (0x20, 0x20)],
    "upper": [(0x41, 0x5A)],
    "word": [(0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A)],
    "xdigit": [(0x30, 0x39), (0x41, 0x46), (0x61, 0x66)],
}


class PatternError(ValueError):
    """A pattern Go's parser rejects; the text is Go's ``error parsing regexp: …``."""

    def __init__(self, code: str, expression: str) -> None:
        super().__init__(f"error parsing regexp: {code}: `{expression}`")


# -- the syntax tree: each node knows how to generate text and its longest output -----------------


class _Node(Protocol):
    """What every node below offers."""

    @property
    def height(self) -> int: ...  # nesting depth, checked against MAX_HEIGHT

    def generate(self, out: list[str]) -> None: ...

    def longest(self) -> int: ...


@dataclass
class _Empty:
    height = 1

    def generate(self, out: list[str]) -> None:
        pass

    def longest(self) -> int:
        return 0


@dataclass
class _Literal:
    char: str
    height = 1

    def generate(self, out: list[str]) -> None:
        out.append(self.char)

    def longest(self) -> int:
        return 1


@dataclass
class _Class:
    """A set of code points as sorted, disjoint, inclusive ranges (surrogates removed)."""

    ranges: list[tuple[int, int]]
    size: int = field(init=False)
    height = 1

    def __post_init__(self) -> None:
        self.ranges = _without_surrogates(self.ranges)
        self.size = sum(hi - lo + 1 for lo, hi in self.ranges)

    def generate(self, out: list[str]) -> None:
        if not self.size:  # only surrogates: Go writes them as U+FFFD
            out.append("\ufffd")
            return
        index = _RNG.randrange(self.size)
        for lo, hi in self.ranges:
            if index <= hi - lo:
                out.append(chr(lo + index))
                return
            index -= hi - lo + 1

    def longest(self) -> int:
        return 1


@dataclass
class _Concat:
    items: list

    def __post_init__(self) -> None:
        self.height = 1 + max(item.height for item in self.items)

    def generate(self, out: list[str]) -> None:
        for item in self.items:
            item.generate(out)

    def longest(self) -> int:
        return sum(item.longest() for item in self.items)


@dataclass
class _Alternate:
    branches: list

    def __post_init__(self) -> None:
        self.height = 1 + max(branch.height for branch in self.branches)

    def generate(self, out: list[str]) -> None:
        _RNG.choice(self.branches).generate(out)

    def longest(self) -> int:
        return max(branch.longest() for branch in self.branches)


@dataclass
class _Repeat:
    sub: _Node
    min: int
    max: int  # -1: unbounded

    def __post_init__(self) -> None:
        self.height = 1 + self.sub.height

    def generate(self, out: list[str]) -> None:
        high = MAX_UNBOUNDED if self.max < 0 else self.max
        for _ in range(_RNG.randint(self.min, max(self.min, high))):
            self.sub.generate(out)

    def longest(self) -> int:
        high = MAX_UNBOUNDED if self.max < 0 else self.max
        return max(self.min, high) * self.sub.longest()


def _without_surrogates(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    low, high = _SURROGATES
    result = []
    for lo, hi in ranges:
        if hi < low or lo > high:
            result.append((lo, hi))
            continue
        if lo < low:
            result.append((lo, low - 1))
        if hi > high:
            result.append((high + 1, hi))
    return result


def _normalize(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for lo, hi in sorted(ranges):
        if merged and lo <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], hi))
        else:
            merged.append((lo, hi))
    return merged


def _negate(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    result = []
    next_start = 0
    for lo, hi in _normalize(ranges):
        if lo > next_start:
            result.append((next_start, lo - 1))
        next_start = hi + 1
    if next_start <= _MAX_RUNE:
        result.append((next_start, _MAX_RUNE))
    return result


# -- the parser: Go's regexp/syntax with flags 0 ---------------------------------------------------


class _Parser:
    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        self.pos = 0
        self.depth = 0

    def parse(self):
        node = self.alternation()
        if self.pos < len(self.pattern):  # only a ')' stops the top level early
            raise PatternError("unexpected )", self.pattern)
        return node

    def alternation(self):
        branches = [self.concatenation()]
        while self.pos < len(self.pattern) and self.pattern[self.pos] == "|":
            self.pos += 1
            branches.append(self.concatenation())
        return branches[0] if len(branches) == 1 else self.checked(_Alternate(branches))

    def concatenation(self):
        items: list = []
        text = self.pattern
        while self.pos < len(text) and text[self.pos] not in "|)":
            char = text[self.pos]
            if char in "*+?":
                self.repeat(items, {"*": (0, -1), "+": (1, -1), "?": (0, 1)}[char], self.pos + 1)
            elif char == "{" and (counts := self.repeat_counts()) is not None:
                bounds, end = counts
                self.repeat(items, bounds, end)
            elif char == "(":
                self.pos += 1
                self.depth += 1
                if self.depth > MAX_HEIGHT:
                    raise PatternError("expression nests too deeply", text)
                items.append(self.alternation())
                if self.pos >= len(text):
                    raise PatternError("missing closing )", text)
                self.pos += 1  # the ')'
                self.depth -= 1
            elif char == "[":
                items.append(self.char_class())
            elif char in "^$":
                items.append(_Empty())
                self.pos += 1
            elif char == ".":
                items.append(_Class([(0, 9), (11, _MAX_RUNE)]))
                self.pos += 1
            elif char == "\\":
                items.append(_Literal(self.escape()))
            else:  # a literal, '{' that starts no repeat count included
                items.append(_Literal(char))
                self.pos += 1
        if not items:
            return _Empty()
        return items[0] if len(items) == 1 else self.checked(_Concat(items))

    def repeat(self, items: list, bounds: tuple[int, int], end: int) -> None:
        operator = self.pattern[self.pos : end]
        if not items:
            raise PatternError("missing argument to repetition operator", operator)
        low, high = bounds
        node = _Repeat(items[-1], low, high)
        if operator[0] == "{" and (low >= 2 or high >= 2) and not _repeat_is_valid(node, MAX_REPEAT):
            raise PatternError("invalid repeat count", operator)
        items[-1] = self.checked(node)
        self.pos = end

    def checked(self, node):
        """`node`, unless it nests too deeply to generate from without exhausting Python's stack."""
        if node.height > MAX_HEIGHT:
            raise PatternError("expression nests too deeply", self.pattern)
        return node

    def repeat_counts(self) -> tuple[tuple[int, int], int] | None:
        """``{n}``, ``{n,}``, ``{n,m}`` at pos: ((min, max), end), or None when `{` is a literal."""
        text, pos = self.pattern, self.pos + 1
        low, pos = _go_int(text, pos)
        if low is None or pos >= len(text):
            return None
        high = low
        if text[pos] == ",":
            pos += 1
            if pos >= len(text):
                return None
            if text[pos] == "}":
                high = -1
            else:
                upper, pos = _go_int(text, pos)
                if upper is None:
                    return None
                high = upper
                if high == -2:  # too big
                    low = -1
        if pos >= len(text) or text[pos] != "}":
            return None
        end = pos + 1
        if low < 0 or low > MAX_REPEAT or high > MAX_REPEAT or (high >= 0 and low > high):
            raise PatternError("invalid repeat count", text[self.pos : end])
        return (low, high), end

    def escape(self) -> str:
        """One escape sequence at pos (a backslash): the character it stands for."""
        text, start = self.pattern, self.pos
        pos = start + 1
        if pos >= len(text):
            raise PatternError("trailing backslash at end of expression", "")
        char = text[pos]
        pos += 1
        if char.isascii() and not char.isalnum():
            self.pos = pos
            return char
        if char in "01234567":
            if char != "0" and (pos >= len(text) or text[pos] not in "01234567"):
                raise PatternError("invalid escape sequence", text[start:pos])  # a backreference
            value = int(char)
            for _ in range(2):
                if pos < len(text) and text[pos] in "01234567":
                    value = value * 8 + int(text[pos])
                    pos += 1
            self.pos = pos
            return chr(value)
        if char == "x":
            return self.hex_escape(start, pos)
        simple = {"a": "\a", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}.get(char)
        if simple is None:
            raise PatternError("invalid escape sequence", text[start:pos])
        self.pos = pos
        return simple

    def hex_escape(self, start: int, pos: int) -> str:
        """``\\xHH`` or ``\\x{H…}`` after `start`; errors quote the text read so far, as Go does."""
        text = self.pattern

        def invalid(upto: int) -> PatternError:
            return PatternError("invalid escape sequence", text[start:upto])

        if pos >= len(text):
            raise invalid(pos)
        if text[pos] != "{":
            if pos + 1 >= len(text) or not _is_hex(text[pos]) or not _is_hex(text[pos + 1]):
                raise invalid(min(pos + 2, len(text)))
            self.pos = pos + 2
            return chr(int(text[pos : pos + 2], 16))
        pos += 1
        value = digits = 0
        while True:
            if pos >= len(text):
                raise invalid(pos)
            char = text[pos]
            pos += 1
            if char == "}":
                break
            if not _is_hex(char):
                raise invalid(pos)
            value = value * 16 + int(char, 16)
            digits += 1
            if value > _MAX_RUNE:
                raise invalid(pos)
        if not digits:
            raise invalid(pos)
        self.pos = pos
        return chr(value)

    def char_class(self) -> _Class:
        text, start = self.pattern, self.pos
        pos = start + 1
        ranges: list[tuple[int, int]] = []
        negated = pos < len(text) and text[pos] == "^"
        if negated:
            pos += 1
            ranges.append((10, 10))  # without Go's ClassNL flag a negated class excludes \n
        first = True
        while pos >= len(text) or text[pos] != "]" or first:
            if pos < len(text) and text[pos] == "-" and not first and (pos + 1 == len(text) or text[pos + 1] != "]"):
                raise PatternError("invalid character class range", text[pos : pos + 2])
            first = False
            if text.startswith("[:", pos) and (close := text.find(":]", pos + 2)) >= 0:
                name = text[pos : close + 2]
                inner = name[2:-2]
                group = _POSIX_CLASSES.get(inner.removeprefix("^"))
                if group is None:
                    raise PatternError("invalid character class range", name)
                ranges.extend(_negate(group) if inner.startswith("^") else group)
                pos = close + 2
                continue
            range_start = pos
            lo, pos = self.class_char(pos, start)
            hi = lo
            if pos + 1 < len(text) and text[pos] == "-" and text[pos + 1] != "]":
                hi, pos = self.class_char(pos + 1, start)
                if hi < lo:
                    raise PatternError("invalid character class range", text[range_start:pos])
            ranges.append((lo, hi))
        self.pos = pos + 1
        ranges = _normalize(ranges)
        if negated:
            ranges = _negate(ranges)
        if not ranges:  # goregen has no generator for a class that matches nothing
            raise ValueError(f"invalid generator pattern: /{self.pattern}/")
        return _Class(ranges)

    def class_char(self, pos: int, class_start: int) -> tuple[int, int]:
        if pos >= len(self.pattern):
            raise PatternError("missing closing ]", self.pattern[class_start:])
        if self.pattern[pos] == "\\":
            self.pos = pos
            char = self.escape()
            return ord(char), self.pos
        return ord(self.pattern[pos]), pos + 1


def _is_hex(char: str) -> bool:
    return char in "0123456789abcdefABCDEF"


def _go_int(text: str, pos: int) -> tuple[int | None, int]:
    """Go's parseInt for repeat counts: digits without a leading zero; -2 when too big."""
    end = pos
    while end < len(text) and text[end].isascii() and text[end].isdigit():
        end += 1
    digits = text[pos:end]
    if not digits or (len(digits) >= 2 and digits[0] == "0"):
        return None, pos
    return (int(digits) if len(digits) <= 9 else -2), end


def _repeat_is_valid(node, limit: int) -> bool:
    """Go's repeatIsValid: nested counted repeats may not multiply past `limit`."""
    if isinstance(node, _Repeat) and node.max != 0:
        count = node.max if node.max > 0 else node.min
        if count > limit:
            return False
        if count > 0:
            limit //= count
    children = (
        [node.sub]
        if isinstance(node, _Repeat)
        else node.items
        if isinstance(node, _Concat)
        else node.branches
        if isinstance(node, _Alternate)
        else []
    )
    return all(_repeat_is_valid(child, limit) for child in children)


@functools.lru_cache(maxsize=256)
def compile_pattern(pattern: str):
    """Parse `pattern` once; raise PatternError with Go's text, or when output could be huge."""
    node = _Parser(pattern).parse()
    if node.longest() > MAX_LENGTH:
        raise ValueError(f"pattern {pattern!r} can generate more than {MAX_LENGTH} characters")
    return node


@function("random(pattern: string) -> string")
def random(pattern):
    """A random string matching the Go regular expression `pattern`, e.g. `[a-z0-9]{8}`."""
    if not pattern:
        raise FunctionError("no pattern provided")
    try:
        node = compile_pattern(pattern)
    except ValueError as error:
        raise FunctionError(str(error)) from None
    out: list[str] = []
    node.generate(out)
    return "".join(out)
