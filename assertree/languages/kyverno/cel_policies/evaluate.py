"""Running a compiled policy spec on one resource: Kyverno's order of CEL evaluation and its outcomes.

Order (pkg/cel/policies/vpol/compiler/policy.go, mpol/compiler/policy.go):
variables, then ``matchConditions`` (all must be true; a false one makes the
outcome SKIP; an error is an ERROR, or a SKIP under ``failurePolicy:
Ignore``), then each validation in order: the first that is false FAILs with
its message (``messageExpression`` first, then ``message``, then Kyverno's
"CEL expression validation failed at index N"), the first that errors or is
not a bool is an ERROR; none failing is a PASS. A MutatingPolicy applies its
mutations in order, each seeing the object the previous one made, and PASSes
with the patched object.

Variables are lazy in Kyverno: one that fails only matters when it is read.
Here they are computed up front, each after the ones it reads (several passes
until nothing more resolves), and one that fails is left out, so reading it
fails with "no such key". Programs are compiled (`compile`); nothing here
parses text.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from assertree.languages.cel.engine import CelError, Program
from assertree.languages.cel.limits import evaluation_budget
from assertree.languages.kyverno.cel_policies.model import Mutation, Validation
from assertree.results import ERROR, FAIL, PASS, SKIP, RuleError

__all__ = ["CompiledSpec", "Outcome", "evaluate_mutations", "evaluate_validations", "prepare_variables"]

NO_EXCEPTIONS: dict[str, list[str]] = {"allowedImages": [], "allowedValues": []}


@dataclass
class CompiledSpec:
    """A spec's programs, in the order they run."""

    match_conditions: list[tuple[str, Program, tuple]] = field(default_factory=list)  # name, program, field path
    variables: list[tuple[str, Program, tuple]] = field(default_factory=list)
    validations: list[tuple[Validation, Program, Program | None]] = field(default_factory=list)
    mutations: list[tuple[Mutation, Program]] = field(default_factory=list)
    failure_policy: str = "Fail"


@dataclass
class Outcome:
    """What evaluating a spec on one resource gave."""

    status: str
    message: str = ""
    index: int | None = None  # the validation or mutation that decided
    error: RuleError | None = None
    patched: Any = None  # MutatingPolicy: the object after the mutations
    check: tuple = ()  # field path of the deciding expression


def _error(message: str, path: tuple, index: int | None = None) -> Outcome:
    return Outcome(ERROR, message, index, RuleError(message, path=path, kind="evaluation"), check=path)


def prepare_variables(spec: CompiledSpec, data: dict[str, Any], lookups: Any) -> dict[str, Any]:
    """`data` with ``variables`` (every variable that evaluates) and ``exceptions`` added."""
    values: dict[str, Any] = {}
    scope = {**data, "variables": values, "exceptions": NO_EXCEPTIONS}
    pending = list(spec.variables)
    while pending:
        failed = []
        for name, program, path in pending:
            try:
                values[name] = program.evaluate({**scope, "variables": dict(values)}, lookups)
            except CelError:
                failed.append((name, program, path))
        if len(failed) == len(pending):
            break
        pending = failed
    scope["variables"] = values
    return scope


def _matches(spec: CompiledSpec, scope: dict[str, Any], lookups: Any) -> Outcome | None:
    """None when every match condition holds; else the SKIP or ERROR outcome."""
    errors: list[tuple[str, tuple]] = []
    for name, program, path in spec.match_conditions:
        try:
            result = program.evaluate(scope, lookups)
        except CelError as failure:
            errors.append((f"matchCondition {name!r}: {failure.message}", path))
            continue
        if not isinstance(result, bool):
            errors.append((f"matchCondition {name!r} must evaluate to bool, got {type(result).__name__}", path))
            continue
        if not result:
            return Outcome(SKIP, f"match condition {name!r} is false", check=path)
    if not errors:
        return None
    if spec.failure_policy == "Ignore":
        return Outcome(SKIP, f"match conditions failed and failurePolicy is Ignore: {errors[0][0]}")
    return _error("; ".join(message for message, _ in errors), errors[0][1])


def _message(validation: Validation, message_program: Program | None, scope: dict, lookups: Any, index: int) -> str:
    message = validation.message
    if message_program is not None:
        try:
            value = message_program.evaluate(scope, lookups)
        except CelError as failure:
            message = f"failed to evaluate message expression: {failure.message}"
        else:
            message = value if isinstance(value, str) else "failed to convert message expression to string"
    return message or f"CEL expression validation failed at index {index}"


def evaluate_validations(spec: CompiledSpec, data: dict[str, Any], lookups: Any = None) -> Outcome:
    """PASS, FAIL (the first false validation), SKIP (match conditions) or ERROR for one resource."""
    with evaluation_budget():  # the policy's expressions share one cost budget, as in Kubernetes
        return _validations(spec, data, lookups)


def _validations(spec: CompiledSpec, data: dict[str, Any], lookups: Any) -> Outcome:
    scope = prepare_variables(spec, data, lookups)
    skipped = _matches(spec, scope, lookups)
    if skipped is not None:
        return skipped
    for index, (validation, program, message_program) in enumerate(spec.validations):
        try:
            result = program.evaluate(scope, lookups)
        except CelError as failure:
            return _error(failure.message, validation.path, index)
        if result is False:
            return Outcome(FAIL, _message(validation, message_program, scope, lookups, index), index,
                           check=validation.path)
        if result is not True:
            return _error(f"validation must evaluate to bool, got {type(result).__name__}", validation.path, index)
    return Outcome(PASS, "success")


def evaluate_mutations(spec: CompiledSpec, data: dict[str, Any], lookups: Any = None) -> Outcome:
    """PASS with the patched object, SKIP (match conditions) or ERROR for one resource."""
    with evaluation_budget():  # the policy's expressions share one cost budget, as in Kubernetes
        return _mutations(spec, data, lookups)


def _mutations(spec: CompiledSpec, data: dict[str, Any], lookups: Any) -> Outcome:
    from assertree.languages.kyverno.cel_policies.mutate import MutationError, apply_configuration, apply_json_patch

    scope = prepare_variables(spec, data, lookups)
    skipped = _matches(spec, scope, lookups)
    if skipped is not None:
        return skipped
    current = scope.get("object")
    for index, (mutation, program) in enumerate(spec.mutations):
        try:
            patch = program.evaluate(scope, lookups)
        except CelError as failure:
            return _error(failure.message, mutation.path, index)
        try:
            if mutation.patch_type == "JSONPatch":
                current = apply_json_patch(current, patch if isinstance(patch, Sequence) else [patch])
            else:
                current = apply_configuration(current, patch)
        except MutationError as failure:
            return _error(str(failure), mutation.path, index)
        scope = {**scope, "object": current}
        if isinstance(scope.get("request"), Mapping):
            scope["request"] = {**scope["request"], "object": current}
    return Outcome(PASS, "success", patched=current)
