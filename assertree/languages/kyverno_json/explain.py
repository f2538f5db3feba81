"""How a kyverno-json rule failed or errored on a resource (``--explain``).

The rule is evaluated once more, in the engine's order (`evaluate`), and for
each assertion that failed, its tree is traced node by node
(`assertree.tree.trace`): every key on the way to a failing leaf with the value
it projected, each failing leaf with what it expected. An error is traced to
the node that raised it, in a ``match``/``exclude`` tree or an assertion. The
context entries the evaluation computed are listed last, with their values.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from assertree.errors import field_path_text
from assertree.explanation import Explanation, Trace
from assertree.jp.compiler import Lazy
from assertree.languages.kyverno_json.evaluate import with_context
from assertree.tree.trace import fails, trace_tree

if TYPE_CHECKING:
    from assertree.languages.base import Explain, ScanContext
    from assertree.languages.kyverno_json.compile import CompiledMatch, CompiledRule
    from assertree.results import RuleResult

__all__ = ["explainer"]


def explainer(rule: CompiledRule, context: ScanContext) -> Explain:
    """The `base.Explain` of `rule` under the scan's bindings."""
    base = {**context.bindings, "payload": None, **rule.scope}

    def explain(result: RuleResult) -> Explanation:
        value = result.resource.value
        scope = {**base, "payload": value}
        if rule.context:
            scope = with_context(rule.context, value, scope)
        trace = Trace()
        stopped = any(_block(block, name, value, scope, trace)
                      for block, name in ((rule.match, "match"), (rule.exclude, "exclude")))
        if not stopped:
            _assertions(rule, value, scope, trace)
        _context_values(rule, scope, trace)
        return trace.explanation

    return explain


def _block(block: CompiledMatch | None, name: str, value: Any, scope: dict, trace: Trace) -> bool:
    """Trace the tree of a match/exclude block that raised an error (True), as `evaluate._matches` walks it."""
    if block is None:
        return False
    if block.any:
        for position, tree in enumerate(block.any):
            errors, error = fails(tree, value, scope)
            if error is not None:
                return _stopped(f"{name}.any[{position}]", block.at + ("any", position), tree, value, scope, trace)
            if not errors:
                break
        else:
            return False
    for position, tree in enumerate(block.all):
        errors, error = fails(tree, value, scope)
        if error is not None:
            return _stopped(f"{name}.all[{position}]", block.at + ("all", position), tree, value, scope, trace)
        if errors:
            return False
    return False


def _stopped(what: str, at: tuple, tree: Any, value: Any, scope: dict, trace: Trace) -> bool:
    trace.add(what, "error", policy_path=field_path_text(at))
    with trace.nested():
        trace_tree(tree, value, scope, trace)
    return True


def _assertions(rule: CompiledRule, value: Any, scope: dict, trace: Trace) -> None:
    """Trace each failing assertion as `evaluate._assert` finds them: every `any` assertion when none
    passed, then each failing `all` assertion; an error ends the walk, as it ends the evaluation."""
    failed: list[Any] = []
    for assertion in rule.any:
        errors, error = fails(assertion.tree, value, scope)
        if error is not None:
            _assertion(assertion, "error", value, scope, trace)
            return
        if not errors:
            failed = []
            break
        failed.append(assertion)
    for assertion in failed:
        _assertion(assertion, "fail", value, scope, trace)
    for assertion in rule.all:
        errors, error = fails(assertion.tree, value, scope)
        if error is not None:
            _assertion(assertion, "error", value, scope, trace)
            return
        if errors:
            _assertion(assertion, "fail", value, scope, trace)


def _assertion(assertion: Any, outcome: str, value: Any, scope: dict, trace: Trace) -> None:
    """One assertion (`compile.CompiledAssertion`): a heading at its check path, then its tree."""
    trace.add(assertion.check_path.split(".", 2)[-1], outcome, policy_path=assertion.check_path)
    with trace.nested():
        trace_tree(assertion.tree, value, scope, trace)


def _context_values(rule: CompiledRule, scope: dict, trace: Trace) -> None:
    """The context entries the evaluation computed (expressions are computed on first use), with their values."""
    used = [(entry, scope[entry.name]) for entry in rule.context
            if isinstance(scope.get(entry.name), Lazy) and scope[entry.name].known]
    if not used:
        return
    trace.add("context", policy_path=field_path_text(("spec", "rules", rule.rule.index, "context")))
    with trace.nested():
        for entry, lazy in used:
            trace.add(f"${entry.name}", value=lazy.resolve(), policy_path=entry.path)
