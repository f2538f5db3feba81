"""The text report, laid out line for line like kyverno-json's scan output.

    Loading policies ...
    Loading payload ...
    Pre processing ...
    Running ( evaluating 1 resource against 1 policy ) ...
    - FAILED (POLICY=p, RULE=r, ID=x)
     -> message (CHECK=spec.rules[0].assert.all[0])
      -> Invalid value: 3: Expected value: 4 (PATH=a.b)
    Done

Values are printed as JSON where kyverno-json prints Go syntax
(``{"a":1}`` rather than ``map[string]interface {}{"a":1}``, ``null`` rather
than ``"null"``/``<nil>``).

In assertree's own voice (the default), payload files that could not be read
come first as ``- ERROR: file:line:column: message`` lines, rule errors are
worded for people (`assertree.report.wording`), a field error inside a ``~``
loop names its item, and the report ends with the totals line
(`assertree.report.totals`) instead of ``Done``; with ``-q`` only the file
errors, the failed and errored rules and the totals line are printed. With
``ReportOptions(kyverno_json=True)`` the report is kyverno-json's, line for line.
"""

from __future__ import annotations

from assertree.jp.values import to_display
from assertree.report.options import ReportOptions
from assertree.report.totals import plural, totals
from assertree.report.wording import item_note, rule_error
from assertree.results import ERROR, FAIL, PASS, SKIP, WARN, RuleResult, ScanResult

# RuleResult.status is a str (Status is a StrEnum)
_STATUS: dict[str, str] = {PASS: "PASSED", FAIL: "FAILED", SKIP: "SKIPPED", WARN: "WARNING"}
__all__ = ["plural", "render", "rule_lines"]


def render(result: ScanResult, options: ReportOptions | None = None) -> str:
    """The whole report; see `ReportOptions` for what `options` change."""
    options = options or ReportOptions()
    bindings, quiet, color, multiple_sources = options.bindings, options.quiet, options.color, options.multiple_sources
    compatible = options.kyverno_json
    paint = _paint if color else _plain
    lines: list[str] = []
    if not quiet:
        lines.append("Loading policies ...")
        if bindings is not None:
            lines.append("Loading bindings ...")
            for key, value in bindings.items():
                lines.append(f"- {key} -> {value if isinstance(value, str) else to_display(value)}")
        lines.append("Loading payload ...")
    lines.extend(f"- {paint('ERROR', _RED)}: {problem}" for problem in options.problems)
    if not quiet:
        lines.append("Pre processing ...")
        lines.append(
            f"Running ( evaluating {plural(len(result.resources), 'resource', 'resources')} against "
            f"{plural(len(result.policies), 'policy', 'policies')} ) ..."
        )
    for rule_result in result.results:
        if quiet and not rule_result.failed:
            continue
        lines.extend(rule_lines(rule_result, color=color, with_source=multiple_sources, kyverno_json=compatible))
    if compatible:
        if not quiet:
            lines.append("Done")
    else:
        lines.append(totals(result, options.problems).line())
    return "\n".join(lines) + "\n" if lines else ""


def rule_lines(result: RuleResult, *, color: bool = False, with_source: bool = False,
               kyverno_json: bool = False) -> list[str]:
    """The status line of one rule result and its violation lines (`kyverno_json`: in its wording)."""
    names = f"POLICY={result.policy.name}, RULE={result.rule.name}"
    if result.identifier:
        names += f", ID={result.identifier}"
    if with_source and result.resource.source is not None:
        names += f", SOURCE={result.resource.label}"
    paint = _paint if color else _plain
    if result.status == ERROR:
        return [f"- {paint('ERROR', _RED)}: {rule_error(result.error, kyverno_json=kyverno_json)} ({names})"]
    status = _STATUS[result.status]
    lines = [f"- {paint(status, _GREEN if result.status == PASS else _RED)} ({names})"]
    if result.status == SKIP and result.message:  # Kyverno says why: preconditions, an exception (named)
        lines.append(f" -> {result.message}")
    for violation in result.violations:
        lines.append(f" -> {violation.headline()}")
        for error in violation.errors:
            note = None if kyverno_json else item_note(result.resource, error)
            lines.append(f"  -> {paint(str(error), _YELLOW)}" + (f" ({note})" if note else ""))
    return lines


_RED, _GREEN, _YELLOW = "31", "32", "33"


def _paint(text: str, code: str) -> str:
    return f"\x1b[{code}m{text}\x1b[0m"


def _plain(text: str, code: str) -> str:
    return text
