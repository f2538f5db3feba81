"""``assertree migrate``: ClusterPolicies to Kyverno's CEL policy kinds, each rule proven against its source.

Exit codes: 0 every rule converted and verified (and the rewritten tests pass), 1 a rule differs or was
not converted (or a rewritten test row fails), 2 a source that cannot be read, no ClusterPolicy or Policy to
migrate, or a bad flag.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from assertree.cli.exit_codes import EXIT_BAD_INPUT, EXIT_FAILED, EXIT_OK

EXAMPLES = """Examples:

  assertree migrate policies/ --out migrated/

  assertree migrate policies/ --out migrated/ --report report.json --resources cluster-dump/

  assertree migrate require-labels.yaml --out vap/ --to vap
"""


def migrate(
    sources: Annotated[list[str], typer.Argument(
        metavar="SRC", show_default=False,
        help="ClusterPolicy/Policy files or folders (searched recursively, with their kyverno-test.yaml).")],
    out: Annotated[Path, typer.Option(
        "--out", show_default=False, metavar="DIR",
        help="Folder to write to: SRC's layout, converted documents in place of their sources, the tests "
        "rewritten beside them.")],
    to: Annotated[str, typer.Option(
        "--to", metavar="validating|vap",
        help="What validate rules become: Kyverno ValidatingPolicy, or Kubernetes "
        "ValidatingAdmissionPolicy with its binding (mutate rules always become MutatingPolicy).")] = "validating",
    resources: Annotated[list[str] | None, typer.Option(
        "--resources", show_default=False, metavar="PATH",
        help="More resources to prove the conversion on (files or folders of manifests). Repeatable.")] = None,
    report: Annotated[Path | None, typer.Option(
        "--report", show_default=False, metavar="FILE",
        help="Write the JSON report: per source rule, its status (verified, differs, not-converted), why, "
        "and the documents it became.")] = None,
) -> None:
    """Convert Kyverno ClusterPolicies and Policies to ValidatingPolicy/MutatingPolicy, prove each rule gives
    the source's verdicts (on the tests' resources, resources made from what the rule reads, and
    --resources), rewrite the kyverno-test.yaml files for the new policies and run them."""
    from assertree.languages.cel.engine import CEL_EXTRA_MESSAGE, available
    from assertree.migrate import migrate as run_migration
    from assertree.migrate.writing import write_text

    if not available():  # every conversion is CEL, proven by running it: nothing can be done without it
        print(f"assertree: error: migrate writes and proves CEL policies; {CEL_EXTRA_MESSAGE}", file=sys.stderr)
        raise typer.Exit(EXIT_BAD_INPUT)
    result = run_migration(sources, out, to=to, resources=resources or ())
    if report is not None:
        write_text(report, result.json_text(), "the migration report")
    sys.stdout.write(result.text())
    for problem in result.problems:
        print(f"assertree: {problem}", file=sys.stderr)
    if result.problems:
        raise typer.Exit(EXIT_BAD_INPUT)
    if not result.policies:  # nothing was converted or proven: not a success
        print(f"assertree: error: no ClusterPolicy or Policy found in {', '.join(map(str, sources))}: nothing to "
              "migrate", file=sys.stderr)
        raise typer.Exit(EXIT_BAD_INPUT)
    if not result.all_verified or result.tests_failed:
        raise typer.Exit(EXIT_FAILED)
    raise typer.Exit(EXIT_OK)
