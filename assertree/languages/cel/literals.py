"""CEL's string and bytes literals, found in expression text without parsing it.

Code that reads CEL text by hand (Kyverno's source rewrites, the clauses of an
explanation) must step over literals: ``'a && b'`` is one string, not two
clauses. A literal is an optional prefix (``r``, ``b``, ``rb``, ``br``, any
case; ``r`` turns escapes off) and a quote (``'``, ``"``, or three of either)
that is not the end of an identifier; it ends at the same quote, escapes aside.
"""

from __future__ import annotations

import re

__all__ = ["literal_at", "literal_end"]

_STRING_START = re.compile(r"""(?:[rR][bB]?|[bB][rR]?)?('''|\"\"\"|'|")""")


def literal_at(text: str, position: int) -> bool:
    """Whether a string or bytes literal (its prefix or its opening quote) starts at `position`."""
    if position and (text[position - 1].isalnum() or text[position - 1] == "_"):
        return False  # the end of an identifier (`bar'` is no literal)
    return _STRING_START.match(text, position) is not None


def literal_end(text: str, start: int) -> int | None:
    """The index after the literal that starts at `start` (where `literal_at` is true); None when it never
    closes."""
    match = _STRING_START.match(text, start)
    assert match is not None
    quote = match.group(1)
    raw = "r" in match.group(0)[: match.start(1) - start].lower()
    position = match.end()
    while position < len(text):
        if not raw and text[position] == "\\":
            position += 2
            continue
        if text.startswith(quote, position):
            return position + len(quote)
        position += 1
    return None
