"""How a CEL policy, or a ClusterPolicy's ``validate.cel``, failed or errored on a resource (``--explain``).

The expressions are evaluated again with the variables the verdict was reached
with (`evaluate.prepare_variables`), in the same order, and recorded: the
policy's ``variables`` with their values, each match condition (or
``celPreconditions`` entry) and each validation (or expression) up to the one
that decided, with what it gave; that one is also split into its top-level
clauses, each evaluated with the same variables (`cel.clauses`), so that
``a && b && c`` says which of the three was false.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from assertree.errors import field_path_text
from assertree.explanation import Explanation, Trace
from assertree.languages.cel.clauses import trace_expression
from assertree.languages.cel.engine import CelError, Program
from assertree.languages.cel.fallback import Fallback, Runnable
from assertree.languages.kyverno.cel_policies.evaluate import CompiledSpec, prepare_variables

if TYPE_CHECKING:
    from assertree.languages.kyverno.cel_policies.validate_cel import CompiledValidateCel

__all__ = ["explain_validations", "trace_validate_cel"]


def explain_validations(spec: CompiledSpec, data: dict[str, Any], lookups: Any = None) -> Explanation:
    """A ValidatingPolicy's evaluation on one resource (`evaluate.evaluate_validations`), step by step."""
    trace = Trace()
    scope = prepare_variables(spec, data, lookups)
    _variables(spec, scope, lookups, trace)
    for name, program, path in spec.match_conditions:
        result = _expression(f"matchConditions {name}", program, scope, lookups, trace, path, split=False)
        if result is not True:
            return trace.explanation  # a false one skips, an error errors: either way, the end
    for index, (validation, program, _message) in enumerate(spec.validations):
        result = _expression(f"validations[{index}]: {validation.expression.strip()}", program, scope, lookups,
                             trace, validation.path, source=validation.expression)
        if result is not True:
            break
    return trace.explanation


def trace_validate_cel(cel: CompiledValidateCel, resource: Any, context: Any, trace: Trace) -> None:
    """A ClusterPolicy rule's ``validate.cel`` (`validate_cel.CompiledValidateCel.evaluate`), into `trace`."""
    scope, lookups = cel.scope(resource, context)
    _variables(cel.spec, scope, lookups, trace)
    for name, program, path in cel.preconditions:
        if _expression(f"celPreconditions {name}", program, scope, lookups, trace, path, split=False) is not True:
            return
    for position, (text, program, _message, _default) in enumerate(cel.expressions):
        if _expression(f"expressions[{position}]: {text.strip()}", program, scope, lookups, trace, (),
                       source=text) is not True:
            return


def _variables(spec: CompiledSpec, scope: dict[str, Any], lookups: Any, trace: Trace) -> None:
    """The spec's variables with their values; one that failed (left out of the scope) with its error."""
    if not spec.variables:
        return
    trace.add("variables")
    known = scope.get("variables") or {}
    with trace.nested():
        for name, program, path in spec.variables:
            where = field_path_text(path)
            if name in known:
                trace.add(f"variables.{name}", value=known[name], policy_path=where)
                continue
            try:
                value = program.evaluate(scope, lookups)
            except CelError as error:
                trace.add(f"variables.{name}", "error", detail=error.message, policy_path=where)
            else:  # it needs a variable that failed first
                trace.add(f"variables.{name}", value=value, policy_path=where)


def _expression(what: str, program: Runnable, scope: dict[str, Any], lookups: Any, trace: Trace, path: tuple,
                *, split: bool = True, source: str | None = None) -> Any:
    """`clauses.trace_expression` for a Kyverno expression (clauses of `source`, the expression as written,
    when the program reads its variables inlined)."""
    return trace_expression(what, program, scope, trace, path, context=lookups,
                            split_with=_as_written(program) if split else None, source=source)

def _as_written(program: Runnable) -> Program:
    """The program whose text is split into clauses: the expression as written where it compiled, else as
    rewritten for the CEL library (`assertree.languages.cel.fallback`)."""
    if isinstance(program, Fallback):
        return program.written if program.written is not None else program.rewritten
    return program

