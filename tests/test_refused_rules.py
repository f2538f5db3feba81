"""A rule assertree cannot run offline is reported once, with its file, line and field, and every other rule runs:
in scan, test, apply, lint and serve."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import yaml

from assertree import cli

sys.path.insert(0, str(Path(__file__).parent / "serve"))

POLICY = """apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: mixed
  annotations:
    pod-policies.kyverno.io/autogen-controllers: none
spec:
  rules:
  - name: signed
    match:
      any:
      - resources:
          kinds: [Pod]
    verifyImages:
    - imageReferences: ["*"]
      attestors:
      - entries:
        - keys:
            publicKeys: "-----BEGIN PUBLIC KEY-----"
  - name: labelled
    match:
      any:
      - resources:
          kinds: [Pod]
    mutate:
      patchStrategicMerge:
        metadata:
          labels:
            +(team): platform
  - name: named
    match:
      any:
      - resources:
          kinds: [Pod]
    validate:
      message: "a name is needed"
      pattern:
        metadata:
          name: "?*"
"""
POD = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\nspec:\n  containers:\n  - name: c\n    image: nginx\n"
WHERE = ("policy.yaml:16:7: spec.rules[0].verifyImages[0].attestors: rule 'signed' is not run: verifying image "
         "signatures needs the image registry")


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "policy.yaml").write_text(POLICY)
    (tmp_path / "pod.yaml").write_text(POD)
    return tmp_path


def run(capsys: pytest.CaptureFixture[str], *args: object) -> tuple[int, str, str]:
    code = cli.main([str(arg) for arg in args])
    out, err = capsys.readouterr()
    return code, out, err


def test_scan_warns_once_and_runs_the_other_rules(folder: Path, capsys: pytest.CaptureFixture[str]):
    code, out, err = run(capsys, "scan", folder / "pod.yaml", "--policy", folder / "policy.yaml")
    assert code == 0
    assert err.count("is not run") == 1 and f"assertree: warning: {folder}/{WHERE}" in err
    assert "RULE=named" in out and "RULE=labelled" in out and "RULE=signed" not in out


def test_lint_reports_the_refused_rule_as_a_warning(folder: Path, capsys: pytest.CaptureFixture[str]):
    code, out, _ = run(capsys, "lint", folder / "policy.yaml")
    assert code == 0 and f"{folder}/policy.yaml:16:7: warning: spec.rules[0].verifyImages[0].attestors" in out
    assert run(capsys, "lint", "--strict", folder / "policy.yaml")[0] == 1


def test_apply_warns_and_applies_the_other_rules(folder: Path, capsys: pytest.CaptureFixture[str]):
    code, out, err = run(capsys, "apply", "--policy", folder / "policy.yaml", folder / "pod.yaml")
    assert code == 0 and err.count("is not run") == 1
    assert yaml.safe_load(out)["metadata"]["labels"] == {"team": "platform"}


def test_a_test_row_of_a_refused_rule_fails_as_not_run(folder: Path, capsys: pytest.CaptureFixture[str]):
    rows = [{"policy": "mixed", "rule": rule, "resources": ["web"], "result": "pass"} for rule in ("signed", "named")]
    (folder / "kyverno-test.yaml").write_text(yaml.safe_dump({
        "apiVersion": "cli.kyverno.io/v1alpha1", "kind": "Test", "metadata": {"name": "t"},
        "policies": ["policy.yaml"], "resources": ["pod.yaml"], "results": rows}))
    code, out, _ = run(capsys, "test", folder, "--detailed-results")
    assert code == 1
    assert "Warning: " in out and "is not run" in out
    table = [[cell.strip() for cell in line.split("│")[2:7]] for line in out.splitlines() if line.startswith("│ ")]
    assert [row for row in table if row[3] in ("Fail", "Pass") and row[1] == "signed"] == [
        ["mixed", "signed", "v1/Pod/default/web", "Fail", "Not run"]]
    assert ["mixed", "named", "v1/Pod/default/web", "Pass", "Ok"] in table


def test_serve_lists_the_refused_rules(folder: Path):
    from serve_support import call_app

    from assertree.serve import create_app

    app = create_app([folder / "policy.yaml"])
    body = {"payload": yaml.safe_load(POD)}
    answer = call_app(app, "POST", "/api/scan", json=body).json()
    [entry] = answer["notRun"]
    assert (entry["policy"], entry["rule"]) == ("mixed", "signed") and WHERE in entry["message"]
    assert {item["rule"] for item in answer["results"]} == {"labelled", "named"}
    health = call_app(app, "GET", "/api/health").json()
    assert [item["rule"] for item in health["policies"]["not_run"]] == ["signed"]
