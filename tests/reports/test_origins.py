"""Resources placed in their payload in one walk (`assertree.results.find_origins`, `fill_origins`): the same
paths as a breadth-first search from the root for each resource, which a report did once per finding."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from assertree.results import Resource, fill_origins, find_origins


def one_search(root: Any, target: Any) -> tuple | None:
    """The oracle: a breadth-first search from `root` for the very object `target`, on its own."""
    if target is root:
        return ()
    if not isinstance(target, (dict, list)):
        return None
    level: list[tuple[Any, tuple]] = [(root, ())]
    while level:
        below = []
        for value, path in level:
            for key, child in (value.items() if isinstance(value, dict) else enumerate(value)
                               if isinstance(value, list) else ()):
                if child is target:
                    return (*path, key)
                if isinstance(child, (dict, list)):
                    below.append((child, (*path, key)))
        level = below
    return None


def containers(value: Any) -> list[Any]:
    found, pending = [], [value]
    while pending:
        item = pending.pop()
        if isinstance(item, (dict, list)):
            found.append(item)
            pending.extend(item.values() if isinstance(item, dict) else item)
    return found


_leaves = st.none() | st.integers(0, 3) | st.sampled_from(["a", "b"]) | st.builds(dict) | st.builds(list)
_trees = st.recursive(_leaves, lambda inner: st.lists(inner, max_size=4)
                      | st.dictionaries(st.sampled_from("abcd"), inner, max_size=4), max_leaves=25)


@st.composite
def trees_and_targets(draw: Any) -> tuple[Any, list[Any]]:
    root = draw(_trees)
    inside = containers(root)
    if inside and draw(st.booleans()):  # the same object in two places: the first one met is its place
        shared = draw(st.sampled_from(inside))
        below = {id(item) for item in containers(shared)}  # a holder inside `shared` would make a cycle
        holders = [item for item in inside if isinstance(item, list) and id(item) not in below]
        if holders:
            draw(st.sampled_from(holders)).append(shared)
    targets = draw(st.lists(st.sampled_from(inside), max_size=8)) if inside else []
    targets += draw(st.lists(_leaves, max_size=2))  # objects not in the tree, and scalars
    return root, draw(st.permutations([*targets, root] if draw(st.booleans()) else targets))


@settings(max_examples=300, deadline=None)
@given(trees_and_targets())
def test_one_walk_places_each_target_where_its_own_search_does(case: tuple[Any, list[Any]]) -> None:
    root, targets = case
    assert find_origins(root, targets) == [one_search(root, target) for target in targets]


def test_fill_origins_places_each_resource_of_each_root_once() -> None:
    first = {"items": [{"n": 1}, {"n": 2}], "other": {"deep": [{"n": 3}]}}
    second = [{"n": 4}]
    resources = [Resource(first["other"]["deep"][0], "a.json", root=first), Resource(second[0], "b.json", root=second),
                 Resource(first["items"][1], "a.json", root=first), Resource({"n": 5}, "a.json", root=first),
                 Resource({"n": 6}, "c.json", root=None), Resource(first["items"][0], "a.json", root=first,
                                                                    origin=("kept",))]
    fill_origins(resources)
    assert [resource.origin for resource in resources] == [("other", "deep", 0), (0,), ("items", 1), None, None,
                                                           ("kept",)]
    assert [resource.origin_path() for resource in resources[:3]] == [("other", "deep", 0), (0,), ("items", 1)]


def test_a_report_searches_each_root_once_even_for_resources_not_in_it(monkeypatch) -> None:
    """Resources an expression built anew (``--pre-process 'items[*].{name: name}'``) are in no place of their
    file: one walk says so for all of them, and no finding walks the root again on its own."""
    from assertree import results
    from assertree.inputs.payload import Payload
    from assertree.report.locate import Locator

    root = {"items": [{"name": "a"}, {"name": "b"}]}
    payload = Payload("plan.json", root, data=b'{"items": [{"name": "a"}, {"name": "b"}]}')
    built = [Resource({"name": name}, "plan.json", index, root, None, None, payload)
             for index, name in enumerate("ab")]
    walks = []
    find = results.find_origins
    monkeypatch.setattr(results, "find_origins", lambda *args: walks.append(args) or find(*args))
    places = Locator().fields([(resource, None, ()) for resource in [*built, built[0]]])
    assert len(walks) == 1
    assert [(place.line, place.column) for place in places] == [(1, 1)] * 3  # the file's first line
