"""Linting ValidatingPolicy documents: every problem, not just the first one loading stops at.

The loader (`assertree.languages.load.lint_policies`) locates each problem as
``file:line:column: field.path: message``. What is found:

* the document is not a ValidatingPolicy, or breaks the schema;
* an expression does not parse, calls an unknown function or passes the wrong
  number of arguments; a leaf carries ``~`` or ``->``; a message template is
  invalid; ``assert`` or ``match`` is empty;
* ``~`` over an expression that can never give a list or a map;
* a ``$name`` that is bound in the rule but not visible where it is used
  (bindings reach only the descendants of their key, context entries only the
  entries after them), or that the policy never binds (warning: it must then
  come from ``--bindings``); a binding or context entry that nothing uses;
* two rules of one policy with the same name, two policies with the same name;
* ``match``/``exclude`` with both ``any`` and ``all`` (assertree requires both;
  kyverno-json ignores ``all`` once an ``any`` tree matched).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from assertree import jp
from assertree.errors import PolicyError, Problem, Severity
from assertree.languages.kyverno_json.expressions import Compilers, compile_jp_expression
from assertree.languages.kyverno_json.messages import Message
from assertree.languages.kyverno_json.model import Policy, Rule, document_kind_problem, policy_from_document
from assertree.tree.keys import parse_key
from assertree.tree.nodes import compile_scalar

ERROR = Severity.ERROR
WARNING = Severity.WARNING
BUILTINS = frozenset({"payload", "policy", "rule"})
_SCALAR_TYPES = frozenset({"boolean", "number", "string", "null"})


def lint_document(value: Any) -> Iterator[Problem]:
    """Every problem of one policy document, with its field path (the loader adds file and line)."""
    from assertree.languages.kyverno_json.schema import problems as schema_problems

    wrong_kind = document_kind_problem(value)
    if wrong_kind is not None:
        path, message = wrong_kind
        yield Problem(message, path=path)
        return
    found = schema_problems(value)
    yield from found
    if found:
        return
    policy = policy_from_document(value)
    for path, message, severity in _PolicyLinter(policy).run():
        yield Problem(message, path=path, severity=severity)


@dataclass
class _Binding:
    name: str
    path: tuple
    kind: str  # "binding", "foreach" or "context"
    used: bool = False


@dataclass
class _Scope:
    visible: dict[str, _Binding] = field(default_factory=dict)

    def with_binding(self, binding: _Binding) -> _Scope:
        return _Scope({**self.visible, binding.name: binding})


class _PolicyLinter:
    def __init__(self, policy: Policy) -> None:
        self.policy = policy
        self.found: list[tuple[tuple, str, str]] = []

    def run(self) -> list[tuple[tuple, str, str]]:
        compilers = Compilers().with_default(self.policy.compiler)
        names: dict[str, int] = {}
        for rule in self.policy.rules:
            at = ("spec", "rules", rule.index)
            if rule.name in names:
                self.error(at + ("name",), f"duplicate rule name {rule.name!r} (also rule {names[rule.name]})")
            names.setdefault(rule.name, rule.index)
            self.rule(rule, compilers.with_default(rule.compiler), at)
        return self.found

    def error(self, path: tuple, message: str) -> None:
        self.found.append((path, message, ERROR))

    def warning(self, path: tuple, message: str) -> None:
        self.found.append((path, message, WARNING))

    # -- a rule ----------------------------------------------------------------------------------

    def rule(self, rule: Rule, compilers: Compilers, at: tuple) -> None:
        self.bound_anywhere = self._names_bound_in(rule)
        scope = _Scope()
        context: list[_Binding] = []
        for position, entry in enumerate(rule.context):
            path = at + ("context", position, "variable")
            self.scalar(entry.variable, compilers.with_default(entry.compiler), path, scope)
            binding = _Binding(entry.name, at + ("context", position, "name"), "context")
            context.append(binding)
            scope = scope.with_binding(binding)
        rule_scope = scope
        if rule.identifier:
            self.expression(lambda: compile_jp_expression(rule.identifier, at + ("identifier",)),
                            at + ("identifier",), rule_scope)
        for position, item in enumerate(rule.feedback):
            self.scalar(item.value, compilers.with_default(item.compiler), at + ("feedback", position, "value"),
                        rule_scope)
        for block_name in ("match", "exclude"):
            block = getattr(rule, block_name)
            if block is None:
                continue
            block_at = at + (block_name,)
            if not block.any and not block.all:
                self.error(block_at, f"an empty {block_name} is not valid: give at least one tree under any or all")
            if block.any and block.all:
                self.warning(block_at, f"{block_name} has both any and all: assertree requires one any tree and "
                             "every all tree (kyverno-json ignores all once an any tree matches)")
            block_compilers = compilers.with_default(block.compiler)
            for kind in ("any", "all"):
                for position, tree in enumerate(getattr(block, kind)):
                    self.tree(tree, block_compilers, block_at + (kind, position), rule_scope)
        assert_block = rule.assert_
        if not assert_block.any and not assert_block.all:
            self.error(at + ("assert",), "an empty assert is not valid: give at least one assertion under any or all")
        assert_compilers = compilers.with_default(assert_block.compiler)
        for kind in ("any", "all"):
            for position, assertion in enumerate(getattr(assert_block, kind)):
                here = at + ("assert", kind, position)
                self.tree(assertion.check, assert_compilers.with_default(assertion.compiler), here + ("check",),
                          rule_scope)
                if assertion.message:
                    self.expression(lambda a=assertion, h=here: Message(a.message, h + ("message",)),
                                    here + ("message",), rule_scope)
        for binding in context:
            if not binding.used:
                self.warning(binding.path, f"context entry ${binding.name} is never used")

    @staticmethod
    def _names_bound_in(rule: Rule) -> dict[str, str]:
        """Every name some ->binding or ~name. of the rule defines (for 'not visible here' hints)."""
        names: dict[str, str] = {}

        def walk(tree: Any) -> None:
            if isinstance(tree, dict):
                for key, child in tree.items():
                    if isinstance(key, str):
                        syntax = parse_key(key)
                        if syntax.binding:
                            names.setdefault(syntax.binding, key)
                        if syntax.foreach_name:
                            names.setdefault(syntax.foreach_name, key)
                    walk(child)
            elif isinstance(tree, list):
                for child in tree:
                    walk(child)

        for block in (rule.match, rule.exclude):
            if block is not None:
                for tree in block.any + block.all:
                    walk(tree)
        for assertion in rule.assert_.any + rule.assert_.all:
            walk(assertion.check)
        return names

    # -- trees and expressions ---------------------------------------------------------------------

    def tree(self, tree: Any, compilers: Compilers, at: tuple, scope: _Scope) -> None:
        if isinstance(tree, dict):
            for key, child in tree.items():
                self.key(key, child, compilers, at + (key,), scope)
        elif isinstance(tree, list):
            for position, child in enumerate(tree):
                self.tree(child, compilers, at + (position,), scope)
        else:
            self.scalar(tree, compilers, at, scope)

    def key(self, key: Any, child: Any, compilers: Compilers, at: tuple, scope: _Scope) -> None:
        if not isinstance(key, str):
            self.tree(child, compilers, at, scope)
            return
        syntax = parse_key(key)
        expression = None
        if syntax.compiler:
            expression = self.expression(lambda: compilers.compile(syntax.compiler, syntax.statement, at), at, scope)
            compiled = _expressions_of(expression)
            if syntax.foreach and len(compiled) == 1:
                kinds = _result_types(compiled[0].tree)
                if kinds is not None and kinds <= _SCALAR_TYPES:
                    self.error(at, f"~ over {syntax.statement!r}, which is always a {' or '.join(sorted(kinds))}: "
                               "foreach needs a list or a map")
        own: list[_Binding] = []
        if syntax.binding:
            own.append(_Binding(syntax.binding, at, "binding"))
        if syntax.foreach_name:
            own.append(_Binding(syntax.foreach_name, at, "foreach"))
        child_scope = scope
        for binding in own:
            child_scope = child_scope.with_binding(binding)
        self.tree(child, compilers, at, child_scope)
        for binding in own:
            if not binding.used:
                what = "binding ->" if binding.kind == "binding" else "foreach ~"
                self.warning(at, f"{what}{binding.name} is never used: no expression below this key reads "
                             f"${binding.name}")

    def scalar(self, value: Any, compilers: Compilers, at: tuple, scope: _Scope) -> None:
        if isinstance(value, str):
            self.expression(lambda: compile_scalar(value, compilers.compile, at)[1], at, scope)

    def expression(self, build, at: tuple, scope: _Scope) -> Any:
        """Build an expression (or message); record its problem or check its variables."""
        try:
            built = build()
        except PolicyError as error:
            self.error(error.path or at, error.message)
            return None
        expressions = _expressions_of(built)
        for expression in expressions:
            for name in sorted(expression.variables):
                self._variable(name, at, scope)
        return built

    def _variable(self, name: str, at: tuple, scope: _Scope) -> None:
        binding = scope.visible.get(name)
        if binding is not None:
            binding.used = True
        elif name in BUILTINS:
            return
        elif name in self.bound_anywhere:
            self.error(at, f"${name} is not visible here: it is bound by the key {self.bound_anywhere[name]!r}, "
                       "and a binding reaches only the descendants of its key")
        else:
            self.warning(at, f"${name} is not bound by this policy: it must come from --bindings")


def _expressions_of(built: Any) -> list[jp.Expression]:
    """The JMESPath expressions inside what a compile step returned (evaluator, Expression, Message)."""
    if isinstance(built, jp.Expression):
        return [built]
    if isinstance(built, Message):
        return list(built.expressions)
    owner = getattr(built, "__self__", None)  # a bound Expression.search
    return [owner] if isinstance(owner, jp.Expression) else []


def _result_types(tree) -> frozenset[str] | None:
    """The JSON types an expression can produce, when the syntax alone decides it; else None."""
    kind = tree.type
    if kind in ("comparator", "not_expression"):
        return frozenset({"boolean", "null"}) if kind == "comparator" else frozenset({"boolean"})
    if kind in ("arithmetic", "arithmetic_unary"):
        return frozenset({"number", "null"})
    if kind == "literal":
        value = tree.value
        return None if isinstance(value, (list, dict)) else frozenset({jp_type(value)})
    if kind == "function_expression":
        from assertree.jp.registry import lookup

        function = lookup(tree.value)
        if function is None:
            return None
        returns = frozenset(part.strip() for part in function.returns.split("|"))
        return returns if returns <= _SCALAR_TYPES else None
    return None


def jp_type(value: Any) -> str:
    from assertree.jp.values import type_name

    return type_name(value)
