"""Which top-level fields of an object an expression can read: what a payload reader may leave unparsed.

``--pre-process 'planned_values.root_module.resources'`` reads one member of a plan that may be 35 MB,
two thirds of it ``resource_changes`` and ``prior_state``; knowing that before the file is parsed lets
the reader build only ``planned_values`` (`assertree.documents.members`).

The analysis is conservative: `fields_read` gives a set only when the expression's value on any object
equals its value on that object cut down to those fields, and None ("it may read anything") for whatever
it does not follow: the root reference ``$``, variables, ``@`` and ``&expression`` on the value itself.
Each node type either reads the current value only through its first child (the others work on what that
child gives: ``a.b``, ``a | b``, ``a[*].b``, ``a[?c].b``, ``a[0]``) or through all of its children
(comparisons, ``&&``, arithmetic, multi-selects, function arguments, ``let`` bindings and body); a
``field`` reads its name, a literal nothing.
"""

from __future__ import annotations

from assertree.jp import Expression
from assertree.jp.ast import Node

__all__ = ["fields_read"]

# the first child is evaluated on the current value; the others on what it gives
_THROUGH_FIRST = frozenset({"subexpression", "pipe", "projection", "value_projection", "filter_projection",
                            "index_expression"})
# every child is evaluated on the current value
_THROUGH_ALL = frozenset({"comparator", "and_expression", "or_expression", "not_expression", "arithmetic",
                          "arithmetic_unary", "multi_select_list", "multi_select_dict", "key_val_pair",
                          "function_expression", "flatten", "let_expression", "binding"})


def fields_read(expression: Expression) -> frozenset[str] | None:
    """The names of the top-level fields `expression` can read from an object, or None when it may read
    more than named fields (see the module docstring)."""
    if expression.uses_root or expression.variables:
        return None
    found: set[str] = set()
    pending: list[Node] = [expression.tree]
    while pending:
        node = pending.pop()
        kind = node.type
        if kind == "field":
            found.add(node.value)
        elif kind in _THROUGH_FIRST:
            pending.append(node.children[0])
        elif kind in _THROUGH_ALL:
            pending.extend(node.children)
        elif kind != "literal":  # identity, current, expref, variable_ref, root, slice, index: anything
            return None
    return frozenset(found)
