"""Kyverno's string functions, with Go's ``strings`` semantics.

Most map straight onto Python's ``str`` methods; the differences that show
are handled here:

* Case: Go maps case one code point at a time with Unicode's *simple*
  mappings, so the length never changes (``to_upper('straße')`` is
  ``"STRAßE"``) and there is no final-sigma rule. Python's ``upper``,
  ``lower`` and ``casefold`` use the *full* mappings. Applied to a single
  code point they agree with the simple ones except where the full mapping
  gives several code points; for those, the simple mapping is the code
  point itself, with two families of exceptions that Unicode's data fix:
  U+0130 lowercases to ``i``, and the Greek small letters with
  ypogegrammeni uppercase (and their capitals fold) to the one-code-point
  titlecase/lowercase letter Python also knows. `simple_upper`,
  `simple_lower` and `simple_fold` encode exactly that (Python 3.11 carries
  Unicode 14, Go 1.21+ Unicode 15, which added no case pairs).
* `split` with an empty separator splits into code points (Python raises).
* `path_canonicalize` is Go's ``filepath.Join`` of one path on Linux:
  ``posixpath.normpath`` except that ``""`` stays ``""`` and a leading
  ``//`` is collapsed like any other run of slashes.
* Counts given as numbers (`replace`, `truncate`) are truncated toward zero.
"""

from __future__ import annotations

import math
import posixpath

from assertree.jp.errors import FunctionError
from assertree.jp.registry import function

# -- simple case mapping ---------------------------------------------------------------------------

_SIMPLE_LOWER_EXCEPTIONS = {"\u0130": "i"}  # İ: the only code point whose full lowercase is longer


def _upper_rune(char: str) -> str:
    full = char.upper()
    if len(full) == 1:
        return full
    title = char.title()  # the Greek letters with ypogegrammeni: simple uppercase == titlecase
    return title if len(title) == 1 else char


def _lower_rune(char: str) -> str:
    full = char.lower()
    return full if len(full) == 1 else _SIMPLE_LOWER_EXCEPTIONS.get(char, char)


def _fold_rune(char: str) -> str:
    full = char.casefold()
    if len(full) == 1:
        return full
    lower = char.lower()  # ẞ and the Greek capitals with prosgegrammeni fold to their lowercase
    return lower if len(lower) == 1 else char


def simple_upper(text: str) -> str:
    """Go's ``strings.ToUpper``: each code point to its simple uppercase."""
    full = text.upper()
    if len(full) == len(text):  # nothing expanded, so every code point took its simple mapping
        return full
    return "".join(map(_upper_rune, text))


def simple_lower(text: str) -> str:
    """Go's ``strings.ToLower``: each code point to its simple lowercase."""
    full = text.lower()
    if len(full) == len(text) and "\u03a3" not in text:  # Σ is the only context-dependent lowercase
        return full
    return "".join(map(_lower_rune, text))


def simple_fold(text: str) -> str:
    """`text` with each code point replaced by its simple case folding (Go's ``EqualFold`` classes)."""
    full = text.casefold()
    if len(full) == len(text):
        return full
    return "".join(map(_fold_rune, text))


def _count(number: int | float) -> int:
    """Go's ``int(n)`` for a count: truncated toward zero; NaN counts as negative, as on amd64."""
    return math.trunc(number) if not math.isnan(number) else -1


# -- functions -------------------------------------------------------------------------------------


@function("compare(a: string, b: string) -> number")
def compare(a, b):
    """-1, 0 or 1 as `a` sorts before, equal to or after `b`, comparing UTF-8 bytes."""
    return (a > b) - (a < b)  # code point order is UTF-8 byte order


@function("equal_fold(a: string, b: string) -> boolean")
def equal_fold(a, b):
    """Whether `a` and `b` are equal under simple Unicode case folding (no multi-letter folds)."""
    return len(a) == len(b) and simple_fold(a) == simple_fold(b)


@function("replace(text: string, old: string, new: string, count: number) -> string", replaces=True)
def replace(text, old, new, count):
    """`text` with the first `count` occurrences of `old` replaced by `new` (all when `count` < 0)."""
    limit = _count(count)
    return text.replace(old, new, limit if 0 <= limit <= len(text) else -1)  # there are at most len+1 matches


@function("replace_all(text: string, old: string, new: string) -> string")
def replace_all(text, old, new):
    """`text` with every occurrence of `old` replaced by `new`."""
    return text.replace(old, new)


@function("to_upper(text: string) -> string")
def to_upper(text):
    """`text` in upper case, code point by code point (``ß`` stays ``ß``)."""
    return simple_upper(text)


@function("to_lower(text: string) -> string")
def to_lower(text):
    """`text` in lower case, code point by code point (no final-sigma rule)."""
    return simple_lower(text)


@function("trim(text: string, cutset: string) -> string", replaces=True)
def trim(text, cutset):
    """`text` without the leading and trailing characters found in `cutset` (an empty cutset trims nothing)."""
    return text.strip(cutset)


@function("trim_prefix(text: string, prefix: string) -> string")
def trim_prefix(text, prefix):
    """`text` without `prefix`, when it starts with it."""
    return text.removeprefix(prefix)


@function("split(text: string, separator: string) -> array[string]", replaces=True)
def split(text, separator):
    """All pieces of `text` between occurrences of `separator`; an empty separator splits into characters."""
    if not separator:
        return list(text)
    return text.split(separator)


@function("truncate(text: string, length: number) -> string")
def truncate(text, length):
    """The first `length` characters of `text` (`length` truncated toward zero)."""
    if math.isnan(length) or length <= 0:
        return ""
    return text[: math.trunc(length)] if length < len(text) else text


@function("path_canonicalize(path: string) -> string")
def path_canonicalize(path):
    """`path` cleaned lexically: repeated and trailing `/`, `.` and resolvable `..` removed."""
    if not path:
        return ""
    cleaned = posixpath.normpath(path)
    return cleaned[1:] if cleaned.startswith("//") else cleaned


@function("to_boolean(text: string) -> boolean")
def to_boolean(text):
    """True for `true`, false for `false`, in any letter case; any other text is an error."""
    word = simple_lower(text)
    if word == "true":
        return True
    if word == "false":
        return False
    raise FunctionError.kyverno("to_boolean", f"lowercase argument must be 'true' or 'false' (provided: '{text}')")
