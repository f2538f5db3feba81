"""``assertree test``: run Kyverno CLI test files (``kyverno-test.yaml``), a drop-in for ``kyverno test``."""

# No `from __future__ import annotations` here: typer reads the command's annotations, and as strings it
# evaluates each of them twice per run (~10 ms for scan's two dozen options).

import gc
import sys
from typing import Annotated

import typer

from assertree.cli.exit_codes import EXIT_FAILED, EXIT_OK
from assertree.cli.explain import ExplainOption
from assertree.cli.options import ExcludeOption


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
    exclude: ExcludeOption = None,
    explain: ExplainOption = False,
    coverage: Annotated[list[str] | None, typer.Option(
        "--coverage", metavar="FORMAT[=FILE]", show_default=False,
        help="Also report, per policy and rule, whether the tests hold a passing and a failing row: FORMAT is "
        "text, json or markdown, to standard output after the test report (which must then be text) or to "
        "FILE. Repeatable.")] = None,
    require_coverage: Annotated[bool, typer.Option(
        "--require-coverage",
        help="Exit 1 when a rule lacks a passing or a failing row (named on standard error), even if every row "
        "passed.")] = False,
    jobs: Annotated[int | None, typer.Option(
        "--jobs", "-j", metavar="N", show_default=False,
        help="Run test files in N processes (default: one per CPU; one process for a few dozen test files or "
        "fewer). The reports are the same for every N.")] = None,
) -> None:
    """Run kyverno-test.yaml files (Kyverno ClusterPolicy/Policy, Kyverno CEL and kyverno-json policies); exit 1 if a
    row fails."""
    from assertree.cli.arguments import paths_from
    from assertree.cli.outputs import parse_reports, write_stdout
    from assertree.errors import UsageError
    from assertree.testing import run_tests
    from assertree.testing.coverage_report import FORMATS as COVERAGE_FORMATS
    from assertree.testing.output import FORMATS, render_text
    from assertree.writes import write_file

    [report] = parse_reports([output], FORMATS, "--output")
    coverages = parse_reports(coverage or [], COVERAGE_FORMATS, "--coverage", single_stdout=False)
    to_stdout = [item for item in coverages if item.file is None]
    if len(to_stdout) > 1:
        raise UsageError("only one --coverage can go to standard output; give the others a file (FORMAT=FILE)")
    if to_stdout and report.file is None and not (report.format == "text" and to_stdout[0].format != "json"):
        raise UsageError("--coverage: the test report and the coverage report share standard output only as text "
                         "or markdown after the text table; give one of them a file (FORMAT=FILE)")
    if jobs is not None and jobs < 1:
        raise UsageError(f"--jobs must be a number of processes, 1 or more (got {jobs})")
    paths = paths_from(arguments, "PATH")
    from assertree.cli import process
    from assertree.documents.collector import collector_paused
    from assertree.documents.paths import Exclude
    from assertree.inputs.parallel import default_jobs

    with collector_paused():  # run_tests collects what each test file leaves
        run = run_tests(paths, file_name=file_name, strict=strict, exclude=Exclude.of(exclude), explain=explain,
                        jobs=jobs if jobs is not None else default_jobs(), reports_only=True)
        if process.one_shot:
            # The outcomes live until the process ends: the collector's first pass after the run (over every
            # outcome kept, a tenth of a second) would find nothing (as `freeze_loaded` for a scan's payloads).
            gc.freeze()
    process.keep(run)  # a one-shot run ends without freeing them
    if not run.outcomes:
        where = ", ".join(str(path) for path in paths)
        raise UsageError(f"no {file_name} found in {where}: nothing was tested")
    text = render_text(run, failed_only=fail_only, detailed=detailed) if report.format == "text" \
        else FORMATS[report.format](run)
    if report.file is not None:
        write_file(report.file, text, f"the {report.format} report")
        print(run.summary_line(), file=sys.stderr)
    else:
        write_stdout(text)
    uncovered = _coverage(run, coverages, require_coverage, after_report=report.file is None)
    if not run.ok or uncovered:
        raise typer.Exit(EXIT_FAILED)
    raise typer.Exit(EXIT_OK)


def _coverage(run, reports, required: bool, *, after_report: bool) -> bool:
    """Write the coverage reports (on standard output, a blank line apart from the test report when it is
    there too); with `required`, name the rules not covered on standard error. Whether coverage fails the run."""
    if not reports and not required:
        return False
    from assertree.cli.outputs import write_stdout
    from assertree.testing.coverage import coverage_of
    from assertree.testing.coverage_report import FORMATS
    from assertree.writes import write_file

    coverage = coverage_of(run)
    for report in reports:
        text = FORMATS[report.format](coverage)
        if report.file is None:
            write_stdout("\n" + text if after_report else text)
        else:
            write_file(report.file, text, f"the {report.format} coverage report")
    if not required:
        return False
    uncovered = coverage.uncovered()
    if uncovered:
        from assertree.errors import shorten
        from assertree.testing.coverage_report import WHOLE_POLICY

        names = ", ".join(f"{policy.name}/{rule.name or WHOLE_POLICY} (no {' or '.join(rule.missing)} row)"
                          for policy, rule in uncovered)
        count = len(uncovered)
        print(f"assertree: error: {count} rule{'s' if count != 1 else ''} {'are' if count != 1 else 'is'} not "
              f"covered by the tests (--require-coverage): {shorten(names, 2000)}", file=sys.stderr)
    return bool(uncovered)
