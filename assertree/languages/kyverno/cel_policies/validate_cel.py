"""ClusterPolicy ``validate.cel`` rules, for the Kyverno language to call: compile once, evaluate per resource.

Kyverno runs such a rule with Kubernetes' ValidatingAdmissionPolicy validator
(pkg/engine/handlers/validation/validate_cel.go over
k8s.io/apiserver/pkg/admission/plugin/policy/validating), which differs from a
ValidatingPolicy in what counts as a failure:

- ``celPreconditions`` are the match conditions: one false makes the rule
  SKIP ("cel preconditions not met"); one that errors FAILs (the validator's
  failure policy is Fail);
- each expression in order: false, not a bool, or an *error* FAILs with its
  message (``messageExpression``, then ``message``, then the rule's
  ``validate.message``, then "failed expression: <text>"); all true PASSes
  ("Validation rule '<name>' passed.");
- ``namespaceObject`` is a Namespace with only its name (offline the CLI has
  no namespace labels), null for a Namespace or cluster-scoped resource;
- ``paramKind`` with ``paramRef``: the rule runs once per parameter resource
  (`params`: from ``scan --params``, a test's ``paramResources`` and cluster
  resources), as ``params``; the first that does not pass decides, and none
  at all passes. Params that cannot be collected are an ERROR ("error in
  parameterized resource: ...").

The caller (the ClusterPolicy runner) has already decided that the rule's
``match``/``exclude`` select the resource. The matching is not repeated here.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from assertree.errors import PolicyError
from assertree.languages.cel.engine import CelError
from assertree.languages.cel.fallback import Runnable
from assertree.languages.cel.limits import evaluation_budget
from assertree.languages.kubernetes.request import admission_request
from assertree.languages.kyverno.cel_policies.compile import compile_reading_variables
from assertree.languages.kyverno.cel_policies.evaluate import NO_EXCEPTIONS, CompiledSpec, prepare_variables
from assertree.languages.kyverno.cel_policies.params import ParamsError, collect_params, param_cluster
from assertree.results import ERROR, FAIL, PASS, SKIP, Status

__all__ = ["CompiledValidateCel", "compile_validate_cel", "evaluate_validate_cel"]


@dataclass
class CompiledValidateCel:
    """A ``validate.cel`` rule's programs."""

    name: str
    preconditions: list[tuple[str, Runnable, tuple]] = field(default_factory=list)
    spec: CompiledSpec = field(default_factory=CompiledSpec)  # variables only
    expressions: list[tuple[str, Runnable, Runnable | None, str]] = field(default_factory=list)  # text, check, msg
    params: tuple[dict, dict] | None = None  # (paramKind, paramRef) when the rule has both

    def evaluate(self, resource: Any, context: Any = None) -> tuple[Status, str]:
        """(status, message) of the rule on `resource` under `context` (a ScanContext: operation, user info,
        parameter resources)."""
        data, namespace = self._request(resource, context)
        if self.params is None:
            return self._validate(data, context)
        try:
            params = collect_params(*self.params, namespace, param_cluster(context))
        except ParamsError as error:
            return ERROR, f"error in parameterized resource: {error}"
        for param in params:
            status, message = self._validate({**data, "params": param}, context)
            if status != PASS:
                return status, message
        return PASS, f"Validation rule '{self.name}' passed."

    def _request(self, resource: Any, context: Any) -> tuple[dict[str, Any], str]:
        """The request's variables (``params`` aside) and the namespace params are chosen in."""
        operation = getattr(context, "operation", "CREATE") or "CREATE"
        request = admission_request(resource, operation=operation, user_info=getattr(context, "user_info", None))
        data = request.variables()
        namespace = request.attributes.namespace
        kind = str((resource or {}).get("kind") or "") if isinstance(resource, dict) else ""
        if kind == "Namespace":
            namespace = ""
        data["namespaceObject"] = {"metadata": {"name": namespace}, "spec": {}, "status": {}} if namespace else None
        return data, namespace

    def _scope(self, data: dict[str, Any], lookups: Any) -> dict[str, Any]:
        return (prepare_variables(self.spec, data, lookups) if self.spec.needs_values
                else {**data, "exceptions": NO_EXCEPTIONS})

    def scope(self, resource: Any, context: Any = None) -> tuple[dict[str, Any], Any]:
        """The variables the expressions see on `resource` (``variables`` computed), and the lookups (what
        --explain shows; with params, those of the first param, where a failure is reported first)."""
        data, namespace = self._request(resource, context)
        if self.params is not None:
            try:
                params = collect_params(*self.params, namespace, param_cluster(context))
            except ParamsError:
                params = []
            if params:
                data = {**data, "params": params[0]}
        lookups = getattr(context, "lookups", None)
        return prepare_variables(self.spec, data, lookups), lookups  # every variable's value, to be shown

    def _validate(self, data: dict[str, Any], context: Any) -> tuple[Status, str]:
        """One evaluation (one per param): its expressions share one cost budget, as in Kubernetes."""
        with evaluation_budget():
            return self._validate_within_budget(data, context)

    def _validate_within_budget(self, data: dict[str, Any], context: Any) -> tuple[Status, str]:
        lookups = getattr(context, "lookups", None)
        scope = self._scope(data, lookups)
        for name, program, _path in self.preconditions:
            try:
                result = program.evaluate(scope, lookups)
            except CelError as error:
                return FAIL, f"expression '{name}' resulted in error: {error.message}"
            if result is not True:
                if isinstance(result, bool):
                    return SKIP, "cel preconditions not met"
                return FAIL, f"expression '{name}' resulted in error: must evaluate to bool"
        for text, program, message_program, message in self.expressions:
            try:
                result = program.evaluate(scope, lookups)
            except CelError as error:
                return FAIL, f"expression '{text.strip()}' resulted in error: {error.message}"
            if result is True:
                continue
            if message_program is not None:
                try:
                    value = message_program.evaluate(scope, lookups)
                except CelError:
                    value = None
                if isinstance(value, str) and value.strip():
                    return FAIL, value
            return FAIL, message or f"failed expression: {text.strip()}"
        return PASS, f"Validation rule '{self.name}' passed."


def compile_validate_cel(rule: dict, path: tuple = ()) -> CompiledValidateCel:
    """Compile the ``validate.cel`` of `rule` (a ClusterPolicy rule, JSON); PolicyError naming the field.

    `path` is the rule's field path in its policy (``("spec", "rules", 0)``), so errors point into the file.
    """
    validate = rule.get("validate") or {}
    cel = validate.get("cel")
    at = (*path, "validate", "cel")
    if not isinstance(cel, dict):
        raise PolicyError("expected a mapping", path=at)
    compiled = CompiledValidateCel(name=str(rule.get("name") or ""))
    if isinstance(cel.get("paramKind"), dict) and isinstance(cel.get("paramRef"), dict):
        compiled.params = (cel["paramKind"], cel["paramRef"])
    declared: list[tuple[str, str]] = []
    for index, item in enumerate(cel.get("variables") or []):
        where = (*at, "variables", index, "expression")
        program, whole = compile_reading_variables(_text(item, where), where, list(declared))
        compiled.spec.needs_values |= whole
        compiled.spec.variables.append((str(item.get("name", "")), program, where))
        declared.append((str(item.get("name", "")), _text(item, where)))
    for index, item in enumerate(rule.get("celPreconditions") or []):
        where = (*path, "celPreconditions", index, "expression")
        program, whole = compile_reading_variables(_text(item, where), where, declared)
        compiled.spec.needs_values |= whole
        compiled.preconditions.append((str(item.get("name", index)), program, where))
    raw_default = validate.get("message")
    default_message = raw_default if isinstance(raw_default, str) else ""
    expressions = cel.get("expressions") or []
    if not isinstance(expressions, list) or not expressions:
        raise PolicyError("validate.cel needs at least one expression", path=(*at, "expressions"))
    for index, item in enumerate(expressions):
        where = (*at, "expressions", index, "expression")
        text = _text(item, where)
        message_program = None
        if isinstance(item.get("messageExpression"), str) and item["messageExpression"].strip():
            message_program, whole = compile_reading_variables(
                item["messageExpression"], (*at, "expressions", index, "messageExpression"), declared)
            compiled.spec.needs_values |= whole
        raw_message = item.get("message")
        message = raw_message if isinstance(raw_message, str) and raw_message else default_message
        program, whole = compile_reading_variables(text, where, declared)
        compiled.spec.needs_values |= whole
        compiled.expressions.append((text, program, message_program, message))
    return compiled


def _text(item: Any, path: tuple) -> str:
    if not isinstance(item, dict) or not isinstance(item.get("expression"), str) or not item["expression"].strip():
        raise PolicyError("required field is missing: expression", path=path)
    return item["expression"]


@lru_cache(maxsize=256)
def _cached(rule_json: str) -> CompiledValidateCel:
    return compile_validate_cel(json.loads(rule_json))


def evaluate_validate_cel(rule_document: dict, resource: Any, context: Any = None) -> tuple[Status, str]:
    """(status, message) of a ClusterPolicy rule's ``validate.cel`` on `resource` (already matched).

    Compiles the rule on first use and keeps it (keyed by the rule's JSON); call `compile_validate_cel`
    at load time to report policy errors early. `context` is the scan's `ScanContext` (operation,
    user info, and `lookups` when the scan has a context file). Raises PolicyError when the rule
    does not compile.
    """
    return _cached(json.dumps(rule_document, sort_keys=True, default=str)).evaluate(resource, context)
