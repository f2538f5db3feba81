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

from assertree.errors import Problem, Severity, shorten
from assertree.languages.kyverno_json.compile import CompiledPolicy, CompiledRule, compile_policy
from assertree.languages.kyverno_json.messages import Message
from assertree.languages.kyverno_json.model import document_kind_problem, policy_from_document
from assertree.tree.nodes import ExpressionLeaf, MapNode, Node, SliceNode

ERROR = Severity.ERROR
WARNING = Severity.WARNING
BUILTINS = frozenset({"payload", "policy", "rule"})
_SCALAR_TYPES = frozenset({"boolean", "number", "string", "null"})


def lint_document(value: Any) -> Iterator[Problem]:
    """Every problem of one policy document, with its field path (the loader adds file and line),
    in document order."""
    from assertree.languages.kyverno_json.schema import problems as schema_problems
    from assertree.languages.schema_problems import document_order

    wrong_kind = document_kind_problem(value)
    if wrong_kind is not None:
        path, message = wrong_kind
        yield Problem(message, path=path)
        return
    problems: list[Problem] = list(schema_problems(value))
    schema_valid = not problems
    try:  # expression problems are reported beside schema problems, as far as the document can be read
        compiled = compile_policy(policy_from_document(value), problems)
    except (KeyError, TypeError, AttributeError, ValueError):
        if schema_valid:
            raise
    else:
        if schema_valid:
            problems.extend(_PolicyLinter(compiled).run())
    yield from sorted(problems, key=lambda problem: document_order(value, problem.path))


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
    """Reads a policy compiled in collect-everything mode: the expressions and bindings its nodes hold."""

    def __init__(self, compiled: CompiledPolicy) -> None:
        self.compiled = compiled
        self.found: list[Problem] = []
        self.bound_anywhere: dict[str, str] = {}

    def run(self) -> list[Problem]:
        names: dict[str, int] = {}
        for rule in self.compiled.rules:
            model = rule.rule
            at = ("spec", "rules", model.index)
            if model.name in names:
                self.error(at + ("name",), f"duplicate rule name {model.name!r} (also rule {names[model.name]})")
            names.setdefault(model.name, model.index)
            self.rule(rule, at)
        return self.found

    def error(self, path: tuple, message: str) -> None:
        self.found.append(Problem(message, path=path, severity=ERROR))

    def warning(self, path: tuple, message: str) -> None:
        self.found.append(Problem(message, path=path, severity=WARNING))

    # -- a rule ----------------------------------------------------------------------------------

    def rule(self, rule: CompiledRule, at: tuple) -> None:
        trees = [*_trees(rule.match), *_trees(rule.exclude), *(assertion.tree for assertion in rule.any + rule.all)]
        self.bound_anywhere = {}
        for tree in trees:
            for entry in _entries(tree):
                for name in (entry.binding, entry.foreach_name):
                    if name:
                        self.bound_anywhere.setdefault(name, entry.text)
        scope = _Scope()
        context: list[_Binding] = []
        for position, entry in enumerate(rule.context):
            self.expression(entry.expression, at + ("context", position, "variable"), scope)
            binding = _Binding(entry.name, entry.at, "context")
            context.append(binding)
            scope = scope.with_binding(binding)
        self.expression(rule.identifier, at + ("identifier",), scope)
        for item in rule.feedback:
            self.expression(item.expression, item.at, scope)
        for block_name, written in (("match", rule.rule.match), ("exclude", rule.rule.exclude)):
            if written is not None and written.any and written.all:
                self.warning(at + (block_name,), f"{block_name} has both any and all: assertree requires one any "
                             "tree and every all tree (kyverno-json ignores all once an any tree matches)")
        for block in (rule.match, rule.exclude):
            for tree in _trees(block):
                self.tree(tree, scope)
        for assertion in rule.any + rule.all:
            self.tree(assertion.tree, scope)
            if assertion.message is not None:
                self.message(assertion.message, assertion.at + ("message",), scope)
        for binding in context:
            if not binding.used:
                self.warning(binding.path, f"context entry ${binding.name} is never used")

    # -- trees and expressions ---------------------------------------------------------------------

    def tree(self, node: Node, scope: _Scope) -> None:
        if isinstance(node, MapNode):
            for entry in node.entries:
                self.entry(entry, scope)
        elif isinstance(node, SliceNode):
            for item in node.items:
                self.tree(item, scope)
        elif isinstance(node, ExpressionLeaf):
            self.expression(node.expression, node.at, scope)

    def entry(self, entry: Any, scope: _Scope) -> None:
        at = entry.at
        if entry.expression is not None:
            self.expression(entry.expression, at, scope)
            kinds = _result_types(entry.expression.tree) if entry.foreach and entry.expression.tree else None
            if kinds is not None and kinds <= _SCALAR_TYPES:
                statement = shorten(repr(getattr(entry.expression, "text", entry.text)), 160)
                self.error(at, f"~ over {statement}, which is always a {' or '.join(sorted(kinds))}: "
                           "foreach needs a list or a map")
        own = [_Binding(entry.binding, at, "binding")] if entry.binding else []
        if entry.foreach_name:
            own.append(_Binding(entry.foreach_name, at, "foreach"))
        child_scope = scope
        for binding in own:
            child_scope = child_scope.with_binding(binding)
        self.tree(entry.child, child_scope)
        for binding in own:
            if not binding.used:
                what = "binding ->" if binding.kind == "binding" else "foreach ~"
                self.warning(at, f"{what}{binding.name} is never used: no expression below this key reads "
                             f"${binding.name}")

    def message(self, message: Message, at: tuple, scope: _Scope) -> None:
        for expression in message.expressions:
            self.expression(expression, at, scope)

    def expression(self, expression: Any, at: tuple, scope: _Scope) -> None:
        """Check the variables of a compiled expression (nothing to check for one that did not compile)."""
        if expression is None:
            return
        for name in sorted(getattr(expression, "variables", ())):
            self._variable(name, at, scope)

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


def _trees(block: Any) -> list[Node]:
    return [] if block is None else [*block.any, *block.all]


def _entries(node: Node) -> Iterator[Any]:
    """Every map entry of a compiled tree, depth first."""
    if isinstance(node, MapNode):
        for entry in node.entries:
            yield entry
            yield from _entries(entry.child)
    elif isinstance(node, SliceNode):
        for item in node.items:
            yield from _entries(item)


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
