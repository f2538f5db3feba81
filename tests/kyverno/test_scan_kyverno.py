"""`assertree scan` with Kyverno ClusterPolicies: every report format names the resource, Kyverno's message and
the failing line; --exceptions exempts, --values feeds variables."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest
from conftest import CONFORMANCE
from support import kyverno_case_workdir
from support import scan_case as scan

from assertree.cli import main

CASE = CONFORMANCE / "kyverno-policies" / "best-practices" / "disallow-latest-tag"

EXCEPTION = """\
apiVersion: kyverno.io/v2
kind: PolicyException
metadata:
  name: legacy-pods
  namespace: default
spec:
  exceptions:
  - policyName: disallow-latest-tag
    ruleNames: [require-image-tag, validate-image-tag]
  match:
    any:
    - resources:
        kinds: [Pod]
        names: [badpod01]
"""


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    return kyverno_case_workdir(CASE, tmp_path, monkeypatch)


def test_text_report_gives_kyvernos_message_and_the_resource(workdir, capsys):
    code, out = scan(capsys)
    assert code == 1
    assert "- FAILED (POLICY=disallow-latest-tag, RULE=require-image-tag, ID=Pod/default/badpod01)" in out
    assert "An image tag is required. rule require-image-tag failed at path" in out
    assert "- PASSED (POLICY=disallow-latest-tag, RULE=require-image-tag, ID=Pod/default/myapp-pod)" in out


def test_every_format_reports_the_failure_with_a_location(workdir, capsys):
    _, sarif = scan(capsys, "-o", "sarif")
    results = json.loads(sarif)["runs"][0]["results"]
    failing = [r for r in results if r["ruleId"] == "disallow-latest-tag/require-image-tag"]
    assert failing and all("An image tag is required" in r["message"]["text"] for r in failing)
    lines = {r["locations"][0]["physicalLocation"]["region"]["startLine"] for r in failing}
    assert 15 in lines  # badpod01's document starts on line 15 of pods.yaml
    _, github = scan(capsys, "-o", "github")
    assert "file=pods.yaml,line=15" in github and "(Pod/default/badpod01)" in github
    _, junit = scan(capsys, "-o", "junit")
    failures = [case for case in ET.fromstring(junit).iter("testcase") if case.find("failure") is not None]
    assert any("badpod01" in case.get("name", "") for case in failures)
    _, report = scan(capsys, "-o", "json")
    assert json.loads(report)["summary"]["failed"] == 6 and "Pod/default/badpod01" in report


def test_an_exception_turns_the_failure_into_a_skip_naming_it(workdir, capsys):
    (workdir / "exception.yaml").write_text(EXCEPTION)
    code, out = scan(capsys, "--exceptions", "exception.yaml")
    assert "FAILED (POLICY=disallow-latest-tag, RULE=require-image-tag, ID=Pod/default/badpod01)" not in out
    skipped = ("- SKIPPED (POLICY=disallow-latest-tag, RULE=require-image-tag, ID=Pod/default/badpod01)\n"
               " -> rule is skipped")
    assert skipped in out and "legacy-pods" in out
    assert code == 1  # badpod02 still fails
    _, report = scan(capsys, "--exceptions", "exception.yaml", "-o", "json")
    assert '"exception": "default/legacy-pods"' in report or '"exception": "legacy-pods"' in report


def test_exceptions_may_be_a_directory(workdir, capsys):
    (workdir / "exceptions").mkdir()
    (workdir / "exceptions" / "legacy.yaml").write_text(EXCEPTION)
    _, out = scan(capsys, "--exceptions", "exceptions")
    assert "- SKIPPED (POLICY=disallow-latest-tag, RULE=require-image-tag, ID=Pod/default/badpod01)" in out


def test_a_policy_exception_given_as_a_policy_is_a_clear_error(workdir, capsys):
    (workdir / "exception.yaml").write_text(EXCEPTION)
    assert main(["scan", "--policy", "exception.yaml", "pods.yaml"]) == 2
    assert "a PolicyException is not a policy: pass its file with --exceptions" in capsys.readouterr().err


def test_values_file_feeds_a_variable(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "policy.yaml").write_text("""\
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: allowed-registry
spec:
  rules:
  - name: registry
    match:
      any:
      - resources:
          kinds: [Pod]
    context:
    - name: registry
      configMap:
        name: settings
        namespace: kyverno
    validate:
      message: "images must come from {{ registry.data.host }}"
      pattern:
        spec:
          containers:
          - image: "{{ registry.data.host }}/*"
""")
    (tmp_path / "pod.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\nspec:\n  containers:\n  - name: a\n"
        "    image: docker.io/nginx\n")
    (tmp_path / "values.yaml").write_text("""\
apiVersion: cli.kyverno.io/v1alpha1
kind: Values
policies:
- name: allowed-registry
  rules:
  - name: registry
    values:
      registry.data.host: registry.example.com
""")
    code = main(["scan", "--policy", "policy.yaml", "pod.yaml", "--values", "values.yaml"])
    out = capsys.readouterr().out
    assert code == 1 and "images must come from registry.example.com" in out
    (tmp_path / "pod.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\nspec:\n  containers:\n  - name: a\n"
        "    image: registry.example.com/nginx\n")
    assert main(["scan", "--policy", "policy.yaml", "pod.yaml", "--values", "values.yaml"]) == 0
