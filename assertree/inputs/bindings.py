"""``--bindings``: a file of extra variables for kyverno-json policies, usable as ``$name``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from assertree.errors import PayloadError
from assertree.inputs.payload import read_payload


def load_bindings(path: str | Path) -> dict[str, Any]:
    """The mapping of names to values in a YAML/JSON file; PayloadError for anything else."""
    loaded = read_payload(str(path))
    if not isinstance(loaded.value, dict) or loaded.documents:
        raise PayloadError("the bindings file must hold one mapping of names to values", source=str(path))
    return loaded.value
