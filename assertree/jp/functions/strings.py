"""Kyverno's string functions, with Go's ``strings`` semantics.

Most map straight onto Python's ``str`` methods; the differences that show
are handled here:

* Case: Go maps case one code point at a time with Unicode's *simple*
  mappings (`unicase`), so the length never changes.
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
from assertree.jp.functions.unicase import simple_fold, simple_lower, simple_upper
from assertree.jp.limits import check_replace, check_split
from assertree.jp.registry import function


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
    limit = limit if 0 <= limit <= len(text) else -1
    check_replace("replace()", text, old, new, limit)
    return text.replace(old, new, limit)  # there are at most len+1 matches


@function("replace_all(text: string, old: string, new: string) -> string")
def replace_all(text, old, new):
    """`text` with every occurrence of `old` replaced by `new`."""
    check_replace("replace_all()", text, old, new)
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
    check_split("split()", text, separator)
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
