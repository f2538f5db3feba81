"""The wildcard matcher of kyverno-json's ``wildcard``, Kyverno's ``pattern_match`` and every name, value and
key Kyverno matches (`assertree.languages.kyverno.wildcard`): whole-string, ``*`` any run, ``?`` exactly one
code point, every other character literal.

A module of its own (not in `regex`, which also calls it): a kyverno-json policy that calls ``wildcard`` or
``json_parse`` then loads neither the regular-expression functions nor what they import.
"""

from __future__ import annotations


def wildcard_match(pattern: str, name: str) -> bool:
    """Whole-string wildcard match: `*` matches any run (even empty), `?` exactly one code point.

    Every other character is literal (no classes, no escapes). The search
    backtracks only to the last `*`, so it is linear in practice and never
    exponential.
    """
    if pattern == "*":
        return True
    if "*" not in pattern and "?" not in pattern:
        return pattern == name  # the scan below compares such a pattern character by character: equality
    p = n = 0
    star = -1  # position in `pattern` of the last `*` seen
    resume = 0  # position in `name` that `*` currently absorbs up to
    while n < len(name):
        if p < len(pattern) and pattern[p] == "*":
            star, resume = p, n
            p += 1
        elif p < len(pattern) and (pattern[p] == "?" or pattern[p] == name[n]):
            p += 1
            n += 1
        elif star >= 0:
            resume += 1
            p, n = star + 1, resume
        else:
            return False
    while p < len(pattern) and pattern[p] == "*":
        p += 1
    return p == len(pattern)
