"""Why a part of a policy cannot be converted: the field it sits at and the reason, as data.

A converter raises `NotConvertible` at the first part it cannot express in
CEL; the migration catches it per rule and reports the rule ``not-converted``
with ``<field path>: <why>``, so nothing is ever dropped in silence.
"""

from __future__ import annotations

from assertree.errors import field_path_text

__all__ = ["NotConvertible"]


class NotConvertible(Exception):
    """A part of a source policy with no faithful CEL equivalent: `path` (field path in the source document,
    filled in by the caller when the converter does not know it) and `why` (one sentence)."""

    def __init__(self, why: str, path: tuple = ()) -> None:
        self.why = why
        self.path = tuple(path)
        super().__init__(why)

    def at(self, prefix: tuple) -> NotConvertible:
        """This refusal with `prefix` put before its path (the converter knew only the inner part)."""
        return NotConvertible(self.why, (*prefix, *self.path))

    def text(self) -> str:
        """``spec.rules[0].validate.pattern.spec: why`` (the why alone when no path is known)."""
        return f"{field_path_text(self.path)}: {self.why}" if self.path else self.why
