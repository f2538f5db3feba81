"""GitHub Actions workflow commands: each finding becomes an annotation on the payload file's line.

    ::error file=k8s/app.yaml,line=13,col=11,title=no-latest-tag/pinned-images (app)::app runs ...

One annotation per violation and one per rule that errored, then a summary
line. The command follows the policy's ``policies.kyverno.io/severity``:
critical, high or none give ``::error``, medium and low ``::warning``, info
``::notice``; a rule that errored is always an ``::error``. Values are
escaped as the Actions runner unescapes them: ``%``, CR and LF in the message,
and also ``:`` and ``,`` in properties. File paths are relative to the
working directory, which in a workflow is the checkout.

GitHub shows at most 10 annotations of each kind per step and silently drops
the rest (they stay in the log). `overflow_note` says when that happens, so
the CLI can point at the log instead of letting findings vanish unseen.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence

from assertree.errors import Location, Problem
from assertree.inputs.paths import relative_path
from assertree.report.locate import Locator
from assertree.report.options import ReportOptions, github_command
from assertree.report.spool import Spool, Writable
from assertree.report.stream import findings
from assertree.report.totals import Tally, plural
from assertree.report.wording import rule_error
from assertree.results import ERROR, PolicyInfo, Resource, RuleResult, ScanResult, Violation

ANNOTATION_LIMIT = 10  # per kind (error, warning, notice) and step


def command(result: RuleResult) -> str:
    """The workflow command (error, warning, notice) of a result's annotations: a baselined finding is a
    notice, a failure below --fail-on a warning at most."""
    if result.baselined:
        return "notice"
    if result.status == ERROR:
        return "error"
    kind = github_command(result.policy)
    return "warning" if result.gate and kind == "error" else kind


def each_annotation(result: ScanResult) -> Iterator[tuple[str, RuleResult, Violation | None]]:
    """(command, rule result, violation) of every annotation, in report order; violation is None
    for a rule that errored. (Not named ``annotations``: that name is the ``__future__`` import.)"""
    for rule_result, violation in result.findings():
        yield command(rule_result), rule_result, violation


def annotation_counts(result: ScanResult) -> Counter[str]:
    """How many annotations of each kind `render` writes."""
    return Counter(kind for kind, _, _ in each_annotation(result))


def overflow_note(result: ScanResult) -> str | None:
    """A sentence for stderr when GitHub will not show every annotation, else None."""
    return overflow_note_of(annotation_counts(result))


def overflow_note_of(counts: Counter[str]) -> str | None:
    """`overflow_note` from the number of annotations of each kind (`Writer.counts`)."""
    over = [
        plural(counts[kind], kind, kind + "s")
        for kind in ("error", "warning", "notice")
        if counts[kind] > ANNOTATION_LIMIT
    ]
    if not over:
        return None
    return (
        f"GitHub shows at most {ANNOTATION_LIMIT} annotations of each kind per step; this report has "
        f"{' and '.join(over)}: the rest are only in the log"
    )


def render(result: ScanResult, options: ReportOptions | None = None) -> str:
    from assertree.report.stream import render_whole

    return render_whole("github", result, options)


class Writer:
    """The GitHub annotations as a scan goes: they wait in a spool, since the files that could not be
    read come first; `counts` says how many of each kind were written (`overflow_note_of`)."""

    by_resource = False

    def __init__(self, policies: Sequence[PolicyInfo], options: ReportOptions, out: Writable,
                 spill_dir: str | None = None) -> None:
        self.options, self.out = options, out
        self.locator = Locator()
        self.body = Spool(spill_dir)
        self.counts: Counter[str] = Counter()

    def add(self, resource: Resource | None, results: Sequence[RuleResult]) -> None:
        lines = []
        found = list(findings(results))
        for (rule_result, violation), location in zip(found, self.locator.results(found), strict=True):
            kind = command(rule_result)
            self.counts[kind] += 1
            lines.append(_annotation(kind, rule_result, violation, location, self.options.kyverno_json))
        if lines:
            self.body.write("\n".join(lines) + "\n")

    def finish(self, tally: Tally, problems: Sequence[Problem] = ()) -> None:
        lines = []
        for problem in problems:  # payload files that could not be read
            where = problem.location
            properties = [("file", relative_path(where.source or "<input>"))]
            properties += [(name, str(value)) for name, value in (("line", where.line), ("col", where.column))
                           if value]
            properties.append(("title", "assertree: cannot read this file"))
            fields = ",".join(f"{name}={escape_property(value)}" for name, value in properties)
            lines.append(f"::error {fields}::{escape_data(problem.message)}\n")
        self.out.write("".join(lines))
        self.body.copy_to(self.out)
        self.out.write(f"assertree: {tally.totals(problems).line()}\n")

    def close(self) -> None:
        self.body.close()


def _annotation(kind: str, rule_result: RuleResult, violation: Violation | None, location: Location | None,
                kyverno_json: bool) -> str:
    properties = []
    if location is not None:
        assert location.source is not None  # the Locator only places results in files
        properties.append(("file", relative_path(location.source)))
        if location.line is not None:
            properties.append(("line", str(location.line)))
            if location.column is not None:
                properties.append(("col", str(location.column)))
    title = f"{rule_result.policy.name}/{rule_result.rule.name}"
    if rule_result.identifier:
        title += f" ({rule_result.identifier})"
    properties.append(("title", title))
    fields = ",".join(f"{name}={escape_property(value)}" for name, value in properties)
    return f"::{kind} {fields}::{escape_data(_message(rule_result, violation, kyverno_json))}"


def escape_data(text: str) -> str:
    """A command's message, escaped as the runner expects."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A command's property value, escaped as the runner expects."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _message(result: RuleResult, violation: Violation | None, kyverno_json: bool = False) -> str:
    if violation is None:
        return f"rule error: {rule_error(result.error, kyverno_json=kyverno_json)}"
    return "\n".join([violation.headline(), *(str(error) for error in violation.errors)])
