"""How a ValidatingAdmissionPolicy failed or errored on a resource (``--explain``).

The invocation that decided is run again (`dispatch.invocations`, in the
runner's order: the first binding and params whose validations deny, or
error, else the first invocation) and recorded: the binding and params it ran
with, the ``variables`` with their values, each match condition, and each
validation up to the one that denied, that one also split into its top-level
clauses (`cel.clauses`), so ``a && b`` says which side was false.
"""

from __future__ import annotations

from typing import Any

from assertree.errors import field_path_text
from assertree.explanation import Explanation, Trace
from assertree.languages.admission.activation import request_for
from assertree.languages.admission.dispatch import ConfigurationError, Invocation, invocations
from assertree.languages.admission.evaluate import CompiledSpec, Scope, invocation_budget, prepare, validate
from assertree.languages.admission.model import AdmissionPolicy
from assertree.languages.base import Explain, ScanContext
from assertree.languages.cel.clauses import trace_expression
from assertree.results import RuleResult

__all__ = ["admission_explainer"]


def admission_explainer(policy: AdmissionPolicy, spec: CompiledSpec, context: ScanContext) -> Explain:
    """The explainer of a ValidatingAdmissionPolicy's results in a scan with `context`."""
    params = tuple(getattr(context, "params", ()) or ())
    run_unbound = bool(getattr(context, "run_unbound", False))

    def explain(result: RuleResult) -> Explanation | None:
        request = request_for(result.resource.value, context)
        trace = Trace()
        chosen: tuple[Invocation, Scope] | None = None
        for item in invocations(policy, request, params, run_unbound=run_unbound):
            if isinstance(item, ConfigurationError):
                trace.add("binding", "error", detail=item.message)
                return trace.explanation
            if not isinstance(item, Invocation):  # UNBOUND: the result is a skip, nothing to explain
                return None
            with invocation_budget():  # as the verdict was reached
                scope = prepare(spec, request.with_params(item.params))
                decisions = validate(spec, scope).decisions
            if chosen is None:
                chosen = (item, scope)
            if any(decision.evaluation in ("deny", "error") for decision in decisions):
                chosen = (item, scope)
                break
        if chosen is None:
            return None
        invocation, scope = chosen
        binding = invocation.binding
        trace.add(f"binding {binding.name}", detail=f"validationActions: {', '.join(binding.actions)}")
        if isinstance(invocation.params, dict):
            trace.add("params", value=invocation.params)
        _trace(spec, scope, trace)
        return trace.explanation

    return explain


def _trace(spec: CompiledSpec, scope: Scope, trace: Trace) -> None:
    values = scope.data.get("variables") or {}
    if spec.variables:
        trace.add("variables")
        with trace.nested():
            for name, _program, path in spec.variables:
                if name in scope.failed:
                    trace.add(f"variables.{name}", "error", detail=scope.failed[name],
                              policy_path=field_path_text(path))
                else:
                    trace.add(f"variables.{name}", value=values.get(name), policy_path=field_path_text(path))
    for name, program, path in spec.match_conditions:
        if _expression(f"matchConditions {name}", program, scope, trace, path, split=False) is not True:
            return
    for index, (validation, program, _message) in enumerate(spec.validations):
        outcome = _expression(f"validations[{index}]: {validation.expression.strip()}", program, scope, trace,
                              validation.path)
        if outcome is not True:
            return


def _expression(what: str, program: Any, scope: Scope, trace: Trace, path: tuple, *, split: bool = True) -> Any:
    """`clauses.trace_expression` in an invocation's scope (as `evaluate.run` evaluates it)."""
    return trace_expression(what, program, scope.data, trace, path, split_with=program if split else None)
