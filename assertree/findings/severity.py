"""``--fail-on LEVEL``: failures of policies less severe than LEVEL are warnings, not failures.

A policy's severity is its ``policies.kyverno.io/severity`` annotation (every
policy kind reads it: `PolicyInfo.severity`), one of critical, high, medium,
low, info. A failure of a policy below the level becomes a ``warn`` result that
says why (`RuleResult.gate`): every report shows it as a warning and it does not
change the exit code. A policy without a severity, or with a word not in the
list, is gated as the most severe (as SARIF reports it as an error): give it a
severity to let it warn. An error (a rule that could not be evaluated) is never
gated: it says the check did not run.
"""

from __future__ import annotations

from collections.abc import Iterable

from assertree.results import FAIL, WARN, PolicyInfo, RuleResult

LEVELS = ("critical", "high", "medium", "low", "info")  # most severe first


def check_level(level: str) -> str:
    """`level` in lower case; raises ValueError naming the levels when it is none of them."""
    text = level.strip().lower()
    if text not in LEVELS:
        raise ValueError(f"unknown severity {level!r} (choose from: {', '.join(LEVELS)})")
    return text


def severity_of(policy: PolicyInfo) -> str | None:
    """The policy's severity in lower case, None when it has none the list knows."""
    text = (policy.severity or "").strip().lower()
    return text if text in LEVELS else None


def below(policy: PolicyInfo, level: str) -> bool:
    """Whether `policy` is less severe than `level` (a policy without a known severity never is)."""
    severity = severity_of(policy)
    return severity is not None and LEVELS.index(severity) > LEVELS.index(level)


def gate(results: Iterable[RuleResult], level: str) -> None:
    """Turn each failure of a policy below `level` into a warning that says why (in place)."""
    for result in results:
        if result.status == FAIL and below(result.policy, level):
            result.status = WARN
            result.gate = f"severity {severity_of(result.policy)} is below --fail-on {level}"
