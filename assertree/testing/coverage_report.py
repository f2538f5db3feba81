"""The coverage of ``assertree test --coverage`` (`coverage.Coverage`) as text, JSON or Markdown.

Text is a table in ``kyverno test``'s style, Markdown a GitHub table (for a
pull request comment or ``$GITHUB_STEP_SUMMARY``), JSON the data
(`Coverage.as_dict`). In the tables, a policy kind without rules shows
``(policy)`` in the rule column, and ``COVERED`` says what is missing:
``no: no fail row``, ``no: no pass or skip row``, ``no: named by no test``.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from assertree.results import ERROR, FAIL, PASS, SKIP
from assertree.testing.coverage import Coverage, PolicyCoverage, RuleCoverage

__all__ = ["FORMATS", "render_json", "render_markdown", "render_text"]

_HEADERS = ("POLICY", "RULE", "PASS", "FAIL", "SKIP", "ERROR", "COVERED")
WHOLE_POLICY = "(policy)"


def headline(coverage: Coverage) -> str:
    """``Coverage: 5 of 7 rules have both a passing and a failing row``, with the untested policies."""
    summary = coverage.summary()
    rules = summary["rules"]
    text = (f"Coverage: {summary['covered']} of {rules} rule{'s' if rules != 1 else ''} "
            f"{'has' if rules == 1 else 'have'} both a passing and a failing row")
    if summary["untested"]:
        untested = summary["untested"]
        text += f"; {untested} polic{'ies' if untested != 1 else 'y'} named by no test"
    return text


def _verdict(policy: PolicyCoverage, rule: RuleCoverage) -> str:
    if rule.covered:
        return "yes"
    if not policy.tested:
        return "no: named by no test"
    return f"no: no {' or '.join(rule.missing)} row"


def _cells(policy: PolicyCoverage, rule: RuleCoverage) -> list[str]:
    return [policy.name, rule.name if rule.name is not None else WHOLE_POLICY,
            *(str(rule.rows[result]) for result in (PASS, FAIL, SKIP, ERROR)), _verdict(policy, rule)]


def render_text(coverage: Coverage) -> str:
    """The headline, then one table row per rule (kyverno test's table style)."""
    body = [_cells(policy, rule) for policy in coverage.policies for rule in policy.rules]
    lines = [headline(coverage)]
    if body:
        widths = [max(len(_HEADERS[i]), *(len(cells[i]) for cells in body)) for i in range(len(_HEADERS))]

        def line(cells: tuple[str, ...] | list[str]) -> str:
            return "│ " + " │ ".join(cell.ljust(width) for cell, width in zip(cells, widths, strict=True)) + " │"

        lines += ["", "┌" + "┬".join("─" * (width + 2) for width in widths) + "┐", line(_HEADERS),
                  "├" + "┼".join("─" * (width + 2) for width in widths) + "┤", *(line(cells) for cells in body),
                  "└" + "┴".join("─" * (width + 2) for width in widths) + "┘"]
    return "\n".join(lines) + "\n"


def render_markdown(coverage: Coverage) -> str:
    """A heading, the headline, and a GitHub table."""
    lines = ["## Policy test coverage", "", headline(coverage) + ".", ""]
    if coverage.policies:
        lines.append("| " + " | ".join(header.capitalize() for header in _HEADERS) + " |")
        lines.append("|---|---|---:|---:|---:|---:|---|")
        for policy in coverage.policies:
            for rule in policy.rules:
                cells = [_escape(cell) for cell in _cells(policy, rule)]
                cells[0], cells[1] = f"`{cells[0]}`", f"`{cells[1]}`" if rule.name is not None else cells[1]
                lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def _escape(text: str) -> str:
    return text.replace("|", "\\|").replace("`", "'")


def render_json(coverage: Coverage) -> str:
    return json.dumps(coverage.as_dict(), indent=2) + "\n"


FORMATS: dict[str, Callable[[Coverage], str]] = {"text": render_text, "json": render_json,
                                                 "markdown": render_markdown}
