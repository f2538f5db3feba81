"""Text a report has written but cannot send yet: kept in memory up to a budget, then on disk.

Most report formats put something only known at the end before their results:
the resource count (text), the unreadable files (text, SARIF, GitHub), each
policy's counts (JUnit). A streamed report writes those results into a
`Spool` and copies it out after its head, so memory stays bounded whatever
the scan's size. When a scan renders a report whole (`assertree.report.render`)
the spool never spills (`spill_dir` None).

Written by hand rather than with `tempfile.SpooledTemporaryFile`, whose rolled
over file keeps a descriptor open: JUnit keeps one spool per policy, and a
scan with hundreds of policies must not run out of descriptors. A spilled
spool appends to its file and closes it each time.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import Protocol

SPILL_BYTES = 1 << 20  # characters kept in memory before they go to the spool's file


class Writable(Protocol):
    """Where a report is written: a text file, standard output, a StringIO."""

    def write(self, text: str, /) -> int: ...


class Spool:
    """Append-only text; `spill_dir` None keeps everything in memory."""

    def __init__(self, spill_dir: str | None = None, spill_at: int | None = None) -> None:
        self._dir = spill_dir
        self._spill_at = SPILL_BYTES if spill_at is None else spill_at
        self._parts: list[str] = []
        self._size = 0
        self._path: str | None = None
        self.empty = True

    def write(self, text: str) -> None:
        if not text:
            return
        self.empty = False
        self._parts.append(text)
        self._size += len(text)
        if self._dir is not None and self._size >= self._spill_at:
            self._spill()

    def _spill(self) -> None:
        if self._path is None:
            import tempfile  # only once a spool outgrows memory (start-up)

            descriptor, self._path = tempfile.mkstemp(dir=self._dir, prefix=".assertree-spool.", suffix=".tmp")
            os.close(descriptor)
        with open(self._path, "a", encoding="utf-8", newline="") as stream:
            stream.write("".join(self._parts))
        self._parts.clear()
        self._size = 0

    def chunks(self) -> Iterator[str]:
        """What was written, in order, in pieces of bounded size."""
        if self._path is not None:
            with open(self._path, encoding="utf-8", newline="") as stream:
                while chunk := stream.read(SPILL_BYTES):
                    yield chunk
        yield from self._parts

    def copy_to(self, out: Writable) -> None:
        for chunk in self.chunks():
            out.write(chunk)

    def close(self) -> None:
        """Remove the spool's file (idempotent)."""
        if self._path is not None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self._path)
            self._path = None
        self._parts.clear()
