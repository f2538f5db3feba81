"""Kyverno's anchors: the marks around a pattern key that change how the key is applied.

``(key)`` conditional, ``X(key)`` negation, ``=(key)`` equality, ``^(key)``
existence, ``<(key)`` global, ``+(key)`` add-if-not-present (mutate only).
Validate patterns and strategic-merge patches share this one reading of a key;
a key whose parentheses do not close the whole key (or that spans lines) is a
plain key.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum
from functools import lru_cache


class AnchorKind(Enum):
    CONDITION = "()"
    NEGATION = "X()"
    EQUALITY = "=()"
    EXISTENCE = "^()"
    GLOBAL = "<()"
    ADD_IF_NOT_PRESENT = "+()"


_PREFIX = {"": AnchorKind.CONDITION, "X": AnchorKind.NEGATION, "=": AnchorKind.EQUALITY,
           "^": AnchorKind.EXISTENCE, "<": AnchorKind.GLOBAL, "+": AnchorKind.ADD_IF_NOT_PRESENT}
_ANCHOR = re.compile(r"(X|=|\^|<|\+)?\((.+)\)")  # one line, as Go's regexp reads it


@dataclass(frozen=True, slots=True)
class Anchor:
    """A pattern key: `key` is the field name inside the marks; `kind` is None for a plain key."""

    kind: AnchorKind | None
    key: str

    @property
    def is_conditional(self) -> bool:
        """Conditional and global anchors decide whether the rest of the pattern applies (a skip, not a fail)."""
        return self.kind in (AnchorKind.CONDITION, AnchorKind.GLOBAL)


@lru_cache(maxsize=4096)
def parse_anchor(key: str) -> Anchor:
    """The anchor written in `key` (``"=(name)"`` -> EQUALITY on ``name``), or a plain key.
    Spaces around the key are ignored, as Kyverno trims them."""
    found = _ANCHOR.fullmatch(key.strip())
    if found is None:
        return Anchor(None, key)
    return Anchor(_PREFIX[found.group(1) or ""], found.group(2))
