"""Assertion trees compiled to closures: the fast path beside the interpreter in `assertree.tree.nodes`.

The interpreter walks node objects: per node a method call, per map key a
handful of attribute reads, and a leaf compared through a second call. Here
each node becomes one closure that holds what it needs in its cell variables:
a map of plain keys looks each key up and compares a literal leaf inline, a
slice checks its items in one loop, and only what is not the common case
(a value of another type, a null, a missing key, an error) goes to the node's
own method, which words it.

Invariant (must never change a result): for every tree, value and scope,
``fast_check(node)(value, scope, path, errors)`` appends the same `FieldError`s,
in the same order, with the same paths, and raises the same `TreeError` as
``node.check(value, scope, path, errors)``. `tests/test_fast_trees.py` holds the
two to each other on every assertion tree of the conformance data and on random
trees and values, and fails when a short cut here is broken.

The interpreter stays the reference: a caller that needs to see each step
(a trace of how a verdict was reached) runs ``node.check``; `fast_check` is what
a compiled rule runs when nothing asks for one (`assertree.languages.kyverno_json.compile`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from assertree.tree import fieldpath
from assertree.tree.errors import REQUIRED, FieldError
from assertree.tree.nodes import _MISSING, INTERNAL, ConstantLeaf, MapNode, Node, SliceNode, StaticMapNode, TreeError

Check = Callable[[Any, dict, Any, list], None]
"""``check(value, scope, path, errors)``, as `Node.check`."""

_NOT_FOUND = "field not found in the input object"


def fast_check(node: Node) -> Check:
    """The closure that checks as `node.check` does (see the module docstring)."""
    kind = type(node)
    if kind is ConstantLeaf:
        return _constant(node)  # type: ignore[arg-type]
    if kind is MapNode or kind is StaticMapNode:
        return _map(node)  # type: ignore[arg-type]
    if kind is SliceNode:
        return _slice(node)  # type: ignore[arg-type]
    return node.check  # expression leaves, {}: one call already, nothing to fold


def _constant(node: ConstantLeaf) -> Check:
    expected = node.expected
    expected_type = type(expected)
    general = node.check
    if expected_type is dict or expected_type is list:
        return general

    def check(value: Any, scope: dict, path: Any, errors: list) -> None:
        if type(value) is expected_type and value == expected:
            return
        general(value, scope, path, errors)

    return check


def _map(node: MapNode) -> Check:
    """A map node: plain keys inline (a literal leaf compared in place), other keys as the interpreter
    runs them, with their children compiled too."""
    general = node.check
    plain = []  # (key, text, literal leaf's expected value and type or None, child check)
    for entry in node.entries:
        if entry.key is _MISSING or entry.binding or entry.foreach:
            return _general_map(node)
        leaf = entry.child if type(entry.child) is ConstantLeaf else None
        expected = leaf.expected if leaf is not None else None
        literal = leaf is not None and type(expected) is not dict and type(expected) is not list
        plain.append((entry.key, entry.text, literal, expected, type(expected), fast_check(entry.child)))
    entries = tuple(plain)

    def check(value: Any, scope: dict, path: Any, errors: list) -> None:
        if type(value) is not dict:
            general(value, scope, path, errors)  # null, not a map, a dict subclass: the interpreter words it
            return
        for key, text, literal, expected, expected_type, child in entries:
            projected = value.get(key, _MISSING)
            if projected is _MISSING:
                errors.append(FieldError(REQUIRED, (path, text, False, key), _NOT_FOUND))
            elif not (literal and type(projected) is expected_type and projected == expected):
                child(projected, scope, (path, text, False, key), errors)

    return check


def _general_map(node: MapNode) -> Check:
    """A map node with expression keys, bindings or foreach: `MapNode.check`'s loop, children compiled, what
    it reads of each entry held in a tuple."""
    general = node.check
    entries = tuple((entry, entry.key, entry.text, entry.evaluate, entry.binding, entry.foreach,
                     fast_check(entry.child)) for entry in node.entries)
    plain_keys = any(entry.key is not _MISSING for entry in node.entries)
    not_in_payload = fieldpath.NOT_IN_PAYLOAD

    def check(value: Any, scope: dict, path: Any, errors: list) -> None:
        if plain_keys and type(value) is not dict:
            general(value, scope, path, errors)  # a plain key of a value that is not a map: the interpreter's
            return
        for entry, key, text, evaluate, binding, foreach, child in entries:
            if key is not _MISSING:
                projected = value.get(key, _MISSING)
                if projected is _MISSING:
                    errors.append(FieldError(REQUIRED, (path, text, False, key), _NOT_FOUND))
                    continue
                child_path = (path, text, False, key)
            else:
                child_path = (path, text, False, not_in_payload)
                try:
                    projected = evaluate(value, scope)
                except TreeError:
                    raise
                except Exception as error:  # JMESPath (or CEL) evaluation error, as MapNode.check words it
                    raise TreeError(child_path, INTERNAL, str(error)) from error
            child_scope = {**scope, binding: projected} if binding else scope
            if foreach:
                _foreach(entry, child, projected, child_scope, child_path, key is not _MISSING, errors)
            else:
                child(projected, child_scope, child_path, errors)

    return check


def _foreach(entry: Any, child: Check, projected: Any, scope: dict, path: tuple, in_payload: bool,
             errors: list) -> None:
    if not isinstance(projected, (list, dict)):
        MapNode._foreach(entry, projected, scope, path, in_payload, errors)  # raises, worded there
        return
    name = entry.foreach_name
    items = enumerate(projected) if isinstance(projected, list) else projected.items()
    for step, item in items:
        item_scope = {**scope, name: step} if name else scope
        child(item, item_scope, (path, str(step), True, step if in_payload else fieldpath.NOT_IN_PAYLOAD), errors)


def _slice(node: SliceNode) -> Check:
    general = node.check
    items = tuple(fast_check(item) for item in node.items)
    size = len(items)

    def check(value: Any, scope: dict, path: Any, errors: list) -> None:
        if type(value) is not list or len(value) != size:
            general(value, scope, path, errors)  # null, not a list, another length: the interpreter words it
            return
        for position, (item_check, item) in enumerate(zip(items, value)):
            item_check(item, scope, (path, str(position), True, position), errors)

    return check
