"""What was worked out from CEL texts before, kept between runs: a table per kind, in the user's cache folder.

Most runs compile the same CEL expressions as the run before, and most of
what compiling one costs is a pure function of its text: the cel-go
compatibility rewrites of a Kyverno expression, and whether it compiles at all
(the CEL library's parse and type check, then the cost model of `limits`).
Knowing that a text compiled is enough to compile it only when it is first
evaluated (`engine.Program`): a test suite's policies hold many expressions
that none of its resources reach. So each such fact is kept here, by a digest
of the text it was worked out from, and the next run looks it up first.

The invariants:

* A fact is only ever what this code worked out from exactly this text: the
  table's folder is named after the files whose code decides the facts
  (`assertree.documents.cache.fingerprint`: assertree's version, Python's, and
  the size and modification time of each file the owner names, the CEL library's
  included), and the text a fact is looked up by holds everything else that
  decides it (an environment's declaration, whether it is type-checked).
* Problems are never kept: only what worked is recorded, so a text that fails
  is worked on, and its problem reported, every time.
* It never fails a run and never mixes runs: the table is one entry of an
  `assertree.documents.cache.DocumentCache` (written whole and renamed into
  place, checked against its digest when read); concurrent runs may drop each
  other's new facts (found again later), never corrupt them.
* It is bounded: at most `MAX_FACTS` facts, texts up to `MAX_TEXT`
  characters and `MAX_TABLE_BYTES` written; past that the table starts afresh.
* ``ASSERTREE_CACHE=off`` turns it off: nothing is read or written, and every
  text is worked on.

New facts are written by `flush_all`, when a batch of work is done: the
engine calls it when it evaluates the first expression after new facts were
found (a scan's or a test's policies are compiled, their evaluation starts).
A command that never evaluates (lint) writes none, so it stays eager. A fact
that grows as the work goes on (a compiled expression's cost bounds learn a
verdict per size class of input) is replaced in the table and written with
the next batch, or when `batched` work ends (``assertree test`` runs all its
test files as one batch: one write, not one per test).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from assertree.documents.cache import DocumentCache, cache_folder

__all__ = ["MAX_FACTS", "MAX_TEXT", "TextFacts", "batched", "digest", "flush_all", "later", "waiting"]

MAX_FACTS = 50_000
"""Facts a table holds (a few MB at most)."""
MAX_TEXT = 20_000
"""Characters of the longest text a fact is kept for (longer ones are rare: variables bound into an expression)."""
_TABLE = b"facts"  # the one entry of each kind's folder
MAX_TABLE_BYTES = 32 * 1024 * 1024
"""Bytes a table may take written (past that it starts afresh with the facts found by this run)."""
waiting: list[TextFacts] = []
"""The tables with facts not written yet (empty most of the time: a cheap test before `flush_all`)."""
later: list[TextFacts] = []
"""The tables whose new facts wait for the end of the batch (`batched`, or the next `flush_all`)."""
_batch: list[bool] = []  # non-empty while `batched` work runs


def flush_all() -> None:
    """Write the new facts of every table (`TextFacts.flush`)."""
    while waiting or later:
        (waiting or later).pop().flush()


@contextmanager
def batched() -> Iterator[None]:
    """New facts found inside are written once, when it ends (however it ends): for work that evaluates
    between many compiles (a test run), which would otherwise write the tables after each."""
    _batch.append(True)
    try:
        yield
    finally:
        _batch.pop()
        flush_all()


def digest(text: str) -> bytes:
    """A 16-byte BLAKE2b digest of `text` (what a fact is kept by)."""
    try:
        from _blake2 import blake2b
    except ImportError:  # pragma: no cover - an interpreter built without it
        from hashlib import blake2b
    return blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


class TextFacts:
    """Values worked out from texts, of one `kind`, kept between runs.

    `modules` gives the files whose code decides the values (asked on first use: the CEL library's own
    files are only known once it is imported); editing one starts a new table.
    """

    def __init__(self, kind: str, modules: Callable[[], Iterable[str]]) -> None:
        self.kind = kind
        self._modules = modules
        self._cache: DocumentCache | None = None
        self._root: Path | None = None
        self._known: dict[bytes, Any] | None = None
        self._pending: dict[bytes, Any] = {}

    def _table(self) -> dict[bytes, Any]:
        """The facts known, read on first use and again when the cache's folder setting changed (a process
        that goes on: tests, or a program calling assertree with another ``ASSERTREE_CACHE_DIR``)."""
        root = cache_folder()
        if self._known is None or root != self._root:
            for pending_list in (waiting, later):  # found under the other setting: not written under this one
                if self in pending_list:
                    pending_list.remove(self)
            self._pending = {}
            self._root = root
            self._cache = DocumentCache(self.kind, self._modules())
            self._known = _well_formed(self._cache.get(_TABLE))
        return self._known

    def get(self, text: str) -> Any:
        """The value kept for `text`, or None (never worked out, or the cache is off)."""
        if len(text) > MAX_TEXT:
            return None
        return self._table().get(digest(text))

    def put(self, text: str, value: Any, replace: bool = False) -> None:
        """Keep `value` (marshal-able, not None) for `text`: known now, written by the next `flush`. With
        `replace`, a value kept before is replaced (a fact that grew) and written when the batch ends (`later`)."""
        if len(text) > MAX_TEXT:
            return
        key = digest(text)
        table = self._table()
        if (key not in table or replace) and self._cache is not None and self._cache.folder is not None:
            table[key] = value
            self._pending[key] = value
            if self not in waiting and self not in later:
                (later if replace or _batch else waiting).append(self)

    def flush(self) -> None:
        """Write the facts found since the last flush, with those other runs wrote meanwhile (best effort)."""
        for pending_list in (waiting, later):
            if self in pending_list:
                pending_list.remove(self)
        if not self._pending or self._cache is None:
            return
        pending, self._pending = self._pending, {}
        table = _well_formed(self._cache.get(_TABLE))
        if len(table) + len(pending) > MAX_FACTS:
            table = {}
        table.update(pending)
        packed = self._cache.pack(table)
        if packed is not None and len(packed) > MAX_TABLE_BYTES:
            packed = self._cache.pack(pending)
            if packed is not None and len(packed) > MAX_TABLE_BYTES:  # this run alone found too much: keep none
                return
        self._cache.put_packed(_TABLE, packed)


def _well_formed(stored: Any) -> dict[bytes, Any]:
    """A stored table, or an empty one when it has another shape (written by other code)."""
    if type(stored) is not dict or not all(type(key) is bytes for key in stored):
        return {}
    return stored
