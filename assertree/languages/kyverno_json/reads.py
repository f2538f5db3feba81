"""Which top-level fields of a resource a kyverno-json policy can read: what a reader may leave unbuilt.

``scan --terraform`` joins each planned resource with its ``resource_changes`` entry as ``change``; that
member is half of a plan's bytes, and most Terraform policies never look at it. Knowing before the plan is
parsed that no rule can read ``change`` lets the reader skip it (`assertree.inputs.plan_reading`).

Conservative, as `assertree.jp.fields.fields_read`: a set only when every verdict, message, identifier
and feedback value of the policy on any resource equals what it gives on that resource cut down to those
fields; None ("it may read anything") otherwise. What each part reads:

* a tree of ``match``, ``exclude`` or ``assert``: the keys of its top-level map (a plain key is a field;
  a ``(expression)`` key reads what the expression reads), and below them only what those keys gave, unless
  an expression there names ``$payload`` (the whole resource); a tree that is not a map (a value, a list, an
  expression's value) is compared with the whole resource;
* the identifier, each message placeholder, context entry and feedback value: what its expression reads
  (each is evaluated on the whole resource; a context entry's value is what ``$name`` gives elsewhere);
* a CEL expression anywhere: anything (``bindings.resolve('payload')`` reaches the resource).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from assertree.jp import Expression
from assertree.jp.fields import fields_read
from assertree.tree.nodes import ConstantLeaf, EmptyMapNode, ExpressionLeaf, MapNode, Node, SliceNode

if TYPE_CHECKING:
    from assertree.languages.kyverno_json.compile import CompiledPolicy, CompiledRule

__all__ = ["policy_fields_read"]

_PAYLOAD = "payload"  # the variable bound to the whole resource


class _Unknown(Exception):
    """The policy may read more than named fields."""


def policy_fields_read(policy: CompiledPolicy) -> frozenset[str] | None:
    """The top-level fields of a resource that `policy` can read, or None (see the module docstring)."""
    found: set[str] = set()
    try:
        for rule in policy.rules:
            _rule(rule, found)
    except _Unknown:
        return None
    return frozenset(found)


def _rule(rule: CompiledRule, found: set[str]) -> None:
    for entry in rule.context:
        _whole(entry.expression, found)
    for item in rule.feedback:
        _whole(item.expression, found)
    _whole(rule.identifier, found)
    for block in (rule.match, rule.exclude):
        if block is not None:
            _trees([*block.any, *block.all], found)
    for assertion in (*rule.any, *rule.all):
        _trees([assertion.tree], found)
        if assertion.message is not None:
            for expression in assertion.message.expressions:
                _whole(expression, found)


def _whole(expression: Any, found: set[str]) -> None:
    """What an expression evaluated on the whole resource reads (nothing for None: no expression)."""
    if expression is None:
        return
    fields = fields_read(expression) if isinstance(expression, Expression) else None
    if fields is None:
        raise _Unknown
    found.update(fields)


def _trees(trees: Iterable[Node], found: set[str]) -> None:
    for tree in trees:
        if isinstance(tree, MapNode):
            for entry in tree.entries:
                if entry.expression is None:
                    if isinstance(entry.key, str):
                        found.add(entry.key)
                else:
                    _whole(entry.expression, found)
                _inside(entry.child)
        elif not isinstance(tree, EmptyMapNode):  # the whole resource compared with a value, list or expression's
            raise _Unknown


def _inside(node: Node) -> None:
    """Raise `_Unknown` when a node below a top-level key can reach past the value that key gave."""
    pending = [node]
    while pending:
        node = pending.pop()
        if isinstance(node, MapNode):
            for entry in node.entries:
                _nested(entry.expression)
                pending.append(entry.child)
        elif isinstance(node, SliceNode):
            pending.extend(node.items)
        elif isinstance(node, ExpressionLeaf):
            _nested(node.expression)
        elif not isinstance(node, ConstantLeaf | EmptyMapNode):
            raise _Unknown


def _nested(expression: Any) -> None:
    """An expression evaluated on a value inside the resource: it reads only that, unless it names
    ``$payload`` (or is not JMESPath, whose variables are not known)."""
    if expression is None:
        return
    if not isinstance(expression, Expression) or _PAYLOAD in expression.variables:
        raise _Unknown
