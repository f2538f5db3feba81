"""The compiled trees (`assertree.tree.fast`) check exactly as the interpreter (`Node.check`) does.

Same `FieldError`s in the same order (kind, path, detail, value, expected) and the same `TreeError`, on:

* every assertion and match tree of every kyverno-json policy in the conformance data (the vectors of
  ``semantics.json``, ``units.json``, ``docs-examples.json``, the catalog, the scan tests) and of the
  samples, against every payload in the same file and random values shaped like the tree;
* random trees (plain keys, ``~`` foreach with and without a name, ``->`` bindings, ``(...)``
  expressions, escaped keys, nested slices, literal leaves of every JSON type, expression leaves) and
  random values resembling them.

Examples are derandomized (tests/conftest.py); ``HYPOTHESIS_PROFILE=explore`` draws new ones.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import CONFORMANCE, REPO
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assertree.errors import PolicyError
from assertree.languages.kyverno_json.expressions import Compilers
from assertree.languages.kyverno_json.language import compile_document
from assertree.tree.fast import fast_check
from assertree.tree.nodes import Node, TreeError, compile_tree

TREES = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def outcome(check, value: Any, scope: dict) -> tuple:
    """What a check does: the errors it appends, or the error it raises (with what it appended before)."""
    errors: list = []
    try:
        check(value, scope, None, errors)
    except TreeError as error:
        return ("raised", error.text(), error.kind, error.path, tuple(map(repr, errors)))
    return ("errors", tuple(map(repr, errors)), tuple((e.type, e.path, e.reason) for e in errors))


def same(node: Node, value: Any, scope: dict) -> None:
    assert outcome(fast_check(node), value, scope) == outcome(node.check, value, scope), (value, scope)


# -- the conformance data -------------------------------------------------------------------------

def _documents(value: Any) -> list[Any]:
    """Every dict and list inside a parsed file (policies and payloads are somewhere in it)."""
    found, pending = [], [value]
    while pending:
        item = pending.pop()
        if isinstance(item, dict):
            found.append(item)
            pending.extend(item.values())
        elif isinstance(item, list):
            found.append(item)
            pending.extend(item)
    return found


def _read(path: Path) -> list[Any]:
    try:
        text = path.read_text(encoding="utf-8")
        return [json.loads(text)] if path.suffix == ".json" else list(yaml.safe_load_all(text))
    except (ValueError, yaml.YAMLError, UnicodeDecodeError):
        return []


def _is_policy(value: Any) -> bool:
    return isinstance(value, dict) and str(value.get("apiVersion", "")).startswith("json.kyverno.io/") \
        and value.get("kind") == "ValidatingPolicy"


def _trees(compiled) -> list[Node]:
    trees = []
    for rule in compiled.rules:
        trees += [assertion.tree for assertion in rule.any + rule.all]
        for block in (rule.match, rule.exclude):
            if block is not None:
                trees += block.any + block.all
    return trees


def conformance_cases() -> list[tuple[str, list[Node], list[Any]]]:
    """(file, the trees of its policies, the values in it) for each file of kyverno-json policies."""
    cases = []
    roots = [CONFORMANCE / "kyverno-json", REPO / "samples", REPO / "bench"]
    for path in sorted(p for root in roots for p in root.rglob("*") if p.suffix in (".json", ".yaml", ".yml")):
        if path.stat().st_size > 2_000_000:
            continue
        values = [item for document in _read(path) for item in _documents(document)]
        policies = [item for item in values if _is_policy(item)]
        if not policies and "policies" not in path.parts:
            continue
        trees = []
        for policy in policies:
            try:
                trees += _trees(compile_document(policy))
            except PolicyError:
                continue
        if trees:
            cases.append((str(path.relative_to(REPO)), trees, values[:200]))
    return cases


CASES = conformance_cases()


def test_the_conformance_data_has_trees():
    assert len(CASES) >= 50
    assert sum(len(trees) for _, trees, _ in CASES) >= 200


@pytest.mark.parametrize(("name", "trees", "values"), CASES, ids=[case[0] for case in CASES])
def test_compiled_trees_of_the_conformance_data(name, trees, values):
    scope = {"payload": None, "foo": "bar", "limit": 3}
    for tree in trees:
        for value in [*values, None, 1, "x", [], {}]:
            same(tree, value, scope)


# -- random trees ---------------------------------------------------------------------------------

KEYS = ["a", "b", "kind", "spec", "items"]
scalars = st.one_of(st.sampled_from(["x", "", "Pod", "1", "true"]), st.integers(-2, 2),
                    st.sampled_from([0.0, 1.0, 2.5, float("nan")]), st.booleans(), st.none())
EXPRESSIONS = ["(length(@))", "(@)", "(a)", "(to_string(@))", "($x)", "(`1`)", "(a.b)", "(keys(@))", "($y)",
               "(`[1, 2]`)", "(@ == `1`)"]
key_texts = st.one_of(
    st.sampled_from(KEYS),
    st.sampled_from(KEYS).map(lambda key: f"~.{key}"),
    st.sampled_from(KEYS).map(lambda key: f"~y.{key}"),
    st.sampled_from(KEYS).map(lambda key: f"{key}->x"),
    st.sampled_from(KEYS).map(lambda key: f"~.({key})"),
    st.sampled_from(EXPRESSIONS),
    st.sampled_from(["\\(a)\\", "\\~.a\\"]),
)
leaves = st.one_of(scalars, st.sampled_from(EXPRESSIONS), st.just({}))
trees = st.recursive(
    leaves,
    lambda inner: st.one_of(st.dictionaries(key_texts, inner, min_size=1, max_size=3),
                            st.lists(inner, min_size=0, max_size=2)),
    max_leaves=8,
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(KEYS), inner, max_size=4)),
    max_leaves=10,
)


def _resembling(draw: st.DrawFn, tree: Any) -> Any:
    """A value shaped like `tree` (its plain keys kept, dropped or changed; leaves kept or varied)."""
    choice = draw(st.integers(0, 9))
    if choice >= 8:
        return draw(values)
    if isinstance(tree, dict):
        value: dict[str, Any] = {}
        for key, child in tree.items():
            plain = key.split("->")[0].removeprefix("~y.").removeprefix("~.")
            if plain in KEYS and draw(st.integers(0, 4)):
                inner = _resembling(draw, child)
                value[plain] = [inner, _resembling(draw, child)] if key.startswith("~") and choice % 2 else inner
        return value
    if isinstance(tree, list):
        items = [_resembling(draw, item) for item in tree]
        return items if choice else [*items, None]
    return tree if choice < 6 else draw(scalars)


@st.composite
def trees_and_values(draw: st.DrawFn) -> tuple[Node, Any, dict]:
    tree = draw(trees)
    try:
        node = compile_tree(tree, Compilers())
    except PolicyError:
        node = compile_tree({"a": 1}, Compilers())
    scope = draw(st.sampled_from([{}, {"x": 1}, {"x": "Pod", "y": [1]}]))
    return node, _resembling(draw, tree), scope


@TREES
@given(case=trees_and_values())
def test_compiled_trees_of_random_trees(case):
    node, value, scope = case
    same(node, value, scope)


def test_a_plain_map_with_literal_leaves_is_folded_into_one_closure():
    """The short cut the module exists for: no call per literal leaf when the value matches."""
    node = compile_tree({"kind": "Pod", "spec": {"replicas": 3, "name": "x"}}, Compilers())
    check = fast_check(node)
    assert check is not node.check
    errors: list = []
    check({"kind": "Pod", "spec": {"replicas": 3, "name": "x"}}, {}, None, errors)
    assert errors == []
    check({"kind": "Pod", "spec": {"replicas": 3.0, "name": "y"}}, {}, None, errors)
    assert [error.field for error in errors] == ["spec.name"]
