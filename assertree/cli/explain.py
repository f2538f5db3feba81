"""``--explain``, one option for every command that reports rule results (scan, test, the Kyverno drop-in).

A command takes it as ``explain: ExplainOption = False`` and hands it to the
library: a scan through ``ScanContext(explain=True)`` (`explaining`), which
makes the engine explain each failing or erroring result
(`assertree.engine.explain`); ``assertree test`` through
``run_tests(..., explain=True)``. Reporters print what they find in
``RuleResult.explanation`` (`assertree.report.explain` for text lines), so a
command writes nothing of its own for it.
"""

# No `from __future__ import annotations` here: typer reads the alias's annotation.

from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from assertree.languages.base import ScanContext

EXPLAIN_HELP = ("For each rule that fails or errors, show how the verdict was reached: the nodes of an assertion "
                "tree with the values they projected, each condition with its key and value after substitution, "
                "a pattern's failing field, each clause of a CEL expression (text: under the result; JSON and "
                "SARIF: an 'explanation'). Only failing results are evaluated again; the verdicts never change.")

ExplainOption = Annotated[bool, typer.Option("--explain", metavar="", help=EXPLAIN_HELP)]


def explaining(context: "ScanContext", explain: bool) -> "ScanContext":
    """`context`, asking the scan to explain its failing and erroring results when `explain`."""

    return context.replace(explain=True) if explain else context
