"""Kyverno's wildcards: ``*`` and ``?`` in names, values and pattern keys.

Kyverno matches wildcards everywhere with one function (``ext/wildcard``, a
thin wrapper over ``github.com/IGLOU-EU/go-wildcard`` v1.0.3): ``*`` matches
any run of characters (including none), ``?`` exactly one character, every
other character itself. There is no escape and no character class: ``[``,
``\\`` and ``.`` are literal, unlike `fnmatch`, which is why this is written
by hand. Matching is by code point (Go walks runes) and anchored at both ends;
the empty pattern matches only the empty text.

Promise: `match` never backtracks exponentially; it is the classic
greedy-star scan, linear in practice and O(len(pattern) x len(text)) at worst.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["check_patterns", "contains_wildcard", "match"]


def contains_wildcard(text: str) -> bool:
    """Whether `text` holds ``*`` or ``?`` (Kyverno then treats it as a pattern, not a literal)."""
    return "*" in text or "?" in text


def match(pattern: str, text: str) -> bool:
    """Whether `text` matches the wildcard `pattern` as a whole (``"app-*"`` matches ``"app-1"``)."""
    if not pattern:
        return not text
    if pattern == "*":
        return True
    p = t = 0
    star = -1  # index in pattern just after the last '*' seen
    resume = 0  # text index the last '*' is currently assumed to cover up to
    plen, tlen = len(pattern), len(text)
    while t < tlen:
        if p < plen and pattern[p] == "*":
            star = p + 1
            resume = t
            p += 1
        elif p < plen and (pattern[p] == "?" or pattern[p] == text[t]):
            p += 1
            t += 1
        elif star >= 0:
            resume += 1  # let the last star swallow one more character and retry
            t = resume
            p = star
        else:
            return False
    while p < plen and pattern[p] == "*":
        p += 1
    return p == plen


def check_patterns(patterns: Iterable[str], names: Iterable[str]) -> bool:
    """Whether any of `names` matches any of `patterns` (Kyverno's ``CheckPatterns``)."""
    pattern_list = list(patterns)
    return any(match(pattern, name) for name in names for pattern in pattern_list)
