"""``assertree lint``: report every problem in policy files, without a payload."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from assertree.cli.exit_codes import EXIT_FAILED, EXIT_OK


def lint(
    paths: Annotated[list[Path], typer.Argument(help="Policy files or directories (searched recursively).",
                                                show_default=False)],
) -> None:
    """Check policies without a payload: schema, expressions, functions, bindings; exit 1 on any problem."""
    from assertree.languages.load import lint

    problems = lint(paths)
    for problem in problems:
        print(problem.text(severity=True))
    if problems:
        errors = sum(1 for p in problems if p.severity == "error")
        print(f"{len(problems)} problem{'s' if len(problems) != 1 else ''} "
              f"({errors} error{'s' if errors != 1 else ''}, {len(problems) - errors} warning"
              f"{'s' if len(problems) - errors != 1 else ''})", file=sys.stderr)
        raise typer.Exit(EXIT_FAILED)
    raise typer.Exit(EXIT_OK)
