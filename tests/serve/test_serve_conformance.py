"""kyverno-json's scan tests through the server: a kyverno-json request body gets kyverno-json's `results`.

kyverno-json's server (pkg/server/model/response.go at the corpus revision) answers one entry per
rule that applied: ``policy``, ``rule``, ``identifier`` (left out when empty), ``result``
(pass/fail/error) and ``message`` ("" for a pass, the error text, or the violations joined by
newlines: ``-> <message> (CHECK=...)`` then `` -> <body> (PATH=...)``). The expected entries are
built from each row of scan/manifest.json (kyverno-json's own expectations); field-error values,
which assertree prints as JSON where Go prints its own syntax, are compared in Go syntax
(`support.go_body`), sibling field errors as sets (Go's map order is random).

Every row goes to ``POST /api/playground/scan`` on one running server (payload and policy as the
files' text) and to ``POST /api/scan`` of an app holding the row's policies (payload as JSON).
The ``bindings`` row sends its bindings in ``bindings``, a field only assertree reads (kyverno-json's
server has no way to pass bindings).
"""

from __future__ import annotations

import json

import pytest
from conftest import CONFORMANCE
from serve_support import call_app, running_server
from support import go_body

from assertree import jp
from assertree.engine.scan import scan
from assertree.inputs.payload import read_payload, resources_from
from assertree.languages.load import load_policies
from assertree.serve import create_app

SCAN = CONFORMANCE / "kyverno-json" / "scan"
MANIFEST = json.loads((SCAN / "manifest.json").read_text())
RESULT = {"PASSED": "pass", "FAILED": "fail", "ERROR": "error"}


def rows():
    return [pytest.param(row, id=row["name"]) for row in MANIFEST]


@pytest.fixture(scope="module")
def server():
    with running_server() as running:
        yield running


def sorted_runs(lines):
    """Lines with each run of field-error lines (`` -> ...``) sorted."""
    out, run = [], []
    for line in lines:
        if line.startswith(" -> "):
            run.append(line)
            continue
        out.extend(sorted(run))
        run = []
        out.append(line)
    return out + sorted(run)


def kyverno_json_entries(row):
    """What kyverno-json's server answers for the row, from the row's expectations."""
    violations = list(row["expected_violations"])
    entries = []
    for rule in row["expected_rules"]:
        entry = {"policy": rule["policy"], "rule": rule["rule"]}
        if rule["id"] is not None:
            entry["identifier"] = rule["id"]
        entry["result"] = RESULT[rule["status"]]
        lines = []
        while violations and (violations[0]["policy"], violations[0]["rule"], violations[0]["id"]) == (
                rule["policy"], rule["rule"], rule["id"]) and rule["status"] == "FAILED":
            violation = violations.pop(0)
            prefix = f"{violation['message']} " if violation["message"] else ""
            lines.append(f"-> {prefix}(CHECK={violation['check']})")
            lines.extend(f" -> {error['body']} (PATH={error['path']})" for error in violation["errors"])
        entry["message"] = sorted_runs(lines) if rule["status"] != "ERROR" else rule["error"]
        entries.append(entry)
    assert not violations, "every expected violation belongs to a FAILED rule"
    return entries


def in_go_syntax(entries, row):
    """The server's entries with each field-error line re-printed in Go syntax, from the library's own
    field errors for the same row (and checked to be exactly those errors' lines first)."""
    policies = load_policies(*(SCAN / p for p in row["policies"]))
    bindings = read_payload(str(SCAN / row["bindings"])).value if row["bindings"] else None
    preprocessors = [jp.compile(expression) for expression in row["preprocessors"]]
    resources = resources_from(read_payload(str(SCAN / row["payload"])), preprocessors)
    result = scan(resources, policies, bindings)
    assert len(result.results) == len(entries)
    converted = []
    for entry, rule_result in zip(entries, result.results):
        entry = dict(entry)
        errors = iter(error for violation in rule_result.violations for error in violation.errors)
        lines = []
        for line in entry["message"].splitlines() if entry["result"] != "error" else []:
            if line.startswith(" -> "):
                error = next(errors)
                assert line == f" -> {error}"
                line = f" -> {go_body(error)} (PATH={error.field})"
            lines.append(line)
        if entry["result"] != "error":
            entry["message"] = sorted_runs(lines)
        converted.append(entry)
    return converted


def check(entries, row):
    want = kyverno_json_entries(row)
    got = in_go_syntax(entries, row)
    for entry, expected in zip(got, want):
        if entry["result"] == "error":
            assert expected["message"] in entry["message"]
            entry["message"] = expected["message"]
    assert got == want


@pytest.mark.parametrize("row", rows())
def test_playground_scan_gives_kyverno_json_results(server, row):
    assert len(row["policies"]) == 1  # kyverno-json's playground takes one policy text
    body = {
        "payload": (SCAN / row["payload"]).read_text(),
        "policy": (SCAN / row["policies"][0]).read_text(),
        "preprocessors": row["preprocessors"],
    }
    if row["bindings"]:
        body["bindings"] = read_payload(str(SCAN / row["bindings"])).value
    response = server.client().post("/api/playground/scan", json=body)
    assert response.status_code == 200, response.text
    assert list(response.json()) == ["results"]
    check(response.json()["results"], row)


@pytest.mark.parametrize("row", rows())
def test_api_scan_gives_kyverno_json_results(row):
    app = create_app([SCAN / p for p in row["policies"]])
    body = {"payload": read_payload(str(SCAN / row["payload"])).value, "preprocessors": row["preprocessors"]}
    if row["bindings"]:
        body["bindings"] = read_payload(str(SCAN / row["bindings"])).value
    response = call_app(app, "POST", "/api/scan", json=body)
    assert response.status_code == 200, response.text
    check(response.json()["results"], row)


def test_every_row_is_run():
    assert len(MANIFEST) == 18
