"""Checks on command-line arguments that typer's own types would get wrong."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from assertree.errors import UsageError


def paths_from(values: Sequence[str] | None, option: str) -> list[Path]:
    """The paths given to `option`, blanks refused: typer would turn ``--policy ''`` (an unset CI variable)
    into ``Path('.')``, and the working directory would then be searched instead of the path meant."""
    for value in values or ():
        if not value.strip():
            raise UsageError(f"{option} {value!r}: an empty path names nothing (is a variable in the command "
                             "line unset?)")
    return [Path(value) for value in values or ()]
