"""Pod-controller variants, as Kyverno's CEL autogen makes them."""

from __future__ import annotations

from cel_helpers import POD_RULES, deployment, pod, policy_document, run

from assertree.languages.kyverno.cel_policies.autogen import can_autogen, variants
from assertree.languages.kyverno.cel_policies.language import compile_document

SPEC = {
    "matchConstraints": {"resourceRules": POD_RULES},
    "validations": [{"expression": "object.spec.containers.all(c, c.image.endsWith(':1.25'))",
                     "message": "object.metadata.name must pin images"}],
    "variables": [{"name": "ns", "expression": "object.metadata.namespace"}],
}


def test_variants_per_replacement_group() -> None:
    found = variants(SPEC, mutating=False)
    assert [(group, kinds) for group, kinds, _ in found] == [
        ("cronjobs", ["CronJob"]), ("defaults", ["DaemonSet", "Deployment", "ReplicaSet", "StatefulSet", "Job"])]
    cronjob, defaults = found[0][2], found[1][2]
    assert defaults["validations"][0]["expression"].startswith("object.spec.template.spec.containers")
    assert cronjob["validations"][0]["expression"].startswith("object.spec.jobTemplate.spec.template.spec.")
    assert defaults["validations"][0]["message"] == "object.spec.template.metadata.name must pin images"
    assert defaults["variables"][0]["expression"] == "object.metadata.namespace"  # protected
    assert defaults["matchConstraints"]["resourceRules"] == [
        {"apiGroups": ["apps"], "apiVersions": ["v1"], "resources": ["daemonsets", "deployments", "replicasets",
                                                                     "statefulsets"],
         "operations": ["CREATE", "UPDATE"]},
        {"apiGroups": ["batch"], "apiVersions": ["v1"], "resources": ["jobs"], "operations": ["CREATE", "UPDATE"]}]


def test_configured_controllers_and_refusals() -> None:
    only = variants({**SPEC, "autogen": {"podControllers": {"controllers": ["deployments"]}}}, mutating=False)
    assert [kinds for _, kinds, _ in only] == [["Deployment"]]
    assert variants({**SPEC, "autogen": {"podControllers": {"controllers": []}}}, mutating=False) == []
    assert not can_autogen({"resourceRules": [{**POD_RULES[0], "resources": ["pods", "services"]}]})
    assert not can_autogen({"resourceRules": POD_RULES, "objectSelector": {"matchLabels": {"a": "b"}}})


def test_mutating_apply_configurations_are_wrapped() -> None:
    spec = {"matchConstraints": {"resourceRules": POD_RULES}, "mutations": [
        {"patchType": "ApplyConfiguration",
         "applyConfiguration": {"expression": "Object{metadata: Object.metadata{labels: {'a': 'b'}}}"}},
        {"patchType": "JSONPatch", "jsonPatch": {"expression": "[JSONPatch{op: 'add', path: '/spec/x', value: 1}]"}},
    ]}
    [_, (_, _, defaults)] = variants(spec, mutating=True)
    assert defaults["mutations"][0]["applyConfiguration"]["expression"] == (
        "Object{spec: Object.spec{template: Object.spec.template{metadata: Object.metadata{labels: {'a': 'b'}}}}}")
    assert defaults["mutations"][1] == spec["mutations"][1]  # JSON patches are kept, as Kyverno keeps them


def test_rules_run_on_controllers() -> None:
    document = policy_document(SPEC, name="pin")
    compiled = compile_document(document)
    assert [rule.name for rule in compiled.policy.rules] == ["pin", "autogen-cronjob-pin", "autogen-pin"]
    [result] = run(document, deployment(containers=[{"name": "c", "image": "nginx:latest"}]))
    assert (result.rule.name, result.status) == ("autogen-pin", "fail")
    [result] = run(document, pod())
    assert (result.rule.name, result.status) == ("pin", "pass")
