"""One kyverno-json rule on one resource.

In order: bind ``$payload``, ``$policy``, ``$rule`` over the user's bindings,
register the rule's context entries (lazy, in order), then ``match``,
``exclude`` and ``assert``; compute the identifier and feedback for every rule
that applied. A rule whose match fails or whose exclude matches produces no
result. Evaluation problems make that rule's result ERROR; they never stop the
scan.

Differences from kyverno-json, on purpose: ``match``/``exclude`` with both
``any`` and ``all`` require both (kyverno-json ignores ``all`` once an ``any``
tree matched), and a null identifier means "no identifier" (kyverno-json
prints ``<nil>``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from assertree.jp import Expression
from assertree.jp.compiler import Lazy
from assertree.jp.errors import EvaluationError, JMESPathError
from assertree.jp.values import to_display
from assertree.results import ERROR, FAIL, PASS, Resource, RuleError, RuleResult, Violation
from assertree.tree import fieldpath
from assertree.tree.nodes import TreeError

if TYPE_CHECKING:
    from assertree.languages.kyverno_json.compile import CompiledContextEntry, CompiledMatch, CompiledRule


def evaluate_rule(rule: CompiledRule, resource: Resource, scope: dict,
                  context: list[CompiledContextEntry] | None = None) -> RuleResult | None:
    """One rule on one resource; None when the rule does not apply (match/exclude). `context` is the
    rule's context entries still to bind (the runner binds constant ones once per scan)."""
    value = resource.value
    entries = rule.context if context is None else context
    if entries:
        scope = with_context(entries, value, scope)
    try:
        if rule.match is not None and not _matches(rule.match, value, scope):
            return None
        if rule.exclude is not None and _matches(rule.exclude, value, scope):
            return None
        violations = _assert(rule, value, scope)
    except TreeError as error:
        return _error(rule, resource, scope, error)
    if violations:
        return _result(rule, resource, scope, FAIL, violations=violations)
    return _result(rule, resource, scope, PASS)


def usual_runner(rule: CompiledRule, scope: dict) -> Callable[[Resource], RuleResult | None]:
    """`evaluate_rule` for a rule of the usual shape, no context entry to bind per resource, no exclude, no
    feedback (the runner's `scope` already holds the rule's bindings; `$payload` is set here), in one function
    and the assertions' own (`_assert`) rather than six, since it runs once per resource the rule may apply to:
    a plain-field identifier (``address``) is looked up in place, an ERROR and what is not a plain case go the
    general way.

    Invariant: the result is `evaluate_rule(rule, resource, scope, [])`'s, field for field
    (`tests/test_fast_paths.py` holds the two to each other on random policies and resources).
    """
    assert rule.exclude is None and not rule.feedback
    match = rule.match
    trees = None if match is None else match.any if len(match.any) == 1 and not match.all else None
    holds = trees[0].holds if trees else None
    identifier = rule.identifier
    key = identifier.field_name if isinstance(identifier, Expression) else None
    policy, written = rule.policy, rule.rule

    def run(resource: Resource) -> RuleResult | None:
        value = resource.value
        scope["payload"] = value
        try:
            if holds is not None:
                if not holds(value, scope):
                    return None
            elif match is not None and not _matches(match, value, scope):
                return None
            violations = _assert(rule, value, scope)
        except TreeError as error:
            return _error(rule, resource, scope, error)
        if identifier is None:
            found = resource.default_identifier
        elif key is not None and type(value) is dict and type(found := value.get(key)) is str:
            pass  # what `_identifier` gives for a string: itself
        else:
            return _result(rule, resource, scope, FAIL if violations else PASS, violations=violations)
        return RuleResult(resource, policy, written, FAIL if violations else PASS, found, violations)

    return run


def with_context(entries: list[CompiledContextEntry], value: Any, scope: dict) -> dict:
    """Register the context entries; each is computed on first use and sees the earlier ones."""
    for entry in entries:
        if entry.evaluate is None:
            scope = {**scope, entry.name: entry.constant}
        else:
            scope = {**scope, entry.name: Lazy(_context_value(entry, value, scope))}
    return scope


def _context_value(entry: CompiledContextEntry, value: Any, scope: dict) -> Callable[[], Any]:
    """The computation of a context entry, run where the entry is first used."""
    evaluate = entry.evaluate
    assert evaluate is not None  # a constant entry is bound as it is (with_context)

    def compute() -> Any:
        try:
            return evaluate(value, scope)
        except Exception as error:
            raise EvaluationError(f"{entry.path}: Internal error: {error}") from error

    return compute


def _matches(match: CompiledMatch, value: Any, scope: dict) -> bool:
    """Whether a match/exclude block holds: one `any` tree (if any) and every `all` tree."""
    if match.any:
        for tree in match.any:
            if tree.holds(value, scope):
                break
        else:
            return False
    for tree in match.all:  # noqa: SIM110  (a loop: no generator object per resource)
        if not tree.holds(value, scope):
            return False
    return True


def _assert(rule: CompiledRule, value: Any, scope: dict) -> list[Violation]:
    """The violations of the assert block: `any` needs one passing assertion, `all` every one."""
    if rule.any:
        failures: list[Violation] = []
        for assertion in rule.any:
            violation = _check(assertion, value, scope)
            if violation is None:
                failures = []
                break
            failures.append(violation)
        if failures:
            return failures
    violations = []
    for assertion in rule.all:
        violation = _check(assertion, value, scope)
        if violation is not None:
            violations.append(violation)
    return violations


def _check(assertion, value: Any, scope: dict) -> Violation | None:
    errors: list = []
    assertion.run(value, scope, None, errors)
    if not errors:
        return None
    message = assertion.message.render(value, scope) if assertion.message is not None else None
    return Violation(assertion.check_path, message, errors)


def _error(rule: CompiledRule, resource: Resource, scope: dict, error: TreeError) -> RuleResult:
    return _result(rule, resource, scope, ERROR,
                   error=RuleError(error.text(), path=tuple(fieldpath.payload_steps(error.path)), kind=error.kind,
                                   value=error.value))


def _result(rule: CompiledRule, resource: Resource, scope: dict, status: str, *,
            violations: list[Violation] | None = None, error: RuleError | None = None) -> RuleResult:
    value = resource.value
    identifier, identifier_error = _identifier(rule, resource, scope)
    feedback = _feedback(rule, value, scope) if rule.feedback else {}
    result = RuleResult(resource, rule.policy, rule.rule, status, identifier, violations or [], error, feedback)
    if identifier_error is not None:
        result.identifier_error = identifier_error
    return result


def _identifier(rule: CompiledRule, resource: Resource, scope: dict) -> tuple[str | None, RuleError | None]:
    """The identifier text, and the error object when the identifier expression failed (the text then
    says so, as kyverno-json prints it)."""
    if rule.identifier is None:
        return resource.default_identifier, None
    value = resource.value
    try:
        result = rule.identifier.search(value, scope)
    except JMESPathError as error:
        at = ("spec", "rules", rule.rule.index, "identifier")
        return f"(error: {error})", RuleError(str(error), path=at, kind="identifier")
    if result is None:
        return None, None
    return (result if isinstance(result, str) else to_display(result)), None


def _feedback(rule: CompiledRule, value: Any, scope: dict) -> dict[str, Any]:
    if not rule.feedback:
        return {}
    out = {}
    for item in rule.feedback:
        if item.evaluate is None:
            out[item.name] = {"value": item.constant}
            continue
        try:
            out[item.name] = {"value": item.evaluate(value, scope)}
        except JMESPathError as error:
            out[item.name] = {"error": RuleError(str(error), path=item.at, kind="feedback")}
    return out
