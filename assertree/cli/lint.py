"""``assertree lint``: report every problem in policy files, without a payload.

Exit codes: 0 no error (warnings are printed, and fail only with ``--strict``), 1 an error (or a
warning with ``--strict``), 2 a path that does not exist. Files that hold no policy are skipped with
one note on stderr, so ``assertree lint .`` works on a repository of policies and payloads.
"""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from assertree.cli.exit_codes import EXIT_BAD_INPUT, EXIT_FAILED, EXIT_OK
from assertree.cli.options import ExcludeOption

EXAMPLES = """Examples:

  assertree lint policies/

  assertree lint --strict policies/ extra-policy.yaml    (warnings fail too)
"""


def lint(
    arguments: Annotated[list[str], typer.Argument(
        metavar="PATH", show_default=False,
        help="Policy files or directories (searched recursively; files that hold no policy are skipped).")],
    strict: Annotated[bool, typer.Option(
        "--strict", metavar="", help="Exit 1 on warnings too (unused bindings, duplicate policy names).")] = False,
    exclude: ExcludeOption = None,
    exceptions: Annotated[list[str] | None, typer.Option(
        "--exceptions", metavar="PATH", show_default=False,
        help="PolicyException files or directories to check too (those beside the policies always are): "
        "exceptions that name no policy or rule found, expired ones, and those expiring soon are warnings. "
        "Repeatable.")] = None,
    expiring: Annotated[int, typer.Option(
        "--expiring", metavar="DAYS",
        help="Warn about PolicyExceptions whose expiresAt is within DAYS days.")] = 30,
) -> None:
    """Check policies without a payload (schema, expressions, functions, bindings): exit 1 when one has an
    error, 0 when there are only warnings (unless --strict), 2 when a path does not exist."""
    from assertree.cli.arguments import paths_from
    from assertree.documents.paths import Exclude
    from assertree.errors import Severity
    from assertree.languages.load import lint_files
    from assertree.report.totals import plural

    paths = paths_from(arguments, "PATH")
    if expiring < 0:
        from assertree.errors import UsageError

        raise UsageError(f"--expiring must be a number of days, 0 or more (got {expiring})")
    problems, checked = lint_files(paths, Exclude.of(exclude), exceptions=exceptions or (), expiring_days=expiring)
    notes = [p for p in problems if p.severity == Severity.NOTE]
    findings = [p for p in problems if p.severity != Severity.NOTE]
    for problem in findings:
        print(problem.text(severity=True))
    for note in notes:
        print(f"assertree: note: {note}", file=sys.stderr)
    if any(p.message == "policy file or directory not found" for p in findings):
        raise typer.Exit(EXIT_BAD_INPUT)
    errors = sum(1 for p in findings if p.severity == Severity.ERROR)
    warnings = len(findings) - errors
    summary = (f"{plural(checked, 'policy file', 'policy files')} checked: {plural(errors, 'error', 'errors')}, "
               f"{plural(warnings, 'warning', 'warnings')}")
    if errors or (strict and warnings):
        print(summary + (" (--strict)" if strict and not errors else ""), file=sys.stderr)
        raise typer.Exit(EXIT_FAILED)
    print(summary if warnings else f"{plural(checked, 'policy file', 'policy files')} checked: no problems")
    raise typer.Exit(EXIT_OK)
