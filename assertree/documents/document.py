"""`Document`: one document of a file, its value and where it was written.

Its own module so that the JSON reader and the YAML reader share it without
either importing the other (the YAML one, and PyYAML, only when YAML is read).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any


class Document:
    """One document of a file, with positions (a plain class: one is made per document read)."""

    __slots__ = ("_locator", "_locator_of_many", "index", "line", "path", "value")

    def __init__(self, value: Any, path: str, index: int, line: int,
                 _locator: Callable[[tuple], tuple[int, int]] | None = None,
                 _locator_of_many: Callable[[Sequence[tuple]], list[tuple[int, int]]] | None = None) -> None:
        self.value = value
        self.path = path
        self.index = index
        self.line = line
        self._locator = _locator
        self._locator_of_many = _locator_of_many

    def __repr__(self) -> str:
        return f"Document(value={self.value!r}, path={self.path!r}, index={self.index!r}, line={self.line!r})"

    def locate(self, field_path: Sequence[str | int]) -> tuple[int, int]:
        """(line, column), 1-based, of the node at `field_path` (a map entry: its key), or of the
        deepest existing ancestor when the path does not exist."""
        if self._locator is None:
            return self.line, 1
        return self._locator(tuple(field_path))

    def locate_all(self, field_paths: Sequence[tuple]) -> list[tuple[int, int]]:
        """`locate` of each of `field_paths`, in one walk of the text where the reader has one (JSON: a
        report places all its findings at once)."""
        if self._locator_of_many is not None:
            return self._locator_of_many(field_paths)
        return [self.locate(path) for path in field_paths]
