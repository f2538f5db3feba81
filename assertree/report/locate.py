"""Where a result points in the payload files: (file, line, column), for reporters that annotate code.

The engine keeps no positions (a large plan parsed with orjson has none), so
a reporter that needs a line asks a `Locator` after the scan. It reads each
payload file again, with positions (`assertree.source.load_documents`), the
first time one of its resources is asked about, and walks to the failing
field: the resource's place in its document (`Resource.origin_path()`), then
the field error's steps inside the resource (`FieldError.payload_steps`).

Fallbacks, from best to least: the failing field; its deepest ancestor that
the file has (a missing key points at its parent); the resource's own start;
line 1 when the resource cannot be placed in its file. A file that cannot be
read or parsed again gives a location with no line, never an error: a report
must not fail because a payload changed or vanished after the scan.
"""

from __future__ import annotations

import os
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path

from assertree.payload import STDIN_SOURCE
from assertree.results import FieldError, Resource, RuleResult, Violation
from assertree.source import Document, SourceError, load_documents


@dataclass(frozen=True, slots=True)
class Location:
    """A place in a payload file; `line`/`column` are 1-based, None when unknown."""

    file: str  # Resource.source, as given on the command line
    line: int | None = None
    column: int | None = None

    @property
    def path(self) -> str:
        """The file relative to the working directory (POSIX), or absolute when outside it."""
        return relative_path(self.file)


class Locator:
    """Locates results for one report; each payload file is read at most once per locator."""

    def __init__(self) -> None:
        self._files: dict[str, list[Document] | None] = {}

    def result(self, result: RuleResult, violation: Violation | None = None) -> Location | None:
        """Where a violation of `result` is (its first field error), or the resource itself."""
        error = violation.errors[0] if violation is not None and violation.errors else None
        return self.field(result.resource, error)

    def field(self, resource: Resource, error: FieldError | None = None) -> Location | None:
        """Where `error`'s field is in `resource`'s file (the resource's start without `error`);
        None for a resource that came from no file (a Python value, standard input)."""
        source = resource.source
        if source is None or source == STDIN_SOURCE:
            return None
        documents = self._documents(source)
        origin = resource.origin_path()
        if not documents or origin is None:
            return Location(source, 1 if documents else None, 1 if documents else None)
        steps = (*origin, *(error.payload_steps if error is not None else ()))
        if len(documents) == 1:
            document = documents[0]
        elif steps and isinstance(steps[0], int) and 0 <= steps[0] < len(documents):
            # a YAML stream: the payload's root is the list of its documents
            document, steps = documents[steps[0]], steps[1:]
        else:
            return Location(source, 1, 1)
        try:
            line, column = document.locate(steps)
        except (ValueError, IndexError, RecursionError):
            return Location(source, document.line, 1)
        return Location(source, line, column)

    def _documents(self, source: str) -> list[Document] | None:
        if source not in self._files:
            try:
                # the payload reader drops null documents of a stream; so must we, to keep indexes aligned
                documents = [d for d in load_documents(source) if d.value is not None]
            except (SourceError, OSError, ValueError, RecursionError):
                documents = None
            self._files[source] = documents
        return self._files[source]


def relative_path(source: str) -> str:
    """`source` relative to the working directory in POSIX form when it lies below it, else absolute."""
    cwd = Path.cwd()
    candidates = [Path(os.path.abspath(source))]
    with suppress(OSError, RuntimeError):  # a symlink loop
        candidates.append(candidates[0].resolve())
    for candidate in candidates:
        try:
            return candidate.relative_to(cwd).as_posix()
        except ValueError:
            continue
    return candidates[0].as_posix()
