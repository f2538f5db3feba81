"""Policy files read through the cache of checked files: parsed once, then taken from the cache.

`read_checked` gives a policy file's documents, from `assertree.documents.cache`
when the same bytes were read before and every document compiled (then no YAML
parse, and the language's schema check passes them without validating:
`assertree.languages.schema_problems.checked`), else parsed now, with
positions. The caller compiles the documents and, when every one compiled,
calls `CheckedFile.remember`. Shared by the loader of every language
(`assertree.languages.load`) and by the Kyverno language's own loader
(``assertree test``), so both hit the same entries.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Any

from assertree.documents.cache import DocumentCache
from assertree.documents.reader import Document, decode_text, format_of, load_documents, read_bytes

_HERE = Path(__file__).resolve().parent
_POLICY_CACHE = DocumentCache("policies", [
    str(_HERE.parent / "documents"), str(_HERE / "schema_problems.py"), str(_HERE.parent / "schemas"),
])  # the readers (what a document's value is), what a schema accepts, the schemas: each file of each folder
"""Policy files read before: their documents, each of which compiled (so passed its schema)."""


class CheckedFile:
    """The documents of one policy file, as `read_checked` found them: read from the cache of files whose
    every document compiled (`from_cache`), or parsed now (then `remember` stores them, once they have)."""

    def __init__(self, key: bytes, documents: list[Document], *, from_cache: bool) -> None:
        self.key = key  # what the cache entry is named after: the file's format and bytes
        self.documents = documents
        self.from_cache = from_cache
        # what the parser built, before any compile could touch it (marshal copies it now)
        self._entry = None if from_cache else _POLICY_CACHE.pack([(d.index, d.line, d.value) for d in documents])

    def checked(self) -> AbstractContextManager[None]:
        """While open, a language's schema check passes these documents without validating them (they come
        from the cache, which only holds documents that passed it), and finds the others as usual."""
        if not self.from_cache:
            return nullcontext()
        from assertree.languages.schema_problems import checked

        return checked(document.value for document in self.documents)

    def remember(self) -> None:
        """Store these documents for the next run: call it only when every one of them compiled."""
        if self._entry is not None:
            _POLICY_CACHE.put_packed(self.key, self._entry)
            self._entry = None


def read_checked(file: str | Path) -> CheckedFile:
    """The documents of a policy file, from the cache when its bytes were read (and every document compiled)
    before (`assertree.documents.cache`: no YAML parse, no schema validation), else parsed, with positions.
    DocumentError when it cannot be read or parsed."""
    data = read_bytes(file)
    name = str(file)
    key = entry_key(name, data)
    stored = _POLICY_CACHE.get(key)
    if _well_formed(stored):
        return CheckedFile(key, [Document(value, name, index, line, positions_on_demand(name, data, index))
                                 for index, line, value in stored], from_cache=True)
    return CheckedFile(key, load_documents(name, decode_text(data, name)), from_cache=False)


def entry_key(name: str, data: bytes) -> bytes:
    """What a policy file's entry is named after: its format (by its name) and its bytes, so the same bytes
    read as JSON and as YAML are two entries."""
    return f"{format_of(name)}\0".encode() + data


def positions_on_demand(name: str, data: bytes, index: int) -> Callable[[tuple], tuple[int, int]]:
    """A cached document's locator: the file parsed again with positions, only when a position is asked for
    (a problem found by code newer than the entry: every check but the schema runs on every run)."""
    parsed: list[Document] = []  # the file's documents with positions, parsed at the first question

    def locate(path: tuple) -> tuple[int, int]:
        if not parsed:
            parsed.extend(document for document in load_documents(name, decode_text(data, name))
                          if document.index == index)
        return parsed[0].locate(path) if parsed else (1, 1)

    return locate


def _well_formed(stored: Any) -> bool:
    """Whether a cache entry has the shape `CheckedFile` stores: a list of (index, line, value)."""
    return type(stored) is list and all(type(item) is tuple and len(item) == 3 and type(item[0]) is int
                                        and type(item[1]) is int for item in stored)
