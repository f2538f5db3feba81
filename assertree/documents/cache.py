"""A cache of documents already read and checked, by the hash of the file's bytes, in the user's cache folder.

Most runs read the same policy files as the run before. Parsing their YAML
(and importing PyYAML for it) and validating each document against its JSON
Schema (and importing jsonschema-rs for it) then gives the answer it gave last
time: a file whose bytes hash the same holds the same documents. So a reader
that finished a file without any problem stores what it read, and the next
run takes it from here. What is stored is only ever what the reader built
from these exact bytes, so a hit can never change a result; a file that had
a problem is never stored, and is read (and its problem reported) every time.

The invariants:

* The key is a BLAKE2b digest of the file's bytes, in a folder named after a
  fingerprint of the code that reads them (`fingerprint`: assertree's version,
  Python's, and the size and modification time of each module the caller
  names), so a new version, or an edited reader in a checkout, never sees an
  older entry.
* Entries are written whole or not at all (`assertree.writes`: a temporary file
  renamed over the target), so concurrent runs at worst write the same entry
  twice; a reader never sees half of one. Each entry carries a digest of its
  own contents and is ignored, as a miss, when it does not match (a disk
  error, a hand edit).
* The cache never fails a run: a folder that cannot be made or written, or an
  entry that cannot be read, is a miss, silently.
* It is bounded: a folder holds at most `MAX_ENTRIES` entries (past that it is
  emptied), and when a new folder is made only the `KEPT_FOLDERS` most recently
  written folders of other fingerprints stay (two installs used in turn, such as
  a project's venv and pipx's, or the benchmark's before/after trees, would
  otherwise empty each other's folder on every run).

Values are stored with `marshal` (built in, no import cost, and exact for
every value a reader builds: integer keys, big integers, NaN and infinities
included); it is not meant for data from others, which is why the folder is
the user's own and each entry is checked against its digest first.

``ASSERTREE_CACHE_DIR`` chooses the folder (default: the platform's user
cache folder, ``~/.cache/assertree`` on Linux); ``ASSERTREE_CACHE=off`` turns
the cache off. Written by hand rather than with platformdirs: three paths, and
the import would cost more than the lookups it serves.
"""

from __future__ import annotations

import contextlib
import marshal
import os
import stat
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

CACHE_DIR_VARIABLE = "ASSERTREE_CACHE_DIR"
CACHE_SWITCH_VARIABLE = "ASSERTREE_CACHE"
OFF = frozenset({"off", "0", "no", "false", "never"})
MAX_ENTRIES = 4096  # per kind of document; a few MB at most
KEPT_FOLDERS = 3  # folders of other fingerprints kept beside a new one (per kind of document)
_CHECK_BYTES = 16  # the digest of an entry's contents, stored before them


def _blake2b(data: bytes, size: int) -> bytes:
    # from _blake2, not hashlib: hashlib imports OpenSSL's module first (a few ms of every start-up)
    try:
        from _blake2 import blake2b
    except ImportError:  # pragma: no cover - an interpreter built without it
        from hashlib import blake2b
    return blake2b(data, digest_size=size).digest()


def cache_folder() -> Path | None:
    """The folder entries go to, or None when the cache is off (``ASSERTREE_CACHE=off``)."""
    if os.environ.get(CACHE_SWITCH_VARIABLE, "").strip().lower() in OFF:
        return None
    chosen = os.environ.get(CACHE_DIR_VARIABLE)
    if chosen:
        return Path(chosen)
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA")
        return Path(base, "assertree", "Cache") if base else None
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches" / "assertree"
    base = os.environ.get("XDG_CACHE_HOME")
    return Path(base if base and os.path.isabs(base) else Path.home() / ".cache", "assertree")


def fingerprint(modules: Iterable[str]) -> str:
    """A short name for the code that built the values: assertree's and Python's versions, and the size and
    modification time of each file in `modules` (paths of files, or of folders: each file in them; a missing
    one counts as missing)."""
    from assertree import __version__

    parts = [__version__, sys.version.split()[0], str(marshal.version)]
    pending = list(modules)
    while pending:
        module = pending.pop(0)
        try:
            status = os.stat(module)
        except OSError:
            parts.append(f"{module}:-")
            continue
        if stat.S_ISDIR(status.st_mode):  # a package or a folder of data files: each file in it, at any depth
            pending.extend(os.path.join(module, name) for name in sorted(os.listdir(module))
                           if not name.startswith(".") and name != "__pycache__" and not name.endswith(".pyc"))
        else:
            parts.append(f"{module}:{status.st_size}:{status.st_mtime_ns}")
    return _blake2b("\0".join(parts).encode(), 10).hex()


class DocumentCache:
    """Values read from files of one kind (`kind`: ``policies``, ``manifests``...), by the hash of the bytes.

    `modules` are the source files whose code decides the values (the reader, the checks); editing one
    starts a new folder. Off (every lookup a miss, nothing written) when `cache_folder` is None.
    """

    def __init__(self, kind: str, modules: Iterable[str]) -> None:
        self.kind = kind
        self.modules = tuple(modules)
        self._folder: Path | bool | None = False  # False: not worked out yet

    @property
    def folder(self) -> Path | None:
        if self._folder is False:
            root = cache_folder()
            self._folder = None if root is None else root / self.kind / fingerprint(self.modules)
        return self._folder  # type: ignore[return-value]

    @staticmethod
    def key(data: bytes) -> str:
        """The entry name of a file's bytes."""
        return _blake2b(data, 20).hex()

    def get(self, data: bytes) -> Any:
        """The value stored for a file of these bytes, or None (a miss, or the cache is off)."""
        folder = self.folder
        if folder is None:
            return None
        try:
            with open(folder / self.key(data), "rb") as stream:
                entry = stream.read()
        except OSError:
            return None
        check, contents = entry[:_CHECK_BYTES], entry[_CHECK_BYTES:]
        if len(check) != _CHECK_BYTES or _blake2b(contents, _CHECK_BYTES) != check:
            return None
        try:
            return marshal.loads(contents)
        except (EOFError, ValueError, TypeError):  # pragma: no cover - the digest matched: only a marshal change
            return None

    def pack(self, value: Any) -> bytes | None:
        """`value` as an entry's contents, or None when the cache is off (or marshal cannot write it: no reader
        builds such a value). Packing copies: what the caller does to `value` afterwards is not stored."""
        if self.folder is None:
            return None
        try:
            return marshal.dumps(value)
        except ValueError:
            return None

    def put(self, data: bytes, value: Any) -> None:
        """Store `value` for a file of these bytes (best effort: any failure leaves the cache as it was)."""
        self.put_packed(data, self.pack(value))

    def put_packed(self, data: bytes, contents: bytes | None) -> None:
        """Store contents made by `pack` for a file of these bytes (nothing for None)."""
        folder = self.folder
        if folder is None or contents is None:
            return
        from assertree.errors import AssertreeError
        from assertree.writes import write_file

        try:
            if not folder.is_dir():
                self._forget_other_folders(folder)
            elif len(os.listdir(folder)) >= MAX_ENTRIES:
                self._empty(folder)
            write_file(folder / self.key(data), _blake2b(contents, _CHECK_BYTES) + contents, "a cache entry",
                       durable=False)
        except (AssertreeError, OSError):
            return

    @staticmethod
    def _empty(folder: Path) -> None:
        for name in os.listdir(folder):
            with contextlib.suppress(OSError):
                os.unlink(folder / name)

    def _forget_other_folders(self, folder: Path) -> None:
        """Remove the folders of other fingerprints of this kind (other versions of the code) but the
        `KEPT_FOLDERS` written last."""
        parent = folder.parent
        try:
            others = sorted((entry.stat().st_mtime, entry) for entry in parent.iterdir()
                            if entry.is_dir() and entry != folder)
        except OSError:
            return
        for _, other in others[:max(len(others) - KEPT_FOLDERS, 0)]:
            self._empty(other)
            with contextlib.suppress(OSError):
                other.rmdir()
