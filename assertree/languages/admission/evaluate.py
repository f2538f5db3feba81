"""One policy invocation (a policy, one binding, one param) on one request: Kubernetes' validator and patchers.

Validating (k8s.io/apiserver .../policy/validating/validator.go):

- ``matchConditions``: one that is false and the policy does not apply
  (no decision at all); otherwise any that errored make one error decision;
- each validation gives a decision: admit when it is true; deny with its
  message when it is anything else (``messageExpression`` first, when it gives
  a non-empty one-line string of at most 5 kB, then ``message``, then "failed
  expression: <text>"), with its ``reason`` (``Invalid`` by default); an
  evaluation error is an error decision ("expression '<text>' resulted in
  error: ...");
- audit annotations: a string value is published (trimmed; empty: left out),
  null is left out, an error or any other type is an error decision.

An error decision denies under ``failurePolicy: Fail`` and admits under
``Ignore`` (`Decision.denies`). Mutating (.../policy/mutating/patch): after the
match conditions (an error is one error decision), each mutation in order
patches the object the previous one left; an apply configuration is merged in
as server-side apply merges it, a JSON patch is applied as evanphx v4 applies
it (a failed ``test`` leaves the object as it was), and an error stops the
invocation.

Variables are lazy in Kubernetes: one that fails matters only when read, and
its error is then the reader's. Here they are evaluated up front, in order,
each seeing the ones before it; one that fails is left out and its error is
reported for any expression that then fails reading it (`_explain`).

Bounded as the apiserver bounds an invocation (k8s.io/apiserver/pkg/apis/cel/
config.go): each expression is held to assertree's cost and memory limits
(`assertree.languages.cel.limits`, standing for ``PerCallLimit``), past which it
is that expression's error; the variables, validations and audit annotations of
one invocation share one budget (`invocation_budget`, for
``RuntimeCELCostBudget``) and the match conditions another
(``RuntimeCELCostBudgetMatchConditions``, a quarter of it). An invocation that
spends its budget stops: its one decision is an error, as the validator's
"running out of cost budget" is; a mutating one stops at that mutation.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any

from assertree.languages.admission.model import AuditAnnotation
from assertree.languages.cel.engine import CelBudgetError, CelError, Program
from assertree.languages.cel.limits import EVALUATION_BUDGET, evaluation_budget
from assertree.languages.kubernetes.expressions import Mutation, Validation

__all__ = ["AuditValue", "CompiledSpec", "Decision", "MutationOutcome", "Validated", "invocation_budget", "mutate",
           "prepare", "run", "validate"]

MAX_MESSAGE_BYTES = 5 * 1024  # celconfig.MaxEvaluatedMessageExpressionSizeBytes
MAX_AUDIT_VALUE = 10 * 1024  # validating.maxAuditAnnotationValueLength
MATCH_BUDGET = EVALUATION_BUDGET // 4  # RuntimeCELCostBudgetMatchConditions is a quarter of RuntimeCELCostBudget
_STOPPED = "no further expressions of this invocation were run"
_VARIABLE = re.compile(r"(?<![\w.])variables\s*\.\s*([_A-Za-z][_A-Za-z0-9]*)")


@dataclass
class CompiledSpec:
    """A policy's programs, in the order they run (each with the field path it comes from)."""

    variables: list[tuple[str, Program, tuple]] = field(default_factory=list)
    match_conditions: list[tuple[str, Program, tuple]] = field(default_factory=list)
    validations: list[tuple[Validation, Program, Program | None]] = field(default_factory=list)
    audit_annotations: list[tuple[AuditAnnotation, Program]] = field(default_factory=list)
    mutations: list[tuple[Mutation, Program]] = field(default_factory=list)
    failure_policy: str = "Fail"


@dataclass(frozen=True, slots=True)
class Decision:
    """What one expression decided: ``admit``, ``deny`` or ``error`` (an error denies unless the policy ignores
    failures), with the message, the reason and the field path of the expression."""

    evaluation: str
    message: str = ""
    path: tuple = ()
    reason: str = "Invalid"
    index: int | None = None  # the validation's position (for the audit annotation Kubernetes publishes)

    def denies(self, failure_policy: str) -> bool:
        return self.evaluation == "deny" or (self.evaluation == "error" and failure_policy != "Ignore")


@dataclass(frozen=True, slots=True)
class AuditValue:
    """A published audit annotation: its key and value."""

    key: str
    value: str


@dataclass
class Scope:
    """The CEL variables of one invocation, with the variables that failed and why."""

    data: dict[str, Any]
    failed: dict[str, str] = field(default_factory=dict)


def invocation_budget() -> AbstractContextManager[None]:
    """The budget one invocation's expressions share (`prepare` and `validate` or `mutate` run inside it)."""
    return evaluation_budget(EVALUATION_BUDGET)


def run(program: Program, scope: Scope) -> Any:
    """Evaluate one program in `scope`: the one place every admission expression is evaluated, charged to the
    invocation's budget when one is open. Raises CelError (CelBudgetError once the budget is spent)."""
    return program.evaluate(scope.data)


def _explain(error: CelError, scope: Scope) -> str:
    """The error of an expression, or, when it reads a variable that failed, that variable's error (what lazy
    evaluation would have reported: the variable is evaluated where it is read)."""
    for name in _VARIABLE.findall(error.expression):
        if name in scope.failed:
            return f"variable {name!r}: {scope.failed[name]}"
    return error.message


def _failure(text: str, error: CelError, scope: Scope) -> str:
    return f"expression '{text.strip()}' resulted in error: {_explain(error, scope)}"


def prepare(spec: CompiledSpec, data: dict[str, Any]) -> Scope:
    """`data` with ``variables`` added: each variable in order, seeing the ones before it."""
    values: dict[str, Any] = {}
    scope = Scope({**data, "variables": values})
    for name, program, _path in spec.variables:
        try:
            values[name] = run(program, Scope({**data, "variables": dict(values)}, scope.failed))
        except CelError as error:
            scope.failed[name] = _explain(error, scope)
    return scope


def match(spec: CompiledSpec, scope: Scope) -> Decision | None:
    """None when the match conditions hold; a decision ``skip`` when one is false, else ``error``."""
    with evaluation_budget(MATCH_BUDGET):
        return _match(spec, scope)


def _match(spec: CompiledSpec, scope: Scope) -> Decision | None:
    errors: list[tuple[str, tuple]] = []
    for name, program, path in spec.match_conditions:
        try:
            result = run(program, scope)
        except CelBudgetError as error:
            return Decision("error", f"{error.message}: {_STOPPED}", path)
        except CelError as error:
            errors.append((_failure(program.text, error, scope), path))
            continue
        if result is False:
            return Decision("skip", f"match condition {name!r} is false", path)
    if not errors:
        return None
    message = errors[0][0] if len(errors) == 1 else "[" + ", ".join(text for text, _ in errors) + "]"
    return Decision("error", message, errors[0][1])


def _message(validation: Validation, message_program: Program | None, scope: Scope) -> str:
    if message_program is not None:
        try:
            value = run(message_program, scope)
        except CelError:
            value = None
        if isinstance(value, str):
            value = value.strip()
            if value and "\n" not in value and len(value.encode()) <= MAX_MESSAGE_BYTES:
                return value
    return validation.message.strip() or f"failed expression: {validation.expression.strip()}"


@dataclass
class Validated:
    """One invocation of a validating policy: whether it applied (its match conditions held or failed), every
    decision of its validations and audit annotations, and the audit values it published."""

    applied: bool
    decisions: list[Decision] = field(default_factory=list)
    published: list[AuditValue] = field(default_factory=list)


def validate(spec: CompiledSpec, scope: Scope) -> Validated:
    """The validations and audit annotations of one invocation; not applied when a match condition is false."""
    matched = match(spec, scope)
    if matched is not None:
        return Validated(True, [matched]) if matched.evaluation == "error" else Validated(False)
    decisions = []
    for index, (validation, program, message_program) in enumerate(spec.validations):
        try:
            result = run(program, scope)
        except CelBudgetError as error:
            return Validated(True, [Decision("error", f"{error.message}: {_STOPPED}", validation.path)])
        except CelError as error:
            decisions.append(Decision("error", _failure(validation.expression, error, scope), validation.path,
                                      index=index))
            continue
        if result is True:
            decisions.append(Decision("admit", path=validation.path, index=index))
        else:
            decisions.append(Decision("deny", _message(validation, message_program, scope), validation.path,
                                      validation.reason or "Invalid", index))
    published = []
    for annotation, program in spec.audit_annotations:
        try:
            value = run(program, scope)
        except CelBudgetError as error:
            return Validated(True, [Decision("error", f"{error.message}: {_STOPPED}", annotation.path)])
        except CelError as error:
            decisions.append(Decision("error", _failure(annotation.expression, error, scope), annotation.path))
            continue
        if isinstance(value, str):
            if value.strip():
                published.append(AuditValue(annotation.key, value.strip()[:MAX_AUDIT_VALUE]))
        elif value is not None:
            kind = type(value).__name__.replace("dict", "map").replace("str", "string")
            decisions.append(Decision("error", f"valueExpression '{annotation.expression}' resulted in unsupported "
                                      f"return type: {kind}. Return type must be either string or null.",
                                      annotation.path))
    return Validated(True, decisions, published)


@dataclass(frozen=True, slots=True)
class MutationOutcome:
    """An invocation's mutations: whether it applied, the object after the mutations that worked, and the error
    of the first that did not (the apiserver goes on with the next mutation, and refuses the request at the end
    unless the policy ignores failures)."""

    applied: bool
    object: Any = None
    error: Decision | None = None


def mutate(spec: CompiledSpec, scope: Scope, apply: Sequence[Any]) -> MutationOutcome:
    """The mutations of one invocation on ``scope.data["object"]``; `apply` is (apply configuration, JSON
    patch) functions of (object, patch), raising ValueError when the patch does not apply."""
    matched = match(spec, scope)
    if matched is not None:
        return MutationOutcome(False, error=matched if matched.evaluation == "error" else None)
    apply_configuration, apply_json_patch = apply
    current = scope.data.get("object")
    if current is None:  # Kubernetes calls no patcher when there is no object (DELETE)
        return MutationOutcome(False)
    first_error: Decision | None = None
    for mutation, program in spec.mutations:
        try:
            patch = run(program, Scope({**scope.data, "object": current}, scope.failed))
            if mutation.patch_type == "JSONPatch":
                current = apply_json_patch(current, patch)
            else:
                current = apply_configuration(current, patch)
        except CelBudgetError as error:
            return MutationOutcome(True, current, first_error or Decision("error", f"{error.message}: {_STOPPED}",
                                                                           mutation.path))
        except CelError as error:
            first_error = first_error or Decision("error", _failure(mutation.expression, error, scope), mutation.path)
        except ValueError as error:
            first_error = first_error or Decision("error", str(error), mutation.path)
    return MutationOutcome(True, current, first_error)
