"""``--explain`` on the command line: ``scan`` in every format (whole and streamed), and ``assertree test``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assertree.cli import main

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "samples" / "kubernetes"

POLICY = """\
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: workloads
  annotations:
    pod-policies.kyverno.io/autogen-controllers: none
spec:
  validationFailureAction: Enforce
  rules:
  - name: replicas
    match: {any: [{resources: {kinds: [Deployment]}}]}
    preconditions:
      all:
      - key: "{{ request.object.metadata.namespace || 'default' }}"
        operator: NotEquals
        value: kube-system
    validate:
      message: "{{ request.object.metadata.name }} runs too many replicas"
      deny:
        conditions:
          any:
          - key: "{{ request.object.spec.replicas }}"
            operator: GreaterThan
            value: 3
  - name: pinned-images
    match: {any: [{resources: {kinds: [Pod]}}]}
    validate:
      message: pin every image
      foreach:
      - list: request.object.spec.containers
        pattern:
          image: "*:*"
  - name: non-root
    match: {any: [{resources: {kinds: [Pod]}}]}
    validate:
      message: run as non-root
      pattern:
        spec:
          =(securityContext):
            runAsNonRoot: true
"""

RESOURCES = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: big, namespace: shop}
spec:
  replicas: 5
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: small, namespace: shop}
spec:
  replicas: 2
---
apiVersion: v1
kind: Pod
metadata: {name: loose, namespace: shop}
spec:
  securityContext:
    runAsNonRoot: false
  containers:
  - name: web
    image: nginx:1.27
  - name: sidecar
    image: busybox
"""

TEST = """\
apiVersion: cli.kyverno.io/v1alpha1
kind: Test
metadata: {name: workloads}
policies: [policy.yaml]
resources: [resources.yaml]
results:
- policy: workloads
  rule: replicas
  resources: [big]
  result: fail
- policy: workloads
  rule: replicas
  resources: [small]
  result: pass
- policy: workloads
  rule: pinned-images
  resources: [loose]
  result: pass
- policy: workloads
  rule: non-root
  resources: [loose]
  result: fail
"""


@pytest.fixture
def folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "policy.yaml").write_text(POLICY)
    (tmp_path / "resources.yaml").write_text(RESOURCES)
    (tmp_path / "kyverno-test.yaml").write_text(TEST)
    return tmp_path


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main([str(arg) for arg in args])
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    return code, captured.out, captured.err


def test_scan_explains_each_failure_in_the_text_report(capsys, monkeypatch, snapshot):
    monkeypatch.chdir(REPO)
    code, out, _ = run(capsys, "scan", "samples/kubernetes/deployment-bad.yaml", "--policy",
                       "samples/kubernetes/policies/", "--explain")
    assert code == 1
    assert out == snapshot
    plain_code, plain, _ = run(capsys, "scan", "samples/kubernetes/deployment-bad.yaml", "--policy",
                               "samples/kubernetes/policies/")
    assert plain_code == code and " -> why:" not in plain
    assert [line for line in out.splitlines() if line.startswith("- ")] == [
        line for line in plain.splitlines() if line.startswith("- ")]  # the same verdicts


def test_scan_explains_kyverno_rules(folder, capsys, snapshot):
    code, out, _ = run(capsys, "scan", "resources.yaml", "--policy", "policy.yaml", "--explain")
    assert code == 1
    assert out == snapshot


def test_a_streamed_scan_explains_too(folder, capsys):
    (folder / "more.yaml").write_text(RESOURCES)
    code, out, _ = run(capsys, "scan", "resources.yaml", "more.yaml", "--policy", "policy.yaml", "--explain", "-q")
    assert code == 1
    assert out.count(" -> why:") == 6  # three failures in each file


def test_the_json_report_has_each_explanation(folder, capsys):
    code, out, _ = run(capsys, "scan", "resources.yaml", "--policy", "policy.yaml", "--explain", "-o", "json")
    assert code == 1
    rules = {(report["resource"]["identifier"], rule["rule"]["name"]): rule
             for report in json.loads(out)["reports"] for result in report["results"] for rule in result["rules"]}
    assert "explanation" not in rules[("Deployment/shop/small", "replicas")]  # a pass
    replicas = rules[("Deployment/shop/big", "replicas")]["explanation"]["steps"]
    assert replicas[2] == {"what": "deny.conditions", "depth": 0, "outcome": "fail",
                           "detail": "the conditions hold: the resource is denied",
                           "policyPath": "spec.rules[0].validate.deny.conditions"}
    assert replicas[3] == {"what": "{{ request.object.spec.replicas }} GreaterThan 3", "depth": 1, "outcome": "true",
                           "value": 5.0, "operator": "GreaterThan", "expected": 3,
                           "policyPath": "spec.rules[0].validate.deny.conditions.any[0]"}
    root = rules[("Pod/shop/loose", "non-root")]["explanation"]["steps"][1]
    assert root["resourcePath"] == ["spec", "securityContext", "runAsNonRoot"] and root["value"] is False


def test_sarif_has_the_explanation_and_its_fields_as_related_locations(folder, capsys):
    code, out, _ = run(capsys, "scan", "resources.yaml", "--policy", "policy.yaml", "--explain", "-o", "sarif")
    assert code == 1
    results = {result["ruleId"]: result for result in json.loads(out)["runs"][0]["results"]}
    root = results["workloads/non-root"]
    assert [step["what"] for step in root["properties"]["explanation"]] == [
        "pattern", "spec.=(securityContext).runAsNonRoot"]
    [related] = root["relatedLocations"]
    assert related["physicalLocation"]["region"]["startLine"] == 18  # runAsNonRoot: false
    assert related["message"]["text"].startswith("spec.=(securityContext).runAsNonRoot = false, expected true")
    plain = json.loads(run(capsys, "scan", "resources.yaml", "--policy", "policy.yaml", "-o", "sarif")[1])
    assert all("relatedLocations" not in result and "explanation" not in result["properties"]
               for result in plain["runs"][0]["results"])


def test_assertree_test_explains_the_rows_that_failed(folder, capsys, snapshot):
    code, out, _ = run(capsys, "test", ".", "--explain")
    assert code == 1  # row 3 expects sidecar's image to pass: the explanation shows why it does not
    assert out == snapshot
    code, out, _ = run(capsys, "test", ".", "--explain", "-o", "json")
    rows = json.loads(out)["tests"][0]["results"]
    assert [("explanation" in row) for row in rows] == [True, False, True, True]
    code, out, _ = run(capsys, "test", ".", "--explain", "--fail-only")
    assert out.count("  #") == 1 and "  #1 workloads/pinned-images v1/Pod/shop/loose: fail" in out
