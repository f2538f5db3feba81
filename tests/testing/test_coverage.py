"""``assertree test --coverage``: per policy and rule, whether the tests hold a passing and a failing row."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assertree.cli import main
from assertree.testing import run_tests
from assertree.testing.coverage import coverage_of

WORKLOADS = """\
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: workloads
spec:
  validationFailureAction: Enforce
  rules:
  - name: replicas
    match: {any: [{resources: {kinds: [Deployment]}}]}
    validate:
      message: at most three replicas
      deny:
        conditions:
          any:
          - {key: "{{ request.object.spec.replicas }}", operator: GreaterThan, value: 3}
  - name: labels
    match: {any: [{resources: {kinds: [Pod]}}]}
    validate:
      message: a team label
      pattern:
        metadata:
          labels:
            team: "?*"
  - name: named
    match: {any: [{resources: {kinds: [Pod]}}]}
    validate:
      message: a name
      pattern:
        metadata:
          name: "?*"
  - name: add-managed
    match: {any: [{resources: {kinds: [ConfigMap]}}]}
    mutate:
      patchStrategicMerge:
        metadata:
          labels:
            managed: "true"
  - name: broken
    match: {any: [{resources: {kinds: [ConfigMap]}}]}
    validate:
      message: never evaluates
      pattern:
        metadata:
          name: "{{ nothing.here }}"
"""

UNTESTED = """\
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: untested
spec:
  rules:
  - name: anything
    match: {any: [{resources: {kinds: [Pod]}}]}
    validate:
      message: any name
      pattern:
        metadata:
          name: "?*"
"""

RESOURCES = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: big, namespace: default}
spec:
  replicas: 5
  template:
    metadata: {labels: {app: big}}
    spec: {containers: [{name: c, image: "c:1"}]}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: small, namespace: default}
spec:
  replicas: 2
  template:
    metadata: {labels: {app: small, team: shop}}
    spec: {containers: [{name: c, image: "c:1"}]}
---
apiVersion: v1
kind: Pod
metadata: {name: labelled, namespace: default, labels: {team: shop}}
spec: {containers: [{name: c, image: "c:1"}]}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: default}
data: {a: b}
"""

TEST = """\
apiVersion: cli.kyverno.io/v1alpha1
kind: Test
metadata: {name: workloads}
policies: [workloads.yaml, untested.yaml]
resources: [resources.yaml]
results:
- {policy: workloads, rule: replicas, resources: [big], result: fail}
- {policy: workloads, rule: replicas, resources: [small], result: pass}
- {policy: workloads, rule: replicas, resources: [labelled], result: pass}
- {policy: workloads, rule: labels, resources: [labelled], result: pass}
- {policy: workloads, rule: labels, resources: [big], result: fail}
- {policy: workloads, rule: named, resources: [labelled], result: pass}
- {policy: workloads, rule: add-managed, resources: [settings], result: pass}
- {policy: workloads, rule: broken, resources: [settings], result: error}
"""


@pytest.fixture
def folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for name, text in (("workloads.yaml", WORKLOADS), ("untested.yaml", UNTESTED), ("resources.yaml", RESOURCES),
                       ("kyverno-test.yaml", TEST)):
        (tmp_path / name).write_text(text)
    return tmp_path


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(["test", *args])
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    return code, captured.out, captured.err


def test_rules_autogen_folded_skip_and_error_rows_and_untested_policies(folder):
    coverage = coverage_of(run_tests(["."]))
    found = {(policy.name, rule.name): (dict(rule.rows), rule.needs, rule.covered, rule.missing, policy.tested)
             for policy in coverage.policies for rule in policy.rules}
    assert found == {
        ("workloads", "replicas"): ({"fail": 1, "pass": 1}, ("pass", "fail"), True, [], True),
        ("workloads", "labels"): ({"pass": 1, "fail": 1}, ("pass", "fail"), True, [], True),  # fail from autogen
        ("workloads", "named"): ({"pass": 1}, ("pass", "fail"), False, ["fail"], True),
        ("workloads", "add-managed"): ({"pass": 1}, ("pass", "skip"), False, ["skip"], True),
        ("workloads", "broken"): ({"error": 1}, ("pass", "fail"), False, ["pass", "fail"], True),
        ("untested", "anything"): ({}, ("pass", "fail"), False, ["pass", "fail"], False),
    }
    assert coverage.summary() == {"policies": 2, "untested": 1, "rules": 6, "covered": 2}


def test_rows_that_did_not_hold_cover_nothing(folder):
    (folder / "kyverno-test.yaml").write_text(TEST.replace("resources: [small], result: pass",
                                                           "resources: [small], result: fail"))
    run = run_tests(["."])
    assert not run.ok
    replicas = coverage_of(run).policies[0].rules[0]
    assert dict(replicas.rows) == {"fail": 1} and replicas.missing == ["pass"]


def test_text_and_markdown(folder, capsys, snapshot):
    code, out, err = run(capsys, ".", "--coverage", "text", "--coverage", "markdown=coverage.md")
    assert code == 0 and err == ""
    assert out[out.index("Test Summary"):] == snapshot
    assert (folder / "coverage.md").read_text() == snapshot


def test_json(folder, capsys):
    code, out, _ = run(capsys, ".", "-o", "json=report.json", "--coverage", "json")
    assert code == 0
    coverage = json.loads(out)
    assert coverage["summary"] == {"policies": 2, "untested": 1, "rules": 6, "covered": 2}
    [workloads, untested] = coverage["policies"]
    assert workloads["rules"][0] == {"rule": "replicas", "needs": ["pass", "fail"],
                                     "rows": {"pass": 1, "fail": 1, "skip": 0, "error": 0},
                                     "covered": True, "missing": []}
    assert (untested["name"], untested["kind"], untested["source"], untested["tested"]) == (
        "untested", "ClusterPolicy", "untested.yaml", False)
    assert json.loads((folder / "report.json").read_text())["summary"]["failed"] == 0


def test_require_coverage_fails_naming_the_rules(folder, capsys):
    code, out, err = run(capsys, ".", "--require-coverage")
    assert code == 1 and "Test Summary: 14 tests passed and 0 tests failed" in out  # Excluded rows pass
    assert err == ("assertree: error: 4 rules are not covered by the tests (--require-coverage): workloads/named "
                   "(no fail row), workloads/add-managed (no skip row), workloads/broken (no pass or fail row), "
                   "untested/anything (no pass or fail row)\n")


def test_require_coverage_passes_when_every_rule_is_covered(folder, capsys):
    (folder / "kyverno-test.yaml").write_text(TEST.replace("untested.yaml", "").split("- {policy: workloads, rule: "
                                                                                      "named")[0])
    text = (folder / "kyverno-test.yaml").read_text().replace("policies: [workloads.yaml, ]", "policies: [only.yaml]")
    (folder / "kyverno-test.yaml").write_text(text)
    only = WORKLOADS.split("  - name: named")[0]
    (folder / "only.yaml").write_text(only)
    code, out, err = run(capsys, ".", "--require-coverage", "--coverage", "text")
    assert code == 0 and err == ""
    assert "Coverage: 2 of 2 rules have both a passing and a failing row" in out


def test_a_policy_kind_without_rules_is_one_entry(tmp_path, monkeypatch, capsys):
    pytest.importorskip("cel_expr_python")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "policy.yaml").write_text("""\
apiVersion: policies.kyverno.io/v1
kind: ValidatingPolicy
metadata: {name: replicas}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: [apps], apiVersions: [v1], operations: [CREATE], resources: [deployments]}
  validations:
  - expression: object.spec.replicas <= 3
""")
    (tmp_path / "resources.yaml").write_text(RESOURCES)
    (tmp_path / "kyverno-test.yaml").write_text("""\
apiVersion: cli.kyverno.io/v1alpha1
kind: Test
metadata: {name: cel}
policies: [policy.yaml]
resources: [resources.yaml]
results:
- {policy: replicas, resources: [big], result: fail, isValidatingPolicy: true}
- {policy: replicas, resources: [small], result: pass, isValidatingPolicy: true}
""")
    [policy] = coverage_of(run_tests(["."])).policies
    assert (policy.kind, [(rule.name, rule.covered, dict(rule.rows)) for rule in policy.rules]) == (
        "ValidatingPolicy", [(None, True, {"pass": 1, "fail": 1})])
    code, out, _ = run(capsys, ".", "--coverage", "text")
    assert code == 0 and "│ replicas │ (policy) │ 1    │ 1    │ 0    │ 0     │ yes     │" in out


@pytest.mark.parametrize(("args", "message"), [
    (["-o", "json", "--coverage", "text"], "the test report and the coverage report share standard output only"),
    (["--coverage", "json"], "the test report and the coverage report share standard output only"),
    (["--coverage", "text", "--coverage", "markdown"], "only one --coverage can go to standard output"),
    (["--coverage", "html"], "unknown --coverage format 'html' (choose from: text, json, markdown)"),
    (["--coverage", "json="], "--coverage 'json=': missing file name after '='"),
])
def test_coverage_outputs_that_cannot_be_written_are_refused(folder, capsys, args, message):
    code, out, err = run(capsys, ".", *args)
    assert code == 2 and out == "" and message in err


CLI_DATA = Path(__file__).resolve().parents[1] / "conformance" / "data" / "kyverno-cli" / "test" / "cli"


@pytest.mark.parametrize(("folder_name", "policy_name", "rule_name", "rows"), [
    ("test-generate/add-network-policy", "add-networkpolicy", "default-deny", {"pass": 1}),  # generatedResource
    ("test-mutate/same-name-mutate-existing", "mutate-existing-secret", "mutate-secret-on-configmap-create",
     {"pass": 2}),  # two targetResources rows
])
def test_generated_and_target_rows_count_for_their_rule(folder_name, policy_name, rule_name, rows):
    run = run_tests([str(CLI_DATA / folder_name)])
    assert run.ok
    found = {(policy.name, rule.name): dict(rule.rows) for policy in coverage_of(run).policies
             for rule in policy.rules}
    assert found == {(policy_name, rule_name): rows}
