"""The parsed form of an expression: a tree of `Node`s.

Node types follow jmespath.py's names (``field``, ``subexpression``,
``projection``, ``filter_projection``, ...) plus the dialect's own
(``arithmetic``, ``arithmetic_unary``, ``variable_ref``, ``let_expression``,
``root``), so anyone who has read a JMESPath implementation finds their way.
`assertree jp parse` prints this tree.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from assertree.records import ValueRecord


class Node(ValueRecord):
    """One node of a parsed expression: its type, its children in order, and its own value (a field's name,
    a literal's value), if any."""

    type: str
    children: tuple[Node, ...]
    value: Any

    __slots__ = ("children", "type", "value")

    def __init__(self, type: str, children: tuple[Node, ...] = (), value: Any = None) -> None:
        self.type = type
        self.children = children
        self.value = value

    def to_dict(self) -> dict[str, Any]:
        """The tree as plain data, for printing."""
        out: dict[str, Any] = {"type": self.type}
        if self.value is not None or self.type == "literal":
            out["value"] = self.value
        if self.children:
            out["children"] = [child.to_dict() for child in self.children]
        return out

    def walk(self) -> Iterator[Node]:
        """This node and every descendant, depth first."""
        stack = [self]
        while stack:
            node = stack.pop()
            yield node
            stack.extend(reversed(node.children))


def node(type_: str, *children: Node, value: Any = None) -> Node:
    return Node(type_, children, value)
