"""Kyverno ``generate`` rules: what a trigger would make Kyverno create, data, clone, cloneList and foreach."""

from __future__ import annotations

from typing import Any

import pytest

from assertree.languages.base import ScanContext
from assertree.languages.kubernetes.cluster import Cluster
from assertree.languages.kyverno.language import compile_document
from assertree.results import FAIL, PASS, SKIP, Resource

NAMESPACE = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a", "labels": {"tier": "gold"}}}


def policy(generate: dict, **rule: Any) -> dict:
    return {"apiVersion": "kyverno.io/v1", "kind": "ClusterPolicy", "metadata": {"name": "gen"},
            "spec": {"rules": [{"name": "make", "match": {"any": [{"resources": {"kinds": ["Namespace"]}}]},
                                "generate": generate, **rule}]}}


def run(document: dict, trigger: dict = NAMESPACE, cluster: Any = None, operation: str = "CREATE"):
    compiled = compile_document(document)
    context = ScanContext(cluster=cluster, operation=operation)
    [rule] = compiled.rules
    return rule.runner(context)(Resource(trigger))


DATA = {"apiVersion": "v1", "kind": "ConfigMap", "name": "settings", "namespace": "{{request.object.metadata.name}}",
        "data": {"data": {"tier": "{{request.object.metadata.labels.tier}}", "replicas": 3}}}


def test_data_generates_the_object_named_and_placed_with_kyvernos_labels():
    result = run(policy(DATA))
    assert (result.status, result.action, result.message) == (PASS, "generate",
                                                              "would generate ConfigMap/team-a/settings")
    [made] = result.generated
    assert made["data"] == {"tier": "gold", "replicas": 3} and isinstance(made["data"]["replicas"], int)
    assert made["metadata"]["name"] == "settings" and made["metadata"]["namespace"] == "team-a"
    labels = made["metadata"]["labels"]
    assert labels["app.kubernetes.io/managed-by"] == "kyverno"
    assert (labels["generate.kyverno.io/policy-name"], labels["generate.kyverno.io/rule-name"],
            labels["generate.kyverno.io/trigger-kind"]) == ("gen", "make", "Namespace")


def test_an_existing_target_is_left_alone_unless_synchronize():
    existing = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings", "namespace": "team-a"}}
    kept = run(policy(DATA), cluster=Cluster.of([existing]))
    assert kept.status == PASS and kept.generated == [] and "would leave ConfigMap/team-a/settings" in kept.message
    synced = run(policy({**DATA, "synchronize": True}), cluster=Cluster.of([existing]))
    assert [item["metadata"]["name"] for item in synced.generated] == ["settings"]


def test_clone_copies_the_source_without_server_fields():
    source = {"apiVersion": "v1", "kind": "Secret", "type": "Opaque", "data": {"k": "dg=="},
              "metadata": {"name": "regcred", "namespace": "default", "uid": "u-1", "resourceVersion": "7",
                           "ownerReferences": [{"name": "x"}], "labels": {"keep": "me"}}}
    clone = {"apiVersion": "v1", "kind": "Secret", "name": "regcred", "namespace": "{{request.object.metadata.name}}",
             "clone": {"namespace": "default", "name": "regcred"}}
    [made] = run(policy(clone), cluster=Cluster.of([source])).generated
    assert made["data"] == {"k": "dg=="} and made["type"] == "Opaque"
    assert made["metadata"]["namespace"] == "team-a"
    assert not {"uid", "resourceVersion", "ownerReferences"} & set(made["metadata"])
    assert made["metadata"]["labels"]["keep"] == "me"
    assert made["metadata"]["labels"]["generate.kyverno.io/source-namespace"] == "default"


def test_a_clone_without_its_source_generates_nothing_and_says_why():
    clone = {"apiVersion": "v1", "kind": "Secret", "name": "regcred", "namespace": "team-a",
             "clone": {"namespace": "default", "name": "regcred"}}
    found = run(policy(clone), cluster=Cluster())
    assert (found.status, found.generated) == (PASS, [])  # Kyverno logs the failure; the rule stays pass
    assert found.message == "would generate nothing: source resource Secret/default/regcred not found"
    scanned = run(policy(clone))  # a scan: no existing resources at all
    assert scanned.message == ("would generate Secret/team-a/regcred (a clone of Secret/default/regcred, not among "
                               "the given resources)")


def test_clone_list_copies_every_selected_source_into_the_namespace():
    sources = [{"apiVersion": "v1", "kind": kind, "metadata": {"name": name, "namespace": "default",
                                                               "labels": {"share": share}}}
               for kind, name, share in (("Secret", "a", "yes"), ("ConfigMap", "b", "yes"), ("Secret", "c", "no"))]
    clone_list = {"namespace": "team-a", "cloneList": {"namespace": "default", "kinds": ["v1/Secret", "v1/ConfigMap"],
                                                       "selector": {"matchLabels": {"share": "yes"}}}}
    made = run(policy(clone_list), cluster=Cluster.of(sources)).generated
    assert [(item["kind"], item["metadata"]["namespace"], item["metadata"]["name"]) for item in made] == [
        ("Secret", "team-a", "a"), ("ConfigMap", "team-a", "b")]


def test_foreach_generates_one_object_per_element_with_its_preconditions():
    generate = {"foreach": [{"list": "request.object.metadata.labels.names | split(@, ',')",
                             "preconditions": {"all": [{"key": "{{element}}", "operator": "NotEquals",
                                                        "value": "skip"}]},
                             "apiVersion": "v1", "kind": "ConfigMap", "name": "cm-{{element}}",
                             "namespace": "team-a", "data": {"data": {"index": "{{elementIndex}}"}}}]}
    trigger = {**NAMESPACE, "metadata": {"name": "team-a", "labels": {"names": "x,skip,y"}}}
    made = run(policy(generate), trigger).generated
    assert [(item["metadata"]["name"], item["data"]["index"]) for item in made] == [("cm-x", 0), ("cm-y", 2)]


def test_preconditions_and_matching_decide_whether_the_rule_applies():
    gated = policy(DATA, preconditions={"all": [{"key": "{{request.object.metadata.labels.tier}}",
                                                 "operator": "Equals", "value": "silver"}]})
    assert run(gated).status == SKIP
    assert run(policy(DATA), {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}}) is None
    assert run(policy(DATA), operation="DELETE").status == FAIL  # the old trigger matched: Kyverno's fail


def test_a_variable_that_does_not_resolve_generates_nothing():
    broken = {**DATA, "name": "{{request.object.metadata.annotations.missing}}"}
    found = run(policy(broken))
    assert found.status == PASS and found.generated == [] and "variable substitution failed" in found.message


@pytest.mark.parametrize("key", ["synchronize", "orphanDownstreamOnPolicyDelete"])
def test_cluster_only_settings_do_not_change_what_one_trigger_generates(key: str):
    assert run(policy({**DATA, key: True})).generated == run(policy(DATA)).generated


CLONE_LIST = {"namespace": "{{request.object.metadata.name}}", "cloneList": {"namespace": "default",
                                                                              "kinds": ["v1/Secret", "v1/ConfigMap"]}}


@pytest.mark.parametrize(("generate", "path", "why"), [
    ({**DATA, "namespace": None}, ("namespace",), "target namespace must be set for a namespaced resource"),
    ({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "name": "r", "namespace": "x",
      "data": {}}, ("namespace",), "target namespace must not be set for a cluster-wide resource"),
    ({**DATA, "apiVersion": None}, ("apiVersion",), "apiVersion can not be empty"),
    ({**CLONE_LIST, "cloneList": {"namespace": "default", "kinds": ["v1/Secret", "ClusterRole"]}},
     ("cloneList", "kinds"), "mixed scope of target resources is forbidden"),
    ({**CLONE_LIST, "cloneList": {"kinds": ["v1/Secret"]}}, ("cloneList", "namespace"),
     "namespace is required for namespaced target resources"),
    ({**DATA, "clone": {"namespace": "default", "name": "s"}}, (),
     "only one of generate patterns(data, clone, cloneList and foreach) can be specified"),
])
def test_a_generate_rule_kyverno_refuses_is_not_run_and_says_why(generate, path, why):
    document = policy({key: value for key, value in generate.items() if value is not None})
    document["spec"]["rules"].append({"name": "other", "match": {"any": [{"resources": {"kinds": ["Namespace"]}}]},
                                      "generate": DATA})
    compiled = compile_document(document)
    [refused] = compiled.refused
    assert refused.rule == "make" and refused.problem.path == ("spec", "rules", 0, "generate", *path)
    assert str(refused.problem.message).endswith(f"is not run: Kyverno refuses it: {why}")
    assert [rule.rule.name for rule in compiled.rules] == ["other"]  # the other rule runs


def test_what_cannot_be_known_offline_is_not_refused():
    crd = {"apiVersion": "iam.aws.crossplane.io/v1beta1", "kind": "Role", "name": "r", "data": {}}  # scope unknown
    assert compile_document(policy(crd)).refused == []
    assert compile_document(policy(CLONE_LIST)).refused == []


def test_a_namespaced_policy_generates_into_its_own_namespace_only():
    document = policy({**DATA, "namespace": "team-b"})
    document["kind"], document["metadata"]["namespace"] = "Policy", "team-a"
    [refused] = compile_document(document).refused
    assert "a namespaced policy cannot generate resources in other namespaces, expected: team-a" in str(
        refused.problem.message)
    document["spec"]["rules"][0]["generate"]["namespace"] = "team-a"
    assert compile_document(document).refused == []
    document["spec"]["generateExistingOnPolicyUpdate"] = True
    [refused] = compile_document(document).refused
    assert refused.problem.path == ("spec", "generateExistingOnPolicyUpdate")
