"""Kyverno's autogen rules for Pod controllers and CronJobs (pkg/autogen/v1)."""

from __future__ import annotations

import json
from functools import cache

import pytest
import yaml
from conftest import CONFORMANCE

from assertree.languages.kyverno.autogen import (
    ANNOTATION,
    autogen_controllers,
    autogen_rules,
    can_autogen,
    compute_rules,
)

POLICIES = CONFORMANCE / "kyverno-policies"
FAST = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # the corpus is large; libyaml reads it 10x faster
CONTROLLER_GVKS = ["apps/v1/DaemonSet", "apps/v1/Deployment", "batch/v1/Job", "apps/v1/ReplicaSet",
                   "v1/ReplicationController", "apps/v1/StatefulSet"]


def policy(*rules: dict, annotations: dict | None = None) -> dict:
    metadata: dict = {"name": "p"}
    if annotations is not None:
        metadata["annotations"] = annotations
    return {"apiVersion": "kyverno.io/v1", "kind": "ClusterPolicy", "metadata": metadata,
            "spec": {"rules": list(rules)}}


def pod_rule(name: str = "check", **body) -> dict:
    return {"name": name, "match": {"any": [{"resources": {"kinds": ["Pod"]}}]}, **body}


PATTERN = {"validate": {"message": "no", "pattern": {"spec": {"containers": [{"image": "!*:latest"}]}}}}


# -- the conformance corpus -------------------------------------------------------------------------------------


@cache
def _tests() -> list[tuple[dict, dict]]:
    manifest = json.loads((POLICIES / "manifest.json").read_text())
    out = []
    for test in manifest["tests"]:
        spec = yaml.load((POLICIES / test["test"]).read_text(), Loader=FAST)
        policies = {}
        for path in spec.get("policies") or []:
            for document in yaml.load_all((POLICIES / test["path"] / path).read_text(), Loader=FAST):
                if document and document.get("kind") in ("ClusterPolicy", "Policy"):
                    policies[document["metadata"]["name"]] = document
        out.append((test, policies))
    return out


def test_every_autogen_rule_named_by_the_corpus_is_generated():
    named = 0
    for test, policies in _tests():
        for row in test["rows"]:
            if row["rule"].startswith("autogen-") and not row.get("vacuous"):
                named += 1
                assert row["rule"] in [r["name"] for r in autogen_rules(policies[row["policy"]])], test["path"]
    assert named >= 5  # most rows name the Pod rule; `kyverno test` then also reads its autogen results


def test_controller_rows_that_need_autogen_have_a_rule_for_their_kind():
    checked = 0
    for test, policies in _tests():
        for row in test["rows"]:
            kind = row["resource"]["kind"]
            if "autogen" not in row.get("needs", []) or row.get("vacuous") or kind == "Pod":
                continue
            base = row["rule"].removeprefix("autogen-cronjob-").removeprefix("autogen-")
            wanted = f"autogen-cronjob-{base}" if kind == "CronJob" else f"autogen-{base}"
            generated = {r["name"]: r for r in autogen_rules(policies[row["policy"]])}
            if row["result"] == "skip" and wanted not in generated:
                continue  # a skip row is also satisfied by no rule at all
            assert wanted in generated, (test["path"], row)
            kinds = [k for f in generated[wanted]["match"].get("any") or generated[wanted]["match"].get("all") or
                     [generated[wanted]["match"]] for k in (f.get("resources") or {}).get("kinds") or []]
            assert any(k.endswith("/" + kind) for k in kinds), (test["path"], kinds)
            checked += 1
    assert checked > 300


def test_every_corpus_policy_with_pod_rules_is_handled_consistently():
    for _, policies in _tests():
        for document in policies.values():
            generated = autogen_rules(document)
            names = [r["name"] for r in generated]
            assert len(names) == len(set(names))
            written = {r["name"] for r in document["spec"]["rules"]}
            for rule in generated:
                base = rule["name"].removeprefix("autogen-cronjob-").removeprefix("autogen-")
                assert base in written or len(rule["name"]) == 63
                assert "request.object.spec.template.spec.template" not in json.dumps(rule)
            assert compute_rules(document)[: len(document["spec"]["rules"])] == document["spec"]["rules"]


# -- when autogen applies ---------------------------------------------------------------------------------------


def test_pod_rules_get_controller_and_cronjob_rules():
    generated = autogen_rules(policy(pod_rule(**PATTERN)))
    assert [r["name"] for r in generated] == ["autogen-check", "autogen-cronjob-check"]
    controllers, cronjob = generated
    assert controllers["match"] == {"any": [{"resources": {"kinds": CONTROLLER_GVKS}}]}
    written = PATTERN["validate"]["pattern"]
    assert controllers["validate"] == {"message": "no", "pattern": {"spec": {"template": written}}}
    assert cronjob["match"] == {"any": [{"resources": {"kinds": ["batch/v1/CronJob"]}}]}
    assert cronjob["validate"]["pattern"] == {"spec": {"jobTemplate": {"spec": {"template": written}}}}
    assert autogen_controllers(policy(pod_rule(**PATTERN))) == ",".join(sorted(
        ["DaemonSet", "Deployment", "Job", "StatefulSet", "ReplicaSet", "ReplicationController", "CronJob"]))


@pytest.mark.parametrize(("rules", "reason"), [
    ([pod_rule(**PATTERN), {"name": "g", "match": {"any": [{"resources": {"kinds": ["Namespace"]}}]},
                            "generate": {"kind": "ConfigMap"}}], "a generate rule anywhere"),
    ([pod_rule(mutate={"patchesJson6902": "- op: add"})], "a JSON 6902 patch"),
    ([pod_rule(mutate={"foreach": [{"list": "x", "patchesJson6902": "- op: add"}]})], "a foreach JSON 6902 patch"),
    ([{"name": "n", "match": {"any": [{"resources": {"kinds": ["Pod"], "names": ["a"]}}]}, **PATTERN}], "names"),
    ([{"name": "n", "match": {"resources": {"kinds": ["Pod"], "selector": {"matchLabels": {"a": "b"}}}},
       **PATTERN}], "a selector"),
    ([{"name": "n", "match": {"any": [{"resources": {"kinds": ["Pod", "Service"]}}]}, **PATTERN}], "mixed kinds"),
    ([{"name": "n", "match": {"any": [{"resources": {"kinds": ["Pod"]}}]},
       "exclude": {"any": [{"resources": {"kinds": ["Pod"], "annotations": {}}}]}, **PATTERN}], "exclude annotations"),
    ([{"name": "n", "match": {"any": [{"resources": {"kinds": ["v1/Pod"]}}]}, **PATTERN}], "Pod not written plainly"),
    ([{"name": "n", "match": {"any": [{"resources": {"kinds": ["Service"]}}]}, **PATTERN}], "no Pod"),
])
def test_conditions_that_turn_autogen_off(rules, reason):
    assert not can_autogen(policy(*rules))[0], reason
    assert autogen_rules(policy(*rules)) == []
    assert compute_rules(policy(*rules)) == rules


def test_the_annotation_narrows_the_controllers():
    narrowed = autogen_rules(policy(pod_rule(**PATTERN), annotations={ANNOTATION: "StatefulSet,Deployment"}))
    assert [r["name"] for r in narrowed] == ["autogen-check"]
    assert narrowed[0]["match"]["any"][0]["resources"]["kinds"] == ["apps/v1/Deployment", "apps/v1/StatefulSet"]
    only_cron = autogen_rules(policy(pod_rule(**PATTERN), annotations={ANNOTATION: "CronJob"}))
    assert [r["name"] for r in only_cron] == ["autogen-cronjob-check"]
    assert autogen_rules(policy(pod_rule(**PATTERN), annotations={ANNOTATION: "none"})) == []
    spaced = autogen_rules(policy(pod_rule(**PATTERN), annotations={ANNOTATION: "Deployment, StatefulSet"}))
    assert spaced[0]["match"]["any"][0]["resources"]["kinds"] == ["apps/v1/Deployment"]  # " StatefulSet" is unknown


def test_the_annotation_cannot_force_autogen():
    names = {"name": "n", "match": {"any": [{"resources": {"kinds": ["Pod"], "names": ["a"]}}]}, **PATTERN}
    assert autogen_rules(policy(names, annotations={ANNOTATION: "Deployment"})) == []


def test_rules_not_on_pods_are_left_out_but_do_not_stop_the_others():
    service = {"name": "svc", "match": {"any": [{"resources": {"kinds": ["Service"]}}]}, **PATTERN}
    excluded_deployments = {"name": "x", "match": {"any": [{"resources": {"kinds": ["Pod"]}}]},
                            "exclude": {"any": [{"resources": {"kinds": ["Deployment"]}}]}, **PATTERN}
    generated = autogen_rules(policy(pod_rule(**PATTERN), service, excluded_deployments))
    assert [r["name"] for r in generated] == ["autogen-check", "autogen-cronjob-check"]


def test_written_autogen_rules_are_replaced():
    written = [pod_rule(**PATTERN), {**pod_rule("autogen-old", **PATTERN)}]
    assert [r["name"] for r in compute_rules(policy(*written))] == ["check", "autogen-check", "autogen-cronjob-check"]


# -- how rules are rewritten -----------------------------------------------------------------------------------


def test_request_paths_are_rewritten_everywhere():
    rule = pod_rule(
        context=[{"name": "n", "variable": {"jmesPath": "request.object.metadata.name"}}],
        preconditions={"all": [{"key": "{{ request.object.spec.hostNetwork || `false` }}", "operator": "Equals",
                                "value": False}]},
        validate={"message": "{{ request.oldObject.metadata.labels.app }}", "deny": {"conditions": {"any": [
            {"key": "{{ request.object.spec.containers[].name }}", "operator": "AnyIn", "value": ["x"]}]}}},
    )
    controllers, cronjob = autogen_rules(policy(rule))
    assert controllers["context"][0]["variable"]["jmesPath"] == "request.object.spec.template.metadata.name"
    assert controllers["preconditions"]["all"][0]["key"] == (
        "{{ request.object.spec.template.spec.hostNetwork || `false` }}")
    assert controllers["validate"]["message"] == "{{ request.oldObject.spec.template.metadata.labels.app }}"
    assert controllers["validate"]["deny"]["conditions"]["any"][0]["key"] == (
        "{{ request.object.spec.template.spec.containers[].name }}")
    assert cronjob["context"][0]["variable"]["jmesPath"] == (
        "request.object.spec.jobTemplate.spec.template.metadata.name")
    assert cronjob["validate"]["deny"]["conditions"]["any"][0]["key"] == (
        "{{ request.object.spec.jobTemplate.spec.template.spec.containers[].name }}")


def test_cel_rules_rewrite_object_paths():
    rule = pod_rule(validate={"cel": {"expressions": [{"expression": "object.spec.containers.all(c, true)"}]}})
    controllers, cronjob = autogen_rules(policy(rule))
    assert controllers["validate"]["cel"]["expressions"][0]["expression"] == (
        "object.spec.template.spec.containers.all(c, true)")
    assert cronjob["validate"]["cel"]["expressions"][0]["expression"] == (
        "object.spec.jobTemplate.spec.template.spec.containers.all(c, true)")


def test_any_pattern_foreach_and_mutations():
    any_pattern = pod_rule(validate={"anyPattern": [{"spec": {"a": 1}}, {"spec": {"b": 2}}]})
    assert autogen_rules(policy(any_pattern))[0]["validate"]["anyPattern"] == [
        {"spec": {"template": {"spec": {"a": 1}}}}, {"spec": {"template": {"spec": {"b": 2}}}}]
    foreach = pod_rule(validate={"foreach": [{"list": "request.object.spec.containers", "deny": {}}]})
    assert autogen_rules(policy(foreach))[0]["validate"]["foreach"][0]["list"] == (
        "request.object.spec.template.spec.containers")
    patch = pod_rule(mutate={"patchStrategicMerge": {"metadata": {"labels": {"a": "b"}}}})
    controllers, cronjob = autogen_rules(policy(patch))
    assert controllers["mutate"] == {"patchStrategicMerge": {"spec": {"template": {
        "metadata": {"labels": {"a": "b"}}}}}}
    assert cronjob["mutate"] == {"patchStrategicMerge": {"spec": {"jobTemplate": {"spec": {"template": {
        "metadata": {"labels": {"a": "b"}}}}}}}}
    mutate_foreach = pod_rule(mutate={"foreach": [{"list": "request.object.spec.containers", "order": "Ascending",
                                                   "patchStrategicMerge": {"spec": {"x": 1}}}]})
    assert autogen_rules(policy(mutate_foreach))[0]["mutate"] == {"foreach": [
        {"list": "request.object.spec.template.spec.containers",
         "patchStrategicMerge": {"spec": {"template": {"spec": {"x": 1}}}}}]}


def test_only_the_filters_naming_pod_are_rewritten_and_fields_are_kept():
    rule = {"name": "r", "match": {"any": [{"resources": {"kinds": ["Pod"], "namespaces": ["prod"]}},
                                           {"resources": {"kinds": ["Deployment"]}}]},
            "exclude": {"any": [{"resources": {"kinds": ["Pod"], "namespaces": ["kube-system"]}}]},
            "skipBackgroundRequests": True, "imageExtractors": {"Pod": []},
            "validate": {"message": "m", "failureAction": "Enforce", "allowExistingViolations": False,
                         "pattern": {"spec": {}}}}
    controllers, cronjob = autogen_rules(policy(rule))
    assert controllers["match"]["any"] == [{"resources": {"kinds": CONTROLLER_GVKS, "namespaces": ["prod"]}},
                                           {"resources": {"kinds": ["Deployment"]}}]
    assert controllers["exclude"]["any"] == [{"resources": {"kinds": CONTROLLER_GVKS, "namespaces": ["kube-system"]}}]
    assert cronjob["match"]["any"] == [{"resources": {"kinds": ["batch/v1/CronJob"], "namespaces": ["prod"]}},
                                       {"resources": {"kinds": ["batch/v1/CronJob"]}}]
    assert controllers["skipBackgroundRequests"] is True
    assert "imageExtractors" not in controllers  # not a field of Kyverno's generated rule
    assert controllers["validate"]["failureAction"] == "Enforce"
    assert controllers["validate"]["allowExistingViolations"] is False


def test_legacy_match_and_long_names():
    rule = {"name": "x" * 70, "match": {"resources": {"kinds": ["Pod"]}}, **PATTERN}
    controllers, cronjob = autogen_rules(policy(rule))
    assert controllers["match"] == {"resources": {"kinds": CONTROLLER_GVKS}}
    assert cronjob["match"] == {"resources": {"kinds": ["batch/v1/CronJob"]}}
    assert controllers["name"] == ("autogen-" + "x" * 70)[:63]
    assert len(cronjob["name"]) == 63


def test_message_references_are_shifted():
    rule = pod_rule(validate={"message": "bad $(./../../pattern/spec/containers/0/image)",
                              "pattern": {"spec": {"containers": [{"image": "*"}]}}})
    assert autogen_rules(policy(rule))[0]["validate"]["message"] == (
        "bad $(./../../pattern/spec/template/spec/containers/0/image)")


def test_rules_without_a_supported_body_are_not_generated():
    targets_only = pod_rule(mutate={"targets": [{"kind": "ConfigMap"}], "patchStrategicMerge": None})
    assert autogen_rules(policy(targets_only)) == []
    verify = pod_rule(verifyImages=[{"imageReferences": ["*"]}])
    assert [r["name"] for r in autogen_rules(policy(verify))] == ["autogen-check", "autogen-cronjob-check"]



def test_cronjob_rules_give_every_filter_the_cronjob_kind():
    subjects = {"subjects": [{"kind": "User", "name": "a"}]}
    rule = {"name": "r", "match": {"any": [{"resources": {"kinds": ["Pod"]}}, subjects]}, **PATTERN}
    controllers, cronjob = autogen_rules(policy(rule))
    assert controllers["match"]["any"][1] == subjects  # no Pod kind: left alone
    assert cronjob["match"]["any"][1] == {**subjects, "resources": {"kinds": ["batch/v1/CronJob"]}}
