"""The three node kinds of an assertion tree, compiled once and evaluated many times.

* a **map** node projects the value through each key (a plain lookup, or an
  expression) and hands the result to the child node; ``~`` runs the child for
  each item of a list or map, ``->name`` binds the projected value;
* a **slice** node needs a list of the same length and checks item by item;
* a **scalar** node (leaf) compares the value with its expected value, which
  may itself be an expression.

Evaluation appends a `FieldError` to `errors` for each failing node and raises
`TreeError` for what kyverno-json treats as an internal error (the rule is then
ERROR). Paths are built as cheap tuples and only rendered for errors.

Bindings follow the documented scoping, not kyverno-json's accident: a
``->name`` or ``~name.`` binding is visible to the node's descendants only, never
to sibling keys (in Go it leaks to siblings visited later, in random order).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from assertree.errors import PolicyError
from assertree.jp.values import to_display
from assertree.tree import fieldpath
from assertree.tree.compare import NotComparable, matches
from assertree.tree.errors import INTERNAL, INVALID, REQUIRED, TYPE_INVALID, FieldError
from assertree.tree.keys import parse_key

Evaluate = Callable[[Any, dict], Any]


class Expression(Protocol):
    """A compiled ``(statement)``: JMESPath or CEL, or a stand-in for one that did not compile (lint)."""

    variables: Any  # the $names it reads (lint checks they are bound)

    def search(self, value: Any, scope: Any = None) -> Any: ...


class StatementCompiler(Protocol):
    """What compiling a tree needs from the policy: the language of each ``(statement)``, and where
    problems go (raised at the first, or recorded for lint)."""

    def compile(self, compiler: str, statement: str, at: tuple) -> Expression | None: ...

    def report(self, error: PolicyError) -> None: ...

_MISSING = object()


class TreeError(Exception):
    """An evaluation error at a node: the rule's result is ERROR with this text."""

    def __init__(self, path: Any, kind: str, detail: str, value: Any = None) -> None:
        self.path = path
        self.kind = kind
        self.detail = detail
        self.value = value
        super().__init__(self.text())

    def text(self) -> str:
        where = fieldpath.render(self.path)
        if self.kind == INTERNAL:
            body = f"Internal error: {self.detail}"
        else:
            body = f"Invalid value: {to_display(self.value)}: {self.detail}"
        return f"{where}: {body}" if where else body


class Node:
    __slots__ = ()

    def check(self, value: Any, scope: dict, path: Any, errors: list) -> None:
        """Append a FieldError per failing node to `errors`; raise TreeError on an evaluation error."""
        raise NotImplementedError

    def holds(self, value: Any, scope: dict) -> bool:
        """Whether the tree passes (what match/exclude need); raises TreeError like `check`."""
        errors: list = []
        self.check(value, scope, None, errors)
        return not errors


class _Entry:
    """One key of a map node, compiled."""

    __slots__ = ("at", "binding", "child", "evaluate", "expression", "foreach", "foreach_name", "key", "text")

    def __init__(self, text, key, expression, foreach, foreach_name, binding, child, at):
        self.text = text
        self.key = key  # plain lookup key, or _MISSING when `expression` projects
        self.expression = expression
        self.evaluate = expression.search if expression is not None else None
        self.foreach = foreach
        self.foreach_name = foreach_name
        self.binding = binding
        self.child = child
        self.at = at  # where the key is in the policy document (lint points there)


class MapNode(Node):
    __slots__ = ("entries",)

    def __init__(self, entries: list[_Entry]) -> None:
        self.entries = entries

    def check(self, value, scope, path, errors):
        for entry in self.entries:
            key = entry.key
            if key is not _MISSING:
                if type(value) is dict or isinstance(value, dict):
                    projected = value.get(key, _MISSING)
                    if projected is _MISSING:
                        errors.append(FieldError(REQUIRED, fieldpath.child(path, entry.text, key),
                                                 "field not found in the input object"))
                        continue
                elif value is None:
                    errors.append(FieldError(REQUIRED, fieldpath.child(path, entry.text, key),
                                             "field not found in the input object"))
                    continue
                else:
                    raise TreeError(fieldpath.child(path, entry.text), INTERNAL, "projection not recognized")
                child_path = fieldpath.child(path, entry.text, key)
            else:
                child_path = fieldpath.child(path, entry.text)
                try:
                    projected = entry.evaluate(value, scope)
                except TreeError:
                    raise
                except Exception as error:  # JMESPath (or CEL) evaluation error
                    raise TreeError(child_path, INTERNAL, str(error)) from error
            child_scope = scope
            if entry.binding:
                child_scope = {**scope, entry.binding: projected}
            if entry.foreach:
                self._foreach(entry, projected, child_scope, child_path, key is not _MISSING, errors)
            else:
                entry.child.check(projected, child_scope, child_path, errors)

    @staticmethod
    def _foreach(entry, projected, scope, path, in_payload, errors):
        name = entry.foreach_name
        child = entry.child
        if isinstance(projected, list):
            for position, item in enumerate(projected):
                item_scope = {**scope, name: position} if name else scope
                item_path = fieldpath.index(path, position, position if in_payload else fieldpath.NOT_IN_PAYLOAD)
                child.check(item, item_scope, item_path, errors)
        elif isinstance(projected, dict):
            for key, item in projected.items():
                item_scope = {**scope, name: key} if name else scope
                item_path = fieldpath.index(path, key, key if in_payload else fieldpath.NOT_IN_PAYLOAD)
                child.check(item, item_scope, item_path, errors)
        else:
            raise TreeError(path, TYPE_INVALID, "expected a slice or a map", projected)


class StaticMapNode(MapNode):
    """A map tree of plain keys and literal leaves, such as ``{mode: managed, type: aws_s3_bucket}``.

    Most match blocks look like this and run once per resource and rule, so
    `holds` answers them with dict lookups alone. Whenever the answer could
    involve more than equality of same-typed values (a missing parent, a null,
    numbers of different types, a kind mismatch that is an error), it defers to
    the general evaluation, so the outcome is always the same.
    """

    __slots__ = ("flat", "pairs")

    def __init__(self, entries: list[_Entry], pairs: list[tuple[tuple, Any]]) -> None:
        super().__init__(entries)
        self.pairs = pairs
        # top-level keys only (``{mode: managed, type: aws_s3_bucket}``): one lookup per pair, no inner loop
        self.flat = [(keys[0], expected, type(expected)) for keys, expected in pairs] if all(
            len(keys) == 1 for keys, _ in pairs) else None

    def holds(self, value, scope):
        if type(value) is not dict:
            return Node.holds(self, value, scope)
        flat = self.flat
        if flat is not None:
            result = True
            for key, expected, expected_type in flat:
                current = value.get(key, _MISSING)
                if current is _MISSING:
                    result = False
                elif type(current) is expected_type:
                    if current != expected:
                        result = False
                else:
                    return Node.holds(self, value, scope)
            return result
        result = True
        for keys, expected in self.pairs:
            current = value
            for key in keys:
                if type(current) is not dict:
                    return Node.holds(self, value, scope)
                current = current.get(key, _MISSING)
                if current is _MISSING:
                    break
            if current is _MISSING:
                result = False
            elif type(current) is type(expected):
                if current != expected:
                    result = False
            else:
                return Node.holds(self, value, scope)
        return result


def _static_pairs(tree: dict, entries: list[_Entry]) -> list[tuple[tuple, Any]] | None:
    """(key path, literal) for each leaf of a tree made only of plain keys and literal leaves. Built from
    the children's compiled nodes (a child map's pairs are its `StaticMapNode.pairs`), so compiling a tree
    stays linear in its size: walking every subtree again at each level took seconds at 1,000 levels."""
    pairs: list[tuple[tuple, Any]] = []
    for (key, child), entry in zip(tree.items(), entries, strict=True):
        if not isinstance(key, str) or _is_special(key):
            return None
        if isinstance(child, dict):
            node = entry.child
            if not isinstance(node, StaticMapNode):  # an empty map, or one with more than literals
                return None
            pairs.extend(((key, *keys), expected) for keys, expected in node.pairs)
        elif isinstance(child, list) or (isinstance(child, str) and _is_special(child)):
            return None
        else:
            pairs.append(((key,), child))
    return pairs


def _is_special(text: str) -> bool:
    """Whether a key or leaf means more than its literal text (foreach, binding, escape, expression)."""
    syntax = parse_key(text)
    return syntax.foreach or bool(syntax.binding) or bool(syntax.compiler) or syntax.escaped


class EmptyMapNode(Node):
    """``{}`` in a tree: the value must exist and not be null."""

    __slots__ = ()

    def check(self, value, scope, path, errors):
        if value is None:
            errors.append(FieldError(INVALID, path, "invalid value, must not be null", None))


class SliceNode(Node):
    __slots__ = ("items",)

    def __init__(self, items: list[Node]) -> None:
        self.items = items

    def check(self, value, scope, path, errors):
        if value is None:
            errors.append(FieldError(INVALID, path, "value is null", None))
        elif not isinstance(value, list):
            raise TreeError(path, TYPE_INVALID, "expected a slice", value)
        elif len(value) != len(self.items):
            errors.append(FieldError(INVALID, path, "lengths of slices don't match", value))
        else:
            for position, (node, item) in enumerate(zip(self.items, value)):
                node.check(item, scope, fieldpath.index(path, position, position), errors)


class ConstantLeaf(Node):
    __slots__ = ("expected",)

    def __init__(self, expected: Any) -> None:
        self.expected = expected

    def check(self, value, scope, path, errors):
        expected = self.expected
        if type(value) is type(expected) and type(value) is not dict and type(value) is not list:
            if value == expected:
                return
        else:
            try:
                if matches(expected, value):
                    return
            except NotComparable as error:
                raise TreeError(path, INTERNAL, str(error)) from None
        errors.append(FieldError(INVALID, path, "", value, expected))


class ExpressionLeaf(Node):
    __slots__ = ("at", "evaluate", "expression")

    def __init__(self, expression: Expression, at: tuple = ()) -> None:
        self.expression = expression
        self.evaluate = expression.search
        self.at = at

    def check(self, value, scope, path, errors):
        try:
            expected = self.evaluate(value, scope)
        except Exception as error:
            raise TreeError(path, INTERNAL, str(error)) from error
        try:
            if matches(expected, value):
                return
        except NotComparable as error:
            raise TreeError(path, INTERNAL, str(error)) from None
        errors.append(FieldError(INVALID, path, "", value, expected))


def compile_tree(tree: Any, compilers: StatementCompiler, at: tuple = ()) -> Node:
    """Compile a tree from a policy; `at` is its position in the policy document (for errors)."""
    if isinstance(tree, dict):
        if not tree:
            return EmptyMapNode()
        entries = [_compile_entry(key, child, compilers, at) for key, child in tree.items()]
        pairs = _static_pairs(tree, entries)
        return StaticMapNode(entries, pairs) if pairs else MapNode(entries)
    if isinstance(tree, list):
        return SliceNode([compile_tree(item, compilers, at + (i,)) for i, item in enumerate(tree)])
    if isinstance(tree, str):
        return compile_leaf(tree, compilers, at)
    return ConstantLeaf(tree)


def compile_leaf(text: str, compilers: StatementCompiler, at: tuple) -> Node:
    """A string leaf: a literal, or an expression when written ``(...)``."""
    constant, expression = compile_scalar(text, compilers, at)
    return ExpressionLeaf(expression, at) if expression is not None else ConstantLeaf(constant)


def compile_scalar(value: Any, compilers: StatementCompiler, at: tuple) -> tuple[Any, Expression | None]:
    """A scalar in a policy as ``(constant, None)`` or ``(None, expression)``.

    Strings follow the key syntax (``(...)`` is an expression, ``\\text\\`` a
    literal) but cannot carry ``~`` or ``->``. Used for leaves, context
    variables and feedback values (only at their top level: strings inside a
    map or list there are literals).
    """
    if not isinstance(value, str):
        return value, None
    syntax = parse_key(value)
    if syntax.foreach:
        compilers.report(PolicyError(f"invalid value {value!r}: foreach is not supported in scalar projections",
                                     path=at))
    elif syntax.binding:
        compilers.report(PolicyError(
            f"invalid value {value!r}: binding is not supported in scalar projections "
            f"(escape it to compare the text literally: '\\{value}\\')",
            path=at,
        ))
    elif syntax.compiler:
        expression = compilers.compile(syntax.compiler, syntax.statement, at)
        if expression is not None:
            return None, expression
    return syntax.statement, None


def _compile_entry(key: Any, child: Any, compilers: StatementCompiler, at: tuple) -> _Entry:
    here = at + (key,)
    node = compile_tree(child, compilers, here)
    if not isinstance(key, str):
        return _Entry(str(key), key, None, False, "", "", node, here)
    syntax = parse_key(key)
    expression = None
    if syntax.compiler:
        expression = compilers.compile(syntax.compiler, syntax.statement, here)
    lookup = _MISSING if expression is not None else syntax.statement
    return _Entry(key, lookup, expression, syntax.foreach, syntax.foreach_name, syntax.binding, node, here)
