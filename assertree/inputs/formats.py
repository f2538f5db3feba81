"""Which reader a payload is read with, by its name: a JSON Lines file a line at a time
(`assertree.inputs.stream`), anything else whole (`assertree.inputs.payload`).

A module of its own: every scan asks it of each payload, and most read no JSON Lines, so asking costs no
import of the streaming reader.
"""

from __future__ import annotations

import os

NDJSON_SUFFIXES = (".ndjson", ".jsonl")


def is_ndjson(path: str, payload_format: str = "auto") -> bool:
    """Whether a payload is read as JSON Lines: its suffix says so, or ``--payload-format ndjson``."""
    return payload_format == "ndjson" or os.path.splitext(path)[1].lower() in NDJSON_SUFFIXES
