"""Formatting a `TestRun`: the ``kyverno test`` table, JSON, JUnit XML.

Reporters only format: every value comes from `RowCheck`/`TestOutcome`.
The text table is ``kyverno test``'s (``ID │ POLICY │ RULE │ RESOURCE │ RESULT │
REASON``, one table per Test) followed by its summary line. With ``--explain``,
each Test's table is followed by how each row that failed or errored got its
result, by row ID (`assertree.report.explain`); the JSON report has it as each
row's ``explanation``, JUnit in the failure's text.
"""

from __future__ import annotations

import json
from typing import Any

from assertree.report.explain import explanation_lines
from assertree.testing import TestOutcome, TestRun
from assertree.testing.check import RowCheck

_HEADERS = ("ID", "POLICY", "RULE", "RESOURCE", "RESULT", "REASON")


def render_text(run: TestRun, *, failed_only: bool = False, detailed: bool = False) -> str:
    """Tables and the summary line, as ``kyverno test`` prints them."""
    parts: list[str] = []
    for outcome in run.outcomes:
        parts.append(f"Loading test {outcome.name} ( {outcome.file} ) ...")
        if outcome.error is not None:
            parts.append(f"  Error: {outcome.error}")
            parts.append("")
            continue
        parts.extend(f"  Warning: {warning}" for warning in outcome.warnings)
        rows = [row for row in outcome.rows if not (failed_only and row.ok)]
        if rows:
            parts.append("")
            parts.append(_table(rows, detailed))
            parts.extend(_explanations(rows))
        if outcome.vacuous is not None:
            parts.append("")
            parts.append(f"  Error: {outcome.vacuous}")
        parts.append("")
    parts.append(run.summary_line())
    return "\n".join(parts) + "\n"


def _table(rows: list[RowCheck], detailed: bool) -> str:
    headers = _HEADERS + (("MESSAGE",) if detailed else ())
    body = []
    for number, row in enumerate(rows, start=1):
        cells = [str(number), row.policy, row.rule or "", resource_label(row), "Pass" if row.ok else "Fail",
                 row.reason]
        if detailed:
            cells.append(" ".join(row.message.split()))
        body.append(cells)
    widths = [max(len(headers[i]), *(len(cells[i]) for cells in body)) for i in range(len(headers))]

    def line(cells: Any) -> str:
        return "│ " + " │ ".join(str(cell).ljust(width) for cell, width in zip(cells, widths, strict=True)) + " │"

    rule = "├" + "┼".join("─" * (width + 2) for width in widths) + "┤"
    top = "┌" + "┬".join("─" * (width + 2) for width in widths) + "┐"
    bottom = "└" + "┴".join("─" * (width + 2) for width in widths) + "┘"
    return "\n".join([top, line(headers), rule, *(line(cells) for cells in body), bottom])


def _explanations(rows: list[RowCheck]) -> list[str]:
    """How each explained row's result was reached, under its row ID (--explain)."""
    lines = []
    for number, row in enumerate(rows, start=1):
        explanation = _explanation(row)
        if explanation is None:
            continue
        lines.append("")
        lines.append(f"  #{number} {row.policy}/{row.rule or '-'} {resource_label(row)}: {row.actual}")
        lines.extend(explanation_lines(explanation, "    "))
    return lines


def _explanation(row: RowCheck) -> Any:
    return getattr(row.result, "explanation", None)


def resource_label(row: RowCheck) -> str:
    """``v1/Pod/default/name``: how the Kyverno CLI names a resource."""
    return "/".join(part for part in row.resource if part)


def render_json(run: TestRun) -> str:
    """One JSON document: every Test with its rows, and the summary."""
    tests = []
    for outcome in run.outcomes:
        entry: dict[str, Any] = {"file": str(outcome.file), "name": outcome.name,
                                 "results": [_row(row) for row in outcome.rows]}
        if outcome.error is not None:
            entry["error"] = str(outcome.error)
        if outcome.vacuous is not None:
            entry["error"] = outcome.vacuous
        if outcome.warnings:
            entry["warnings"] = list(outcome.warnings)
        tests.append(entry)
    return json.dumps({"tests": tests, "summary": run.summary()}, indent=2) + "\n"


def _row(row: RowCheck) -> dict[str, Any]:
    out = row.as_dict()
    explanation = _explanation(row)
    if explanation is not None:
        out["explanation"] = explanation.as_dict()
    return out


def render_junit(run: TestRun) -> str:
    """JUnit XML: one testsuite per Test, one testcase per row (a Test that did not load: one error)."""
    lines = ['<?xml version="1.0" encoding="UTF-8"?>',
             f'<testsuites name="assertree test" tests="{run.passed + run.failed}" failures="{run.failed}">']
    for outcome in run.outcomes:
        lines.extend(_suite(outcome))
    lines.append("</testsuites>")
    return "\n".join(lines) + "\n"


def _suite(outcome: TestOutcome) -> list[str]:
    from xml.sax.saxutils import escape, quoteattr  # only for JUnit: it imports urllib, http and ssl (~30 ms)

    total = len(outcome.rows) + (outcome.error is not None) + (outcome.vacuous is not None)
    out = [(f"  <testsuite name={quoteattr(outcome.name)} file={quoteattr(str(outcome.file))} tests=\"{total}\" "
           f"failures=\"{outcome.failed}\">")]
    if outcome.error is not None:
        out.append(f"    <testcase classname={quoteattr(outcome.name)} name=\"load\">")
        out.append(f"      <error message={quoteattr(str(outcome.error))}/>")
        out.append("    </testcase>")
    if outcome.vacuous is not None:
        out.append(f"    <testcase classname={quoteattr(outcome.name)} name=\"compared\">")
        out.append(f"      <failure message={quoteattr(outcome.vacuous)}/>")
        out.append("    </testcase>")
    for row in outcome.rows:
        name = f"{row.policy}/{row.rule or '-'} {resource_label(row)}"
        out.append(f"    <testcase classname={quoteattr(row.policy)} name={quoteattr(name)}>")
        if not row.ok:
            detail = f"expected {row.expected.result}, got {row.actual}"
            if row.message:
                detail += "\n" + row.message
            explanation = _explanation(row)
            if explanation is not None:
                detail += "\n" + "\n".join(explanation_lines(explanation))
            out.append(f"      <failure message={quoteattr(row.reason)}>{escape(detail)}</failure>")
        out.append("    </testcase>")
    out.append("  </testsuite>")
    return out


FORMATS = {"text": render_text, "json": render_json, "junit": render_junit}
