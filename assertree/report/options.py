"""What a report may be asked to do, and how a policy's severity maps to each format's levels, in one place."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from assertree.errors import Problem
from assertree.records import ValueRecord
from assertree.results import PolicyInfo


class ReportOptions(ValueRecord):
    """Options of `assertree.report.render`; a format ignores those it has no use for. Never changed once made
    (`replace` makes another)."""

    quiet: bool  # text: only failed and errored rules
    color: bool  # text: ANSI colours
    bindings: Mapping[str, Any] | None  # text: echo the --bindings values, as kyverno-json does
    multiple_sources: bool  # text: name each resource's file when several payloads were read
    # every format: payload files that could not be read or parsed, reported beside the results
    problems: tuple[Problem, ...]
    # every format: kyverno-json's report: its wording of evaluation errors ("Internal error: ..."), no
    # totals line in text, and whole resources and policies embedded in the JSON report
    kyverno_json: bool
    # every format: the --baseline file read back (`assertree.findings.baseline.Baseline`): its entries that no
    # finding matched are listed as fixed once the scan is done; None without --baseline
    baseline: Any

    __slots__ = ("baseline", "bindings", "color", "kyverno_json", "multiple_sources", "problems", "quiet")

    def __init__(self, quiet: bool = False, color: bool = False, bindings: Mapping[str, Any] | None = None,
                 multiple_sources: bool = False, problems: tuple[Problem, ...] = (), kyverno_json: bool = False,
                 baseline: Any = None) -> None:
        self.quiet = quiet
        self.color = color
        self.bindings = bindings
        self.multiple_sources = multiple_sources
        self.problems = problems
        self.kyverno_json = kyverno_json
        self.baseline = baseline


_SARIF_LEVELS = {"critical": "error", "high": "error", "medium": "warning", "low": "note", "info": "note"}
_GITHUB_COMMANDS = {"critical": "error", "high": "error", "medium": "warning", "low": "warning", "info": "notice"}


def _severity(policy: PolicyInfo) -> str:
    return (policy.severity or "").strip().lower()


def sarif_level(policy: PolicyInfo) -> str:
    """The SARIF level of the policy's findings, from its severity annotation (default error)."""
    return _SARIF_LEVELS.get(_severity(policy), "error")


def github_command(policy: PolicyInfo) -> str:
    """The GitHub workflow command (error, warning, notice) of the policy's findings (default error)."""
    return _GITHUB_COMMANDS.get(_severity(policy), "error")
