"""The findings steps of one scan, applied to each resource's results before any report sees them."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from assertree.findings.severity import gate
from assertree.records import ValueRecord
from assertree.results import RuleResult

if TYPE_CHECKING:  # a plain scan (no --baseline, no PolicyExceptions) imports neither module
    from assertree.findings.baseline import Baseline, Recorder
    from assertree.findings.exceptions import Exempting


class FindingSteps(ValueRecord):
    """PolicyExceptions for kyverno-json policies (`exceptions.Exempting`), then ``--fail-on``
    (`severity.gate`), then ``--baseline`` (`Baseline.mark`), then ``--write-baseline`` (`Recorder.add`), in
    that order: a baseline records and matches the results as reported."""

    fail_on: str | None
    baseline: Baseline | None
    recorder: Recorder | None
    exempting: Exempting | None

    __slots__ = ("baseline", "exempting", "fail_on", "recorder")

    def __init__(
            self, fail_on: str | None = None, baseline: Baseline | None = None, recorder: Recorder | None = None,
            exempting: Exempting | None = None,
    ) -> None:
        self.fail_on = fail_on
        self.baseline = baseline
        self.recorder = recorder
        self.exempting = exempting

    def apply(self, results: Sequence[RuleResult]) -> None:
        if self.exempting:
            self.exempting.apply(results)
        if self.fail_on is not None:
            gate(results, self.fail_on)
        if self.baseline is not None:
            self.baseline.mark(results)
        if self.recorder is not None:
            self.recorder.add(results)

    def units(self, units: Iterable[tuple[Any, Sequence[RuleResult]]]) -> Iterator[tuple[Any, Sequence[RuleResult]]]:
        """`units` (a resource and its results, as a streamed scan yields them) with the steps applied."""
        for resource, results in units:
            self.apply(results)
            yield resource, results
