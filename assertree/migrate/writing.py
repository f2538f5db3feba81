"""Writing the migration's files under DIR: converted policies, rewritten tests, copies, the report.

Documents are written as block YAML in the key order they were built in,
long lines kept whole (a CEL expression is one scalar), text with new lines
as ``|`` blocks. Every file goes through `assertree.writes` (a temporary file
beside the target, then an atomic rename), so a failed run leaves no half
file; a write that fails is a `WriteError` naming the file (exit 2).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml

from assertree.writes import write_file

__all__ = ["copy_file", "dump_documents", "write_documents", "write_text"]


class _Dumper(yaml.SafeDumper):
    """Block YAML; lists indented under their key, as Kubernetes manifests are usually written."""

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        super().increase_indent(flow, False)


def _string(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    if "\n" in value:
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|")
    return dumper.represent_scalar("tag:yaml.org,2002:str", value)


_Dumper.add_representer(str, _string)


def dump_documents(documents: Iterable[Any], *, json_file: bool = False) -> str:
    """The text of a policy file holding `documents` (YAML, ``---`` between them; one JSON document)."""
    items = list(documents)
    if json_file and len(items) == 1:
        return json.dumps(items[0], indent=2, ensure_ascii=False) + "\n"
    return yaml.dump_all(items, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=10**6,
                         default_flow_style=False, explicit_start=len(items) > 1)


def write_documents(path: Path, documents: Iterable[Any], *, json_file: bool = False) -> None:
    write_file(path, dump_documents(documents, json_file=json_file), "a migrated file")


def write_text(path: Path, text: str, what: str) -> None:
    write_file(path, text, what)


def copy_file(source: Path, target: Path) -> None:
    """`source`'s bytes at `target` (through `assertree.writes`, like every file the migration writes)."""
    write_file(target, source.read_bytes(), "a copied file")
