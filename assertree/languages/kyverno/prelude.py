"""What every Kyverno rule goes through before its body runs, validate and mutate alike.

Kyverno's ``invokeRuleHandler`` (``pkg/engine/engine.go``) and the handlers
after it, in this order:

1. ``match``/``exclude`` do not select the resource: the rule gives no
   result at all;
2. the rule's context entries are registered (a failing entry: ERROR);
3. its preconditions are not met: SKIP (an evaluation failure: ERROR);
4. a PolicyException covers the rule and resource: SKIP, with its name.

`enter_rule` runs these steps and returns a `Prelude`: the rule's context
(`bridge.Session`) when the body should run, or the `Stop` that ends the
rule here. `check_context_and_preconditions` is steps 2 and 3 alone, which a
validate ``foreach`` repeats for every element. `as_kyverno_reads` is the resource
every rule of a scan is given, converted once per resource.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from assertree.languages.kyverno import bridge
from assertree.languages.kyverno.kind_gate import gate_of
from assertree.languages.kyverno.manifests import to_float64, with_default_namespace
from assertree.results import ERROR, SKIP, RuleError

if TYPE_CHECKING:
    from assertree.languages.base import ScanContext
    from assertree.results import Resource


@dataclass
class Stop:
    """How a rule ends before its body: a status, Kyverno's message, and why (error or exception)."""

    status: str
    message: str
    error: RuleError | None = None
    exception: str | None = None


@dataclass
class Prelude:
    """`session` to run the body in, or `stop`; neither when the rule does not select the resource."""

    session: bridge.Session | None = None
    stop: Stop | None = None


def as_kyverno_reads(resource: Resource, scan: ScanContext) -> Resource:
    """`resource` as Kyverno reads it (in ``default`` when namespaced and without a namespace, every number a
    float64), converted once per resource for all the mutating policies and rules of a scan.

    Fast path, invariant: the answer equals a fresh ``to_float64(with_default_namespace(...))`` of
    `resource.value`, because it is a function of that value alone (a new `Resource` is made whenever a
    mutation changes it) and no rule changes the value it is given (patches apply to copies). A property
    test (`tests/kyverno/test_kyverno_reads_once.py`) holds scans with the memo to scans without it.
    """
    seen: list[Any] = scan.memo.setdefault("kyverno.float64", [None, None])
    if seen[0] is not resource:
        seen[:] = [resource, resource.with_value(to_float64(with_default_namespace(resource.value,
                                                                                   scan.cluster_scoped)))]
    return seen[1]


def enter_rule(policy: Any, rule: Any, resource: Any, scan: ScanContext, *, context: list,
               preconditions: Any, exceptions: bool = True, gated: bool = False) -> Prelude:
    """Steps 1 to 4 for `rule` of `policy` on `resource` (see the module docstring); without `exceptions`,
    step 4 is left to the rule (a ``podSecurity`` rule weighs exceptions its own way); `gated`: the caller
    has already asked the rule's kind gate (`kind_gate`) about this resource."""
    if not gated and scan.values is None and isinstance(resource, dict) and (gate := gate_of(rule)) is not None \
            and not gate.admits(resource):
        return Prelude()  # match cannot select this kind (`kind_gate`; no values file can change the kind)
    try:
        session = bridge.session(policy, rule, resource, scan)
        if not bridge.selects(session):
            return Prelude()
    except bridge.EvaluationProblem as problem:
        return Prelude(stop=_error(str(problem), problem))
    stop = check_context_and_preconditions(session, context, preconditions)
    if stop is not None:
        return Prelude(stop=stop)
    exception = bridge.exception_for(policy, rule, session, scan) if exceptions else None
    if exception is not None:
        return Prelude(stop=Stop(SKIP, f"rule is skipped due to policy exceptions{exception}", exception=exception))
    return Prelude(session)


def check_context_and_preconditions(session: bridge.Session, context: list, preconditions: Any) -> Stop | None:
    """Register `context` entries and check `preconditions`; the Stop when the rule (or element) ends here."""
    try:
        bridge.load_context(session, context)
    except bridge.EvaluationProblem as problem:
        return _error(f"failed to load context: {problem}", problem)
    try:
        met, why = bridge.conditions_met(preconditions, session)
    except bridge.EvaluationProblem as problem:
        return _error(f"failed to evaluate preconditions: {problem}", problem)
    if not met:
        return Stop(SKIP, "; ".join(part for part in ("preconditions not met", why) if part))
    return None


def _error(text: str, problem: bridge.EvaluationProblem) -> Stop:
    return Stop(ERROR, text, RuleError(text, problem.path, problem.kind))
