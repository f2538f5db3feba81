"""The Kyverno function library's 908 vectors, run straight from ../shared/conformance.

Every vector runs, with the kyverno-json function table, except those that
need DNS (``is_external_url`` on host names; assertree never touches the
network). Vectors marked ``quirk`` pin Go typing artefacts (int64 from
``parse_json``, the Go slice type ``items()`` returns, Go panics); assertree
keeps plain JSON semantics there, and `QUIRK_OUTCOMES` states what it gives
instead, so the difference is tested rather than skipped.
"""

from __future__ import annotations

import json
import re

import pytest
from conftest import CONFORMANCE
from support import json_equal

from assertree import jp

VECTORS = json.loads((CONFORMANCE / "kyverno-functions.json").read_text())
ERROR = object()

# What assertree gives where kyverno-json's outcome is a Go typing artefact, and why.
QUIRK_OUTCOMES = {
    # Kyverno's own label_match (deep equality) returns true; kyverno-json's Go code panics.
    "derived kyverno-json:label_match/8": True,
    # Parsed JSON numbers are numbers: no Go int64 that type(), abs(), add() or == reject.
    "derived kyverno-json:json_parse/6": "number",
    "derived kyverno-json:json_parse/7": True,
    "derived kyverno-json:json_parse/9": 1,
    "derived kyverno-json:json_parse/10": 2,
    "derived kyverno-json:parse_json/1": True,
    # compare() returns an ordinary number.
    "derived kyverno-json:compare/4": 1,
    "derived kyverno-json:compare/5": True,
    # items() returns an ordinary array of objects.
    "derived kyverno-json:items/10": [{"k": "b", "v": 1}, {"k": "a", "v": 2}],
    "derived kyverno-json:items/11": "array",
    # sum() of a one-element array returns the element unchecked, as Kyverno does.
    "derived kyverno-json:items/12": {"k": "b", "v": 1},
    "derived kyverno-json:items/13": {"k": "b", "v": 1},
}

# kyverno-json-only vectors where assertree follows the main Kyverno repository's later fix instead
# (spec section 1.2): an integer layout means Unix seconds, as Kyverno's own Test_TimeParse[2] expects.
LATER_KYVERNO_FIXES = {
    "derived kyverno-json:time_parse/13": "2023-12-16T01:46:11Z",
}


def vector_params(quirks: bool):
    for vector in VECTORS:
        if "dns" in vector.get("needs", ()) or vector["id"] in LATER_KYVERNO_FIXES:
            continue
        if bool(vector.get("quirk")) == quirks:
            yield pytest.param(vector, id=vector["id"])


def evaluate(vector):
    return jp.compile(vector["expression"]).search(vector["data"])


@pytest.mark.parametrize("vector", list(vector_params(quirks=False)))
def test_vector(vector):
    if vector["error"]:
        with pytest.raises(jp.JMESPathError) as caught:
            evaluate(vector)
        if isinstance(vector["error"], str):
            assert vector["error"] in str(caught.value)
        return
    result = evaluate(vector)
    if "matches" in vector:
        assert isinstance(result, str) and re.search(vector["matches"], result), result
    else:
        assert json_equal(result, vector["expected"]), f"got {result!r}, expected {vector['expected']!r}"


@pytest.mark.parametrize("vector", list(vector_params(quirks=True)))
def test_quirk_is_a_documented_difference(vector):
    expected = QUIRK_OUTCOMES[vector["id"]]
    if expected is ERROR:
        with pytest.raises(jp.JMESPathError):
            evaluate(vector)
    else:
        assert json_equal(evaluate(vector), expected)


@pytest.mark.parametrize("vector_id", sorted(LATER_KYVERNO_FIXES))
def test_later_kyverno_fix_is_followed(vector_id):
    (vector,) = [v for v in VECTORS if v["id"] == vector_id]
    assert vector["applies_to"] == ["kyverno-json"]
    assert json_equal(evaluate(vector), LATER_KYVERNO_FIXES[vector_id])


def test_vector_counts():
    dns = [v for v in VECTORS if "dns" in v.get("needs", ())]
    quirks = [v for v in VECTORS if v.get("quirk")]
    assert (len(VECTORS), len(dns), len(quirks)) == (908, 2, 12)
    assert set(QUIRK_OUTCOMES) == {v["id"] for v in quirks}
