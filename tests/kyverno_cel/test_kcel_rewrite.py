"""Source rewrites: typed constructors become maps, list indexOf gets a function of its own."""

from __future__ import annotations

import pytest

from assertree.errors import PolicyError
from assertree.languages.cel.rewrite import rewrite
from assertree.languages.kyverno.cel_policies.compile import compile_expression


def test_constructors_become_maps_and_strings_are_untouched() -> None:
    text = "Object{spec: Object.spec{containers: [Object.spec.containers{name: 'a{b: c}', image: \"x\"}]}}"
    assert rewrite(text) == ('dyn({"spec": dyn({"containers": [dyn({"name": \'a{b: c}\', "image": "x"})]})})')


def test_a_constructor_against_null_type_checks_and_evaluates_to_json() -> None:
    program = compile_expression("object.x ? JSONPatch{op: 'add', path: '/a', value: {'k': [1, 2]}} : null", ())
    assert program.evaluate({"object": {"x": True}}) == {"op": "add", "path": "/a", "value": {"k": [1, 2]}}
    assert program.evaluate({"object": {"x": False}}) is None


def test_plain_expressions_are_unchanged() -> None:
    text = "object.spec.containers.all(c, c.name.startsWith('Object{'))"
    assert rewrite(text) == text


@pytest.mark.parametrize(("text", "expected"), [
    ("[{'a': 1}, {'a': 2}].indexOf({'a': 2})", 1),
    ("[1, 2, 1].lastIndexOf(1)", 2),
    ("[1, 2].indexOf(3)", -1),
    ("'abcabc'.indexOf('c')", 2),
    ("'abcabc'.lastIndexOf('c')", 5),
    ("'abcabc'.indexOf('c', 3)", 5),
    ("'x.indexOf(y)'", "x.indexOf(y)"),
])
def test_index_of_serves_strings_and_lists(text: str, expected: object) -> None:
    assert compile_expression(text, ()).evaluate({}) == expected


def test_a_character_outside_ascii_is_copied_for_the_compiler_to_reject() -> None:
    text = "Object{status: Object.status{}}ß"
    assert rewrite(text) == 'dyn({"status": dyn({})})ß'
    with pytest.raises(PolicyError, match="invalid CEL expression"):
        compile_expression(text, ())
