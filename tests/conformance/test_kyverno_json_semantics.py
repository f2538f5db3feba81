"""kyverno-json's engine-level vectors (semantics.json), run straight from ../shared.

Every vector runs. Where assertree differs on purpose (DESIGN.md: invalid
policies fail at load time; match/exclude need both any and all; a null
identifier is no identifier; and a few kyverno-json quirks), `DIFFERENCES`
states assertree's outcome and the reason, and the test asserts that outcome.
"""

from __future__ import annotations

import json

import pytest
from conftest import CONFORMANCE
from support import as_go_text, go_body, order_insensitive

from assertree.engine.scan import scan
from assertree.errors import PayloadError, PolicyError
from assertree.inputs.payload import Payload, compile_preprocessors, resources_from
from assertree.languages.load import policy_from_mapping
from assertree.report.options import ReportOptions
from assertree.report.text import render

VECTORS = json.loads((CONFORMANCE / "kyverno-json" / "semantics.json").read_text())["vectors"]
STATUS = {"pass": "PASSED", "fail": "FAILED", "error": "ERROR"}
LOAD_ERROR = "load error"

# vector id -> (assertree's outcome, why). An outcome is LOAD_ERROR (with the expected text) or
# the list of (rule, status, id) results.
DIFFERENCES = {
    "assert-empty-is-a-rule-error": ((LOAD_ERROR, "an empty assert is not valid"),
                                     "invalid policies fail at load time, with file and line"),
    "match-empty-is-a-rule-error": ((LOAD_ERROR, "an empty match is not valid"),
                                    "invalid policies fail at load time, with file and line"),
    "leaf-with-arrow-does-not-compile": ((LOAD_ERROR, "binding is not supported in scalar projections"),
                                         "invalid policies fail at load time, with file and line"),
    "leaf-with-foreach-does-not-compile": ((LOAD_ERROR, "foreach is not supported in scalar projections"),
                                           "invalid policies fail at load time, with file and line"),
    "expression-key-outer-parens-are-stripped-once": ((LOAD_ERROR, "invalid expression 'a) == (b'"),
                                                      "invalid expressions fail at load time"),
    "match-any-short-circuits-all": ([], (
        "match with both any and all requires both (kyverno-json ignores all "
        "once an any tree matched); here `all` does not hold, so no result"
    )),
    "identifier-null-prints-nil": ([("r", "PASSED", None)],
                                   "a null identifier is no identifier (kyverno-json prints ID=<nil>)"),
    "leaf-expression-map-vs-null-is-error": ([("r", "ERROR", None)], (
        "same verdict; the error names the kind 'null' where Go says 'invalid': 'must be a map, found null'"
    )),
}


def run(vector):
    policies = [policy_from_mapping(document) for document in vector["policies"]]
    payload = Payload("<inline>", vector["payload"])
    resources = resources_from(payload, compile_preprocessors(vector["preprocessors"]))
    return scan(resources, policies, vector["bindings"])


def params(selected):
    for vector in VECTORS:
        if selected(vector):
            yield pytest.param(vector, id=vector["id"])


@pytest.mark.parametrize("vector", list(params(lambda v: v["id"] not in DIFFERENCES)))
def test_same_verdict_as_kyverno_json(vector):
    if vector["want_error"]:
        with pytest.raises(PayloadError) as caught:
            run(vector)
        assert "returned null" in str(caught.value)
        return
    result = run(vector)
    got = [(r.rule.name, STATUS[r.status], r.identifier) for r in result.results]
    assert got == [(r["rule"], r["status"], r["id"]) for r in vector["expected_rules"]]
    for ours, theirs in zip(result.results, vector["expected_rules"]):
        if theirs["status"] == "ERROR":
            assert theirs["error"] in ours.error.message
    violations = [
        (v.check, v.message, sorted((e.field, go_body(e)) for e in v.errors))
        for r in result.results for v in r.violations
    ]
    assert violations == [
        (v["check"], v["message"], sorted((e["path"], e["body"]) for e in v["errors"]))
        for v in vector["expected_violations"]
    ]
    if vector.get("expected_output"):
        text = as_go_text(render(result, ReportOptions(bindings=vector["bindings"], kyverno_json=True)), result)
        assert order_insensitive(text) == order_insensitive(vector["expected_output"])


@pytest.mark.parametrize("vector", list(params(lambda v: v["id"] in DIFFERENCES)))
def test_documented_difference(vector):
    outcome, why = DIFFERENCES[vector["id"]]
    assert why
    if isinstance(outcome, tuple) and outcome[0] == LOAD_ERROR:
        with pytest.raises(PolicyError) as caught:
            run(vector)
        assert outcome[1] in str(caught.value)
        return
    result = run(vector)
    assert [(r.rule.name, STATUS[r.status], r.identifier) for r in result.results] == outcome
    if vector["id"] == "leaf-expression-map-vs-null-is-error":
        expected = "tags: Internal error: invalid actual value, must be a map, found null"
        assert result.results[0].error.message == expected


def test_all_vectors_accounted_for():
    ids = {v["id"] for v in VECTORS}
    assert len(VECTORS) == 60
    assert set(DIFFERENCES) <= ids
