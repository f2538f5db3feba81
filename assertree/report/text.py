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
``ReportOptions(kyverno_json=True)`` the report is kyverno-json's, line for line. A result
with an explanation (``--explain``) is followed by `` -> why:`` and its steps, one a line
(`assertree.report.explain`).
"""

from __future__ import annotations

from collections.abc import Sequence

from assertree.errors import Problem
from assertree.jp.values import to_display
from assertree.report.options import ReportOptions
from assertree.report.spool import Spool, Writable
from assertree.report.totals import Tally, plural
from assertree.report.wording import item_note, rule_error
from assertree.results import ERROR, FAIL, PASS, SKIP, WARN, PolicyInfo, Resource, RuleResult, ScanResult

# RuleResult.status is a str (Status is a StrEnum)
_STATUS: dict[str, str] = {PASS: "PASSED", FAIL: "FAILED", SKIP: "SKIPPED", WARN: "WARNING"}
__all__ = ["plural", "render", "rule_lines"]


def render(result: ScanResult, options: ReportOptions | None = None) -> str:
    """The whole report; see `ReportOptions` for what `options` change."""
    from assertree.report.stream import render_whole

    return render_whole("text", result, options)


class Writer:
    """The text report as a scan goes: rule lines wait in a spool, since the head before them names the
    files that could not be read and the number of resources."""

    by_resource = False

    def __init__(self, policies: Sequence[PolicyInfo], options: ReportOptions, out: Writable,
                 spill_dir: str | None = None) -> None:
        self.policies, self.options, self.out = policies, options, out
        self.body = Spool(spill_dir)

    def add(self, resource: Resource | None, results: Sequence[RuleResult]) -> None:
        if not results:
            return
        options = self.options
        quiet, color, with_source, kyverno_json = (options.quiet, options.color, options.multiple_sources,
                                                   options.kyverno_json)
        lines: list[str] = []
        for rule_result in results:
            if quiet and not rule_result.failed:
                continue
            if _plain_pass(rule_result) and not color and not with_source:
                identifier = rule_result.identifier  # what `rule_lines` writes for it (`_plain_pass`)
                lines.append(f"- PASSED (POLICY={rule_result.policy.name}, RULE={rule_result.rule.name}, "
                             f"ID={identifier})" if identifier else
                             f"- PASSED (POLICY={rule_result.policy.name}, RULE={rule_result.rule.name})")
                continue
            lines.extend(rule_lines(rule_result, color=color, with_source=with_source, kyverno_json=kyverno_json))
        if lines:
            self.body.write("\n".join(lines) + "\n")

    def finish(self, tally: Tally, problems: Sequence[Problem] = ()) -> None:
        options = self.options
        bindings, quiet, color = options.bindings, options.quiet, options.color
        paint = _paint if color else _plain
        lines: list[str] = []
        if not quiet:
            lines.append("Loading policies ...")
            if bindings is not None:
                lines.append("Loading bindings ...")
                for key, value in bindings.items():
                    lines.append(f"- {key} -> {value if isinstance(value, str) else to_display(value)}")
            lines.append("Loading payload ...")
        lines.extend(f"- {paint('ERROR', _RED)}: {problem}" for problem in problems)
        if not quiet:
            lines.append("Pre processing ...")
            lines.append(
                f"Running ( evaluating {plural(tally.resources, 'resource', 'resources')} against "
                f"{plural(len(self.policies), 'policy', 'policies')} ) ..."
            )
        if lines:
            self.out.write("\n".join(lines) + "\n")
        self.body.copy_to(self.out)
        if options.baseline is not None:
            fixed = [f"- {paint('FIXED', _GREEN)} (RULE={item.rule}, RESOURCE={item.resource}, SOURCE={item.file}) "
                     f"-> {item.check}" for item in options.baseline.fixed()]
            if fixed:
                self.out.write("\n".join(fixed) + "\n")
        if options.kyverno_json:
            if not quiet:
                self.out.write("Done\n")
        else:
            self.out.write(tally.totals(problems).line() + "\n")

    def close(self) -> None:
        self.body.close()


def rule_lines(result: RuleResult, *, color: bool = False, with_source: bool = False,
               kyverno_json: bool = False, explained: bool = True) -> list[str]:
    """The status line of one rule result, its violation lines (`kyverno_json`: in its wording) and, unless
    not `explained`, its explanation."""
    names = f"POLICY={result.policy.name}, RULE={result.rule.name}"
    if result.identifier:
        names += f", ID={result.identifier}"
    if with_source and result.resource.source is not None:
        names += f", SOURCE={result.resource.label}"
    paint = _paint if color else _plain
    if result.status == ERROR:
        label = paint("BASELINED", _YELLOW) + " ERROR" if result.baselined else paint("ERROR", _RED)
        return [f"- {label}: {rule_error(result.error, kyverno_json=kyverno_json)} ({names})",
                *(_explained(result) if explained else ())]
    if result.baselined:
        lines = [f"- {paint('BASELINED', _YELLOW)} (FAILED, {names})"]
    else:
        status = _STATUS[result.status]
        lines = [f"- {paint(status, _GREEN if result.status == PASS else _RED)} ({names})"]
    if (result.status == SKIP or result.action) and result.message:  # Kyverno says why (preconditions, an
        lines.append(f" -> {result.message}")  # exception), or what it would do (generate, delete)
    if result.gate:
        lines.append(f" -> a warning: {result.gate}")
    for violation in result.violations:
        known = " (baselined)" if violation.baselined and not result.baselined else ""
        lines.append(f" -> {violation.headline()}{known}")
        for error in violation.errors:
            note = None if kyverno_json else item_note(result.resource, error)
            lines.append(f"  -> {paint(str(error), _YELLOW)}" + (f" ({note})" if note else ""))
    if explained:
        lines.extend(_explained(result))
    return lines


def _plain_pass(result: RuleResult) -> bool:
    """Whether `result` is a pass with nothing to say but its names: most lines of a report, which `Writer.add`
    writes itself. Invariant: `rule_lines` gives it one line, ``- PASSED (POLICY=.., RULE=..[, ID=..])``, when
    neither color nor the source is asked for (`tests/reports/test_report_fast_paths.py` holds the two to it)."""
    return (result.status == PASS and not result.baselined and not result.action
            and not result.gate and not result.violations and result.explanation is None)


def _explained(result: RuleResult) -> list[str]:
    """How the result was reached (``--explain``), under `` -> why:``."""
    if result.explanation is None:
        return []
    from assertree.report.explain import explanation_lines  # --explain only: a plain scan does not import it

    return [" -> why:", *explanation_lines(result.explanation, "    ")]


_RED, _GREEN, _YELLOW = "31", "32", "33"


def _paint(text: str, code: str) -> str:
    return f"\x1b[{code}m{text}\x1b[0m"


def _plain(text: str, code: str) -> str:
    return text
