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


def scan_args(row, *extra):
    """The ``assertree scan`` command line of a row, with `extra` options."""
    args = ["scan", *extra, "--payload", row["payload"]]
    for policy in row["policies"]:
        args += ["--policy", policy]
    if row["bindings"]:
        args += ["--bindings", row["bindings"]]
    for expression in row["preprocessors"]:
        args += ["--pre-process", expression]
    return args


@pytest.mark.parametrize("row", list(rows()))
def test_cli(row, capsys, monkeypatch):
    monkeypatch.chdir(SCAN)
    code = main(scan_args(row))
    out = capsys.readouterr()
    result, bindings = library_scan(row)
    assert "error" not in out.err
    assert out.out == render(result, ReportOptions(bindings=bindings))
    failed = any(r["status"] != "PASSED" for r in row["expected_rules"])
    assert code == (1 if failed else 0)


def test_manifest_is_complete():
    assert len(MANIFEST) == 18


@pytest.mark.parametrize("row", list(rows()))
def test_json_report_is_kyverno_jsons(row, capsys, monkeypatch):
    """``--kyverno-json -o json`` prints what ``kyverno-json scan --output json`` prints: a top-level list,
    one report per resource with the resource itself, every policy in its Go struct's field order
    (``kind`` before ``apiVersion``, ``creationTimestamp: null``), and for each rule that applied its
    identifier, error or violations (message, then field errors), nothing else."""
    monkeypatch.chdir(SCAN)
    main(scan_args(row, "--kyverno-json", "-o", "json"))
    out = capsys.readouterr()
    assert out.err == ""  # no totals line: kyverno-json prints none
    reports = json.loads(out.out)
    result, _ = library_scan(row)
    assert isinstance(reports, list) and len(reports) == row["expected_resources_evaluated"]
    assert [report["resource"] for report in reports] == [resource.value for resource in result.resources]
    rules, violations = [], []
    for report in reports:
        assert list(report) == ["resource", "results"]
        assert len(report["results"]) == row["expected_policies_loaded"]
        for entry in report["results"]:
            policy = entry["policy"]
            assert list(policy) == ["kind", "apiVersion", "metadata", "spec"]
            assert policy["metadata"]["creationTimestamp"] is None
            assert set(entry) <= {"policy", "rules"}
            for rule in entry.get("rules", []):
                assert set(rule) <= {"rule", "identifier", "error", "violations"}
                fields = list(rule["rule"])
                assert fields[0] == "name" and fields[-1] == "assert"
                status = "ERROR" if "error" in rule else "FAILED" if "violations" in rule else "PASSED"
                rules.append((policy["metadata"]["name"], rule["rule"]["name"], rule.get("identifier"), status))
                for violation in rule.get("violations", []):
                    violations.append((rule["rule"]["name"], violation.get("message"),
                                       sorted(error["field"] for error in violation.get("errors", []))))
    assert rules == [(r["policy"], r["rule"], r["id"], r["status"]) for r in row["expected_rules"]]
    assert violations == [(v["rule"], v["message"], sorted(e["path"] for e in v["errors"]))
                          for v in row["expected_violations"]]


@pytest.mark.parametrize("name", ["pod-all-latest", "tf-ec2", "escaped"])
def test_json_report_bytes(name, capsys, monkeypatch, snapshot):
    """The bytes of kyverno-json's JSON for three cases, pinned: Go's MarshalIndent (two spaces, HTML
    characters escaped, map keys sorted, struct fields in order)."""
    monkeypatch.chdir(SCAN)
    row = next(row for row in MANIFEST if row["name"] == name)
    main(scan_args(row, "--kyverno-json", "-o", "json"))
    assert capsys.readouterr().out == snapshot
