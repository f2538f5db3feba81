"""lookup, items, object_from_lists and label_match beyond the shared vectors."""

from __future__ import annotations

import pytest
from support import fails_with, run

from assertree import jp


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("lookup(`[1,2,3]`, `2`)", 3),
        ("lookup(`[1,2,3]`, `2.0`)", 3),
        ("lookup(`[1,2,3]`, `-3`)", None),  # no negative indexing, unlike Python and `at`
        ("lookup(`[1,2,3]`, `3`)", None),
        ("lookup(`[1,2,3]`, `1e18`)", None),  # a whole number in int64 range, just absent
        ("lookup(`{\"a.b\": 1}`, 'a.b')", 1),  # the key is one name, not a path
        ('lookup(`{"a": {"b": 1}}`, \'a\').b', 1),
    ],
)
def test_lookup(expression, expected):
    assert run(expression) == expected


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("lookup(`[1]`, `2.5`)", "JMESPath function 'lookup': argument #2: expected an integer number but got: 2.5"),
        (
            "lookup(`[1]`, `1e300`)",
            "JMESPath function 'lookup': argument #2: number is outside the range of integer numbers: 1e+300",
        ),
        (
            "lookup(`[1]`, `1234567.5`)",  # Go's %g switches to exponent form from 1e6
            "JMESPath function 'lookup': argument #2: expected an integer number but got: 1.2345675e+06",
        ),
        ("lookup(`[1]`, '1')", "JMESPath function 'lookup': argument #2 is not of type Number"),
        ('lookup(`{"1": 1}`, `1`)', "JMESPath function 'lookup': argument #2 is not of type String"),
    ],
)
def test_lookup_errors(expression, message):
    fails_with(expression, message)


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        # byte order of UTF-8, as Go's sort.Strings: upper case, then lower case, then non-ASCII
        ('items(`{"é":1,"z":2,"Z":3}`, \'k\', \'v\')[].k', ["Z", "z", "é"]),
        ("items(`[[1], {\"a\": null}]`, 'i', 'v')", [{"i": 0, "v": [1]}, {"i": 1, "v": {"a": None}}]),
        # an ordinary array: sort_by, type and functions taking arrays work on it
        ("sort_by(items(`{\"b\":1,\"a\":2}`, 'k', 'v'), &v)[0].k", "b"),
        ("type(items(`{}`, 'k', 'v'))", "array"),
        ("items(`{\"a\":1}`, '', '')", [{"": 1}]),
    ],
)
def test_items(expression, expected):
    assert run(expression) == expected


@pytest.mark.parametrize("expression", ["lookup(`[1]`, `true`)", "lookup(`{}`, `null`)", "lookup('ab', `0`)"])
def test_lookup_argument_types_are_checked_first(expression):
    with pytest.raises(jp.JMESPathError):
        run(expression)


def test_items_needs_three_arguments_in_kyverno_dialect():
    with pytest.raises(jp.JMESPathError):
        run('items(`{"a": 1}`)')


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        (
            "object_from_lists(`[0.1, -0.0, 16777217, 1e21]`, `[1,2,3,4]`)",
            {"0.1": 1, "-0": 2, "16777216": 3, "1000000000000000000000": 4},
        ),
        ("object_from_lists(`[false]`, `[]`)", {"false": None}),
        ('object_from_lists(`["a"]`, `[[1,2]]`)', {"a": [1, 2]}),
    ],
)
def test_object_from_lists(expression, expected):
    assert run(expression) == expected


@pytest.mark.parametrize("key", ["[1]", "{}", "null"])
def test_object_from_lists_rejects_non_scalar_keys(key):
    fails_with(
        f"object_from_lists(`[{key}]`, `[1]`)",
        "JMESPath function 'object_from_lists': argument #1 is not of type StringArray",
    )


@pytest.mark.parametrize(
    ("selector", "labels", "expected"),
    [
        ({"a": {"b": [1, 2]}}, {"a": {"b": [1, 2]}, "c": 1}, True),  # deep equality, no Go panic
        ({"a": {"b": [1, 2]}}, {"a": {"b": [2, 1]}}, False),
        ({"a": 1}, {"a": 1.0}, True),  # numbers by value
        ({"a": 1}, {"a": True}, False),  # booleans are not numbers
        ({"a": None}, {"b": None}, False),  # a null selector value still needs the key
    ],
)
def test_label_match(selector, labels, expected):
    assert run("label_match(selector, labels)", {"selector": selector, "labels": labels}) is expected


def test_label_match_wants_objects():
    with pytest.raises(jp.JMESPathError):
        run("label_match(`[]`, `{}`)")
