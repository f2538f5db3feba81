"""Go's case mapping: one code point at a time, with Unicode's *simple* mappings.

Go's ``strings.ToUpper``/``ToLower``/``EqualFold`` never change a string's
length (``to_upper('straße')`` is ``"STRAßE"``) and have no final-sigma rule.
Python's ``upper``, ``lower`` and ``casefold`` use the *full* mappings.
Applied to a single code point they agree with the simple ones except where
the full mapping gives several code points; for those, the simple mapping is
the code point itself, with two families of exceptions that Unicode's data
fix: U+0130 lowercases to ``i``, and the Greek small letters with
ypogegrammeni uppercase (and their capitals fold) to the one-code-point
titlecase/lowercase letter Python also knows. Python 3.11 carries Unicode 14,
Go 1.21+ Unicode 15, which added no case pairs. Used by Kyverno's
``to_upper``/``to_lower``/``equal_fold`` and the community ``upper``/``lower``.
"""

from __future__ import annotations

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
