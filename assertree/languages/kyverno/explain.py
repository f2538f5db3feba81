"""How a ClusterPolicy/Policy validate rule failed or errored on a resource (``--explain``).

The explainer runs the rule once more (`evaluate.evaluate_rule`: the same code
and the same inputs as the scan) with a `Trace` active, and the parts that
decide record what they saw (`tracing`, called by `bridge` only while a trace is
active): each precondition and deny condition after substitution, a pattern's
failing field, a ``foreach`` element, ``validate.cel`` expressions
(`cel_policies.explain`) and ``podSecurity`` checks. It tells `tracing` which
condition blocks are the rule's own (`_blocks`), so that a PolicyException's
conditions, evaluated on the way, stay out of the story.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from assertree.errors import field_path_text
from assertree.explanation import Explanation, Trace, recording
from assertree.languages.kyverno.manifests import to_float64
from assertree.languages.kyverno.tracing import BLOCKS
from assertree.results import ERROR, FAIL

if TYPE_CHECKING:
    from assertree.languages.base import Explain, ScanContext
    from assertree.languages.kyverno.compile import CompiledKyvernoRule
    from assertree.languages.kyverno.evaluate import Check
    from assertree.results import RuleResult

__all__ = ["explainer"]


def explainer(compiled: CompiledKyvernoRule, context: ScanContext) -> Explain:
    """The `base.Explain` of a validate rule (`compile.CompiledKyvernoRule`)."""
    from assertree.languages.kyverno.evaluate import evaluate_rule

    plan = compiled.plan
    blocks = _blocks(plan.check) if plan is not None and plan.check is not None else {}

    def explain(result: RuleResult) -> Explanation | None:
        if plan is None or plan.check is None:
            return None
        trace = Trace()
        trace.notes[BLOCKS] = blocks
        resource = result.resource.with_value(to_float64(result.resource.value))  # as the runner reads it
        with recording(trace):
            again = evaluate_rule(compiled, plan, resource, context)
        found = "no result" if again is None else str(again.status)
        if found != str(result.status):  # never expected: the same code on the same inputs
            trace.add("explain", ERROR, depth=0, detail=f"evaluated again, the rule gave {found}, not "
                                                        f"{result.status}: this explanation may not hold")
        elif plan.check.has_deny and plan.check.deny is None and again is not None and again.status != ERROR:
            trace.add("deny", FAIL, depth=0, policy_path=field_path_text((*plan.check.path, "deny")),
                      detail="no conditions: every resource the rule selects is denied")
        return trace.explanation

    return explain


def _blocks(check: Check) -> dict[int, tuple[str, str, bool]]:
    """The condition blocks of a rule's checks, by identity: what to call each and where it is."""
    out: dict[int, tuple[str, str, bool]] = {}
    rule_path = check.path[:-1]  # the top-level check is the rule's ``validate``; its preconditions are the rule's

    def visit(part: Check, preconditions_at: tuple) -> None:
        if part.preconditions is not None:
            out[id(part.preconditions)] = ("preconditions", field_path_text(preconditions_at), False)
        if part.deny is not None:
            out[id(part.deny)] = ("deny.conditions", field_path_text((*part.path, "deny", "conditions")), True)
        for loop in part.foreach:
            visit(loop.check, (*loop.check.path, "preconditions"))

    visit(check, (*rule_path, "preconditions"))
    return out


