"""Writing a user's file so that it is never lost: whole or not at all.

Every file assertree writes (reports, ``apply`` results, anything a later command
writes) goes through `write_file`, `write_files` or `ReplacingFile`: the bytes go
to a temporary file in the target's own folder, are flushed and fsynced, and the
temporary file is renamed over the target with `os.replace`, which is atomic
within one file system. A process killed halfway, a full disk or a file-size
limit therefore leaves the previous file as it was (plus, after SIGKILL, a
``.NAME.*.tmp`` file beside it, never a truncated target).

The target keeps its permission bits (and, where the process may set them, its
owner and group); a symbolic link is written through (its target file is
replaced, the link stays a link). A read-only file is refused as ``open`` would
refuse it, though renaming over it would succeed: the user marked it so. A target
that is not a regular file (a terminal, a pipe, ``/dev/stderr``, anything under
``/dev`` or ``/proc``) is a stream, not a file to replace: it is written directly.
Any failure removes the temporary file and raises `WriteError`, which names the
path and the reason (exit 2).
"""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import stat
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any, NoReturn

from assertree.errors import AssertreeError

__all__ = ["ReplacingFile", "WriteError", "write_file", "write_files"]

_LINKS_FOLLOWED = 40  # as the kernel's own limit on symbolic links in one lookup
_NAME_IN_TEMPORARY = 100  # characters of the target's name in the temporary file's (names stop at 255 bytes)


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


def _is_stream(path: Path, target: Path) -> bool:
    """True when `path` names something to write into rather than a file to replace: a target that is not a
    regular file, or a path that reaches its target through ``/proc`` (``/dev/stdout`` is a link to
    ``/proc/self/fd/1``, which names whatever standard output is, even a regular file the shell opened)."""
    place = path.absolute()
    for _ in range(_LINKS_FOLLOWED):
        if str(place).startswith("/proc/"):
            return True
        if not place.is_symlink():
            break
        place = place.parent / os.readlink(place)
    try:
        mode = target.stat().st_mode
    except OSError:
        return False
    return not stat.S_ISREG(mode) and not stat.S_ISDIR(mode)


class ReplacingFile:
    """A file being written in place of `path`: `write` to it, then `commit` (or `discard`).

    For writers that produce their output piece by piece (a streamed report); `write_file` is the
    one-call form. `what` names the file in messages (``the report``, ``the fixed file``). `finish`
    makes the new file complete on disk without replacing anything yet, so that several files can be
    made ready before any of them replaces its target (`write_files`).
    """

    def __init__(self, path: str | Path, what: str = "the file", *, binary: bool = False,
                 durable: bool = True) -> None:
        import tempfile  # only where a file is written (start-up time)

        self.path = Path(path)
        self.what = what
        self.durable = durable
        self.target = self.path
        self.temporary: str | None = None
        self.finished = False
        self.stream: IO[Any] | None = None
        self.direct = False
        self.original: os.stat_result | None = None
        with self._failing():
            self.target = _final_path(self.path)
            self.direct = _is_stream(self.path, self.target)
            if self.direct:
                # appended to: a stream is never truncated (standard output may be a file others write to);
                # closed by finish or discard
                self.stream = open(self.path, "ab") if binary else open(  # noqa: SIM115
                    self.path, "a", encoding="utf-8", newline="")
                return
            self.original = self._existing()
            self.target.parent.mkdir(parents=True, exist_ok=True)
            with _signals_held():  # the name is kept before a SIGTERM's handler can raise (see _signals_held)
                descriptor, self.temporary = tempfile.mkstemp(
                    dir=self.target.parent, prefix=f".{self.target.name[:_NAME_IN_TEMPORARY]}.", suffix=".tmp")
            if binary:
                self.stream = os.fdopen(descriptor, "wb")
            else:
                self.stream = os.fdopen(descriptor, "w", encoding="utf-8", newline="")

    @contextlib.contextmanager
    def _failing(self) -> Iterator[None]:
        """Whatever goes wrong in the block removes the temporary file; an OSError becomes the WriteError
        naming the file and the reason. (`write`, called for every piece of a streamed report, does the same
        without the cost of a context manager.)"""
        try:
            yield
        except OSError as error:
            self._fail(error)
        except BaseException:
            self.discard()
            raise

    def _existing(self) -> os.stat_result | None:
        """The target's status when it is there; an OSError when it may not be replaced."""
        try:
            found = self.target.stat()
        except FileNotFoundError:
            return None
        if stat.S_ISDIR(found.st_mode):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR))
        if not os.access(self.target, os.W_OK, effective_ids=os.access in os.supports_effective_ids):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES))
        return found

    def _fail(self, error: OSError) -> NoReturn:
        self.discard()
        raise WriteError(f"cannot write {self.what}: {_reason(error)}", source=str(self.path)) from None

    def write(self, data: Any) -> int:
        try:
            assert self.stream is not None, "write after commit or discard"
            return self.stream.write(data)
        except OSError as error:
            self._fail(error)
        except UnicodeEncodeError as error:  # a lone surrogate ("\ud800" read from JSON) has no UTF-8 form
            self.discard()
            character = error.object[error.start] if isinstance(error.object, str) else "?"
            raise WriteError(f"cannot write {self.what}: U+{ord(character):04X} has no UTF-8 form (a lone "
                             "surrogate)", source=str(self.path)) from None
        except BaseException:
            self.discard()
            raise

    def finish(self) -> None:
        """Make the new file complete on disk (flushed, fsynced, closed, with the target's mode), without
        replacing the target yet."""
        if self.finished:
            return
        with self._failing():
            assert self.stream is not None, "finish after discard"
            self.stream.flush()
            if not self.direct and self.durable:
                os.fsync(self.stream.fileno())
            self.stream.close()
            self.stream = None
            if not self.direct:
                assert self.temporary is not None
                self._keep_attributes(self.temporary)
            self.finished = True

    def _keep_attributes(self, temporary: str) -> None:
        """The new file gets the old one's permission bits, and its owner and group where this process may
        give them (root may; anyone may keep a group they belong to)."""
        if self.original is None:
            os.chmod(temporary, _new_file_mode())
            return
        ours = os.stat(temporary)
        if (ours.st_uid, ours.st_gid) != (self.original.st_uid, self.original.st_gid):
            with contextlib.suppress(OSError):
                os.chown(temporary, self.original.st_uid, self.original.st_gid)
        os.chmod(temporary, self.original.st_mode & 0o7777)

    def commit(self) -> None:
        """Put the finished file in place of the target."""
        self.finish()
        if self.direct:
            return
        with self._failing():
            assert self.temporary is not None, "commit after discard"
            os.replace(self.temporary, self.target)
            self.temporary = None
        if self.durable:
            _sync_folder(self.target.parent)

    def discard(self) -> None:
        """Remove the unfinished temporary file (nothing after `commit`)."""
        if self.stream is not None:
            with contextlib.suppress(OSError):
                self.stream.close()
            self.stream = None
        if self.temporary is not None:
            with contextlib.suppress(OSError):
                os.unlink(self.temporary)
            self.temporary = None

    def __enter__(self) -> ReplacingFile:
        return self

    def __exit__(self, kind: Any, *_: Any) -> None:
        if kind is None:
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


def write_files(files: Iterable[tuple[str | Path, str | bytes]], what: str = "the file") -> None:
    """Write several files, each whole or not at all, and none unless every one could be made ready:
    every new file is written and fsynced beside its target first, and only then are they renamed into
    place, one after the other. A failure before the renames leaves every target as it was."""
    ready: list[ReplacingFile] = []
    try:
        for path, data in files:
            out = ReplacingFile(path, what, binary=isinstance(data, bytes))
            ready.append(out)
            out.write(data)
            out.finish()
        for out in ready:
            out.commit()
    finally:
        for out in ready:
            out.discard()


@contextlib.contextmanager
def _signals_held() -> Iterator[None]:
    """SIGINT and SIGTERM held back while the block runs: the handler that turns them into an exception
    would otherwise raise between the temporary file's creation and its name being kept, and the file
    would stay behind. A signal that came meanwhile is delivered when the block ends."""
    if not hasattr(signal, "pthread_sigmask"):  # pragma: no cover - not on Windows
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)
