"""The one place the rule runner calls the Kyverno building blocks (variables, context, conditions,
patterns, match, exceptions, autogen, values).

`evaluate` and `mutation` speak only to this module, so each sibling module
keeps its own API and a change there is absorbed here. A *session* is the
Kyverno context of one (policy, rule, resource): the resource as
``request.object``, the operation, the user info, the values file's variables
for that policy and resource, and the rule's values.

Every evaluation failure is raised as `EvaluationProblem` (a variable that
cannot be resolved, a context entry that fails, a bad condition), which the
runner turns into an ERROR result.

While a rule is evaluated again to explain a result (``--explain``), an
`assertree.explanation.Trace` is active and the conditions, patterns and
``foreach`` loops below tell `tracing` what they saw; during a scan none is.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from weakref import WeakKeyDictionary

from assertree.explanation import active

if TYPE_CHECKING:
    from assertree.languages.base import ScanContext


class EvaluationProblem(Exception):
    """Why part of a rule could not be evaluated (the runner makes it an ERROR)."""

    def __init__(self, message: str, *, path: tuple = (), kind: str = "evaluation", not_found: bool = False) -> None:
        self.path = tuple(path)
        self.kind = kind
        self.not_found = not_found
        super().__init__(message)


@dataclass
class Session:
    """The Kyverno context of one (policy, rule, resource), with what the runner needs beside it.

    The context is made on first use (`context`): most rules of a policy set do not select a given
    resource, and `selects` needs only the request's facts, so a rule that does not apply never pays for it.
    """

    resource: Any  # the resource being evaluated (JSON)
    policy: Any
    rule: Any
    scan: Any  # ScanContext
    namespace_labels: dict | None = None
    operation: str = "CREATE"
    old_resource: Any = None  # request.oldObject (UPDATE, DELETE)
    request_info: dict | None = None
    request_resource: Any = None  # the resource the context is made from (before a values file's variables)
    made_context: Any = None  # variables.KyvernoContext, once made

    @property
    def context(self) -> Any:
        """The request's `variables.KyvernoContext` (``request.object``, ``request.operation``, user info)."""
        if self.made_context is None:
            from assertree.languages.kyverno.variables import KyvernoContext

            self.made_context = KyvernoContext.for_cli(self.request_resource, operation=self.operation,
                                                       request_info=self.request_info)
        return self.made_context


def _problem(error: Exception) -> EvaluationProblem:
    from assertree.languages.kyverno.substitution import VariableError

    if isinstance(error, VariableError):
        return EvaluationProblem(str(error), path=error.path, kind="variable", not_found=error.not_found)
    return EvaluationProblem(str(error))


# -- sessions -------------------------------------------------------------------------------------


def session(policy: Any, rule: Any, resource: Any, scan: ScanContext) -> Session:
    """A fresh context for `rule` of `policy` on `resource`, as the CLI's ``makePolicyContext`` builds it.

    The values file's variables for this policy and resource (``globalValues``, then the resource's
    ``values``, with ``request.operation`` defaulting to CREATE) are added as variables; the resource the
    rule checks is read back from ``request.object`` afterwards, so values that set fields of it count.
    """
    from assertree.languages.kyverno.substitution import VariableError
    from assertree.languages.kyverno.variables import KyvernoContext

    values = scan.values
    name = ((resource.get("metadata") or {}).get("name") or "") if isinstance(resource, dict) else ""
    variables = values.resource_values(policy.name, name) if values is not None else {}
    operation = variables.get("request.operation") or scan.operation or "CREATE"
    if operation not in ("CREATE", "UPDATE", "DELETE"):
        operation = "CREATE"
    info = _request_info(scan.user_info)
    context = None
    current = dict(resource) if isinstance(resource, dict) else resource  # as request.object holds it
    if variables:  # they may set fields of the resource: the context is made now, to read it back
        try:
            context = KyvernoContext.for_cli(resource, operation=operation, request_info=info)
            for key, value in variables.items():
                context.add_variable(key, value)
            if operation != "DELETE":
                current = context.query("request.object")
        except VariableError as error:
            raise _problem(error) from None
    labels = None
    if values is not None and isinstance(resource, dict):
        namespace = (resource.get("metadata") or {}).get("namespace") or ""
        labels = values.namespace_labels().get(namespace)
    old = resource if operation in ("UPDATE", "DELETE") else None
    return Session(current if operation != "DELETE" else {}, policy, rule, scan, labels, operation, old, info,
                   request_resource=resource, made_context=context)


def _request_info(user_info: Any) -> dict | None:
    """``RequestInfo`` JSON from a user-info file (`values.UserInfo`) or a mapping already in that shape."""
    if user_info is None:
        return None
    return user_info.request_info() if hasattr(user_info, "request_info") else dict(user_info)


def resource_of(current: Session) -> Any:
    """The resource patterns are checked against (empty on DELETE)."""
    return current.resource


def operation_of(current: Session) -> str:
    """The request's operation (CREATE unless the values file says otherwise)."""
    return current.operation


def is_delete(current: Session) -> bool:
    """Whether the request is a DELETE (``request.operation`` from the values file)."""
    return current.operation == "DELETE"


def begin_elements(current: Session) -> None:
    """Before a foreach's elements: remember the context (Kyverno's ``Checkpoint``)."""
    current.context.checkpoint()
    if (trace := active()) is not None:
        from assertree.languages.kyverno.tracing import begin_elements as traced

        traced(trace)


def end_elements(current: Session) -> None:
    """After a foreach's elements: drop what they added (``Restore``)."""
    current.context.restore()
    if (trace := active()) is not None:
        from assertree.languages.kyverno.tracing import end_elements as traced

        traced(trace)


def enter_element(current: Session, element: Any, index: int, nesting: int, element_scope: bool | None) -> bool:
    """Start a foreach element: a clean context with ``element``/``elementIndex``; True when patterns
    apply to the element rather than the resource (element scope: maps by default)."""
    scoped = isinstance(element, dict)
    if element_scope is not None:
        if element_scope and not isinstance(element, dict):
            raise EvaluationProblem("cannot use elementScope=true foreach rules for elements that are not maps, "
                                    f"expected type=map got type={type(element).__name__}")
        scoped = element_scope
    current.context.reset()
    current.context.add_element(element, index, nesting)  # add_element binds a copy
    if (trace := active()) is not None:
        from assertree.languages.kyverno.tracing import enter_element as traced

        traced(trace, element, index)
    return scoped


# -- variables, context entries, conditions, patterns ---------------------------------------------


def substitute(value: Any, current: Session, path: tuple = ()) -> Any:
    """`value` with ``$( )`` references and ``{{ }}`` variables substituted."""
    from assertree.languages.kyverno.substitution import VariableError
    from assertree.languages.kyverno.variables import substitute_all

    try:
        return substitute_all(value, current.context, path=path)
    except VariableError as error:
        raise _problem(error) from None


def load_context(current: Session, entries: list) -> None:
    """Add the rule's values-file variables and register its context entries (lazy, in order)."""
    from assertree.languages.kyverno.context import load_context as register
    from assertree.languages.kyverno.substitution import VariableError

    values = current.scan.values
    rule_values = values.rule(current.policy.name, current.rule.name) if values is not None else None
    if not entries and rule_values is None:
        return  # nothing to add: the context is made only if something reads it (`Session.context`)
    try:
        register(entries, current.context, values=rule_values, lookups=getattr(current.scan, "lookups", None))
    except VariableError as error:
        raise _problem(error) from None


def evaluate_list(expression: str, current: Session) -> list:
    """A foreach ``list``: the expression's value as a list (a single value becomes a one-item list)."""
    from assertree.languages.kyverno.substitution import VariableError

    try:
        value = current.context.query(expression)
    except VariableError as error:
        if (trace := active()) is not None:
            from assertree.languages.kyverno.tracing import trace_list

            trace_list(trace, expression, None, str(error))
        raise _problem(error) from None
    elements = value if isinstance(value, list) else [value]
    if (trace := active()) is not None:
        from assertree.languages.kyverno.tracing import trace_list

        trace_list(trace, expression, elements)
    return elements


def conditions_met(conditions: Any, current: Session) -> tuple[bool, str]:
    """Whether `conditions` (preconditions or deny conditions; any/all or a list) hold, and Kyverno's message.

    Variables are substituted lazily, only in the conditions Kyverno evaluates.
    An absent block holds: no preconditions are met, and ``deny: {}`` denies (as in Kyverno).
    """
    if conditions is None:
        return True, ""
    from assertree.languages.kyverno.conditions import evaluate_conditions

    if (trace := active()) is None:
        result = evaluate_conditions(_prepared_conditions(conditions, current.scan),
                                     lambda prepared: _substituted(prepared, current))
    else:
        from assertree.languages.kyverno.tracing import traced_conditions

        result = traced_conditions(conditions, lambda value: substitute(value, current), trace)
    if result.error is not None:
        cause = result.error.cause
        if isinstance(cause, EvaluationProblem):
            raise EvaluationProblem(f"{result.error.message}", path=cause.path, kind=cause.kind,
                                    not_found=cause.not_found)
        raise EvaluationProblem(result.error.message)
    return result.passed, result.message


MAX_PREPARED_CONDITIONS = 10_000
"""Condition blocks one scan keeps prepared (a policy library has a few thousand; past it, the memo starts
again rather than grow)."""


def _prepared_conditions(conditions: Any, scan: Any) -> Any:
    """`conditions` read once per scan (`conditions.parse_conditions`), with each key and value prepared
    for substitution (`variables.prepare_substitution`, whose invariant makes this give what substituting
    the raw block gives). Kept in the scan's memo by identity: blocks are parts of loaded policies."""
    from assertree.languages.kyverno.conditions import parse_conditions
    from assertree.languages.kyverno.variables import prepare_substitution

    memo = getattr(scan, "memo", None)
    if memo is None:
        return parse_conditions(conditions, prepare_substitution)
    prepared: dict[int, tuple[Any, Any]] = memo.setdefault("kyverno.conditions", {})
    entry = prepared.get(id(conditions))
    if entry is None or entry[0] is not conditions:
        if len(prepared) >= MAX_PREPARED_CONDITIONS:
            prepared.clear()
        entry = prepared[id(conditions)] = (conditions, parse_conditions(conditions, prepare_substitution))
    return entry[1]


def _substituted(prepared: Any, current: Session) -> Any:
    """A prepared key or value substituted in `current`'s context (as `substitute` substitutes it raw)."""
    from assertree.languages.kyverno.substitution import VariableError

    try:
        return prepared(current.context)
    except VariableError as error:
        raise _problem(error) from None


def compile_patterns(pattern: Any, any_pattern: Any) -> Any:
    """A rule's ``pattern``/``anyPattern`` compiled once (`compiled_pattern.CompiledPatterns`), or None when
    they hold variables (substituted per resource) or the interpreter must walk them."""
    from assertree.languages.kyverno.compiled_pattern import compile_patterns as compiled
    from assertree.languages.kyverno.substitution import has_markers

    if has_markers(pattern if pattern is not None else any_pattern):
        return None
    try:
        return compiled(pattern, any_pattern)
    except RecursionError:  # nested deeper than compiling can go: the interpreter walks it, and words the error
        return None


def validate_patterns(target: Any, rule_name: str, pattern: Any, any_pattern: Any, message: Any,
                      compiled: Any = None) -> Any:
    """Kyverno's pattern/anyPattern verdict with its message (`pattern.validate_rule`; `message` may be the
    function that substitutes it), through `compiled` (`compile_patterns` of the same patterns) when given."""
    from assertree.languages.kyverno.pattern import validate_rule

    if compiled is not None:
        outcome = compiled.validate(target, rule_name, message or "")
    else:
        outcome = validate_rule(target, rule_name, pattern=pattern, any_pattern=any_pattern, message=message or "")
    if (trace := active()) is not None:
        from assertree.languages.kyverno.tracing import trace_patterns

        trace_patterns(trace, target, pattern, any_pattern)
    return outcome


# -- mutation -------------------------------------------------------------------------------------

_ENTRIES = "\x00context-entries"  # a foreach binding holding the context entries of the loops around


def mutate(block: dict, current: Session, resource: Any) -> Any:
    """Run a rule's ``mutate`` block on `resource` (`mutate.apply_mutation`): a `MutateResult`.

    Patches outside ``foreach`` are substituted here, as Kyverno substitutes the whole rule first
    (``{{ @ }}`` paths start at ``mutate``); inside ``foreach`` they are substituted per element,
    through `foreach_hooks`. A substitution failure is an ERROR result, as in Kyverno.
    """
    from assertree.languages.kyverno.mutate import apply_mutation
    from assertree.languages.kyverno.mutate.result import error

    if block.get("foreach"):
        return apply_mutation(block, resource, foreach_hooks=foreach_hooks(current))
    try:
        patches = {key: substitute(block[key], current, ("mutate", key))
                   for key in ("patchStrategicMerge", "patchesJson6902") if block.get(key) is not None}
    except EvaluationProblem as problem:
        return error(f"variable substitution failed: {problem}", resource)
    return apply_mutation(patches, resource)


def foreach_hooks(current: Session) -> Any:
    """`mutate.ForEachHooks` that evaluate a foreach's expressions in the rule's context.

    Each hook runs on a scratch copy of the context (Kyverno resets it for every element): the
    ``request.object`` the loop passes, the element bindings, and the lazy context entries of every
    loop around (they load only if the expression names them, as in Kyverno).
    """
    from assertree.languages.kyverno.manifests import copy_json
    from assertree.languages.kyverno.mutate import ForEachHooks

    def scoped(resource: Any, bindings: Any, action: Any) -> Any:
        context = current.context
        context.checkpoint()
        try:
            context.add_resource(copy_json(resource))
            for key, value in bindings.items():
                if key != _ENTRIES:
                    context.add_context_entry(key, value)
            for entries in bindings.get(_ENTRIES, ()):
                load_context(current, entries)
            return action()
        finally:
            context.restore()

    def load(entries: list, resource: Any, bindings: Any) -> dict:
        return {**bindings, _ENTRIES: (*bindings.get(_ENTRIES, ()), list(entries))}

    return ForEachHooks(
        evaluate_list=lambda expression, resource, bindings: scoped(
            resource, bindings, lambda: evaluate_list(expression, current)),
        substitute=lambda patches, resource, bindings: scoped(
            resource, bindings, lambda: substitute(patches, current)),
        load_context=load,
        preconditions=lambda conditions, resource, bindings: scoped(
            resource, bindings, lambda: conditions_met(conditions, current)),
    )


# -- match / exclude, exceptions, autogen ---------------------------------------------------------


_KINDS_ALONE: WeakKeyDictionary[Any, bool] = WeakKeyDictionary()  # match.selects_by_kinds_alone, per rule


def selects(current: Session) -> bool:
    """Whether the rule applies: `match` selects the resource and `exclude` does not.

    A rule whose ``match`` reads only kinds (`match.selects_by_kinds_alone`, whose invariant this relies on)
    is answered by its kind gate's memo, without walking ``match``, when nothing else could count: a
    resource, no policy namespace, no values file (its subresources change kinds)."""
    from assertree.languages.kyverno.kind_gate import gate_of
    from assertree.languages.kyverno.match import SelectorError, rule_matches, selects_by_kinds_alone

    values, rule, resource = current.scan.values, current.rule, current.resource
    if values is None and resource and isinstance(resource, dict) and not current.policy.namespace:
        try:
            alone = _KINDS_ALONE.get(rule)
            if alone is None:
                alone = _KINDS_ALONE[rule] = selects_by_kinds_alone(rule.document)
        except TypeError:  # a rule object that cannot be weakly referenced: the general path
            alone = False
        if alone and (gate := gate_of(rule)) is not None:
            return gate.admits(resource)
    try:
        return rule_matches(
            current.rule.document, current.resource or None, operation=current.operation,
            old_resource=current.old_resource, namespace_labels=current.namespace_labels,
            request_info=current.request_info, policy_namespace=current.policy.namespace or "",
            subresources=values.subresources if values is not None else (),
        ).matched
    except SelectorError as error:
        raise EvaluationProblem(f"invalid label selector: {error}") from None


def selects_on_create(current: Session, resource: Any) -> bool:
    """Whether the rule selects `resource` as a CREATE request (Kyverno's check of an UPDATE's old object)."""
    from assertree.languages.kyverno.match import SelectorError, rule_matches

    values = current.scan.values
    try:
        return rule_matches(
            current.rule.document, resource or None, namespace_labels=current.namespace_labels,
            request_info=current.request_info, policy_namespace=current.policy.namespace or "",
            subresources=values.subresources if values is not None else (),
        ).matched
    except SelectorError:
        return False


def exception_for(policy: Any, rule: Any, current: Session, scan: ScanContext) -> str | None:
    """The PolicyExceptions (``namespace/name``, comma separated) that exempt this resource from `rule`,
    or None."""
    found = matched_exceptions(policy, rule, current, scan)
    return ", ".join(exception.key for exception in found) if found else None


def matched_exceptions(policy: Any, rule: Any, current: Session, scan: ScanContext) -> tuple:
    """The PolicyExceptions (`exceptions.PolicyException`) that match this resource for `rule`.
    `scan.exceptions` holds parsed exceptions (`parse_exceptions`) or raw documents; their conditions are
    evaluated in the rule's context."""
    if not scan.exceptions:
        return ()
    from assertree.languages.kyverno.exceptions import PolicyException, matching_exceptions, parse_exception

    values = current.scan.values
    exceptions = [parse_exception(item) if isinstance(item, dict) else item for item in scan.exceptions
                  if isinstance(item, (dict, PolicyException)) and not _is_cel_exception(item)]
    return matching_exceptions(
        exceptions, policy=policy.document, rule=rule.name, resource=current.resource or None,
        old_resource=current.old_resource, namespace_labels=current.namespace_labels,
        request_info=current.request_info, subresources=values.subresources if values is not None else (),
        conditions=lambda conditions: conditions_met(conditions, current)[0]).exceptions


def _is_cel_exception(item: Any) -> bool:
    """A ``policies.kyverno.io`` exception (they exempt from CEL policies only)."""
    from assertree.languages.kyverno.cel_policies.exceptions import is_cel_exception

    return is_cel_exception(item)


def parse_exceptions(documents: list, source: str | None = None) -> list:
    """PolicyException documents of either group, checked and parsed once (a malformed one is a PolicyError)."""
    from assertree.languages.kyverno.exceptions import parse_policy_exception

    return [parse_policy_exception(document, source) for document in documents]


def autogen_rules(document: dict) -> list[dict]:
    """The rules autogen adds to a policy document (empty when autogen does not apply)."""
    from assertree.languages.kyverno.autogen import autogen_rules as generated

    return list(generated(document))


# -- values and user info -------------------------------------------------------------------------


def read_values_file(path: Any) -> Any:
    from assertree.languages.kyverno.values import load_values

    return load_values(path)


def values_from_mapping(value: dict) -> Any:
    from assertree.languages.kyverno.values import values_from_spec

    return values_from_spec(value)


def read_user_info_file(path: Any) -> Any:
    from assertree.languages.kyverno.values import load_user_info

    return load_user_info(path)


def global_operation(values: Any) -> str | None:
    """``request.operation`` of the values file's ``globalValues``, if set."""
    return (values.operation or None) if values is not None else None
