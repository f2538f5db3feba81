"""kyverno-json's Go unit-test tables (units.json), run straight from ../shared.

Key syntax, assertion nodes, map-key projection, number matching, the JSON
round trips of free-form policy values, and the ``jp`` sub-commands.
"""

from __future__ import annotations

import contextlib
import copy
import json
import re

import pytest
from conftest import CONFORMANCE

from assertree import jp
from assertree.cli import main
from assertree.errors import PayloadError, PolicyError
from assertree.inputs.payload import parse_payload
from assertree.jp.values import to_json
from assertree.languages.kyverno_json.expressions import Compilers
from assertree.tree.compare import NotComparable, matches
from assertree.tree.keys import parse_key
from assertree.tree.nodes import compile_tree

UNITS = json.loads((CONFORMANCE / "kyverno-json" / "units.json").read_text())["vectors"]


def vectors(kind):
    return [pytest.param(v, id=f"{v['name']}#{i}") for i, v in enumerate(UNITS) if v["kind"] == kind]


@pytest.mark.parametrize("vector", vectors("expression"))
def test_key_syntax(vector):
    key = parse_key(vector["input"])
    assert {
        "foreach": key.foreach,
        "foreachName": key.foreach_name,
        "statement": key.statement,
        "binding": key.binding,
        "compiler": key.compiler,
    } == vector["expected"]


def evaluate_tree(tree, value, bindings=None):
    errors = []
    compile_tree(tree, Compilers()).check(value, dict(bindings or {}), None, errors)
    return errors


@pytest.mark.parametrize("vector", vectors("assertion"))
def test_assertion(vector):
    errors = evaluate_tree(vector["tree"], vector["value"], vector["bindings"])
    got = [(e.type, e.field, e.value, e.detail) for e in errors]
    assert got == [(w["type"], w["field"], w["bad_value"], w["detail"]) for w in vector["want_errors"]]


@pytest.mark.parametrize("vector", vectors("assertion_parse"))
def test_assertion_parse(vector):
    want = vector["want_parse_error"]
    with pytest.raises(PolicyError) as caught:
        compile_tree(vector["tree"], Compilers())
    assert want["detail"] in str(caught.value)
    assert str(caught.value).startswith(want["field"] + ":")


@pytest.mark.parametrize("vector", vectors("projection"))
def test_map_key_projection(vector):
    """A plain key: found (even when null) or a "field not found" violation, never an error here."""
    expected = vector["want"]
    errors = evaluate_tree({vector["key"]: expected}, vector["value"], vector["bindings"])
    if vector["want_found"]:
        assert errors == []
    else:
        assert [(e.type, e.field) for e in errors] == [("FieldValueRequired", vector["key"])]


@pytest.mark.parametrize("vector", vectors("matching_to_number"))
def test_number_matching(vector):
    if vector["want_ok"]:
        assert matches(vector["want"], vector["value"]) is True
    else:
        with contextlib.suppress(NotComparable):
            assert matches(vector["want"], vector["value"]) is False


@pytest.mark.parametrize("vector", vectors("any_marshal"))
def test_free_form_value_to_json(vector):
    assert to_json(vector["value"]) == vector["want_json"]


@pytest.mark.parametrize("vector", vectors("any_unmarshal"))
def test_free_form_value_from_json(vector):
    if vector["want_error"]:
        with pytest.raises(PayloadError):
            parse_payload(vector["json"].encode(), "value.json", kind="json")
    else:
        assert parse_payload(vector["json"].encode(), "value.json", kind="json").value == vector["want"]


@pytest.mark.parametrize("vector", vectors("any_deepcopy") + vectors("any_deepcopy_independent"))
def test_free_form_value_round_trip_is_independent(vector):
    original = copy.deepcopy(vector["value"])
    loaded = parse_payload(to_json(original).encode(), "value.json", kind="json").value
    assert loaded == vector["value"]
    mutation = vector.get("mutate_original")
    if mutation:
        target = original
        for step in mutation["path"][:-1]:
            target = target[step]
        target[mutation["path"][-1]] = mutation["new_value"]
        found = loaded
        for step in mutation["path"]:
            found = found[step]
        assert found == vector["want_copy_at_path"]


@pytest.mark.parametrize("vector", vectors("cel_compile"))
def test_cel_compiles(vector):
    if vector["want_error"]:
        with pytest.raises(PolicyError):
            Compilers("cel").compile("default", vector["input"])
    else:
        compiled = Compilers("cel").compile("default", vector["input"])
        assert compiled.search({"spec": {"a": 1}}, {}) == {"a": 1}


@pytest.mark.parametrize("vector", vectors("jp_parse"))
def test_jp_parse(vector):
    if vector["want_error"]:
        with pytest.raises(jp.ParseError):
            jp.compile(vector["input"])
    else:
        jp.compile(vector["input"])


@pytest.mark.parametrize("vector", vectors("jp_cli"))
def test_jp_cli(vector, capsys, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)  # the "input file missing" row relies on files that do not exist
    monkeypatch.setenv("COLUMNS", "300")
    code = main(vector["args"])
    out = capsys.readouterr()
    assert (code != 0) == vector["want_error"], out
    if vector["name"] == "help":
        # A deliberate difference: kyverno-json's help sentences ("Provides function informations.") were
        # reworded in assertree's own voice (docs/kyverno-json.md, "Differences from kyverno-json"); the help
        # still prints.
        assert "Usage:" in out.out and "assertree jp" in out.out
    elif vector.get("stdout_prefix"):
        assert vector["stdout_prefix"] in re.sub(r"\s+", " ", out.out)
    assert "Traceback" not in out.err
