"""Running a compiled policy spec on one resource: Kyverno's order of CEL evaluation and its outcomes.

Order (pkg/cel/policies/vpol/compiler/policy.go, mpol/compiler/policy.go):

1. the PolicyExceptions that name the policy (`exceptions`): one that holds
   and exempts fully makes the outcome SKIP (or PASS, its ``reportResult``);
   the others hand their ``images``/``allowedValues`` to the ``exceptions``
   variable; one whose condition errors makes the outcome an ERROR;
2. ``matchConditions``: all must be true; a false one makes the outcome SKIP;
   an error is an ERROR, or a SKIP under ``failurePolicy: Ignore``. A
   ValidatingPolicy evaluates them before its variables exist (reading one is
   an error, as in Kyverno); a MutatingPolicy binds its variables first;
3. each validation in order: the first that is false FAILs with its message
   (``messageExpression`` first, then ``message``, then Kyverno's "CEL
   expression validation failed at index N"), the first that errors or is not
   a bool is an ERROR; none failing is a PASS. A MutatingPolicy applies its
   mutations in order, each seeing the object the previous one made, and
   PASSes with the patched object.

Variables are lazy, as in Kyverno: `compile` binds the ones each expression
reads into its text (`assertree.languages.cel.variables`). An expression that
reads ``variables`` some other way gets precomputed values instead
(`prepare_variables`, only then). One difference: Kyverno evaluates a variable
once per request, on the object as it is when first read, so a MutatingPolicy
with several mutations may see a variable computed before a later mutation;
here each mutation reads its variables on the object it receives. Programs
are compiled (`compile`); nothing here parses text.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from assertree.languages.cel.engine import CelError
from assertree.languages.cel.fallback import Runnable
from assertree.languages.cel.limits import budgeted
from assertree.languages.kubernetes.expressions import Mutation, Validation
from assertree.languages.kyverno.cel_policies.conditions import check_conditions
from assertree.languages.kyverno.cel_policies.exceptions import CompiledException, check_exceptions
from assertree.results import ERROR, FAIL, PASS, SKIP, RuleError

__all__ = ["CompiledSpec", "Outcome", "begin", "evaluate_mutations", "evaluate_validations", "noted",
           "prepare_variables", "run_validations", "validation_message"]

NO_EXCEPTIONS: dict[str, list[str]] = {"allowedImages": [], "allowedValues": []}


@dataclass
class CompiledSpec:
    """A spec's programs, in the order they run."""

    match_conditions: list[tuple[str, Runnable, tuple]] = field(default_factory=list)  # name, program, field path
    variables: list[tuple[str, Runnable, tuple]] = field(default_factory=list)  # each with its own reads bound
    validations: list[tuple[Validation, Runnable, Runnable | None]] = field(default_factory=list)
    mutations: list[tuple[Mutation, Runnable]] = field(default_factory=list)
    failure_policy: str = "Fail"
    needs_values: bool = False  # an expression reads `variables` other than by name: precompute their values
    variables_in_match: bool = False  # MutatingPolicy: variables are bound before the match conditions
    conditions: list[tuple[str, Runnable, tuple]] = field(default_factory=list)  # DeletingPolicy
    generations: list[Any] = field(default_factory=list)  # GeneratingPolicy: generating.CompiledGeneration
    image_references: list[tuple[Any, Runnable | None]] = field(default_factory=list)  # (ImageReference, its CEL)
    image_extractors: list[tuple[str, Runnable, tuple]] = field(default_factory=list)  # ImageValidatingPolicy
    target_expression: Runnable | None = None  # MutatingPolicy: targetMatchConstraints.expression
    verify_digest: bool = False
    required: bool = False


@dataclass
class Outcome:
    """What evaluating a spec on one resource gave."""

    status: str
    message: str = ""
    index: int | None = None  # the validation or mutation that decided
    error: RuleError | None = None
    patched: Any = None  # MutatingPolicy: the object after the mutations
    check: tuple = ()  # field path of the deciding expression
    exception: str | None = None  # the PolicyExceptions (keys) that exempted the request
    note: str = ""  # what else the reader should know (an expired exception that was not applied)


def _error(message: str, path: tuple, index: int | None = None) -> Outcome:
    return Outcome(ERROR, message, index, RuleError(message, path=path, kind="evaluation"), check=path)


def prepare_variables(spec: CompiledSpec, data: dict[str, Any], lookups: Any) -> dict[str, Any]:
    """`data` with ``variables`` (every variable that evaluates, as plain values) and ``exceptions`` added.

    The fallback for an expression that reads ``variables`` as a whole: values
    that only CEL can hold (timestamps, optionals) come back as their JSON.
    """
    values: dict[str, Any] = {}
    scope = {"exceptions": NO_EXCEPTIONS, **data}
    for name, program, _path in spec.variables:
        try:  # a copy each time: the engine keeps the activation of a value it has seen (it must not change)
            values[name] = program.evaluate({**scope, "variables": dict(values)}, lookups)
        except CelError:
            continue  # reading it fails with "no such key"
    scope["variables"] = values
    return scope


def _matches(spec: CompiledSpec, scope: dict[str, Any], lookups: Any) -> Outcome | None:
    """None when every match condition holds; else the SKIP or ERROR outcome."""
    check = check_conditions(spec.match_conditions, scope, lookups)
    if check.false is not None:
        name, path = check.false
        return Outcome(SKIP, f"match condition {name!r} is false", check=path)
    if not check.errors:
        return None
    if spec.failure_policy == "Ignore":
        return Outcome(SKIP, f"match conditions failed and failurePolicy is Ignore: {check.errors[0][0]}")
    return _error(check.message(), check.errors[0][1])


def validation_message(validation: Validation, message_program: Runnable | None, scope: dict, lookups: Any,
                       index: int) -> str:
    """What a false validation says: its ``messageExpression``, else ``message``, else Kyverno's default."""
    message = validation.message
    if message_program is not None:
        try:
            value = message_program.evaluate(scope, lookups)
        except CelError as failure:
            message = f"failed to evaluate message expression: {failure.message}"
        else:
            message = value if isinstance(value, str) else "failed to convert message expression to string"
    return message or f"CEL expression validation failed at index {index}"


def begin(spec: CompiledSpec, data: dict[str, Any], lookups: Any,
          exceptions: Sequence[CompiledException] = ()) -> tuple[dict[str, Any], Outcome | None, str]:
    """The scope the expressions run in, or the outcome that ends the evaluation first (an exception, match
    conditions; every kind starts so); and the expiry note."""
    note = ""
    scope = dict(data)
    if exceptions:
        check = check_exceptions(exceptions, data, lookups)
        note = check.expiry_note()
        if check.error is not None:
            return scope, _error(f"failed to load context: {check.error}", ()), note
        if check.exempting:
            status = PASS if check.decisive is not None and check.decisive.report_result == "pass" else SKIP
            return scope, Outcome(status, check.message(), exception=check.keys, note=note), note
        scope["exceptions"] = check.variable
    else:
        scope["exceptions"] = NO_EXCEPTIONS
    if spec.needs_values:
        scope = prepare_variables(spec, scope, lookups)
    match_scope = scope if spec.variables_in_match else {k: v for k, v in scope.items() if k != "variables"}
    return scope, _matches(spec, match_scope, lookups), note


def noted(outcome: Outcome, note: str) -> Outcome:
    """`outcome` with the expiry note of `begin` (when it has no note of its own)."""
    if note and not outcome.note:
        outcome.note = note
    return outcome


@budgeted  # the policy's expressions share one cost budget, as in Kubernetes
def evaluate_validations(spec: CompiledSpec, data: dict[str, Any], lookups: Any = None,
                         exceptions: Sequence[CompiledException] = ()) -> Outcome:
    """PASS, FAIL (the first false validation), SKIP (match conditions, an exception) or ERROR for one resource."""
    scope, stop, note = begin(spec, data, lookups, exceptions)
    if stop is not None:
        return noted(stop, note)
    return noted(run_validations(spec, scope, lookups) or Outcome(PASS, "success"), note)


def run_validations(spec: CompiledSpec, scope: dict[str, Any], lookups: Any) -> Outcome | None:
    """The FAIL of the first false validation, or the ERROR of the first that errors or gives no bool; None
    when every one holds."""
    for index, (validation, program, message_program) in enumerate(spec.validations):
        try:
            result = program.evaluate(scope, lookups)
        except CelError as failure:
            return _error(failure.message, validation.path, index)
        if result is False:
            return Outcome(FAIL, validation_message(validation, message_program, scope, lookups, index), index,
                           check=validation.path)
        if result is not True:
            return _error(f"validation must evaluate to bool, got {type(result).__name__}", validation.path, index)
    return None


@budgeted
def evaluate_mutations(spec: CompiledSpec, data: dict[str, Any], lookups: Any = None,
                       exceptions: Sequence[CompiledException] = ()) -> Outcome:
    """PASS with the patched object, SKIP (match conditions, an exception) or ERROR for one resource."""
    from assertree.languages.kubernetes.patches import MutationError, apply_configuration, apply_json_patch

    scope, stop, note = begin(spec, data, lookups, exceptions)
    if stop is not None:
        return noted(stop, note)
    current = scope.get("object")
    for index, (mutation, program) in enumerate(spec.mutations):
        try:
            patch = program.evaluate(scope, lookups)
        except CelError as failure:
            return noted(_error(failure.message, mutation.path, index), note)
        try:
            if mutation.patch_type == "JSONPatch":
                current = apply_json_patch(current, patch if isinstance(patch, Sequence) else [patch])
            else:
                current = apply_configuration(current, patch)
        except MutationError as failure:
            return noted(_error(str(failure), mutation.path, index), note)
        scope = {**scope, "object": current}
        if isinstance(scope.get("request"), Mapping):
            scope["request"] = {**scope["request"], "object": current}
    return noted(Outcome(PASS, "success", patched=current), note)
