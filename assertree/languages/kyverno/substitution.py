"""What Kyverno's two substitutions share: the walk over a rule's strings and keys, and the error.

A rule's ``{{ }}`` variables (`variables`) and its ``$( )`` references
(`references`) are both substituted by visiting every string leaf and every
map key of a document with its field path (Kyverno's ``jsonutils.Traversal``),
and both fail the same way: a `VariableError` carrying the variable, the field
path and the reason, which the runner turns into an ERROR result. They live
below both substitutions so neither has to import the other.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from assertree.errors import shorten

__all__ = ["Path", "VariableError", "has_markers", "traverse"]

Path = tuple[str | int, ...]


class VariableError(Exception):
    """A variable or reference that could not be substituted, with where it was written.

    `not_found` is true for Kyverno's ``NotFoundError`` (a key missing from a
    map), the error every ``{{ }}`` of a missing field gives.
    """

    def __init__(self, reason: str, *, variable: str | None = None, path: Path = (), not_found: bool = False) -> None:
        self.reason = reason
        self.variable = variable
        self.path = tuple(path)
        self.not_found = not_found
        super().__init__(reason)

    def at(self, variable: str, path: Path) -> VariableError:
        """This error, told which variable and field path it belongs to (kept if already known)."""
        return VariableError(self.reason, variable=self.variable or variable, path=self.path or path,
                             not_found=self.not_found)

    @property
    def field(self) -> str:
        """The field path as Kyverno prints it: ``/validate/pattern/spec/name``."""
        return "/" + "/".join(str(step) for step in self.path)

    def __str__(self) -> str:
        if self.not_found or self.variable is None:
            return self.reason
        return f"failed to resolve {shorten(self.variable, 160)} at path {self.field}: {self.reason}"


def traverse(value: Any, where: Path, action: Callable[[str, Path], Any]) -> Any:
    """A copy of `value` with `action` applied to every string leaf and map key (``jsonutils.Traversal``)."""
    if isinstance(value, str):
        return action(value, where)
    if isinstance(value, list):
        return [traverse(item, (*where, index), action) for index, item in enumerate(value)]
    if isinstance(value, dict):
        out: dict = {}
        for key, item in value.items():
            new_key = action(key, where) if isinstance(key, str) else key
            if new_key is None:
                new_key = key
            elif not isinstance(new_key, str):
                raise VariableError(f'expected string after substituting variables in key "{key}"', path=where)
            out[new_key] = traverse(item, (*where, key), action)
        return out
    return value


def has_markers(value: Any, markers: tuple[str, ...] = ("{{", "$(")) -> bool:
    """Whether any string leaf or map key of `value` holds one of `markers`: by default ``{{`` or ``$(``,
    which every variable, reference and escape starts with (without one, both substitutions give an equal
    copy of `value`); ``("$(",)`` alone for references (without it, `references.substitute_references`
    gives an equal copy)."""
    if isinstance(value, str):
        return any(marker in value for marker in markers)
    if isinstance(value, list):
        return any(has_markers(item, markers) for item in value)
    if isinstance(value, dict):
        return any((isinstance(key, str) and any(marker in key for marker in markers)) or has_markers(item, markers)
                   for key, item in value.items())
    return False
