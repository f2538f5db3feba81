"""Kyverno's wildcards: ``*`` and ``?`` in names, values and pattern keys.

Kyverno matches wildcards everywhere with one function (``ext/wildcard``, a
thin wrapper over ``github.com/IGLOU-EU/go-wildcard`` v1.0.3): ``*`` matches
any run of characters (including none), ``?`` exactly one character, every
other character itself. There is no escape and no character class: ``[``,
``\\`` and ``.`` are literal, unlike `fnmatch`, which is why this is written
by hand. Matching is by code point (Go walks runes) and anchored at both ends;
the empty pattern matches only the empty text.

Keys are matched with the same rule: `first_match` finds the resource key a
wildcard pattern key stands for (Kyverno expands ``metadata.labels`` and
``metadata.annotations`` keys of validate patterns this way), and
`expand_selector_labels` rewrites a label selector's wildcard entries as
Kyverno's ``wildcards.ReplaceInSelector`` does. Where Go picks among several
matching keys in random map order, these pick the first in the mapping's
order.

`match` is the matcher kyverno-json's ``wildcard`` function uses too
(`assertree.jp.functions.wildcard`, the same rule). Promise: it never
backtracks exponentially; it is the classic greedy-star scan, linear in
practice and O(len(pattern) x len(text)) at worst.
"""

from __future__ import annotations

from collections.abc import Iterable

from assertree.jp.functions.wildcard import wildcard_match as match  # the one matcher, kyverno-json's too

__all__ = ["check_patterns", "contains_wildcard", "expand_selector_labels", "first_match", "match"]


def contains_wildcard(text: str) -> bool:
    """Whether `text` holds ``*`` or ``?`` (Kyverno then treats it as a pattern, not a literal)."""
    return "*" in text or "?" in text


def check_patterns(patterns: Iterable[str], names: Iterable[str]) -> bool:
    """Whether any of `names` matches any of `patterns` (Kyverno's ``CheckPatterns``)."""
    pattern_list = list(patterns)
    return any(match(pattern, name) for name in names for pattern in pattern_list)


def first_match(pattern: str, names: Iterable[str]) -> str | None:
    """The first of `names` that `pattern` matches, or None."""
    return next((name for name in names if match(pattern, name)), None)


def expand_selector_labels(match_labels: dict[str, str], labels: dict[str, str]) -> dict[str, str]:
    """A selector's ``matchLabels`` with wildcard entries replaced by the resource label they match.

    An entry whose key or value holds a wildcard becomes the first resource
    label whose key and value both match it; with none, its ``*`` and ``?``
    become ``0`` (characters Kubernetes label syntax accepts), so it then
    matches nothing by accident. Entries without wildcards are kept.
    """
    expanded: dict[str, str] = {}
    for key, value in match_labels.items():
        if not (contains_wildcard(key) or contains_wildcard(value)):
            expanded[key] = value
            continue
        found = next(((name, text) for name, text in labels.items() if match(key, name) and match(value, text)), None)
        if found is None:
            found = (_zeroed(key), _zeroed(value))
        expanded[found[0]] = found[1]
    return expanded


def _zeroed(text: str) -> str:
    return text.replace("*", "0").replace("?", "0")
