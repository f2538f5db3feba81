"""Running one validate rule on one resource, as Kyverno's engine does.

The order (``pkg/engine/validation.go`` and ``handlers/validation/validate_resource.go``):

1. with ``spec.applyRules: One``, an earlier rule that passed or failed
   means no result;
2. `prelude.enter_rule`: match/exclude (no result), context entries (ERROR),
   preconditions (SKIP), PolicyExceptions (SKIP, with the exception's name);
3. a ``validate.cel`` rule runs its compiled CEL (`cel_policies.validate_cel`);
   a ``validate.podSecurity`` rule runs the Pod Security Standards checks and
   weighs PolicyExceptions itself (`pod_security.rule`); a ``validate.manifests``
   rule checks the resource's signatures (`signed_manifests`); any other runs
   exactly one of, in Kyverno's precedence: ``deny`` conditions (true:
   FAIL), ``pattern``/``anyPattern`` (variables substituted first; an
   unresolvable variable is an ERROR; a conditional anchor not met: SKIP),
   ``foreach`` (each element with its own context, preconditions and check;
   the first element that does not pass decides; no element applied: no
   result);
4. a failure of a policy annotated ``policies.kyverno.io/scored: "false"``
   is a WARN.

Messages follow Kyverno's wording (``validation error: <message> rule <name>
failed at path <path>``), with the rule's ``message`` variables substituted.
The pieces (context, substitution, conditions, patterns, match, exceptions)
are the sibling modules'; `bridge` is the one place that calls them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from assertree.errors import field_path_text
from assertree.explanation import active
from assertree.jp.limits import evaluation_budget
from assertree.languages.kubernetes.resources import resource_key
from assertree.languages.kyverno import bridge
from assertree.languages.kyverno.kind_gate import gate_of
from assertree.languages.kyverno.manifests import is_kubernetes_object
from assertree.languages.kyverno.mutate.foreach import ForEachBudget, ForEachLimitError
from assertree.languages.kyverno.prelude import as_kyverno_reads, check_context_and_preconditions, enter_rule
from assertree.results import ERROR, FAIL, PASS, SKIP, WARN, RuleError, RuleResult, Violation

if TYPE_CHECKING:
    from assertree.languages.base import RuleRunner, ScanContext
    from assertree.languages.kyverno.compile import CompiledKyvernoRule
    from assertree.results import Resource


@dataclass
class Check:
    """One level of validation: the rule's ``validate`` or one ``foreach`` entry, with its own inputs."""

    path: tuple  # where it is in the policy document, for errors
    context: list = field(default_factory=list)  # context entries (the rule's at the top level)
    preconditions: Any = None
    deny: Any = None  # deny conditions (the ``conditions`` value) or None
    pattern: Any = None
    any_pattern: list | None = None
    foreach: list[Foreach] = field(default_factory=list)
    has_deny: bool = False
    compiled_patterns: Any = None  # bridge.compile_patterns of a pattern without variables: no substitution


@dataclass
class Foreach:
    """One ``foreach`` entry: the list expression and the check run on each element."""

    list: str
    check: Check
    element_scope: bool | None = None


@dataclass
class Plan:
    """A validate rule, prepared once: its top-level check and message, or its compiled ``validate.cel``."""

    check: Check | None
    message: str | None
    cel: Any = None  # cel_policies.validate_cel.CompiledValidateCel
    pod_security: Any = None  # pod_security.rule.PodSecurityRule
    manifests: dict | None = None  # validate.manifests, verified by `signed_manifests`


@dataclass
class Outcome:
    """What a check gave: a status and Kyverno's message (None status: nothing applied)."""

    status: str | None
    message: str = ""
    error: RuleError | None = None
    path: str = ""  # Kyverno's failing path of a pattern (``/spec/containers/0/image/``), when known
    exception: str | None = None  # the PolicyExceptions that made it a skip
    steps: tuple | None = None  # where the failing field is in the resource, when `path` cannot say it


def prepare_rule(compiled: CompiledKyvernoRule, path: tuple) -> None:
    """Read a rule's validate parts once into a `Check` tree (expressions are compiled and cached by the
    variables module the first time they run)."""
    document = compiled.rule.document
    validate = document.get("validate")
    check = _check(validate, document.get("context") or [], document.get("preconditions"), (*path, "validate")) \
        if isinstance(validate, dict) else None
    cel = pod_security = None
    if isinstance(validate, dict) and validate.get("cel") is not None:
        from assertree.languages.kyverno.cel_policies.validate_cel import compile_validate_cel

        cel = compile_validate_cel(document, path)
    elif isinstance(validate, dict) and validate.get("podSecurity") is not None:
        from assertree.languages.kyverno.pod_security.rule import compile_pod_security, is_pod_security

        if is_pod_security(validate):
            pod_security = compile_pod_security(validate["podSecurity"], (*path, "validate", "podSecurity"))
    manifests = validate.get("manifests") if isinstance(validate, dict) else None
    compiled.plan = Plan(
        check=check,
        message=(validate or {}).get("message") if isinstance(validate, dict) else None,
        cel=cel,
        pod_security=pod_security,
        manifests=manifests if isinstance(manifests, dict) else None,
    )


def _check(part: dict, context: list, preconditions: Any, path: tuple) -> Check:
    deny = part.get("deny")
    pattern, any_pattern = part.get("pattern"), part.get("anyPattern")
    return Check(
        path=path,
        context=list(context),
        preconditions=preconditions,
        deny=(deny or {}).get("conditions") if isinstance(deny, dict) else None,
        has_deny=deny is not None,
        pattern=pattern,
        any_pattern=any_pattern,
        compiled_patterns=bridge.compile_patterns(pattern, any_pattern) if deny is None else None,
        foreach=[
            Foreach(entry["list"], _check(entry, entry.get("context") or [], entry.get("preconditions"),
                                          (*path, "foreach", position)), entry.get("elementScope"))
            for position, entry in enumerate(part.get("foreach") or [])
        ],
    )


def rule_runner(compiled: CompiledKyvernoRule, context: ScanContext) -> RuleRunner:
    """The function that runs `compiled` on one resource (prepared once per scan)."""
    policy, plan = compiled.policy, compiled.plan
    earlier = compiled.siblings[: compiled.siblings.index(compiled)] if policy.apply_one else []
    earlier_runners = [sibling.runner(context) for sibling in earlier]

    # without a values file nothing changes a resource's kind before matching (`kind_gate`'s invariant)
    gate = gate_of(compiled.rule) if context.values is None else None

    def run(resource: Resource) -> RuleResult | None:
        if not is_kubernetes_object(resource.value):
            return None  # not a Kubernetes object: no kind or no usable metadata, so no rule selects it
        read = as_kyverno_reads(resource, context)
        if gate is not None and not gate.admits(read.value):
            return None  # match cannot select this kind: no result, as `evaluate_rule` would find
        if any(_applied(runner(resource)) for runner in earlier_runners):
            return None
        try:
            with evaluation_budget():  # the rule's JMESPath (context, conditions, patterns) builds within one budget
                result = evaluate_rule(compiled, plan, read, context, gated=gate is not None)
        except MemoryError:  # a request no limit foresaw: the rule's error, not a lost report
            text = "out of memory"
            return RuleResult(resource, compiled.policy, compiled.rule, ERROR, identifier=resource_key(resource.value),
                              message=text, error=RuleError(text, kind="evaluation"))
        if result is not None:
            result.resource = resource  # reports point at the resource as it was read
        return result

    return run


def _applied(result: RuleResult | None) -> bool:
    """Whether a rule counts as applied for ``applyRules: One`` (Kyverno counts passes and failures)."""
    return result is not None and result.status in (PASS, FAIL, WARN)


def evaluate_rule(compiled: CompiledKyvernoRule, plan: Plan, resource: Resource,
                  context: ScanContext, *, gated: bool = False) -> RuleResult | None:
    """One rule on one resource (see the module docstring); None when the rule does not apply. `gated`:
    the caller has asked the rule's kind gate already (`prelude.enter_rule`)."""
    policy, rule, check = compiled.policy, compiled.rule, plan.check
    if check is None:
        return None
    entered = enter_rule(policy, rule, resource.value, context, context=check.context,
                         preconditions=check.preconditions, exceptions=plan.pod_security is None, gated=gated)
    if entered.stop is not None:
        stop = entered.stop
        return RuleResult(resource, policy, rule, stop.status, identifier=resource_key(resource.value),
                          message=stop.message, error=stop.error, exception=stop.exception)
    if entered.session is None:
        return None
    if plan.cel is not None:
        outcome = _run_cel(plan.cel, entered.session, context)
    elif plan.pod_security is not None:
        outcome = _run_pod_security(compiled, plan.pod_security, entered.session, context)
    elif plan.manifests is not None:
        outcome = _run_manifests(plan.manifests, entered.session)
    else:
        try:
            outcome = _run_body(check, entered.session, rule.name, plan.message, 0, ForEachBudget())
        except ForEachLimitError as failure:
            text = f"failed to process foreach: {failure}"
            outcome = Outcome(ERROR, text, RuleError(text, check.path, "foreach"))
    if outcome.status is None:
        return None
    status = outcome.status
    if status == FAIL and not policy.scored:
        status = WARN
    violations = []
    if status in (FAIL, WARN):  # reporters show, and locate, a failure through its violation
        violations.append(Violation(field_path_text(check.path), outcome.message or None, [],
                                    steps=_steps(outcome.path) or outcome.steps))
    return RuleResult(resource, policy, rule, status, identifier=resource_key(resource.value),
                      violations=violations, message=outcome.message, error=outcome.error,
                      exception=outcome.exception)


def _steps(path: str) -> tuple | None:
    """Kyverno's ``/spec/containers/0/image/`` as resource steps; None when there is no path."""
    if not path:
        return None
    return tuple(int(part) if part.isdigit() else part for part in path.strip("/").split("/") if part)


def _run_cel(cel: Any, session: Any, context: ScanContext) -> Outcome:
    """A ``validate.cel`` rule, in the CEL environment (the request's operation and user as the session's)."""
    from types import SimpleNamespace

    request = SimpleNamespace(operation=bridge.operation_of(session), user_info=context.user_info,
                              lookups=getattr(context, "lookups", None), params=context.params, memo=context.memo)
    status, message = cel.evaluate(bridge.resource_of(session) or None, request)
    if (trace := active()) is not None:  # --explain: the expressions, their clauses and the variables
        from assertree.languages.kyverno.cel_policies.explain import trace_validate_cel

        trace_validate_cel(cel, bridge.resource_of(session) or None, request, trace)
    return Outcome(str(status), message)


def _run_manifests(manifests: dict, session: Any) -> Outcome:
    """A ``validate.manifests`` rule: the resource's own signatures (no result for a DELETE, as in Kyverno)."""
    from assertree.languages.kyverno.signed_manifests import verify_manifests

    if bridge.is_delete(session):
        return Outcome(None)
    verdict = verify_manifests(bridge.resource_of(session), manifests)
    if verdict.error is not None:
        text = f"error occurred during manifest verification: {verdict.error}"
        return Outcome(ERROR, text, RuleError(text, ("validate", "manifests")))
    return Outcome(PASS if verdict.verified else FAIL, verdict.reason)


def _run_pod_security(compiled: CompiledKyvernoRule, security: Any, session: Any, context: ScanContext) -> Outcome:
    """A ``validate.podSecurity`` rule (`pod_security.rule.PodSecurityRule.run`), then Kyverno's allowance
    for existing violations: an Enforce rule that fails an UPDATE whose old object failed too is skipped."""
    if bridge.is_delete(session):
        return Outcome(None)  # Kyverno does not check a resource being deleted
    policy, rule = compiled.policy, compiled.rule
    exceptions = bridge.matched_exceptions(policy, rule, session, context)
    found = security.run(rule.name, bridge.resource_of(session), exceptions)
    # the old object is checked as if created: in kyverno test it is the resource itself, with the same exceptions
    if (found.status == FAIL and bridge.operation_of(session) == "UPDATE" and policy.failure_action(rule) == "Enforce"
            and (rule.document.get("validate") or {}).get("allowExistingViolations") is not False
            and bridge.selects_on_create(session, session.old_resource)
            and security.run(rule.name, session.old_resource, exceptions).status == FAIL):
        return Outcome(SKIP, "skipping the rule evaluation as pre-existing violations are allowed")
    if (trace := active()) is not None:
        from assertree.languages.kyverno.tracing import trace_pod_security

        trace_pod_security(trace, security.level, security.version, found)
    if found.status == ERROR:
        return Outcome(ERROR, found.message, RuleError(found.message, found.steps or ()))
    return Outcome(found.status, found.message, exception=found.exception, steps=found.steps)


def _run_check(check: Check, session: Any, rule_name: str, message: str | None, nesting: int,
               budget: ForEachBudget, element: Any = None, scoped: bool = False) -> Outcome:
    """One level of validation (Kyverno's ``validator.validate``): context, preconditions, then the body."""
    stop = check_context_and_preconditions(session, check.context, check.preconditions)
    if stop is not None:
        return Outcome(stop.status, stop.message, stop.error)
    return _run_body(check, session, rule_name, message, nesting, budget, element, scoped)


def _run_body(check: Check, session: Any, rule_name: str, message: str | None, nesting: int,
              budget: ForEachBudget, element: Any = None, scoped: bool = False) -> Outcome:
    """The check itself, in Kyverno's precedence: deny, then pattern/anyPattern, then foreach."""
    if check.has_deny:
        return _deny(check, session, rule_name, message)
    if check.pattern is not None or check.any_pattern is not None:
        if not scoped and bridge.is_delete(session):
            return Outcome(None)  # Kyverno does not check patterns against a resource being deleted
        target = element if scoped else bridge.resource_of(session)
        return _patterns(check, session, target, rule_name, message)
    if check.foreach:
        return _foreach(check, session, rule_name, message, nesting, budget)
    return Outcome(None)  # nothing to check (Kyverno gives no rule response)


def _deny(check: Check, session: Any, rule_name: str, message: str | None) -> Outcome:
    try:
        denied, why = bridge.conditions_met(check.deny, session)
    except bridge.EvaluationProblem as problem:
        return _error(f"failed to check deny conditions: {problem}", problem)
    if not denied:
        return Outcome(PASS, f"validation rule '{rule_name}' passed.")
    if not message and not why:
        return Outcome(FAIL, f"validation error: rule {rule_name} failed")
    text = "; ".join(part for part in (message, why) if part)
    try:
        return Outcome(FAIL, str(bridge.substitute(text, session)))
    except bridge.EvaluationProblem:
        return Outcome(FAIL, why)


def _patterns(check: Check, session: Any, target: Any, rule_name: str, message: str | None) -> Outcome:
    compiled = check.compiled_patterns
    try:
        if compiled is not None:  # no variables: substitution would give an equal copy, and nothing mutates them
            pattern, any_pattern = check.pattern, None if check.pattern is not None else check.any_pattern
        elif check.pattern is not None:
            pattern, any_pattern = bridge.substitute(check.pattern, session), None
        else:
            pattern, any_pattern = None, bridge.substitute(check.any_pattern, session)
    except bridge.EvaluationProblem as problem:
        return _error(f"variable substitution failed: {problem}", problem)

    def text() -> str:  # substituted only when the outcome words it (a failure, mostly)
        substituted = _substituted_message(session, message) if message else ""
        return substituted if substituted is not None else message or ""

    outcome = bridge.validate_patterns(target, rule_name, pattern, any_pattern, text, compiled)
    status = str(outcome.status)
    if status == ERROR:
        where = check.path + (("pattern",) if pattern is not None else ("anyPattern",))
        return Outcome(ERROR, outcome.message, RuleError(outcome.message, where))
    return Outcome(status, outcome.message, path=getattr(outcome, "path", "") or "")


def _foreach(check: Check, session: Any, rule_name: str, message: str | None, nesting: int,
             budget: ForEachBudget) -> Outcome:
    applied = 0
    list_problem: bridge.EvaluationProblem | None = None
    for loop in check.foreach:
        try:
            elements = bridge.evaluate_list(loop.list, session)
        except bridge.EvaluationProblem as problem:
            if problem.not_found:
                continue
            list_problem = problem
            continue
        budget.enter(nesting, len(elements))  # ForEachLimitError: the rule's error (evaluate_rule)
        outcome, count = _elements(loop, elements, session, rule_name, message, nesting, budget)
        if outcome.status != PASS:
            return outcome
        applied += count
    if applied == 0:
        if list_problem is not None:
            return _error(f"failed to evaluate list: {list_problem}", list_problem)
        return Outcome(None)
    return Outcome(PASS, "rule passed")


def _elements(loop: Foreach, elements: list, session: Any, rule_name: str, message: str | None,
              nesting: int, budget: ForEachBudget) -> tuple[Outcome, int]:
    applied = 0
    bridge.begin_elements(session)
    try:
        for index, element in enumerate(elements):
            if element is None:
                continue
            try:
                scoped = bridge.enter_element(session, element, index, nesting, loop.element_scope)
            except bridge.EvaluationProblem as problem:
                return _error(f"failed to process foreach: {problem}", problem), applied
            outcome = _run_check(loop.check, session, rule_name, message, nesting + 1, budget, element, scoped)
            if outcome.status is None or outcome.status == SKIP:
                continue
            if outcome.status != PASS:
                if outcome.status == ERROR and "failed to evaluate preconditions" in outcome.message:
                    continue
                return Outcome(outcome.status, f"validation failure: {outcome.message}", outcome.error), applied
            applied += 1
    finally:
        bridge.end_elements(session)
    return Outcome(PASS), applied


def _error(text: str, problem: bridge.EvaluationProblem) -> Outcome:
    return Outcome(ERROR, text, RuleError(text, problem.path, problem.kind))


def _substituted_message(session: Any, message: str) -> str | None:
    try:
        value = bridge.substitute(message, session)
    except bridge.EvaluationProblem:
        return None
    return value if isinstance(value, str) else str(value)
