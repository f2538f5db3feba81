"""``assertree compare``: ClusterPolicies and their CEL twins from kyverno/policies, run side by side."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
import typer
import yaml

import assertree
from assertree import cli
from assertree.cli.compare import EXAMPLES
from assertree.cli.compare import compare as compare_command
from assertree.errors import PolicyError, UsageError
from assertree.results import ERROR, FAIL, PASS, SKIP, WARN, Resource, RuleResult
from assertree.testing.compare import Comparison, VerdictStatus, compare, pair_policies, policy_verdict
from assertree.testing.compare_report import render_json, render_text
from assertree.testing.testfile import read_test_file

CORPUS = Path(__file__).resolve().parents[1] / "conformance" / "data" / "kyverno-policies"

# (old test folder, new test folder): a ClusterPolicy and its twin, each with its own kyverno-test.yaml
AGREEING = [
    ("best-practices/disallow-latest-tag", "best-practices-cel/disallow-latest-tag"),
    ("best-practices/disallow-latest-tag", "best-practices-vpol/disallow-latest-tag"),
    ("best-practices/require-probes", "best-practices-vpol/require-probes"),
    ("best-practices/restrict-service-external-ips", "best-practices-vpol/restrict-service-external-ips"),
    ("pod-security/baseline/disallow-privileged-containers",
     "pod-security-vpol/baseline/disallow-privileged-containers"),
    ("linkerd/prevent-linkerd-port-skipping", "linkerd-cel/prevent-linkerd-port-skipping"),
]


def twin_inputs(*folders: str) -> tuple[list[Path], list[Resource]]:
    """The policy files of each folder's kyverno-test.yaml, and the resources of all of them (first of each)."""
    policies: list[Path] = []
    files: list[str] = []
    for folder in folders:
        [test] = read_test_file(CORPUS / folder / ".kyverno-test" / "kyverno-test.yaml")
        policies.append(test.path(test.policies[0]))
        files.extend(str(test.path(name)) for name in test.resources)
    seen = set()
    resources = []
    for resource in assertree.load_resources(files).resources:
        metadata = resource.value["metadata"]
        key = (resource.value["kind"], metadata.get("namespace"), metadata["name"])
        if key not in seen:
            seen.add(key)
            resources.append(resource)
    return policies, resources


def run_twins(old: str, new: str, **options) -> Comparison:
    (old_file, new_file), resources = twin_inputs(old, new)
    return compare(resources, assertree.load_policies(old_file), assertree.load_policies(new_file), **options)


@pytest.mark.parametrize(("old", "new"), AGREEING, ids=[new for _, new in AGREEING])
def test_real_twins_agree_on_the_resources_of_both_tests(old: str, new: str) -> None:
    comparison = run_twins(old, new)
    assert [twin.paired_by for twin in comparison.twins] == ["name"]
    assert comparison.differences == [] and comparison.agree
    verdicts = {row.old.status for row in comparison.rows}
    assert {VerdictStatus.FAIL, VerdictStatus.PASS} <= verdicts  # both outcomes were really compared
    assert len(comparison.rows) == len(comparison.resources)


def test_an_altered_twin_is_reported_where_its_verdict_changes(tmp_path: Path) -> None:
    (old_file, new_file), resources = twin_inputs("best-practices/disallow-latest-tag",
                                                  "best-practices-vpol/disallow-latest-tag")
    document = yaml.safe_load(new_file.read_text())
    altered = copy.deepcopy(document)
    del altered["spec"]["validations"][1]  # forget the ':latest' check
    new = [assertree.compile_document(altered, source="altered.yaml")]
    comparison = compare(resources, assertree.load_policies(old_file), new)
    assert not comparison.agree
    changed = sorted((row.resource.value["kind"], row.resource.value["metadata"]["name"])
                     for row in comparison.differences)
    assert changed == [("Deployment", "vit-baddeployment01"), ("Pod", "vit-badpod01"), ("Pod", "vit-badpod02")]
    for row in comparison.differences:
        assert (row.old.status, row.new.status) == (VerdictStatus.FAIL, VerdictStatus.PASS)
        assert row.admission_changes
        assert any("mutable image tag" in message for message in row.old.messages)
    text = render_text(comparison)
    assert "Pod vit-badpod01 (" in text and "old fail, new pass  [admission changes]" in text
    assert text.endswith("1 twin pair on 8 resources: 5 verdicts agree, 3 differ\n")
    report = json.loads(render_json(comparison))
    assert report["summary"]["differ"] == 3 and report["agree"] is False
    assert report["differences"][0]["new"] == {"policy": "disallow-latest-tag", "kind": "ValidatingPolicy",
                                               "verdict": "pass", "rules": [report["differences"][0]["new"]
                                                                            ["rules"][0]], "messages": []}


def test_a_twin_that_checks_less_is_caught_in_the_corpus() -> None:
    """kyverno/policies' own tests expect this: the ClusterPolicy checks initContainers, its CEL twins do not."""
    for new in ("other-cel/require-image-checksum", "other-vpol/require-image-checksum"):
        comparison = run_twins("other/require-image-checksum", new)
        assert [(row.resource.value["metadata"]["name"], row.old.status, row.new.status)
                for row in comparison.differences] == [("myapp-pod-1", "fail", "pass"), ("mydeploy", "fail", "pass")]
        assert any("initContainers" in message for row in comparison.differences for message in row.old.messages)


# --- pairing


def policy(name: str, *, kind: str = "ValidatingPolicy", namespace: str | None = None, source: str | None = None):
    class Info:
        pass

    info = Info()
    info.name, info.kind, info.namespace, info.source = name, kind, namespace, source
    return info


def names(twins) -> list[tuple[str, str, str]]:
    return [(twin.old.name, twin.new.name, twin.paired_by) for twin in twins]


def test_twins_pair_by_name_then_by_suffix_and_explicit_pairs_come_first() -> None:
    old = [policy("a"), policy("b"), policy("c"), policy("d")]
    new = [policy("x"), policy("b-cel"), policy("a"), policy("c-vpol"), policy("e")]
    twins, old_only, new_only = pair_policies(old, new, {"d": "x"})
    assert names(twins) == [("a", "a", "name"), ("b", "b-cel", "suffix"), ("c", "c-vpol", "suffix"),
                            ("d", "x", "pair")]
    assert (old_only, [p.name for p in new_only]) == ([], ["e"])


def test_a_namespaced_policy_is_named_with_its_namespace() -> None:
    twins, old_only, new_only = pair_policies([policy("p", kind="Policy", namespace="team")], [policy("p")])
    assert twins == [] and len(old_only) == len(new_only) == 1
    twins, _, _ = pair_policies([policy("p", kind="Policy", namespace="team")], [policy("p")], {"team/p": "p"})
    assert names(twins) == [("p", "p", "pair")]


def test_pairing_refuses_what_it_cannot_tell_apart() -> None:
    with pytest.raises(PolicyError, match="two new policies are named 'a'"):
        pair_policies([policy("a")], [policy("a", source="1.yaml"), policy("a", source="2.yaml")])
    with pytest.raises(UsageError, match="no new policy named 'zz'"):
        pair_policies([policy("a")], [policy("b")], {"a": "zz"})
    with pytest.raises(UsageError, match="paired twice"):
        pair_policies([policy("a"), policy("b")], [policy("c")], {"a": "c", "b": "c"})


# --- verdicts


def results(*statuses: str) -> list[RuleResult]:
    info = policy("p")
    return [RuleResult(Resource({}), info, policy(f"r{n}"), status, message=f"m{n}")
            for n, status in enumerate(statuses)]


@pytest.mark.parametrize(("statuses", "verdict"), [
    ((PASS, ERROR, FAIL, SKIP), "fail"),
    ((PASS, WARN), "fail"),
    ((PASS, ERROR, SKIP), "error"),
    ((SKIP, PASS), "pass"),
    ((SKIP,), "skip"),
    ((), "not-selected"),
])
def test_a_policy_verdict_is_its_strongest_rule_outcome(statuses: tuple[str, ...], verdict: str) -> None:
    assert policy_verdict(results(*statuses)).status == verdict


def test_the_deciding_rules_give_the_messages() -> None:
    verdict = policy_verdict(results(PASS, FAIL, FAIL))
    assert (verdict.rules, verdict.messages) == (("r1", "r2"), ("r1: m1", "r2: m2"))
    assert policy_verdict(results(PASS)).messages == ()


SKIPPING = """apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: only-prod}
spec:
  rules:
    - name: only-prod
      match: {any: [{resources: {kinds: [Pod]}}]}
      preconditions: {all: [{key: "{{ request.object.metadata.namespace }}", operator: Equals, value: prod}]}
      validate: {pattern: {metadata: {labels: {team: "?*"}}}}
"""
EXCLUDING = SKIPPING.replace("      preconditions:",
                             "      exclude: {any: [{resources: {namespaces: [dev]}}]}\n      preconditions:")
SKIPPING_CEL = """apiVersion: policies.kyverno.io/v1alpha1
kind: ValidatingPolicy
metadata: {name: only-prod-vpol}
spec:
  matchConstraints:
    resourceRules: [{apiGroups: [""], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [pods]}]
  matchConditions: [{name: prod, expression: "object.metadata.namespace == 'prod'"}]
  validations: [{expression: "has(object.metadata.labels) && 'team' in object.metadata.labels"}]
"""


def test_skip_and_not_selected_agree_unless_strict(tmp_path: Path) -> None:
    """The old policy excludes namespace dev (not selected there), the new one skips it (a match condition)."""
    old = tmp_path / "old.yaml"
    new = tmp_path / "new.yaml"
    old.write_text(EXCLUDING)
    new.write_text(SKIPPING_CEL)
    pods = [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": namespace, "labels": labels}}
            for namespace, labels in (("dev", {}), ("prod", {"team": "a"}), ("prod", {}))]
    old_policies, new_policies = assertree.load_policies(old), assertree.load_policies(new)
    comparison = compare(pods, old_policies, new_policies)
    assert [(row.old.status, row.new.status) for row in comparison.rows] == [
        ("not-selected", "skip"), ("pass", "pass"), ("fail", "fail")]
    assert comparison.rows[0].new.messages == ("only-prod-vpol: match condition 'prod' is false",)
    assert comparison.agree and names(comparison.twins) == [("only-prod", "only-prod-vpol", "suffix")]
    strict = compare(pods, old_policies, new_policies, strict=True)
    assert [row.resource.value["metadata"]["namespace"] for row in strict.differences] == ["dev"]


# --- the command


def command(name: str | None = None) -> typer.Typer:
    app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)
    app.callback()(lambda: None)  # a group, so the command is named as in the real app
    app.command("compare", epilog=EXAMPLES)(compare_command)
    return app


@pytest.fixture
def run(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):
    """``assertree compare ARGS`` through `assertree.cli.main`; returns (exit code, stdout, stderr)."""
    monkeypatch.setattr(cli, "build_app", command)

    def invoke(*args: object) -> tuple[int, str, str]:
        code = cli.main(["compare", *(str(arg) for arg in args)])
        out, err = capsys.readouterr()
        return code, out, err

    return invoke


def test_cli_exits_0_when_twins_agree(run) -> None:
    (old, new), _ = twin_inputs("best-practices/disallow-latest-tag", "best-practices-vpol/disallow-latest-tag")
    code, out, err = run("--old", old, "--new", new, old.parent / ".kyverno-test" / "resource.yaml")
    assert (code, err) == (0, "")
    assert out == "1 twin pair on 8 resources: 8 verdicts agree, 0 differ\n"


def test_cli_exits_1_and_lists_differences_as_json(run) -> None:
    (old, new), _ = twin_inputs("other/require-image-checksum", "other-vpol/require-image-checksum")
    code, out, _ = run("--policy", old, "--policy-new", new, "-o", "json", old.parent / ".kyverno-test")
    assert code == 1
    report = json.loads(out)
    assert [(d["resource"]["name"], d["old"]["verdict"], d["new"]["verdict"]) for d in report["differences"]] == [
        ("myapp-pod-1", "fail", "pass"), ("mydeploy", "fail", "pass")]


def test_cli_lists_policies_without_a_twin_and_fails_on_them_only_when_strict(run, tmp_path: Path) -> None:
    (old, new), _ = twin_inputs("best-practices/disallow-latest-tag", "best-practices-vpol/disallow-latest-tag")
    extra = tmp_path / "extra.yaml"
    extra.write_text(SKIPPING)
    resources = old.parent / ".kyverno-test" / "resource.yaml"
    code, out, _ = run("--old", old, "--old", extra, "--new", new, resources)
    assert code == 0 and f"no twin: old ClusterPolicy only-prod ({extra})\n" in out
    assert run("--old", old, "--old", extra, "--new", new, "--strict", resources)[0] == 1


def test_cli_bad_input_exits_2(run, tmp_path: Path) -> None:
    (old, new), _ = twin_inputs("best-practices/disallow-latest-tag", "best-practices-vpol/disallow-latest-tag")
    resources = old.parent / ".kyverno-test" / "resource.yaml"
    code, _, err = run("--old", old, "--new", new, "--pair", "nonsense", resources)
    assert code == 2 and "expected OLD=NEW" in err
    other = tmp_path / "other.yaml"
    other.write_text(SKIPPING)
    code, _, err = run("--old", old, "--new", other, resources)
    assert code == 2 and "pair them with --pair OLD=NEW" in err
    assert run("--old", old, "--new", new, "-o", "sarif", resources)[0] == 2
    assert run("--old", old, "--new", new, tmp_path / "missing.yaml")[0] == 2
