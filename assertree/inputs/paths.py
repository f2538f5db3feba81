"""How a payload or policy file is named in reports and fingerprints: relative to the working directory."""

from __future__ import annotations

import os
from contextlib import suppress
from functools import lru_cache
from pathlib import Path


def relative_path(source: str) -> str:
    """`source` relative to the working directory in POSIX form when it lies below it, else absolute."""
    return _relative_path(source, os.getcwd())


@lru_cache(maxsize=1024)
def _relative_path(source: str, working_directory: str) -> str:
    """`relative_path` for one working directory (cached: a report asks once per finding)."""
    cwd = Path(working_directory)
    candidates = [Path(os.path.abspath(source))]
    with suppress(OSError, RuntimeError):  # a symlink loop
        candidates.append(candidates[0].resolve())
    for candidate in candidates:
        try:
            return candidate.relative_to(cwd).as_posix()
        except ValueError:
            continue
    return candidates[0].as_posix()
