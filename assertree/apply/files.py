"""Applying mutate rules to resource files: read each file, mutate its documents, give its new text.

Resources are read as the Kyverno CLI reads them (`languages.kyverno.manifests`:
YAML 1.1 scalars, a namespace for namespaced kinds, numbers as float64), so a
policy sees what ``kyverno apply`` would show it. What is written back is only
what the rules changed (`rewrite`): defaults the reader adds (``namespace:
default``) never appear in the output unless a rule set them.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assertree.apply.mutations import Applied, apply_mutations
from assertree.apply.rewrite import rewrite_json, rewrite_stream
from assertree.documents.nesting import TOO_DEEP
from assertree.documents.reader import read_bytes
from assertree.errors import DocumentError, PayloadError
from assertree.languages.base import ScanContext
from assertree.results import Resource

__all__ = ["FileChange", "apply_to_files", "apply_to_text", "read_text_file", "unified_diff"]

_BOM = "\ufeff"


@dataclass
class FileChange:
    """One resource file before and after the mutate rules."""

    path: str  # as given ("<stdin>" for standard input)
    text: str  # the file as read
    new_text: str  # the file with every mutated document rewritten
    applied: list[Applied] = field(default_factory=list)  # one per resource document, in file order

    @property
    def changed(self) -> bool:
        return self.text != self.new_text

    def diff(self) -> str:
        """A unified diff from the original to the new text, with git's ``a/`` and ``b/`` labels."""
        return unified_diff(self.text, self.new_text, self.path)


def apply_to_files(paths: Iterable[str | Path], policies: Sequence[Any], *,
                   context: ScanContext | None = None) -> list[FileChange]:
    """Every policy's mutate rules on every document of the files at `paths` (YAML or JSON)."""
    return [apply_to_text(read_text_file(path), str(path), policies, context=context) for path in paths]


def read_text_file(path: str | Path, what: str = "resource") -> str:
    """A resource file's text (a FIFO, the size limit: as every input is read); PayloadError naming it."""
    try:
        data = read_bytes(path)
    except DocumentError as error:
        from assertree.languages.kyverno.manifests import input_file_error

        raise input_file_error(error, what) from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise PayloadError(f"not UTF-8 text (byte {error.start})", source=str(path)) from None


def apply_to_text(text: str, source: str, policies: Sequence[Any], *,
                  context: ScanContext | None = None) -> FileChange:
    """`apply_to_files` for one file's text (`source` names it in errors and in the diff)."""
    try:
        return _apply_to_text(text, source, policies, context=context)
    except RecursionError:  # a value the rules built deeper than the process may recurse (inputs stop at 1,024)
        raise PayloadError(TOO_DEEP, source=source) from None


def _apply_to_text(text: str, source: str, policies: Sequence[Any], *, context: ScanContext | None) -> FileChange:
    from assertree.languages.kyverno.manifests import parse_manifests, to_float64

    bom = _BOM if text.startswith(_BOM) else ""
    crlf = "\r\n" in text
    body = text[len(bom):].replace("\r\n", "\n") if crlf else text[len(bom):]
    manifests = parse_manifests(body, source)
    resources = [Resource(to_float64(manifest.value), source=source, document=manifest.document)
                 for manifest in manifests]
    applied = apply_mutations(resources, policies, context=context)
    changed = {item.document: (item.original, item.mutated) for item in applied
               if item.changed and item.document is not None}
    if not changed:
        return FileChange(source, text, text, applied)
    if source.lower().endswith(".json") and list(changed) == [0] and len(manifests) == 1:
        new_body = rewrite_json(body, *changed[0])
    else:
        new_body = rewrite_stream(body, changed, source=source)
    new_text = bom + (new_body.replace("\n", "\r\n") if crlf else new_body)
    return FileChange(source, text, new_text, applied)


def unified_diff(old: str, new: str, path: str, *, new_file: bool = False) -> str:
    """The unified diff of two texts of the file `path` (empty when they are equal); a last line without
    a newline is marked as git and diff mark it. A `new_file` comes from ``/dev/null``."""
    lines = difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True),
                                 fromfile="/dev/null" if new_file else f"a/{path}", tofile=f"b/{path}")
    out = []
    for line in lines:
        if not line.endswith("\n"):
            line += "\n\\ No newline at end of file\n"
        out.append(line)
    return "".join(out)
