"""An expression compiled twice: as written, and rewritten to read as cel-go reads it; the second only on errors.

The source rewrites that make the CEL library read an expression as cel-go
and Kyverno do (`or_value`, `presence`, `conversions`) change what the
expression means only where the library, reading it as written, fails: a
non-optional ``orValue`` receiver, a presence test on null, ``string`` of an
opaque value. They also nest the expression deeper, and the library refuses
expressions nested more than 32 levels (parse and evaluation), which cel-go
does not (its limit is 250). So a `Fallback` evaluates the expression as
written first, and the rewritten one only when that fails.

Fast path: evaluating the written form first must never change a result.
It holds because the two forms differ only in subexpressions where the
written form is an error, and CEL makes a result that is not an error
independent of any error it absorbed (``e || true``, ``e && false``,
comprehensions that stop early): wherever the written form gives a value,
the rewritten form gives the same (`tests/kyverno_cel/test_kcel_fidelity.py`
holds the two to that).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from assertree.languages.cel.engine import CelEvaluationError, Program

__all__ = ["Fallback", "Runnable"]


class Fallback:
    """`written` (None when only the rewritten form compiles), then `rewritten` when it fails."""

    __slots__ = ("rewritten", "text", "written")

    def __init__(self, text: str, written: Program | None, rewritten: Program) -> None:
        self.text = text
        self.written = written
        self.rewritten = rewritten

    def evaluate(self, variables: Mapping[str, Any], context: Any = None) -> Any:
        """The result as plain JSON-like Python; raises CelEvaluationError (the rewritten form's)."""
        if self.written is not None:
            try:
                return self.written.evaluate(variables, context)
            except CelEvaluationError:
                pass
        return self.rewritten.evaluate(variables, context)

    def __repr__(self) -> str:
        return f"Fallback({self.text!r})"


Runnable = Program | Fallback
"""What a compiled expression is: one program, or the written and the rewritten one."""
