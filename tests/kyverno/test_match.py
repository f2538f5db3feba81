"""Rule match/exclude (pkg/engine/utils/match.go, pkg/utils/match, pkg/utils/kube/kind.go)."""

from __future__ import annotations

import json
import os
from functools import cache

import pytest
import yaml
from conftest import CONFORMANCE

from assertree.languages.kyverno.autogen import compute_rules
from assertree.languages.kyverno.manifests import read_manifests
from assertree.languages.kyverno.match import (
    GVK,
    SelectorError,
    check_annotations,
    check_kind,
    check_selector,
    check_subjects,
    parse_kind_selector,
    resource_gvk,
    rule_matches,
)
from assertree.languages.kyverno.values import load_user_info, load_values, parse_values

POLICIES = CONFORMANCE / "kyverno-policies"
FAST = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # the corpus is large; libyaml reads it 10x faster
POD = {"apiVersion": "v1", "kind": "Pod",
       "metadata": {"name": "web-1", "namespace": "shop", "labels": {"app": "web", "tier": "front"},
                    "annotations": {"team.example.com/owner": "alice"}}}
DEPLOYMENT = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "shop"}}
NAMESPACE = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop", "labels": {"env": "prod"}}}
ALICE = {"roles": ["shop:dev"], "clusterRoles": ["view"],
         "userInfo": {"username": "alice", "groups": ["devs", "system:authenticated"]}}
ROBOT = {"userInfo": {"username": "system:serviceaccount:ci:deployer"}}


def rule(match: dict, exclude: dict | None = None) -> dict:
    out = {"name": "r", "match": match}
    if exclude is not None:
        out["exclude"] = exclude
    return out


def any_of(*resources: dict, **user) -> dict:
    return {"any": [{"resources": r, **user} for r in resources]}


# -- kinds ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "parts"), [
    ("Pod", ("*", "*", "Pod", "")),
    ("v1/Pod", ("*", "v1", "Pod", "")),
    ("apps/v1/Deployment", ("apps", "v1", "Deployment", "")),
    ("Pod/exec", ("*", "*", "Pod", "exec")),
    ("Pod.exec", ("*", "*", "Pod", "exec")),
    ("v1/Pod/status", ("*", "v1", "Pod", "status")),
    ("apps/v1/Deployment/scale", ("apps", "v1", "Deployment", "scale")),
    ("*/*", ("*", "*", "*", "*")),
    ("*/scale", ("*", "*", "*", "scale")),
    ("*", ("*", "*", "*", "")),
    ("apps/v1beta2/*", ("apps", "v1beta2", "*", "")),
    ("a/b/c/d/e", ("", "", "", "")),
])
def test_kind_selectors(text, parts):
    assert parse_kind_selector(text) == parts


@pytest.mark.parametrize(("kinds", "gvk", "subresource", "selected"), [
    (["Pod"], GVK("", "v1", "Pod"), "", True),
    (["Pod"], GVK("", "v1", "Pod"), "exec", False),
    (["Pod/exec"], GVK("", "v1", "Pod"), "exec", True),
    (["Pod"], GVK("", "v1", "Pod"), "ephemeralcontainers", True),  # kept for backwards compatibility
    (["Deployment"], GVK("", "v1", "Pod"), "ephemeralcontainers", False),
    (["v1/Pod"], GVK("", "v1", "Pod"), "", True),
    (["v2/Pod"], GVK("", "v1", "Pod"), "", False),
    (["apps/v1/Deployment"], GVK("apps", "v1", "Deployment"), "", True),
    (["batch/v1/CronJob"], GVK("batch", "v1beta1", "CronJob"), "", False),
    (["*"], GVK("x.io", "v1", "Thing"), "", True),
    (["*"], GVK("x.io", "v1", "Thing"), "status", False),
    (["*/*"], GVK("x.io", "v1", "Thing"), "status", True),
    (["Config*"], GVK("", "v1", "ConfigMap"), "", True),
    (["Secret", "ConfigMap"], GVK("", "v1", "ConfigMap"), "", True),
])
def test_kind_matching(kinds, gvk, subresource, selected):
    assert check_kind(kinds, gvk, subresource) is selected


def test_resource_gvk_and_subresources_from_values():
    assert resource_gvk(DEPLOYMENT) == (GVK("apps", "v1", "Deployment"), "")
    assert resource_gvk(POD) == (GVK("", "v1", "Pod"), "")
    values = parse_values("""subresources:
- subresource: {name: pods/exec, kind: PodExecOptions, group: "", version: v1}
  parentResource: {name: pods, kind: Pod, group: "", version: v1}
""")
    exec_options = {"apiVersion": "v1", "kind": "PodExecOptions", "metadata": {"name": "x", "namespace": "shop"}}
    assert resource_gvk(exec_options, values.subresources) == (GVK("", "v1", "Pod"), "exec")
    assert rule_matches(rule(any_of({"kinds": ["Pod/exec"]})), exec_options, subresources=values.subresources)
    assert not rule_matches(rule(any_of({"kinds": ["Pod"]})), exec_options, subresources=values.subresources)


# -- names, namespaces, annotations, operations ----------------------------------------------------------------


@pytest.mark.parametrize(("description", "resource", "selected"), [
    ({"kinds": ["Pod"], "names": ["web-*"]}, POD, True),
    ({"kinds": ["Pod"], "names": ["db-*", "web-?"]}, POD, True),
    ({"kinds": ["Pod"], "name": "web"}, POD, False),
    ({"kinds": ["Pod"], "namespaces": ["sh*"]}, POD, True),
    ({"kinds": ["Pod"], "namespaces": ["default"]}, POD, False),
    ({"kinds": ["Namespace"], "namespaces": ["shop"]}, NAMESPACE, True),  # a Namespace's namespace is its name
    ({"annotations": {"team.example.com/*": "al*"}}, POD, True),
    ({"annotations": {"team.example.com/owner": "bob"}}, POD, False),
    ({"kinds": ["Pod"], "operations": ["CREATE"]}, POD, True),
    ({"kinds": ["Pod"], "operations": ["UPDATE", "DELETE"]}, POD, False),
])
def test_resource_descriptions(description, resource, selected):
    assert rule_matches(rule(any_of(description)), resource).matched is selected


def test_generate_name_stands_in_for_a_missing_name():
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"generateName": "job-abc-", "namespace": "x"}}
    assert rule_matches(rule(any_of({"kinds": ["Pod"], "names": ["job-*"]})), pod)


def test_operations_come_from_the_request():
    assert rule_matches(rule(any_of({"kinds": ["Pod"], "operations": ["UPDATE"]})), POD, operation="UPDATE")


# -- label selectors ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(("selector", "selected"), [
    ({}, True),
    ({"matchLabels": {"app": "web"}}, True),
    ({"matchLabels": {"app": "db"}}, False),
    ({"matchLabels": {"app": "w*"}}, True),  # wildcards in matchLabels are expanded against the labels
    ({"matchLabels": {"*": "front"}}, True),
    ({"matchLabels": {"ap?": "x*"}}, False),
    ({"matchExpressions": [{"key": "tier", "operator": "In", "values": ["front", "back"]}]}, True),
    ({"matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["front"]}]}, False),
    ({"matchExpressions": [{"key": "missing", "operator": "NotIn", "values": ["front"]}]}, True),
    ({"matchExpressions": [{"key": "app", "operator": "Exists"}]}, True),
    ({"matchExpressions": [{"key": "app", "operator": "DoesNotExist"}]}, False),
    ({"matchLabels": {"app": "web"}, "matchExpressions": [{"key": "tier", "operator": "DoesNotExist"}]}, False),
])
def test_selectors(selector, selected):
    assert check_selector(selector, POD["metadata"]["labels"]) is selected


@pytest.mark.parametrize("selector", [
    {"matchExpressions": [{"key": "app", "operator": "In", "values": ["w*"]}]},  # no wildcards in expressions
    {"matchExpressions": [{"key": "app", "operator": "In", "values": []}]},
    {"matchExpressions": [{"key": "app", "operator": "Exists", "values": ["x"]}]},
    {"matchExpressions": [{"key": "app", "operator": "Gt", "values": ["1"]}]},
    {"matchLabels": {"bad key!": "x"}},
])
def test_invalid_selectors_never_select(selector):
    with pytest.raises(SelectorError):
        check_selector(selector, POD["metadata"]["labels"])
    result = rule_matches(rule({"all": [{"resources": {"kinds": ["Pod"], "selector": selector}}]}), POD)
    assert not result.matched
    assert any(reason.startswith("failed to parse selector") for reason in result.reasons)


def test_namespace_selector_uses_namespace_labels():
    description = {"kinds": ["Pod"], "namespaceSelector": {"matchLabels": {"env": "prod"}}}
    assert rule_matches(rule(any_of(description)), POD, namespace_labels={"env": "prod"})
    assert not rule_matches(rule(any_of(description)), POD, namespace_labels={"env": "dev"})
    assert not rule_matches(rule(any_of(description)), POD)  # an unknown namespace has no labels
    namespaces = rule({"resources": {"kinds": ["Namespace"], "namespaceSelector": {"matchLabels": {"env": "prod"}}}})
    result = rule_matches(namespaces, NAMESPACE, namespace_labels={"env": "prod"})
    assert result.reasons[-1] == "namespace selector is not applicable for namespace resource"


def test_velero_namespace_selector_from_the_values_file():
    folder = POLICIES / "velero/backup-all-volumes"
    policy = yaml.safe_load((folder / "backup-all-volumes.yaml").read_text())
    labels = load_values(folder / ".kyverno-test/values.yaml").namespace_labels()
    pods = {m.value["metadata"]["name"]: m.value for m in read_manifests(folder / ".kyverno-test/resource.yaml")}
    written = policy["spec"]["rules"][0]
    for name, selected in [("first", True), ("third", True), ("second", False)]:
        pod = pods[name]
        assert rule_matches(written, pod, namespace_labels=labels.get(pod["metadata"]["namespace"])).matched is selected


# -- user info ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("subjects", "request_info", "selected"), [
    ([{"kind": "User", "name": "ali*"}], ALICE, True),
    ([{"kind": "User", "name": "bob"}], ALICE, False),
    ([{"kind": "Group", "name": "devs"}], ALICE, True),
    ([{"kind": "ServiceAccount", "name": "deployer", "namespace": "ci"}], ROBOT, True),
    ([{"kind": "ServiceAccount", "name": "*", "namespace": "c?"}], ROBOT, True),
    ([{"kind": "ServiceAccount", "name": "deployer", "namespace": "prod"}], ROBOT, False),
])
def test_subjects(subjects, request_info, selected):
    assert check_subjects(subjects, request_info) is selected


def test_roles_and_cluster_roles_need_an_exact_name_in_common():
    assert rule_matches(rule(any_of({"kinds": ["Pod"]}, roles=["shop:dev"])), POD, request_info=ALICE)
    assert rule_matches(rule(any_of({"kinds": ["Pod"]}, clusterRoles=["edit", "view"])), POD, request_info=ALICE)
    assert not rule_matches(rule(any_of({"kinds": ["Pod"]}, clusterRoles=["vie*"])), POD, request_info=ALICE)
    assert not rule_matches(rule(any_of({"kinds": ["Pod"]}, roles=["x"])), POD, request_info=ROBOT)


def test_match_ignores_user_info_without_a_requester_but_exclude_does_not():
    assert rule_matches(rule(any_of({"kinds": ["Pod"]}, clusterRoles=["admin"])), POD)
    assert not rule_matches(rule({"any": [{"clusterRoles": ["admin"]}]}), POD).matched  # then nothing is left
    excluded = rule(any_of({"kinds": ["Pod"]}), {"any": [{"clusterRoles": ["cluster-admin"]}]})
    assert rule_matches(excluded, POD)  # no user info: the exclusion cannot apply
    assert not rule_matches(excluded, POD, request_info={"clusterRoles": ["cluster-admin"]})


def test_traefik_exclude_cluster_admin_with_and_without_user_info():
    policy = yaml.safe_load((POLICIES / "traefik/disallow-default-tlsoptions/disallow-default-tlsoptions.yaml")
                            .read_text())
    written = policy["spec"]["rules"][0]
    option = {"apiVersion": "traefik.io/v1alpha1", "kind": "TLSOption",
              "metadata": {"name": "default", "namespace": "default"}}
    assert rule_matches(written, option)  # the row expects `fail`: the rule runs
    assert not rule_matches(written, option, request_info={"clusterRoles": ["cluster-admin"]})
    assert not rule_matches(written, {**option, "metadata": {"name": "other", "namespace": "default"}})


def test_a_user_info_file_selects_subjects():
    info = load_user_info(POLICIES / "other-vpol/limit-configmap-for-sa/.kyverno-test/userinfo.yaml")
    policy = yaml.safe_load((POLICIES / "other/limit-configmap-for-sa/limit-configmap-for-sa.yaml").read_text())
    second_filter_only = {"name": "r", "match": {"any": policy["spec"]["rules"][0]["match"]["any"][1:]}}
    config_map = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "x"}}
    assert rule_matches(second_filter_only, config_map, request_info=info.request_info())
    assert not rule_matches(second_filter_only, config_map, request_info={"userInfo": {"username": "bob"}})


# -- any, all, legacy, exclude --------------------------------------------------------------------------------


def test_any_all_and_the_legacy_form():
    assert rule_matches(rule(any_of({"kinds": ["Secret"]}, {"kinds": ["Pod"]})), POD)
    all_of = {"all": [{"resources": {"kinds": ["Pod"]}}, {"resources": {"namespaces": ["shop"]}}]}
    assert rule_matches(rule(all_of), POD)
    all_of["all"].append({"resources": {"names": ["db"]}})
    result = rule_matches(rule(all_of), POD)
    assert result.reasons == ("rule r not matched:", "none of the names match")
    assert rule_matches(rule({"resources": {"kinds": ["Pod"], "selector": {"matchLabels": {"app": "web"}}}}), POD)
    assert not rule_matches(rule({"resources": {"kinds": ["Deployment"]}}), POD)
    assert rule_matches(rule({}), POD).reasons[-1] == "match cannot be empty"


def test_exclusions():
    excluded_any = rule(any_of({"kinds": ["Pod"]}), {"any": [{"resources": {"namespaces": ["kube-*"]}},
                                                             {"resources": {"names": ["web-*"]}}]})
    assert not rule_matches(excluded_any, POD)
    excluded_all = rule(any_of({"kinds": ["Pod"]}), {"all": [{"resources": {"namespaces": ["shop"]}},
                                                             {"resources": {"names": ["db"]}}]})
    assert rule_matches(excluded_all, POD)  # one criterion does not hold: not excluded
    excluded_all["exclude"]["all"][1]["resources"]["names"] = ["web-1"]
    assert rule_matches(excluded_all, POD).reasons[-1] == (
        "resource excluded since the combination of all criteria exclude it")
    legacy = rule(any_of({"kinds": ["Pod"]}), {"resources": {"selector": {"matchLabels": {"tier": "front"}}}})
    assert not rule_matches(legacy, POD)
    assert rule_matches(rule(any_of({"kinds": ["Pod"]}), {}), POD)


def test_namespaced_policies_only_see_their_namespace():
    assert rule_matches(rule(any_of({"kinds": ["Pod"]})), POD, policy_namespace="shop")
    result = rule_matches(rule(any_of({"kinds": ["Pod"]})), POD, policy_namespace="other")
    assert result.reasons[-1] == "policy and resource namespaces mismatch"


def test_delete_requests_match_the_old_object():
    assert rule_matches(rule(any_of({"kinds": ["Pod"]})), None, old_resource=POD, operation="DELETE")
    assert rule_matches(rule(any_of({"kinds": ["Pod"]})), None).reasons[-1] == "resource is empty"


def test_annotations_helper():
    assert check_annotations({"a": "*"}, {"a": "x"})
    assert not check_annotations({"a": "*"}, None)


# -- the conformance corpus: every expected failure is a rule the resource is selected by ----------------------


@cache
def _corpus_rows() -> list[tuple]:
    manifest = json.loads((POLICIES / "manifest.json").read_text())
    out = []
    for test in manifest["tests"]:
        folder = POLICIES / test["path"]
        spec = yaml.load((POLICIES / test["test"]).read_text(), Loader=FAST)
        policies = {}
        for path in spec.get("policies") or []:
            for document in yaml.load_all((folder / path).read_text(), Loader=FAST):
                if document and document.get("kind") in ("ClusterPolicy", "Policy"):
                    policies[document["metadata"]["name"]] = document
        resources = []
        for path in spec.get("resources") or []:
            if os.path.exists(folder / path):
                resources += [m.value for m in read_manifests(folder / path)]
        values = load_values(folder / spec["variables"]) if spec.get("variables") else None
        user = load_user_info(folder / spec["userinfo"]).request_info() if spec.get("userinfo") else None
        for row in test["rows"]:
            if row["result"] == "fail" and row["policy"] in policies and not row.get("vacuous"):
                out.append((test["path"], row, policies[row["policy"]], resources, values, user))
    return out


def test_every_failing_row_selects_its_resource():
    rows = _corpus_rows()
    assert len(rows) > 600
    unmatched = []
    for path, row, policy, resources, values, user in rows:
        wanted = {row["rule"], f"autogen-{row['rule']}", f"autogen-cronjob-{row['rule']}"}
        rules = [r for r in compute_rules(policy) if r["name"] in wanted]
        candidates = [r for r in resources if r.get("metadata", {}).get("name") == row["resource"]["name"]
                      and r.get("kind") == row["resource"]["kind"]]
        for resource in candidates[:1]:
            name = resource["metadata"]["name"]
            operation = values.resource_values(row["policy"], name)["request.operation"] if values else "CREATE"
            labels = (values.namespace_labels() if values else {}).get(resource["metadata"].get("namespace", ""))
            namespace = policy["metadata"].get("namespace", "") if policy["kind"] == "Policy" else ""
            if not any(rule_matches(r, resource, operation=operation, namespace_labels=labels, request_info=user,
                                    policy_namespace=namespace) for r in rules):
                unmatched.append((path, row["rule"], name))
    assert unmatched == []
