"""kyverno-json's own scan tests (test/commands/scan), run straight from ../shared.

Each row of scan/manifest.json is scanned through the library and through the
CLI. The text report must equal kyverno-json's out.txt line for line once our
JSON-printed values are shown in Go syntax (`support.as_go_text`), with sibling
lines compared as sets (Go's map order is random). The exit code is
assertree's: 1 when a rule failed or errored.
"""

from __future__ import annotations

import json

import pytest
from conftest import CONFORMANCE
from support import as_go_text, order_insensitive

from assertree.cli import main
from assertree.engine.scan import scan
from assertree.inputs.payload import compile_preprocessors, read_payload, resources_from
from assertree.languages.load import load_policies
from assertree.report.options import ReportOptions
from assertree.report.text import render

SCAN = CONFORMANCE / "kyverno-json" / "scan"
MANIFEST = json.loads((SCAN / "manifest.json").read_text())


def rows():
    for row in MANIFEST:
        yield pytest.param(row, id=row["name"])


def library_scan(row):
    policies = load_policies(*(SCAN / p for p in row["policies"]))
    bindings = read_payload(str(SCAN / row["bindings"])).value if row["bindings"] else None
    resources = resources_from(read_payload(str(SCAN / row["payload"])), compile_preprocessors(row["preprocessors"]))
    return scan(resources, policies, bindings), bindings


@pytest.mark.parametrize("row", list(rows()))
def test_rule_statuses_and_violations(row):
    result, _ = library_scan(row)
    statuses = {"pass": "PASSED", "fail": "FAILED", "error": "ERROR"}
    got = [(r.policy.name, r.rule.name, r.identifier, statuses[r.status]) for r in result.results]
    want = [(r["policy"], r["rule"], r["id"], r["status"]) for r in row["expected_rules"]]
    assert got == want
    got_violations = [
        (r.rule.name, v.check, v.message, sorted(e.field for e in v.errors))
        for r in result.results for v in r.violations
    ]
    want_violations = [
        (v["rule"], v["check"], v["message"], sorted(e["path"] for e in v["errors"]))
        for v in row["expected_violations"]
    ]
    assert got_violations == want_violations
    assert len(result.resources) == row["expected_resources_evaluated"]
    assert len(result.policies) == row["expected_policies_loaded"]


@pytest.mark.parametrize("row", list(rows()))
def test_text_report_matches_kyverno_json(row):
    result, bindings = library_scan(row)
    expected = (SCAN / row["expected_output"]).read_text()
    ours = as_go_text(render(result, ReportOptions(bindings=bindings, kyverno_json=True)), result)
    assert order_insensitive(ours) == order_insensitive(expected)


@pytest.mark.parametrize("row", list(rows()))
def test_cli(row, capsys, monkeypatch):
    monkeypatch.chdir(SCAN)
    args = ["scan", "--payload", row["payload"]]
    for policy in row["policies"]:
        args += ["--policy", policy]
    if row["bindings"]:
        args += ["--bindings", row["bindings"]]
    for expression in row["preprocessors"]:
        args += ["--pre-process", expression]
    code = main(args)
    out = capsys.readouterr()
    result, bindings = library_scan(row)
    assert "error" not in out.err
    assert out.out == render(result, ReportOptions(bindings=bindings))
    failed = any(r["status"] != "PASSED" for r in row["expected_rules"])
    assert code == (1 if failed else 0)


def test_manifest_is_complete():
    assert len(MANIFEST) == 18
