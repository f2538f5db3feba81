"""`assertree.jp.fields.fields_read`: the top-level fields an expression can read.

Its promise (what lets a payload reader leave the other members unparsed): whenever it names a set of
fields, the expression gives the same value, or the same error, on an object cut down to those fields."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from assertree import jp
from assertree.jp.fields import fields_read

PLAN = ("planned_values.root_module.[resources, child_modules[].resources[], "
        "child_modules[].child_modules[].resources[]][]")


@pytest.mark.parametrize(("text", "fields"), [
    (PLAN, {"planned_values"}),
    ("a", {"a"}),
    ("a.b | c", {"a"}),
    ("a[*].b.c", {"a"}),
    ("a[?b == c].d", {"a"}),
    ("a[0][1].b", {"a"}),
    ("a[1:2]", {"a"}),
    ("a[]", {"a"}),
    ("[a, b.c]", {"a", "b"}),
    ("{x: a, y: b.c}", {"a", "b"}),
    ("a == b", {"a", "b"}),
    ("a || !b && c", {"a", "b", "c"}),
    ("a + b", {"a", "b"}),
    ("length(a)", {"a"}),
    ("let $x = a in b", {"a", "b"}),
    ('"a b".c', {"a b"}),
    ("`1`", set()),
])
def test_fields_named(text: str, fields: set[str]) -> None:
    assert fields_read(jp.compile(text)) == frozenset(fields)


@pytest.mark.parametrize("text", [
    "@", "@.a", "values(@)", "$.a", "$x", "let $x = a in $x.b", "*.a", "[*]", "[0]", "[?a]",
    "sort_by(a, &b)", "a.b || @",
])
def test_anything_else_may_read_the_whole_value(text: str) -> None:
    assert fields_read(jp.compile(text)) is None


_NAMES = ("a", "b", "c")
_scalars = st.none() | st.booleans() | st.integers(-3, 3) | st.sampled_from(["x", "y", "a"])
_values = st.recursive(_scalars, lambda inner: st.lists(inner, max_size=3)
                       | st.dictionaries(st.sampled_from(_NAMES), inner, max_size=3), max_leaves=12)
_objects = st.dictionaries(st.sampled_from((*_NAMES, "d")), _values, max_size=4)


def _combined(parts: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    two = st.tuples(parts, parts)
    operators = st.sampled_from(["==", "!=", "<", "||", "&&", "|", "+"])
    return st.one_of(
        st.tuples(parts, operators, parts).map(lambda p: f"({p[0]}) {p[1]} ({p[2]})"),
        two.map(lambda p: f"[({p[0]}), ({p[1]})]"),
        two.map(lambda p: f"{{k: ({p[0]}), m: ({p[1]})}}"),
        two.map(lambda p: f"merge(({p[0]}), ({p[1]}))"),
        two.map(lambda p: f"let $v = ({p[0]}) in ({p[1]})"),
        st.builds("({}).{}".format, parts, st.sampled_from(_NAMES)),
        st.builds("({})[*].{}".format, parts, st.sampled_from(_NAMES)),
        two.map(lambda p: f"({p[0]})[?({p[1]}) == `1`]"),
        parts.map(lambda p: f"({p})[0]"),
        parts.map(lambda p: f"({p})[]"),
        parts.map(lambda p: f"!({p})"),
        parts.map(lambda p: f"length(({p}))"),
        parts.map(lambda p: f"sort_by(({p}), &a)"),
    )


_expressions = st.recursive(st.sampled_from([*_NAMES, "d", "@", "`1`", "'x'", "*", "$"]), _combined, max_leaves=6)


def _outcome(expression: jp.Expression, value: Any) -> tuple[str, Any]:
    try:
        return "value", expression.search(value)
    except jp.JMESPathError as error:
        return "error", type(error)


@settings(max_examples=400, deadline=None)
@given(_expressions, _objects)
@example("(a)[*].b", {"a": [{"b": 1}], "b": 2})
@example("[(a), (@)]", {"a": 1, "b": 2})
# each node that reads the current value through every child, where only its first child's fields would not do
@example("(a) == (b)", {"b": 1})
@example("(a) && (b)", {"a": 1, "b": 2})
@example("(a) + (b)", {"a": 1, "b": 2})
@example("[(a), (b)]", {"b": 1})
@example("{k: (a), m: (b)}", {"b": 1})
@example("merge((a), (b))", {"a": {}, "b": {"x": 1}})
@example("let $v = (a) in (b)", {"b": 1})
def test_an_object_cut_to_the_fields_read_gives_the_same_outcome(text: str, value: dict) -> None:
    expression = jp.compile(text)
    fields = fields_read(expression)
    if fields is None:
        return
    cut = {name: member for name, member in value.items() if name in fields}
    assert _outcome(expression, cut) == _outcome(expression, value)


@settings(max_examples=200, deadline=None)
@given(_expressions)
def test_the_fields_read_are_named_in_the_expression(text: str) -> None:
    fields = fields_read(jp.compile(text))
    assert fields is None or all(name in text for name in fields)
