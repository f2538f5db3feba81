"""Admission policies on the command line: scan (--params, --unbound), test, apply, lint; exit codes and messages."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from admission_helpers import binding, config_map, map_, pod, vap

from assertree.cli import main

LIMIT = vap("replica-limit", paramKind={"apiVersion": "v1", "kind": "ConfigMap"},
            matchConstraints={"resourceRules": [{"apiGroups": ["apps"], "apiVersions": ["v1"],
                                                 "operations": ["CREATE", "UPDATE"], "resources": ["deployments"]}]},
            validations=[{"expression": "object.spec.replicas <= int(params.data.maxReplicas)",
                          "messageExpression": "'at most ' + params.data.maxReplicas + ' replicas'"}])
BINDING = binding("replica-limit", paramRef={"name": "limits", "parameterNotFoundAction": "Deny"})


def deployment(name: str, replicas: int) -> dict:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"replicas": replicas, "template": {"spec": {"containers": [{"name": "a", "image": "x"}]}}}}


def run(args: list, capsys) -> tuple[int, str, str]:
    code = main([str(arg) for arg in args])
    out = capsys.readouterr()
    assert "Traceback" not in out.err
    return code, out.out, out.err


@pytest.fixture
def files(tmp_path: Path) -> Path:
    (tmp_path / "policy.yaml").write_text(yaml.safe_dump_all([LIMIT, BINDING], sort_keys=False))
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(config_map("limits", maxReplicas="3")))
    (tmp_path / "small.yaml").write_text(yaml.safe_dump(deployment("small", 2)))
    (tmp_path / "big.yaml").write_text(yaml.safe_dump(deployment("big", 5)))
    return tmp_path


def test_scan_with_params(files: Path, capsys, monkeypatch, snapshot) -> None:
    monkeypatch.chdir(files)
    code, out, err = run(["scan", "--policy", "policy.yaml", "--params", "params.yaml", "small.yaml", "big.yaml"],
                         capsys)
    assert code == 1
    assert out == snapshot
    assert err == ""


def test_scan_json_report(files: Path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(files)
    code, out, _ = run(["scan", "-o", "json", "--policy", "policy.yaml", "--params", "params.yaml", "big.yaml"],
                       capsys)
    assert code == 1
    report = json.loads(out)
    assert "at most 3 replicas" in json.dumps(report)


def test_params_not_found_deny_is_an_error_of_the_request(files: Path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(files)
    code, out, _ = run(["scan", "--policy", "policy.yaml", "small.yaml"], capsys)
    assert code == 1
    assert "no params found for policy binding with `Deny` parameterNotFoundAction" in out


def test_a_params_file_that_is_not_there_or_not_a_resource(files: Path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(files)
    code, _, err = run(["scan", "--policy", "policy.yaml", "--params", "missing.yaml", "small.yaml"], capsys)
    assert (code, err.strip()) == (2, "assertree: error: missing.yaml: parameter file or directory not found")
    (files / "list.yaml").write_text("- just\n- a list\n")
    code, _, err = run(["scan", "--policy", "policy.yaml", "--params", "list.yaml", "small.yaml"], capsys)
    assert code == 2
    assert "list.yaml:1: a parameter resource must be a mapping" in err


def test_unbound_policies_warn_and_skip_unless_run_as_if_bound(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "policy.yaml").write_text(yaml.safe_dump(vap("no-latest", validations=[
        {"expression": "object.spec.containers.all(c, !c.image.endsWith(':latest'))"}])))
    (tmp_path / "pod.yaml").write_text(yaml.safe_dump(pod(containers=[{"name": "a", "image": "nginx:latest"}])))
    code, out, err = run(["scan", "--policy", "policy.yaml", "pod.yaml"], capsys)
    assert code == 0
    assert "ValidatingAdmissionPolicy 'no-latest' is not bound" in err
    assert "SKIPPED" in out
    code, out, err = run(["scan", "--unbound", "--policy", "policy.yaml", "pod.yaml"], capsys)
    assert code == 1
    assert "not bound" not in err


def test_assertree_test_reads_param_resources_and_patched_resources(tmp_path: Path, capsys) -> None:
    label = {"patchType": "ApplyConfiguration", "applyConfiguration": {
        "expression": "Object{metadata: Object.metadata{labels: {'checked': 'yes'}}}"}}
    documents = [LIMIT, BINDING, map_("label", mutations=[label], matchConstraints=LIMIT["spec"]["matchConstraints"]),
                 binding("label", mutating=True)]
    (tmp_path / "policy.yaml").write_text(yaml.safe_dump_all(documents, sort_keys=False))
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(config_map("limits", maxReplicas="3")))
    (tmp_path / "resources.yaml").write_text(yaml.safe_dump_all([deployment("small", 2), deployment("big", 5)]))
    patched = deployment("small", 2)
    patched["metadata"]["labels"] = {"checked": "yes"}
    (tmp_path / "patched.yaml").write_text(yaml.safe_dump(patched))
    (tmp_path / "kyverno-test.yaml").write_text(yaml.safe_dump({
        "apiVersion": "cli.kyverno.io/v1alpha1", "kind": "Test", "metadata": {"name": "limits"},
        "policies": ["policy.yaml"], "resources": ["resources.yaml"], "paramResources": ["params.yaml"],
        "results": [
            {"isValidatingAdmissionPolicy": True, "policy": "replica-limit", "resources": ["big"], "kind": "Deployment",
             "result": "fail"},
            {"isValidatingAdmissionPolicy": True, "policy": "replica-limit", "resources": ["small"],
             "kind": "Deployment", "result": "pass"},
            {"isMutatingAdmissionPolicy": True, "policy": "label", "resources": ["small"], "kind": "Deployment",
             "result": "pass", "patchedResources": "patched.yaml"},
        ]}))
    code, out, _ = run(["test", str(tmp_path)], capsys)
    assert code == 0, out
    assert "Test Summary: 3 tests passed and 0 tests failed" in out


def test_apply_writes_a_mutating_admission_policy_fix(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    owner = {"patchType": "JSONPatch", "jsonPatch": {"expression": (
        "[JSONPatch{op: 'add', path: '/metadata/labels', value: {'owner': 'platform'}}]")}}
    (tmp_path / "policy.yaml").write_text(yaml.safe_dump_all([map_(mutations=[owner]), binding("m", mutating=True)]))
    (tmp_path / "pod.yaml").write_text("apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\nspec:\n  containers: []\n")
    code, out, _ = run(["apply", "--policy", "policy.yaml", "pod.yaml"], capsys)
    assert code == 0
    assert yaml.safe_load(out)["metadata"] == {"name": "web", "labels": {"owner": "platform"}}


def test_lint_names_a_binding_without_its_policy(tmp_path: Path, capsys) -> None:
    (tmp_path / "binding.yaml").write_text(yaml.safe_dump(binding("gone")))
    code, out, _ = run(["lint", tmp_path / "binding.yaml"], capsys)
    assert code == 1
    assert "binds ValidatingAdmissionPolicy 'gone', which is not among the policies given" in out


def test_scan_warns_when_params_of_a_binding_were_not_given(files: Path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(files)
    code, _, err = run(["scan", "--policy", "policy.yaml", "small.yaml"], capsys)
    assert code == 1
    assert "binding 'replica-limit-binding' takes params of kind ConfigMap (v1), and --params gave none" in err


def test_assertree_test_reads_params_as_written(tmp_path: Path, capsys) -> None:
    """A parameter resource without a namespace, of a custom kind, is cluster-scoped: a request in any namespace
    finds it (the test's resources get the CLI's default namespace, its params do not)."""
    policy = vap("limit", paramKind={"apiVersion": "example.com/v1", "kind": "Limits"},
                 validations=[{"expression": "size(object.spec.containers) <= params.max"}])
    (tmp_path / "policy.yaml").write_text(yaml.safe_dump_all([policy, binding(
        "limit", paramRef={"name": "global", "parameterNotFoundAction": "Deny"})]))
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(
        {"apiVersion": "example.com/v1", "kind": "Limits", "metadata": {"name": "global"}, "max": 1}))
    (tmp_path / "pods.yaml").write_text(yaml.safe_dump_all([pod("one", namespace="team-a"), pod(
        "two", namespace=None, containers=[{"name": "a", "image": "x"}, {"name": "b", "image": "y"}])]))
    (tmp_path / "kyverno-test.yaml").write_text(yaml.safe_dump({
        "apiVersion": "cli.kyverno.io/v1alpha1", "kind": "Test", "metadata": {"name": "limits"},
        "policies": ["policy.yaml"], "resources": ["pods.yaml"], "paramResources": ["params.yaml"],
        "results": [{"isValidatingAdmissionPolicy": True, "policy": "limit", "resources": ["one"], "result": "pass"},
                    {"isValidatingAdmissionPolicy": True, "policy": "limit", "resources": ["two"], "result": "fail"}]}))
    code, out, _ = run(["test", "--strict", str(tmp_path)], capsys)
    assert code == 0, out
