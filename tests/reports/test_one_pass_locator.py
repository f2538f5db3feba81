"""Placing many findings in one walk (`locate_all`) gives exactly the positions of placing each on its own.

A report asks where every finding is at once (`assertree.report.locate.Locator.results`), and the JSON
locator answers with one walk of the text in its order, taking the fast path where the text spells a
container as orjson does (runs of members spelled by one orjson call, offsets by arithmetic, the end of
a member it entered found from inside). Its promise: it must never change a position. The property below
holds it to the plain walk over the text (no parsed value, so no fast path, one path at a time) on random
documents spelled in every way a file may spell them, container by container (orjson's compact bytes,
spaces, indentation, ``\\u003c`` escapes, non-ASCII text, a key repeated with another value before the one
that counts), with random paths: places the document has, keys and indexes it does not, steps of the
wrong type, and paths that go on below a scalar. The paths are asked in one batch, then again in two
batches in another order (what the locator keeps from the first must not change the second).
Examples are derandomized (tests/conftest.py); ``HYPOTHESIS_PROFILE=explore`` draws new ones.
"""

from __future__ import annotations

import json
import random
from typing import Any

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assertree.documents import reader
from assertree.documents.reader import load_documents
from tests.document_places import places

# Budgets of about two seconds; HYPOTHESIS_PROFILE=explore with more examples searches further.
DOCUMENTS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])

KEYS = ["a", "b", "values", "ü", "<k>", 'q"', "0"]
scalars = st.one_of(st.integers(-3, 100_000), st.sampled_from([0.5, -2.0, 1e20, 100000.0]), st.booleans(),
                    st.none(), st.sampled_from(["", "x", "<b> & ü", "a\\b", 'say "hi"', "line\nbreak", "]}"]))
values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=6), st.dictionaries(st.sampled_from(KEYS), inner, max_size=5)), max_leaves=25)
containers = st.one_of(st.lists(values, min_size=1, max_size=8),
                       st.dictionaries(st.sampled_from(KEYS), values, min_size=1, max_size=6))
STYLES = ["orjson", "orjson", "orjson", "spaced", "indented", "go-escaped", "not-ascii", "repeated-key"]


def spell(value: Any, chance: random.Random, depth: int = 0) -> str:
    """`value` as JSON text, each container in a style drawn from STYLES (so the fast path and the walk
    meet inside one document)."""
    style = chance.choice(STYLES)
    if not isinstance(value, (dict, list)) or not value:
        if style == "go-escaped" and isinstance(value, str):
            return json.dumps(value).replace("<", "\\u003c")
        text = orjson.dumps(value).decode()
        return json.dumps(value, ensure_ascii=False) if style == "not-ascii" else text
    comma, colon, before, after = ",", ":", "", ""
    if style == "spaced":
        comma, colon = ", ", ": "
    elif style == "indented":
        before, after = "\n" + "  " * (depth + 1), "\n" + "  " * depth
        comma = "," + before
    if isinstance(value, list):
        return "[" + before + comma.join(spell(item, chance, depth + 1) for item in value) + after + "]"
    members = [orjson.dumps(key).decode() + colon + spell(item, chance, depth + 1) for key, item in value.items()]
    if style == "repeated-key":  # the first occurrence is the one located; the last one is the value
        key = next(iter(value))
        members.insert(0, orjson.dumps(key).decode() + colon + '{"shadowed": [1, 2]}')
    return "{" + before + comma.join(members) + after + "}"


def paths_in(value: Any, chance: random.Random) -> list[tuple]:
    """Places `value` has, and places it does not have next to them."""
    known = list(places(value))
    paths = chance.sample(known, min(len(known), 30))
    for path in chance.sample(known, min(len(known), 10)):
        paths.append((*path, chance.choice(["a", "missing", "shadowed", 0, 1, 99, -1, True])))
        paths.append((*path, "shadowed", 1))
        paths.append((*path, "missing", 0))
    return paths


def positions(text: str, value: Any, paths: list[tuple]) -> list[tuple[int, int]]:
    """`locate_all` on the document as a report reads a payload: its bytes and its parsed value."""
    document = load_documents("payload.json", data=text.encode(), positions_only=True, value=value)[0]
    return document.locate_all(paths)


@DOCUMENTS
@given(containers, st.randoms(use_true_random=False))
def test_one_walk_places_every_path_where_the_plain_walk_does(value, chance):
    text = spell(value, chance)
    parsed = orjson.loads(text)
    paths = paths_in(parsed, chance)
    walked = load_documents("payload.json", text, positions_only=True)[0]  # no value: the walk, path by path
    expected = [walked.locate(path) for path in paths]
    assert positions(text, parsed, paths) == expected
    document = load_documents("payload.json", data=text.encode(), positions_only=True, value=parsed)[0]
    half = len(paths) // 2
    later, first = paths[:half], paths[half:]
    assert document.locate_all(first[::-1]) == expected[half:][::-1]
    assert document.locate_all(later) == expected[:half]
    assert [document.locate(path) for path in paths] == expected


def test_the_fast_path_is_taken_on_compact_json_and_places_a_plan_as_the_walk_does(monkeypatch):
    resources = [{"address": f"r.{index}", "values": {"tags": {"team": "x"} if index % 3 else None}}
                 for index in range(200)]
    value = {"planned_values": {"root_module": {"resources": resources}}, "resource_changes": resources}
    text = orjson.dumps(value).decode()
    paths = [("planned_values", "root_module", "resources", index, "values", "tags", "team")
             for index in range(199, 0, -7)]
    walked = load_documents("plan.json", text, positions_only=True)[0]
    expected = [walked.locate(path) for path in paths]

    def walk(*args):
        raise AssertionError("the compact text was walked")

    monkeypatch.setattr(reader._JSONLocator, "_member", walk)  # only the arithmetic may answer
    document = load_documents("plan.json", data=text.encode(), positions_only=True, value=value)[0]
    assert document.locate_all(paths) == expected
