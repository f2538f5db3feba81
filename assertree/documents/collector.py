"""Pausing Python's cyclic garbage collector while parsed values are built.

Parsed JSON and YAML values cannot form cycles, yet each new container counts
towards the collector's next pass, and a pass over millions of fresh dicts
costs as much as parsing them. Its own module: the JSON and the YAML reader
both use it, and neither imports the other.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector (restored afterwards, even on error)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
