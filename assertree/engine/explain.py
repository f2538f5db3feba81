"""``--explain``: each failing or erroring result gets the story of how it was reached.

An explanation is made *after* the verdict, by the rule's language evaluating
the rule on the result's resource once more and recording what it did
(`assertree.languages.base.Explain`, `assertree.explanation`). So the scan
itself runs exactly as without ``--explain`` (a scan that explains nothing
pays nothing), and explaining can never change a verdict: it only fills in
`RuleResult.explanation`. The tests hold the second evaluation to the first
(`tests/explain`): over the conformance data, every result is the same with
and without explanations.

Every explanation ends where the verdict did: a step with the result's outcome
(a failing node, a false validation, an erroring condition). When what a
language records stops short of it (a ``deny`` without conditions denies
everything; a variable fails before any condition is evaluated), the result
itself closes the explanation. An explainer that fails (a bug, a value too
deep) gives an explanation that says so instead of a traceback: the results and
the reports stand.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from assertree.explanation import Explanation, Step
from assertree.languages.base import Explain, ScanContext
from assertree.results import ERROR, FAIL, WARN, RuleResult

__all__ = ["EXPLAINED", "Explainer", "reaches"]

EXPLAINED = (FAIL, ERROR, WARN)
"""The statuses that get an explanation (a warning is a failure that does not count)."""


class Explainer:
    """Explains results of the compiled `rules` (`base.CompiledRule`) under one scan `context`."""

    def __init__(self, rules: Iterable[Any], context: ScanContext) -> None:
        self._rules = {id(compiled.rule): compiled for compiled in rules}
        self._context = context
        self._made: dict[int, Explain | None] = {}

    def explain(self, result: RuleResult) -> Explanation | None:
        """How `result` was reached, or None when its rule has no explainer (a mutate rule, a language that
        cannot say)."""
        compiled = self._rules.get(id(result.rule))
        if compiled is None:
            return None
        key = id(compiled)
        if key not in self._made:
            make = getattr(compiled, "explainer", None)
            self._made[key] = make(self._context) if make is not None else None
        explain = self._made[key]
        if explain is None:
            return None
        try:
            explanation = explain(result)
        except (Exception, RecursionError) as error:  # noqa: BLE001 - an explanation never costs the report
            return Explanation([Step("explain", "error", detail=f"could not explain this result: "
                                                                 f"{type(error).__name__}: {error}")])
        if explanation is not None and not reaches(explanation, result.status):
            explanation.steps.append(_verdict(result))
        return explanation

    def apply(self, results: Sequence[RuleResult]) -> None:
        """Explain every failing or erroring result of `results` (in place)."""
        for result in results:
            if result.status in EXPLAINED and result.explanation is None:
                result.explanation = self.explain(result)

    def units(self, units: Iterable[tuple[Any, Sequence[RuleResult]]]) -> Iterator[tuple[Any, Sequence[RuleResult]]]:
        """`units` (a resource and its results, as a streamed scan yields them) with their results explained."""
        for resource, results in units:
            self.apply(results)
            yield resource, results


_REACHED: dict[str, tuple[str, ...]] = {FAIL: ("fail", "false"), WARN: ("fail", "false"), ERROR: ("error",)}


def reaches(explanation: Explanation, status: str) -> bool:
    """Whether a step of `explanation` has the outcome of a result of `status` (fail or false for a failure,
    error for an error)."""
    outcomes = _REACHED.get(status, ())
    return any(step.outcome in outcomes for step in explanation.steps)


def _verdict(result: RuleResult) -> Step:
    """The step that closes an explanation with the result itself."""
    if result.status == ERROR:
        detail = result.error.message if result.error is not None else result.message or ""
        return Step("result", "error", detail=detail)
    messages = [violation.message for violation in result.violations if violation.message]
    return Step("result", "fail", detail=result.message or "; ".join(messages))
