"""`assertree test`: kyverno-test.yaml files read, run and compared as `kyverno test` does."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from xml.etree import ElementTree

import pytest
import typer
import yaml
from typer.testing import CliRunner

from assertree.cli import test as test_cli
from assertree.testing import EXCLUDED, NOT_FOUND, KyvernoTestError, run_tests
from assertree.testing.output import render_json, render_junit, render_text
from assertree.testing.testfile import find_test_files, parse_test

POLICY = """
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: disallow-latest
spec:
  validationFailureAction: Audit
  rules:
  - name: no-latest
    match:
      any:
      - resources:
          kinds: [Pod]
    validate:
      message: "no latest"
      pattern:
        spec:
          containers:
          - image: "!*:latest"
  - name: only-in-prod
    match:
      any:
      - resources:
          kinds: [Pod]
          namespaces: [prod]
    validate:
      pattern:
        metadata:
          name: "?*"
"""

RESOURCES = """
apiVersion: v1
kind: Pod
metadata: {name: good}
spec: {containers: [{name: c, image: "nginx:1.25"}]}
---
apiVersion: v1
kind: Pod
metadata: {name: bad, namespace: team}
spec: {containers: [{name: c, image: "nginx:latest"}]}
"""

MUTATE_POLICY = """
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: add-team}
spec:
  rules:
  - name: add-team
    match:
      any:
      - resources: {kinds: [Pod]}
    mutate:
      patchStrategicMerge:
        metadata:
          labels:
            +(team): "{{ team }}"
"""


def write(folder: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip())
    return folder


def kyverno_test(results: list[dict], **fields) -> str:
    document = {"apiVersion": "cli.kyverno.io/v1alpha1", "kind": "Test", "metadata": {"name": "t"},
                "policies": ["policy.yaml"], "resources": ["resources.yaml"], "results": results, **fields}
    return yaml.safe_dump(document, sort_keys=False)


def row(rule, resources, result, policy="disallow-latest", **more):
    return {"policy": policy, "rule": rule, "kind": "Pod", "resources": resources, "result": result, **more}


@pytest.fixture
def folder(tmp_path):
    return write(tmp_path, {"policy.yaml": POLICY, "resources.yaml": RESOURCES})


def rows_of(run):
    return [(r.rule, r.resource[3], r.actual, r.ok, r.reason) for o in run.outcomes for r in o.rows]


# -- reading test files -----------------------------------------------------------------------------


def test_parse_a_typed_test():
    test = parse_test(yaml.safe_load(kyverno_test([row("no-latest", ["good"], "pass")])), Path("x/kyverno-test.yaml"))
    assert (test.name, test.policies, test.resources) == ("t", ["policy.yaml"], ["resources.yaml"])
    [expected] = test.results
    assert (expected.policy, expected.rule, expected.resources, expected.result) == (
        "disallow-latest", "no-latest", ["good"], "pass")


def test_the_old_untyped_schema_is_refused_with_a_hint():
    with pytest.raises(KyvernoTestError, match=r"old un-typed kyverno-test\.yaml schema.*kyverno fix test"):
        parse_test({"name": "t", "policies": [], "resources": [], "results": []}, Path("kyverno-test.yaml"))


@pytest.mark.parametrize(("change", "path"), [
    ({"resourcez": []}, ("resourcez",)),
    ({"results": [{"policy": "p", "result": "pass", "operation": "PATCH"}]}, ("results", 0, "operation")),
    ({"results": [{"policy": "p", "result": "maybe"}]}, ("results", 0, "result")),
    ({"results": [{"result": "pass"}]}, ("results", 0, "policy")),
])
def test_bad_fields_are_named(change, path):
    document = yaml.safe_load(kyverno_test([]))
    document.update(change)
    with pytest.raises(KyvernoTestError) as raised:
        parse_test(document, Path("kyverno-test.yaml"))
    assert raised.value.path == path


def test_folders_are_searched_recursively(tmp_path):
    write(tmp_path, {"a/kyverno-test.yaml": "x: 1", "b/c/kyverno-test.yaml": "x: 1", "b/other.yaml": "x: 1"})
    assert [p.relative_to(tmp_path).as_posix() for p in find_test_files([tmp_path])] == [
        "a/kyverno-test.yaml", "b/c/kyverno-test.yaml"]


# -- comparing rows ---------------------------------------------------------------------------------


def test_rows_compare_as_kyverno_test_does(folder):
    write(folder, {"kyverno-test.yaml": kyverno_test([
        row("no-latest", ["good"], "pass"),
        row("no-latest", ["team/bad"], "fail"),
        row("no-latest", ["good"], "fail"),  # wrong expectation
        row("only-in-prod", ["good"], "pass"),  # the rule selects nothing: Excluded, counted as a pass
        row("no-latest", ["good"], "pass", policy="absent"),  # no response from that policy: Not found
    ])})
    run = run_tests([folder])
    assert rows_of(run) == [
        ("no-latest", "good", "pass", True, "Ok"),
        ("no-latest", "bad", "fail", True, "Ok"),
        ("no-latest", "good", "pass", False, "Want fail, got pass"),
        ("only-in-prod", "good", EXCLUDED, True, "Excluded"),
        ("no-latest", "good", NOT_FOUND, False, "Not found"),
    ]
    assert run.summary_line() == "Test Summary: 3 tests passed and 2 tests failed"


def test_strict_fails_rows_whose_rule_selected_nothing(folder):
    write(folder, {"kyverno-test.yaml": kyverno_test([row("no-latest", ["good"], "pass"),
                                                      row("only-in-prod", ["good"], "pass")])})
    assert run_tests([folder]).ok
    strict = run_tests([folder], strict=True)
    assert not strict.ok
    assert rows_of(strict) == [("no-latest", "good", "pass", True, "Ok"),
                               ("only-in-prod", "good", EXCLUDED, False, "Excluded")]


def test_a_test_that_compared_nothing_fails(folder):
    """Every row Excluded: kyverno test says "1 tests passed"; nothing was checked, so the test fails."""
    write(folder, {"kyverno-test.yaml": kyverno_test([row("only-in-prod", ["good"], "pass")])})
    run = run_tests([folder])
    [outcome] = run.outcomes
    assert rows_of(run) == [("only-in-prod", "good", EXCLUDED, True, "Excluded")]
    assert outcome.vacuous == ("nothing was compared: the rules of the 1 expected result selected none of the 2 "
                               "resources (kyverno test counts such rows as passed: Excluded)")
    assert not run.ok and run.summary_line() == "Test Summary: 1 tests passed and 1 tests failed"
    assert f"  Error: {outcome.vacuous}" in render_text(run)
    assert json.loads(render_json(run))["tests"][0]["error"] == outcome.vacuous
    suite = ElementTree.fromstring(render_junit(run)).find("testsuite")
    assert suite is not None and suite.get("failures") == "1"


@pytest.mark.parametrize(("results", "resources", "why"), [
    ([], RESOURCES, "the test lists no expected results"),
    ([row("no-latest", [], "pass")], "# no resource here\n", "no resource was loaded from resources.yaml"),
])
def test_a_test_with_nothing_to_compare_fails(folder, results, resources, why):
    write(folder, {"resources.yaml": resources, "kyverno-test.yaml": kyverno_test(results)})
    run = run_tests([folder])
    assert run.outcomes[0].vacuous == f"nothing was compared: {why}" and not run.ok


def test_a_name_no_loaded_resource_has_fails_its_row(folder):
    write(folder, {"kyverno-test.yaml": kyverno_test([row("no-latest", ["nothing", "good"], "pass")])})
    run = run_tests([folder])
    assert rows_of(run) == [("no-latest", "nothing", NOT_FOUND, False, "Resource not found"),
                            ("no-latest", "good", "pass", True, "Ok")]
    assert run.outcomes[0].rows[0].message == "no resource named 'nothing' was loaded from resources.yaml"


def test_an_entry_without_resources_checks_every_resource(folder):
    write(folder, {"kyverno-test.yaml": kyverno_test([row("no-latest", [], "pass")])})
    assert [(name, actual) for _, name, actual, _, _ in rows_of(run_tests([folder]))] == [
        ("good", "pass"), ("bad", "fail")]


def test_a_rule_the_policy_does_not_have_fails_its_row(folder):
    write(folder, {"kyverno-test.yaml": kyverno_test([row("no-such-rule", ["good"], "pass"),
                                                      row("no-latest", ["good"], "pass")])})
    run = run_tests([folder])
    assert rows_of(run)[0] == ("no-such-rule", "good", NOT_FOUND, False, "Rule not found")
    assert run.outcomes[0].rows[0].message == "policy 'disallow-latest' has no rule 'no-such-rule'"


@pytest.mark.parametrize("field", ["policies", "resources", "exceptions", "variables", "userinfo", "context"])
def test_a_missing_file_fails_the_test_naming_it(folder, field):
    value = ["absent.yaml"] if field in ("policies", "resources", "exceptions") else "absent.yaml"
    if field == "resources":
        value = ["resources.yaml", "absent.yaml"]  # not only the first: any missing resource file
    write(folder, {"kyverno-test.yaml": kyverno_test([row("no-latest", ["good"], "pass")], **{field: value})})
    run = run_tests([folder])
    [outcome] = run.outcomes
    assert outcome.error is not None and not run.ok
    assert str(outcome.error) == (f"{folder / 'kyverno-test.yaml'}: {field}: file not found: 'absent.yaml' "
                                  f"({folder / 'absent.yaml'})")


def test_a_missing_patched_resources_file_fails_its_row(folder):
    write(folder, {"kyverno-test.yaml": kyverno_test([row("no-latest", ["good"], "pass",
                                                          patchedResources="absent.yaml")])})
    run = run_tests([folder])
    assert [(r.ok, r.reason) for r in run.outcomes[0].rows] == [(False, "Resource error")]
    assert "absent.yaml" in run.outcomes[0].rows[0].message


def test_autogen_rule_names_are_found_from_the_pod_rule(tmp_path):
    deployment = ("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  template:\n    spec:\n"
                  "      containers: [{name: c, image: 'nginx:latest'}]\n")
    write(tmp_path, {"policy.yaml": POLICY, "resources.yaml": deployment,
                     "kyverno-test.yaml": kyverno_test([row("no-latest", ["d"], "fail")])})
    assert rows_of(run_tests([tmp_path])) == [("autogen-no-latest", "d", "fail", True, "Ok")]


def test_patched_resources_are_compared_after_mutation(tmp_path):
    patched = ("apiVersion: v1\nkind: Pod\nmetadata: {name: good, labels: {team: core}}\n"
               "spec: {containers: [{name: c, image: 'nginx:1.25'}]}\n")
    values = "apiVersion: cli.kyverno.io/v1alpha1\nkind: Values\nglobalValues: {team: core}\n"
    write(tmp_path, {"policy.yaml": MUTATE_POLICY, "resources.yaml": RESOURCES.split("---")[0],
                     "patched.yaml": patched, "wrong.yaml": patched.replace("core", "other"), "values.yaml": values,
                     "kyverno-test.yaml": kyverno_test([
                         row("add-team", ["good"], "pass", policy="add-team", patchedResources="patched.yaml"),
                         row("add-team", ["good"], "pass", policy="add-team", patchedResources="wrong.yaml"),
                     ], variables="values.yaml")})
    run = run_tests([tmp_path])
    assert [(r.actual, r.ok, r.reason) for r in run.outcomes[0].rows] == [
        ("pass", True, "Ok"), ("pass", False, "Resource diff")]


def test_kyverno_json_policies_run_in_the_same_format(tmp_path):
    policy = """
    apiVersion: json.kyverno.io/v1alpha1
    kind: ValidatingPolicy
    metadata: {name: check-image}
    spec:
      rules:
      - name: no-latest
        assert:
          all:
          - check:
              spec:
                (containers[?ends_with(image, ':latest')] | length(@)): 0
    """
    write(tmp_path, {"policy.yaml": policy, "resources.yaml": RESOURCES, "kyverno-test.yaml": kyverno_test([
        row("no-latest", ["good"], "pass", policy="check-image"),
        row("no-latest", ["bad"], "fail", policy="check-image")])})
    run = run_tests([tmp_path])
    assert [(r.actual, r.ok) for r in run.outcomes[0].rows] == [("pass", True), ("fail", True)]


def test_a_test_that_cannot_load_is_an_error_and_the_others_still_run(tmp_path, folder):
    write(folder, {"kyverno-test.yaml": kyverno_test([row("no-latest", ["good"], "pass")])})
    write(tmp_path / "broken", {"kyverno-test.yaml": kyverno_test([], policies=["missing.yaml"])})
    run = run_tests([tmp_path])
    errors = [o for o in run.outcomes if o.error is not None]
    assert len(errors) == 1 and "missing.yaml" in str(errors[0].error)
    assert (run.passed, run.failed) == (1, 1)


# -- reports and the command ------------------------------------------------------------------------


def test_json_and_junit_reports(folder):
    write(folder, {"kyverno-test.yaml": kyverno_test([row("no-latest", ["team/bad"], "pass")])})
    run = run_tests([folder])
    report = json.loads(render_json(run))
    assert report["summary"] == {"tests": 1, "passed": 0, "failed": 1, "errors": 0}
    [test] = report["tests"]
    assert test["results"] == [{"policy": "disallow-latest", "rule": "no-latest",
                                "resource": {"kind": "Pod", "namespace": "team", "name": "bad"},
                                "expected": "pass", "actual": "fail", "ok": False, "reason": "Want pass, got fail"}]
    suites = ElementTree.fromstring(render_junit(run))
    assert suites.get("failures") == "1"
    assert suites.find("testsuite/testcase/failure").get("message") == "Want pass, got fail"
    text = render_text(run)
    assert "│ 1  │ disallow-latest │ no-latest │ v1/Pod/team/bad │ Fail   │ Want pass, got fail │" in text
    assert text.rstrip().endswith("Test Summary: 0 tests passed and 1 tests failed")


def cli(*args):
    app = typer.Typer()
    app.callback()(lambda: None)
    app.command("test")(test_cli.test)
    return CliRunner().invoke(app, ["test", *map(str, args)])


def test_command_exit_codes_and_formats(folder):
    write(folder, {"kyverno-test.yaml": kyverno_test([row("no-latest", ["good"], "pass")])})
    result = cli(folder)
    assert result.exit_code == 0
    assert "Test Summary: 1 tests passed and 0 tests failed" in result.output
    write(folder, {"kyverno-test.yaml": kyverno_test([row("no-latest", ["good"], "fail")])})
    failed = cli(folder, "-o", "json")
    assert failed.exit_code == 1
    assert json.loads(failed.output)["summary"]["failed"] == 1
    assert cli(folder, "--strict").exit_code == 1


def test_user_info_and_per_resource_values(tmp_path):
    policy = """
    apiVersion: kyverno.io/v1
    kind: ClusterPolicy
    metadata: {name: who}
    spec:
      background: false
      rules:
      - name: admins-only
        match:
          any:
          - resources: {kinds: [ConfigMap]}
        exclude:
          any:
          - clusterRoles: [cluster-admin]
        validate:
          message: "{{ request.userInfo.username }} may not {{ request.operation }}"
          deny: {}
    """
    resources = ("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\n"
                 "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n")
    user = ("apiVersion: cli.kyverno.io/v1alpha1\nkind: UserInfo\nclusterRoles: [view]\n"
            "userInfo: {username: alice}\n")
    values = ("apiVersion: cli.kyverno.io/v1alpha1\nkind: Values\npolicies:\n- name: who\n  resources:\n"
              "  - name: b\n    values: {request.operation: UPDATE}\n")
    write(tmp_path, {"policy.yaml": policy, "resources.yaml": resources, "user.yaml": user, "values.yaml": values,
                     "kyverno-test.yaml": kyverno_test([row("admins-only", ["a", "b"], "fail", policy="who")],
                                                       userinfo="user.yaml", variables="values.yaml")})
    [outcome] = run_tests([tmp_path], file_name="kyverno-test.yaml").outcomes
    assert [(r.resource[3], r.actual, r.message) for r in outcome.rows] == [
        ("a", "fail", "alice may not CREATE"), ("b", "fail", "alice may not UPDATE")]
    write(tmp_path, {"user.yaml": user.replace("[view]", "[cluster-admin]")})
    [outcome] = run_tests([tmp_path]).outcomes
    assert {r.actual for r in outcome.rows} == {EXCLUDED}


def test_untyped_values_files_are_refused(folder):
    write(folder, {"values.yaml": "globalValues: {a: b}\n",
                   "kyverno-test.yaml": kyverno_test([row("no-latest", ["good"], "pass")], variables="values.yaml")})
    [outcome] = run_tests([folder]).outcomes
    assert outcome.error is not None and "deprecated untyped schema" in str(outcome.error)


def test_text_report_snapshot(folder, monkeypatch, snapshot):
    write(folder, {"kyverno-test.yaml": kyverno_test([row("no-latest", ["good", "team/bad"], "fail"),
                                                      row("only-in-prod", ["good"], "pass")])})
    monkeypatch.chdir(folder)
    assert render_text(run_tests(["."]), detailed=True) == snapshot
