"""Which nodes of an assertion tree led to its failures, with the values they projected (``--explain``).

`trace_tree` walks a compiled tree the way `Node.check` does and records, into
an `assertree.explanation.Trace`, every node on a path to a failure or to the
error that stopped the evaluation: each key with the value it projected, each
leaf with its value and what it expected. Subtrees that pass are left out.

The walk does not judge anything itself: whether a subtree fails, and how a
leaf compares, is asked of the nodes' own `check`; only the projection step
(a lookup, an expression, ``~`` over items, a ``->`` binding) is repeated here
to reach the children, and `tests/explain` holds the result to the engine's
(every traced failure is one the engine reported, in the same order).
"""

from __future__ import annotations

import contextlib
from typing import Any

from assertree.errors import field_path_text
from assertree.explanation import ABSENT, Trace
from assertree.tree import fieldpath
from assertree.tree.nodes import ConstantLeaf, EmptyMapNode, ExpressionLeaf, MapNode, Node, SliceNode, TreeError

__all__ = ["fails", "trace_tree"]

_NOT_FOUND = "field not found in the input object"
_NOTHING = object()


class _Stopped(Exception):
    """The walk reached the error that stopped the evaluation (the engine stops the rule there)."""


def fails(node: Node, value: Any, scope: dict, path: Any = None) -> tuple[list, TreeError | None]:
    """The node's own verdict: its field errors, and the error that stopped it (None when none did)."""
    errors: list = []
    try:
        node.check(value, scope, path, errors)
    except TreeError as error:
        return errors, error
    return errors, None


def trace_tree(node: Node, value: Any, scope: dict, trace: Trace, path: Any = None) -> None:
    """Record the nodes of `node` (checked against `value` with `scope`) that lead to its failures or error."""
    with contextlib.suppress(_Stopped):
        _node(node, value, scope, path, trace)


def _in_resource(path: Any) -> tuple | None:
    """The keys and indexes of a tree path inside the resource, when every step follows the resource."""
    steps = []
    while path is not None:
        parent, _, _, step = path
        if step is fieldpath.NOT_IN_PAYLOAD:
            return None
        steps.append(step)
        path = parent
    return tuple(reversed(steps))


def _node(node: Node, value: Any, scope: dict, path: Any, trace: Trace) -> None:
    if isinstance(node, MapNode):
        for entry in node.entries:
            if trace.full:
                return
            _entry(entry, value, scope, path, trace)
    elif isinstance(node, SliceNode):
        _slice(node, value, scope, path, trace)
    else:
        _terminal("(value)", node, value, scope, path, trace, "")


def _entry(entry: Any, value: Any, scope: dict, path: Any, trace: Trace) -> None:
    """One key of a map node (`nodes._Entry`): a plain lookup when it has no expression."""
    where = field_path_text(entry.at)
    key = entry.key
    lookup = entry.expression is None
    if lookup:
        child_path = fieldpath.child(path, entry.text, key)
        if isinstance(value, dict) or value is None:
            projected = value.get(key, _NOTHING) if isinstance(value, dict) else _NOTHING
            if projected is _NOTHING:
                trace.add(entry.text, "fail", detail=_NOT_FOUND, policy_path=where, resource_path=_in_resource(path))
                return
        else:
            trace.add(entry.text, "error", detail="projection not recognized: the value is not a map",
                      value=value, policy_path=where)
            raise _Stopped
    else:
        child_path = fieldpath.child(path, entry.text)
        try:
            projected = entry.evaluate(value, scope)
        except Exception as failure:  # noqa: BLE001 - the evaluation's failure is the step's outcome
            trace.add(entry.text, "error", detail=str(failure), policy_path=where)
            _clauses(entry, value, scope, trace)
            raise _Stopped from None
    child_scope = {**scope, entry.binding: projected} if entry.binding else scope
    if isinstance(entry.child, SliceNode) and not entry.foreach:
        problem = _slice_problem(entry.child, projected)
        if problem is not None:  # the list itself is wrong: one step says so
            outcome, detail = problem
            trace.add(entry.text, outcome, value=projected, detail=detail, policy_path=where,
                      resource_path=_in_resource(child_path))
            if outcome == "error":
                raise _Stopped
            return
    if entry.foreach:
        _foreach(entry, projected, child_scope, child_path, lookup, trace, where)
        return
    errors, error = fails(entry.child, projected, child_scope, child_path)
    if not errors and error is None:
        return
    if _is_terminal(entry.child):
        _terminal(entry.text, entry.child, projected, child_scope, child_path, trace, where)
        _clauses(entry, value, scope, trace)
        return
    trace.add(entry.text, value=projected, policy_path=where, resource_path=_in_resource(child_path))
    _clauses(entry, value, scope, trace)
    with trace.nested():
        _node(entry.child, projected, child_scope, child_path, trace)


def _clauses(entry: Any, value: Any, scope: dict, trace: Trace) -> None:
    """A key's expression split into its clauses, when its language can (CEL's ``&&``/``||``)."""
    explain = getattr(entry.expression, "explain", None)
    if explain is not None:
        with trace.nested():
            explain(value, scope, trace)


def _foreach(entry: Any, projected: Any, scope: dict, path: Any, in_payload: bool, trace: Trace,
             where: str) -> None:
    if isinstance(projected, list):
        items: Any = enumerate(projected)
    elif isinstance(projected, dict):
        items = projected.items()
    else:
        trace.add(entry.text, "error", value=projected, detail="expected a slice or a map", policy_path=where)
        raise _Stopped
    failing = []
    for key, item in items:
        item_scope = {**scope, entry.foreach_name: key} if entry.foreach_name else scope
        item_path = fieldpath.index(path, key, key if in_payload else fieldpath.NOT_IN_PAYLOAD)
        errors, error = fails(entry.child, item, item_scope, item_path)
        if errors or error is not None:
            failing.append((key, item, item_scope, item_path))
            if error is not None:
                break  # the engine stops at the first error
    if not failing:
        return
    trace.add(entry.text, value=projected, policy_path=where, resource_path=_in_resource(path))
    with trace.nested():
        for key, item, item_scope, item_path in failing:
            if trace.full:
                return
            if _is_terminal(entry.child):
                _terminal(f"[{key}]", entry.child, item, item_scope, item_path, trace, where)
                continue
            trace.add(f"[{key}]", value=item, resource_path=_in_resource(item_path))
            with trace.nested():
                _node(entry.child, item, item_scope, item_path, trace)


def _slice_problem(node: SliceNode, value: Any) -> tuple[str, str] | None:
    """(outcome, why) when `value` cannot be checked item by item against a slice node, as `SliceNode.check`
    decides; None when it can."""
    if value is None:
        return "fail", "value is null"
    if not isinstance(value, list):
        return "error", "expected a slice"
    if len(value) != len(node.items):
        return "fail", f"lengths of slices don't match: the tree has {len(node.items)} items, the value {len(value)}"
    return None


def _slice(node: SliceNode, value: Any, scope: dict, path: Any, trace: Trace) -> None:
    problem = _slice_problem(node, value)
    if problem is not None:
        outcome, detail = problem
        trace.add("[...]", outcome, value=value, detail=detail, resource_path=_in_resource(path))
        if outcome == "error":
            raise _Stopped
        return
    for position, (item_node, item) in enumerate(zip(node.items, value, strict=True)):
        item_path = fieldpath.index(path, position, position)
        errors, error = fails(item_node, item, scope, item_path)
        if not errors and error is None:
            continue
        if _is_terminal(item_node):
            _terminal(f"[{position}]", item_node, item, scope, item_path, trace, "")
        else:
            trace.add(f"[{position}]", value=item, resource_path=_in_resource(item_path))
            with trace.nested():
                _node(item_node, item, scope, item_path, trace)
        if error is not None:
            raise _Stopped


def _is_terminal(node: Node) -> bool:
    return isinstance(node, (ConstantLeaf, ExpressionLeaf, EmptyMapNode))


def _terminal(what: str, node: Node, value: Any, scope: dict, path: Any, trace: Trace, where: str) -> None:
    """A leaf (or ``{}``) that failed or errored: its value, what it expected, and the outcome."""
    errors, error = fails(node, value, scope, path)
    at = _in_resource(path)
    if isinstance(node, EmptyMapNode):
        trace.add(what, "fail", value=value, detail="must not be null", policy_path=where, resource_path=at)
        return
    if error is not None:
        expected = _expected(node, value, scope) if isinstance(node, ExpressionLeaf) else getattr(
            node, "expected", ABSENT)
        trace.add(what, "error", value=value, expected=expected, detail=error.detail, policy_path=where,
                  resource_path=at)
        raise _Stopped
    if errors:
        found = errors[0]
        expected = found.expected if found.has_expected else None
        detail = f"expected is ({node.expression.text})" if isinstance(node, ExpressionLeaf) and hasattr(
            node.expression, "text") else ""
        trace.add(what, "fail", value=value, expected=expected, detail=detail, policy_path=where, resource_path=at)


def _expected(node: ExpressionLeaf, value: Any, scope: dict) -> Any:
    try:
        return node.evaluate(value, scope)
    except Exception:  # noqa: BLE001 - the step's detail says why
        return ABSENT
