"""``assertree test``: run Kyverno CLI test files (``kyverno-test.yaml``), a drop-in for ``kyverno test``."""

# No `from __future__ import annotations` here: typer reads the command's annotations, and as strings it
# evaluates each of them twice per run (~10 ms for scan's two dozen options).

import sys
from pathlib import Path
from typing import Annotated

import typer

from assertree.cli.exit_codes import EXIT_FAILED, EXIT_OK


def test(
    arguments: Annotated[list[str], typer.Argument(
        metavar="PATH", show_default=False,
        help="kyverno-test.yaml files, or folders searched recursively for them.")],
    file_name: Annotated[str, typer.Option(
        "--file-name", "-f", help="Name of the test files to look for in folders.")] = "kyverno-test.yaml",
    output: Annotated[str, typer.Option(
        "--output", "-o", help="Report format: text (kyverno test's table), json or junit. FORMAT=FILE writes "
        "the report to a file.")] = "text",
    fail_only: Annotated[bool, typer.Option(
        "--fail-only", help="In the text report, list only the rows that failed.")] = False,
    detailed: Annotated[bool, typer.Option(
        "--detailed-results", help="In the text report, add each row's message.")] = False,
    strict: Annotated[bool, typer.Option(
        "--strict", help="Fail rows whose rule selected nothing (kyverno test counts them as passed, Excluded).")
    ] = False,
) -> None:
    """Run kyverno-test.yaml files (Kyverno ClusterPolicy/Policy and kyverno-json policies); exit 1 if a row fails."""
    from assertree.cli.arguments import paths_from
    from assertree.errors import UsageError
    from assertree.testing import run_tests
    from assertree.testing.output import FORMATS, render_text

    name, _, file = output.partition("=")
    name = name.strip().lower()
    if name not in FORMATS:
        raise UsageError(f"unknown --output format {name!r} (choose from: {', '.join(FORMATS)})")
    paths = paths_from(arguments, "PATH")
    run = run_tests(paths, file_name=file_name, strict=strict)
    if not run.outcomes:
        where = ", ".join(str(path) for path in paths)
        raise UsageError(f"no {file_name} found in {where}: nothing was tested")
    if name == "text":
        text = render_text(run, failed_only=fail_only, detailed=detailed)
    else:
        text = FORMATS[name](run)
    if file:
        from assertree.writes import write_file

        write_file(Path(file), text, f"the {name} report")
        print(run.summary_line(), file=sys.stderr)
    else:
        from assertree.cli.outputs import write_stdout

        write_stdout(text)
    raise typer.Exit(EXIT_OK if run.ok else EXIT_FAILED)
