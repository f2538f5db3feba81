"""Compiling a policy into what the engine runs, once, at load time.

Everything that can be decided without a payload is decided here: which
expression language each ``(...)`` uses, every expression parsed and checked
(unknown functions, wrong argument counts), every assertion tree turned into
nodes, every message template parsed. A problem is a `PolicyError` whose
`path` points into the policy document, so the loader can name the line; with
a `problems` list, every problem is recorded instead and compiling carries on
(lint's mode: `assertree.languages.kyverno_json.lint` reads the result).
"""

from __future__ import annotations

from typing import Any

from assertree.errors import PolicyError, Problem
from assertree.languages.base import Explain, Mutator, RuleRunner, ScanContext, reduce_compiled
from assertree.languages.kyverno_json.evaluate import evaluate_rule, usual_runner
from assertree.languages.kyverno_json.expressions import Compilers
from assertree.languages.kyverno_json.messages import Message
from assertree.languages.kyverno_json.model import Match, Policy, Rule, policy_from_document
from assertree.records import Record
from assertree.results import Resource
from assertree.tree.fast import Check, fast_check
from assertree.tree.nodes import Evaluate, Expression, Node, StaticMapNode, compile_scalar, compile_tree


class CompiledAssertion(Record, hidden=("run",)):
    """One assertion of a rule: its tree, message and place in the policy; `run` checks the tree."""

    check_path: str  # "spec.rules[0].assert.all[1]"
    tree: Node
    message: Message | None
    at: tuple  # where the assertion is in the policy document

    run: Check  # `tree` compiled to closures (`assertree.tree.fast`: the same results); an explanation walks
    # `tree` itself (`assertree.tree.trace`), the interpreter being the reference

    __slots__ = ("at", "check_path", "message", "run", "tree")

    def __init__(self, check_path: str, tree: Node, message: Message | None, at: tuple = ()) -> None:
        self.check_path = check_path
        self.tree = tree
        self.message = message
        self.at = at
        self.run = fast_check(tree)


class CompiledMatch(Record):
    """A match or exclude block: one `any` tree must hold, and every `all` tree."""

    any: list[Node]
    all: list[Node]
    at: tuple

    __slots__ = ("all", "any", "at")

    def __init__(self, any: list[Node], all: list[Node], at: tuple = ()) -> None:
        self.any = any
        self.all = all
        self.at = at


class CompiledContextEntry(Record, hidden=("evaluate",)):
    """A context entry: a constant, or an expression evaluated on first use."""

    name: str
    constant: Any
    expression: Expression | None
    path: str  # "spec.rules[0].context[1].variable", for errors
    at: tuple

    evaluate: Evaluate | None  # the expression's search, if any

    __slots__ = ("at", "constant", "evaluate", "expression", "name", "path")

    def __init__(self, name: str, constant: Any, expression: Expression | None, path: str, at: tuple = ()) -> None:
        self.name = name
        self.constant = constant
        self.expression = expression
        self.path = path
        self.at = at
        self.evaluate = expression.search if expression is not None else None


class CompiledFeedback(Record, hidden=("evaluate",)):
    """A feedback entry: a constant, or an expression evaluated for each result."""

    name: str
    constant: Any
    expression: Expression | None
    at: tuple

    evaluate: Evaluate | None  # the expression's search, if any

    __slots__ = ("at", "constant", "evaluate", "expression", "name")

    def __init__(self, name: str, constant: Any, expression: Expression | None, at: tuple = ()) -> None:
        self.name = name
        self.constant = constant
        self.expression = expression
        self.at = at
        self.evaluate = expression.search if expression is not None else None


class CompiledRule(Record):
    """A rule ready to run: everything that does not depend on a payload, decided at load time."""

    policy: Policy
    rule: Rule
    context: list[CompiledContextEntry]
    match: CompiledMatch | None
    exclude: CompiledMatch | None
    any: list[CompiledAssertion]
    all: list[CompiledAssertion]
    identifier: Expression | None
    feedback: list[CompiledFeedback]
    scope: dict

    __slots__ = ("all", "any", "context", "exclude", "feedback", "identifier", "match", "policy", "rule", "scope")

    def __init__(
            self, policy: Policy, rule: Rule, context: list[CompiledContextEntry], match: CompiledMatch | None,
            exclude: CompiledMatch | None, any: list[CompiledAssertion], all: list[CompiledAssertion],
            identifier: Expression | None, feedback: list[CompiledFeedback], scope: dict | None = None,
    ) -> None:
        self.policy = policy
        self.rule = rule
        self.context = context
        self.match = match
        self.exclude = exclude
        self.any = any
        self.all = all
        self.identifier = identifier
        self.feedback = feedback
        self.scope = {} if scope is None else scope
    """Bindings every evaluation of this rule starts from ($policy, $rule); the runner adds $payload."""

    @property
    def index_keys(self) -> list[list[tuple[tuple, Any]]] | None:
        """The literal pairs of each `match.any` tree, when every one is literal (for the rule index)."""
        match = self.match
        if match is None or not match.any:
            return None
        literal = [tree for tree in match.any if isinstance(tree, StaticMapNode)]
        return [tree.pairs for tree in literal] if len(literal) == len(match.any) else None

    def runner(self, context: ScanContext) -> RuleRunner:
        """This rule with the scan's bindings under its own; `$payload` is set per resource."""
        scope = {**context.bindings, "payload": None, **self.scope}
        entries = self.context
        if all(entry.evaluate is None and entry.name != "payload" for entry in entries):
            for entry in entries:  # constants: bound once for the whole scan, in order, as evaluation would
                scope[entry.name] = entry.constant
            entries = []
        if not entries and self.exclude is None and not self.feedback:
            return usual_runner(self, scope)

        def run(resource: Resource):
            scope["payload"] = resource.value
            return evaluate_rule(self, resource, scope, entries)

        return run

    def explainer(self, context: ScanContext) -> Explain:
        """How this rule failed or errored on a resource (`explain`)."""
        from assertree.languages.kyverno_json.explain import explainer

        return explainer(self, context)


class CompiledPolicy(Record):
    """A kyverno-json policy ready to run; it pickles as its document (`__reduce__`)."""

    policy: Policy
    rules: list[CompiledRule]

    __slots__ = ("policy", "rules")

    def __init__(self, policy: Policy, rules: list[CompiledRule]) -> None:
        self.policy = policy
        self.rules = rules

    def mutator(self, context: ScanContext) -> Mutator | None:
        """kyverno-json policies only validate."""
        return None

    def fields_read(self) -> frozenset[str] | None:
        """The top-level fields of a resource this policy can read; None: any (`reads`)."""
        from assertree.languages.kyverno_json.reads import policy_fields_read

        return policy_fields_read(self)

    def __reduce__(self) -> tuple[Any, tuple]:
        """Pickles as its document, compiled again where it is unpickled (`base.reduce_compiled`); a policy
        compiled from a model built in Python (no document) pickles as that model."""
        if not self.policy.document:
            return compile_policy, (self.policy,)
        return reduce_compiled(compile_document_again, self.policy)


def compile_document_again(document: dict, *, source: str | None = None, index: int | None = None,
                           line: int | None = None) -> CompiledPolicy:
    """A document that was checked and compiled once, compiled again (unpickling a `CompiledPolicy`)."""
    return compile_policy(policy_from_document(document, source=source, index=index, line=line))


def compile_policy(policy: Policy, problems: list[Problem] | None = None) -> CompiledPolicy:
    """Compile every rule of `policy`; raises PolicyError pointing into the document, or, given
    `problems`, records every problem there and compiles what it can."""
    compilers = Compilers(problems=problems).with_default(policy.compiler)
    rules = [_compile_rule(policy, rule, compilers) for rule in policy.rules]
    return CompiledPolicy(policy, rules)


def _compile_rule(policy: Policy, rule: Rule, compilers: Compilers) -> CompiledRule:
    at = ("spec", "rules", rule.index)
    compilers = compilers.with_default(rule.compiler)
    context = []
    for position, entry in enumerate(rule.context):
        entry_at = at + ("context", position, "variable")
        constant, expression = compile_scalar(entry.variable, compilers.with_default(entry.compiler), entry_at)
        context.append(CompiledContextEntry(
            entry.name, constant, expression, f"spec.rules[{rule.index}].context[{position}].variable",
            at + ("context", position, "name"),
        ))
    feedback = []
    for position, item in enumerate(rule.feedback):
        item_at = at + ("feedback", position, "value")
        constant, expression = compile_scalar(item.value, compilers.with_default(item.compiler), item_at)
        feedback.append(CompiledFeedback(item.name, constant, expression, item_at))
    identifier = compilers.jp(rule.identifier, at + ("identifier",)) if rule.identifier else None
    assert_block = rule.assert_
    if not assert_block.any and not assert_block.all:
        compilers.report(PolicyError("an empty assert is not valid: give at least one assertion under any or all",
                                     path=at + ("assert",)))
    assert_compilers = compilers.with_default(assert_block.compiler)
    return CompiledRule(
        policy=policy,
        rule=rule,
        context=context,
        match=_compile_match(rule.match, compilers, at + ("match",)),
        exclude=_compile_match(rule.exclude, compilers, at + ("exclude",)),
        any=_compile_assertions(assert_block.any, assert_compilers, at + ("assert", "any")),
        all=_compile_assertions(assert_block.all, assert_compilers, at + ("assert", "all")),
        identifier=identifier,
        feedback=feedback,
        scope={"policy": policy.document, "rule": rule.document},
    )


def _compile_match(match: Match | None, compilers: Compilers, at: tuple) -> CompiledMatch | None:
    if match is None:
        return None
    if not match.any and not match.all:
        kind = at[-1]
        compilers.report(PolicyError(f"an empty {kind} is not valid: give at least one tree under any or all",
                                     path=at))
    compilers = compilers.with_default(match.compiler)
    return CompiledMatch(
        any=[compile_tree(tree, compilers, at + ("any", i)) for i, tree in enumerate(match.any)],
        all=[compile_tree(tree, compilers, at + ("all", i)) for i, tree in enumerate(match.all)],
        at=at,
    )


def _compile_assertions(assertions, compilers: Compilers, at: tuple) -> list[CompiledAssertion]:
    compiled = []
    for position, assertion in enumerate(assertions):
        here = at + (position,)
        assertion_compilers = compilers.with_default(assertion.compiler)
        tree = compile_tree(assertion.check, assertion_compilers, here + ("check",))
        message = Message(assertion.message, here + ("message",), compilers) if assertion.message else None
        check_path = f"spec.rules[{at[2]}].assert.{at[-1]}[{position}]"
        compiled.append(CompiledAssertion(check_path, tree, message, here))
    return compiled
