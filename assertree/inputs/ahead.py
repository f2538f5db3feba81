"""A large payload file read in a thread while the command gets ready (``assertree scan PLAN``).

Why: reading a 35 MB plan takes 20-30 ms, nearly all of it in the kernel
(copying the file into a new buffer, and that buffer's page faults) with the
GIL released, while the command first imports what it needs and loads the
policies: 20-40 ms of Python that does not need the payload. Started before
those, the read is done on another CPU by the time the payload is wanted.

`read_ahead` starts the read of one regular file of at least `MIN_BYTES`;
`assertree.inputs.payload.read_payload` takes its bytes (`take`) instead of
reading the file again. What it promises: the same bytes, or the same error, as
reading the file then (`assertree.documents.reader.read_bytes` runs in the
thread); nothing is kept once the `ReadAhead` is let go (the registry holds it
weakly), and a read never taken is simply dropped. Only the command line uses
it, for one payload file; a scan of many files parses them in worker processes
instead (`assertree.inputs.parallel`), which fork only while this process has
one thread.
"""

from __future__ import annotations

import os
import stat
import threading
import weakref

from assertree.documents.reader import read_bytes
from assertree.errors import AssertreeError

__all__ = ["MIN_BYTES", "ReadAhead", "read_ahead", "take"]

MIN_BYTES = 4 << 20
"""Smaller files are read when they are wanted: a thread costs about a tenth of a millisecond to start, and a
file of a few megabytes reads in about as long as the command takes to get ready only from this size on."""

_READING: weakref.WeakValueDictionary[str, ReadAhead] = weakref.WeakValueDictionary()


class ReadAhead:
    """The read of one file in a thread; `take` waits for it."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._outcome: list[bytes | AssertreeError] = []
        self._thread = threading.Thread(target=self._read, name="assertree-read-ahead", daemon=True)
        self._thread.start()

    def _read(self) -> None:
        try:
            self._outcome.append(read_bytes(self.path))
        except AssertreeError as error:
            self._outcome.append(error)

    def take(self) -> bytes:
        """The file's bytes, or the error reading them raised; once."""
        self._thread.join()
        outcome = self._outcome.pop() if self._outcome else None
        if isinstance(outcome, AssertreeError):
            raise outcome
        if outcome is None:  # the thread died of something else: read here, as if nothing had been read
            return read_bytes(self.path)
        return outcome


def read_ahead(path: str) -> ReadAhead | None:
    """Start reading `path` when it is a regular file of at least `MIN_BYTES` (else None). Keep the result
    while the file may be wanted: the read is dropped with it."""
    try:
        status = os.stat(path)
    except OSError:
        return None  # read when wanted, which words the problem
    if not stat.S_ISREG(status.st_mode) or status.st_size < MIN_BYTES:
        return None
    ahead = ReadAhead(path)
    _READING[path] = ahead
    return ahead


def take(path: str) -> bytes | None:
    """The bytes read ahead for `path` (raising what reading it raised), or None when it was not read ahead."""
    ahead = _READING.pop(path, None)
    return None if ahead is None else ahead.take()
