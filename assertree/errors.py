"""The errors assertree reports to people: bad policies, payloads and arguments.

Each carries what is known of where the problem is (file, line, column, field
path) and prints as one line, ``file:line:column: field.path: message``, which
the CLI shows with exit code 2. Evaluation problems inside a rule are not
errors of this kind: they become an ERROR result for that rule.
"""

from __future__ import annotations

from collections.abc import Sequence


def shorten(text: str, limit: int = 100) -> str:
    """`text`, cut in the middle when longer than `limit`, so a one-line error stays readable."""
    if len(text) <= limit:
        return text
    keep = (limit - 5) // 2
    return f"{text[:keep]} ... {text[-keep:]}"


def field_path_text(path: Sequence[str | int]) -> str:
    """``("spec", "rules", 0, "name")`` as ``spec.rules[0].name``."""
    out = []
    for step in path:
        if isinstance(step, int) and not isinstance(step, bool):
            out.append(f"[{step}]")
        elif out:
            out.append(f".{shorten(str(step))}")
        else:
            out.append(shorten(str(step)))
    return "".join(out)


class AssertreeError(Exception):
    """An input problem that stops a command (exit code 2)."""

    def __init__(
        self,
        message: str,
        *,
        source: str | None = None,
        line: int | None = None,
        column: int | None = None,
        path: Sequence[str | int] = (),
    ) -> None:
        self.message = message
        self.source = source
        self.line = line
        self.column = column
        self.path = tuple(path)
        super().__init__(message)

    def located(self, *, source: str | None = None, line: int | None = None, column: int | None = None):
        """Fill in where the problem is, keeping what is already known."""
        self.source = self.source or source
        self.line = self.line or line
        self.column = self.column or column
        return self

    def __str__(self) -> str:
        where = [part for part in (self.source, self.line, self.column) if part is not None]
        prefix = ":".join(str(part) for part in where)
        field = field_path_text(self.path)
        text = f"{field}: {self.message}" if field else self.message
        return f"{prefix}: {text}" if prefix else text


class PolicyError(AssertreeError):
    """A policy that cannot be loaded or compiled."""


class PayloadError(AssertreeError):
    """A payload (or bindings file) that cannot be read or used."""


class UsageError(AssertreeError):
    """A command-line argument that makes no sense."""
