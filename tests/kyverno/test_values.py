"""The Kyverno CLI's values and user-info files (cmd/cli/kubectl-kyverno/apis/v1alpha1, variables/variables.go)."""

from __future__ import annotations

import json

import pytest
import yaml
from conftest import CONFORMANCE

from assertree.errors import PayloadError
from assertree.languages.kyverno.values import (
    NamespaceSelector,
    Subresource,
    load_user_info,
    load_values,
    parse_user_info,
    parse_values,
    values_from_spec,
)

POLICIES = CONFORMANCE / "kyverno-policies"


def _values_files():
    manifest = json.loads((POLICIES / "manifest.json").read_text())
    for test in manifest["tests"] + manifest["celTests"]:
        if "variables" in test["testFields"]:
            path = POLICIES / test["test"]
            yield path.parent / yaml.safe_load(path.read_text())["variables"]


VALUES_FILES = list(_values_files())


def test_the_corpus_has_values_files():
    assert len(VALUES_FILES) >= 30


@pytest.mark.parametrize("path", VALUES_FILES, ids=lambda p: str(p.relative_to(POLICIES).parent.parent))
def test_every_values_file_of_the_corpus_loads(path):
    values = load_values(path)
    raw = yaml.safe_load(path.read_text())
    assert values.typed
    assert values.source == str(path)
    assert [policy.name for policy in values.policies] == [p["name"] for p in raw.get("policies") or []]
    for policy, raw_policy in zip(values.policies, raw.get("policies") or [], strict=True):
        assert [rule.name for rule in policy.rules] == [r["name"] for r in raw_policy.get("rules") or []]
        resources = raw_policy.get("resources") or []
        assert [r.values for r in policy.resources] == [r.get("values") or {} for r in resources]


def test_resource_values_merge_global_then_resource_values_and_default_the_operation():
    values = load_values(POLICIES / "other/block-updates-deletes/.kyverno-test/values.yaml")
    assert values.resource_values("block-updates-deletes", "my-service-2") == {"request.operation": "UPDATE"}
    assert values.resource_values("block-updates-deletes", "my-service-1") == {"request.operation": "CREATE"}
    assert values.resource_values("other-policy", "my-service-2") == {"request.operation": "CREATE"}
    rule = values.rule("block-updates-deletes", "block-updates-deletes")
    assert rule is not None and rule.values == {} and rule.foreach_values == {}


def test_rule_values_are_found_under_autogen_names():
    values = load_values(POLICIES / "other/block-large-images/.kyverno-test/values.yaml")
    for name in ("block-over-twogi", "autogen-block-over-twogi", "autogen-cronjob-block-over-twogi"):
        assert values.rule("block-large-images", name).values == {"imageSize": "3Gi"}
    assert values.rule("block-large-images", "autogen-other") is None


def test_dotted_and_multiline_values_are_kept_as_written():
    values = load_values(POLICIES / "other/dns-policy-and-dns-config/.kyverno-test/variables.yaml")
    config = values.rule("change-dns-config-policy", "dns-policy").values["dictionary.data.ClusterConfiguration"]
    assert config.startswith("apiServer:\n  certSANs:\n  - kubernetes\n")


def test_namespace_labels_from_selectors_and_namespaces():
    values = load_values(POLICIES / "velero/backup-all-volumes/.kyverno-test/values.yaml")
    assert values.namespace_selectors == (NamespaceSelector("foo", {"velero-backup-pvc": "true"}),
                                          NamespaceSelector("bar", {"env": "production"}))
    assert values.namespace_labels() == {"foo": {"velero-backup-pvc": "true"}, "bar": {"env": "production"}}
    spec = {"namespaceSelector": [{"name": "a", "labels": {"x": "1"}}],
            "namespaces": [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a", "labels": {"y": "2"}}}]}
    inline = values_from_spec(spec)
    assert inline.namespace_labels() == {"a": {"y": "2"}}  # namespaces win
    assert inline.namespace("a")["metadata"]["labels"] == {"y": "2"}
    assert values.namespace("bar") == {"apiVersion": "v1", "kind": "Namespace",
                                       "metadata": {"name": "bar", "labels": {"env": "production"}}}
    assert values.namespace("zzz") is None


def test_global_values_foreach_values_and_subresources():
    text = """
apiVersion: cli.kyverno.io/v1alpha1
kind: Values
globalValues:
  request.operation: DELETE
  team: blue
policies:
- name: p
  rules:
  - name: r
    foreachValues:
      color: [red, green]
subresources:
- subresource: {name: pods/exec, kind: PodExecOptions, group: "", version: v1}
  parentResource: {name: pods, kind: Pod, group: "", version: v1}
"""
    values = parse_values(text, "values.yaml")
    assert values.operation == "DELETE"
    assert values.resource_values("p", "any") == {"request.operation": "DELETE", "team": "blue"}
    rule = values.rule("p", "r")
    assert rule.variables() == {"color": "red"}
    assert rule.variables(1) == {"color": "green"}
    assert values.subresources == (Subresource("pods/exec", "", "v1", "PodExecOptions", "", "v1", "Pod"),)
    assert values.subresources[0].subresource == "exec"


def test_the_old_untyped_form_is_read_and_flagged():
    values = parse_values("policies:\n- name: p\n  resources:\n  - name: r\n    values: {a: 1}\n")
    assert not values.typed
    assert values.resource_values("p", "r") == {"a": 1, "request.operation": "CREATE"}


@pytest.mark.parametrize(("text", "message", "path"), [
    ("apiVersion: cli.kyverno.io/v1alpha1\nkind: Values\npolicy: []\n", 'unknown field "policy"', ("policy",)),
    ("policies:\n- name: p\n  rules:\n  - name: r\n    value: {}\n", 'unknown field "value"',
     ("policies", 0, "rules", 0, "value")),
    ("policies:\n- rules: []\n", "required field is missing", ("policies", 0, "name")),
    ("namespaceSelector:\n- name: a\n  labels: {x: 1}\n", "a label value is a string",
     ("namespaceSelector", 0, "labels", "x")),
    ("policies: {}\n", "expected a list", ("policies",)),
    ("- 1\n", "a values file is a mapping", ()),
])
def test_bad_values_files_are_located_errors(text, message, path):
    with pytest.raises(PayloadError) as caught:
        parse_values(text, "bad.yaml")
    assert message in caught.value.message
    assert caught.value.path == path
    assert caught.value.source == "bad.yaml"


def test_yaml_errors_carry_the_line(tmp_path):
    path = tmp_path / "values.yaml"
    path.write_text("policies:\n  - name: [unclosed\n")
    with pytest.raises(PayloadError) as caught:
        load_values(path)
    assert caught.value.source == str(path)
    assert caught.value.line is not None
    with pytest.raises(PayloadError, match="cannot read values file"):
        load_values(tmp_path / "missing.yaml")


# -- user info ---------------------------------------------------------------------------------------------


def test_user_info_file_of_the_corpus():
    info = load_user_info(POLICIES / "other-vpol/limit-configmap-for-sa/.kyverno-test/userinfo.yaml")
    assert info.typed
    assert info.username == "system:serviceaccount:another-namespace:another-developer"
    assert info.request_info() == {"userInfo": {"username": info.username}}


def test_user_info_with_roles_and_groups():
    info = parse_user_info("""
apiVersion: cli.kyverno.io/v1alpha1
kind: UserInfo
metadata: {name: u}
clusterRoles: [cluster-admin]
roles: [dev:reader]
userInfo:
  username: molybdenum@somecorp.com
  groups: [system:authenticated]
""")
    assert info.request_info() == {"roles": ["dev:reader"], "clusterRoles": ["cluster-admin"],
                                   "userInfo": {"username": "molybdenum@somecorp.com",
                                                "groups": ["system:authenticated"]}}


@pytest.mark.parametrize(("text", "path"), [
    ("clusterRole: [a]\n", ("clusterRole",)),
    ("userInfo: {name: x}\n", ("userInfo", "name")),
    ("roles: [1]\n", ("roles", 0)),
    ("userInfo: []\n", ("userInfo",)),
])
def test_bad_user_info_files_are_located_errors(text, path):
    with pytest.raises(PayloadError) as caught:
        parse_user_info(text, "user.yaml")
    assert caught.value.path == path
