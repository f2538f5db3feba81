"""Writing a user's file so that it is never lost: whole or not at all.

Every file assertree writes (reports, ``apply`` results, anything a later command
writes) goes through `write_file` or `ReplacingFile`: the bytes go to a temporary
file in the target's own folder, are flushed and fsynced, and the temporary file is
renamed over the target with `os.replace`, which is atomic within one file system.
A process killed halfway, a full disk or a size limit therefore leaves the previous
file as it was (plus, after SIGKILL, a ``.NAME.*.tmp`` file beside it, never a
truncated target).

The target keeps its permission bits; a symbolic link is written through (its
target file is replaced, the link stays a link). Any failure removes the temporary
file and raises `WriteError`, which names the path and the reason (exit 2).
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import IO, Any

from assertree.errors import AssertreeError

__all__ = ["ReplacingFile", "WriteError", "write_file"]


class WriteError(AssertreeError):
    """A file could not be written; the file named is unchanged (exit code 2)."""


def _reason(error: OSError) -> str:
    return error.strerror or str(error) or type(error).__name__


def _final_path(path: Path) -> Path:
    """Where the bytes really go: the file a symbolic link points to (resolved through every link), else
    `path` itself. A dangling link is written through too: the file it names is created."""
    if not path.is_symlink():
        return path
    return Path(os.path.realpath(path))


def _new_file_mode() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


class ReplacingFile:
    """A file being written in place of `path`: write to `stream`, then `commit` (or `discard`).

    For writers that produce their output piece by piece (a streamed report); `write_file` is the
    one-call form. `what` names the file in messages (``the report``, ``the fixed file``).
    """

    def __init__(self, path: str | Path, what: str = "the file", *, binary: bool = False,
                 durable: bool = True) -> None:
        import tempfile  # only where a file is written (start-up time)

        self.path = Path(path)
        self.what = what
        self.durable = durable
        self.target = _final_path(self.path)
        self.temporary: str | None = None
        self.stream: IO[Any]
        if self.target.is_dir():
            raise WriteError(f"cannot write {what}: it is a directory", source=str(self.path))
        try:
            self.target.parent.mkdir(parents=True, exist_ok=True)
            descriptor, self.temporary = tempfile.mkstemp(dir=self.target.parent, prefix=f".{self.target.name}.",
                                                          suffix=".tmp")
            if binary:
                self.stream = os.fdopen(descriptor, "wb")
            else:
                self.stream = os.fdopen(descriptor, "w", encoding="utf-8", newline="")
        except OSError as error:
            self.discard()
            raise WriteError(f"cannot write {what}: {_reason(error)}", source=str(self.path)) from None

    def write(self, data: Any) -> int:
        try:
            return self.stream.write(data)
        except OSError as error:
            self.discard()
            raise WriteError(f"cannot write {self.what}: {_reason(error)}", source=str(self.path)) from None

    def commit(self) -> None:
        """Put the finished file in place of the target (flushed and fsynced first)."""
        try:
            self.stream.flush()
            if self.durable:
                os.fsync(self.stream.fileno())
            self.stream.close()
            try:
                mode = self.target.stat().st_mode & 0o7777
            except FileNotFoundError:
                mode = _new_file_mode()
            assert self.temporary is not None
            os.chmod(self.temporary, mode)
            os.replace(self.temporary, self.target)
            self.temporary = None
        except OSError as error:
            self.discard()
            raise WriteError(f"cannot write {self.what}: {_reason(error)}", source=str(self.path)) from None
        if self.durable:
            _sync_folder(self.target.parent)

    def discard(self) -> None:
        """Remove the unfinished temporary file (nothing after `commit`)."""
        stream = getattr(self, "stream", None)
        if stream is not None:
            with contextlib.suppress(OSError):
                stream.close()
        if self.temporary is not None:
            with contextlib.suppress(OSError):
                os.unlink(self.temporary)
            self.temporary = None

    def __enter__(self) -> ReplacingFile:
        return self

    def __exit__(self, kind: Any, *_: Any) -> None:
        if kind is None and self.temporary is not None:
            self.commit()
        else:
            self.discard()


def _sync_folder(folder: Path) -> None:
    """Make the rename itself durable where the platform allows it (best effort: a folder that cannot be
    opened or synced leaves the file written, only not yet on disk)."""
    try:
        descriptor = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(descriptor)
    except OSError:
        pass
    finally:
        os.close(descriptor)


def write_file(path: str | Path, data: str | bytes, what: str = "the file", *, durable: bool = True) -> None:
    """Write `data` (text as UTF-8) to `path` whole or not at all; raises `WriteError` naming `path`.

    Without `durable` nothing is fsynced: the file is still whole or absent, but a power cut may lose it
    (for files that can be made again, a cache's entries)."""
    with ReplacingFile(path, what, binary=isinstance(data, bytes), durable=durable) as out:
        out.write(data)
