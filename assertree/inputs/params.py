"""Parameter resources for admission policies (``scan --params``): what a binding's ``paramRef`` chooses from.

In a cluster a binding's params are resources of the policy's ``paramKind``
(a ConfigMap, a custom resource); offline they are the documents of the files
and directories given, each YAML document (or each item of a ``kind: List``)
one resource. A file that cannot be read, or a document that is not a
resource, is a located error: params decide verdicts, so none is dropped
silently.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from assertree.errors import PayloadError

__all__ = ["load_params"]


def load_params(paths: Iterable[str | Path]) -> list[dict]:
    """Every parameter resource in the files and directories at `paths`, in file order."""
    from assertree.documents.reader import load_documents
    from assertree.languages.load import policy_files

    paths = list(paths)
    for raw in paths:
        if not str(raw).strip() or not Path(raw).exists():
            raise PayloadError("parameter file or directory not found", source=str(raw))
    files = policy_files(paths)
    found: list[dict] = []
    for file in files:
        for document in load_documents(file):
            value: Any = document.value
            if value is None:
                continue
            items = value.get("items") if isinstance(value, dict) and value.get("kind") == "List" else [value]
            for item in items if isinstance(items, list) else [items]:
                if not isinstance(item, dict) or not isinstance(item.get("kind"), str):
                    raise PayloadError("a parameter resource must be a mapping with apiVersion, kind and metadata",
                                       source=str(file), line=document.line)
                found.append(item)
    return found
