"""MutatingPolicy: JSON patches and apply configurations, results carrying the patched resource."""

from __future__ import annotations

from cel_helpers import POD_RULES, deployment, pod, policy_document

from assertree.languages.base import ScanContext
from assertree.languages.kubernetes.patches import apply_configuration
from assertree.languages.kyverno.cel_policies.language import compile_document
from assertree.results import Resource


def _mutate(spec: dict, resource: dict):
    compiled = compile_document(policy_document({"matchConstraints": {"resourceRules": POD_RULES}, **spec},
                                                kind="MutatingPolicy"))
    assert compiled.rules == []  # nothing to validate
    mutator = compiled.mutator(ScanContext())
    assert mutator is not None
    after, results = mutator(Resource(resource))
    return after.value, results


def test_json_patch_and_apply_configuration_in_order() -> None:
    spec = {"mutations": [
        {"patchType": "JSONPatch", "jsonPatch": {"expression": "[JSONPatch{op: 'add', path: '/metadata/labels', "
                                                               "value: {'team': 'a'}}]"}},
        {"patchType": "ApplyConfiguration", "applyConfiguration": {"expression": (
            "Object{metadata: Object.metadata{labels: {'seen': object.metadata.labels.team}}, "
            "spec: Object.spec{containers: [Object.spec.containers{name: 'c', imagePullPolicy: 'Always'}]}}")}},
    ]}
    after, [result] = _mutate(spec, pod())
    assert result.status == "pass" and result.patched == after
    assert after["metadata"]["labels"] == {"team": "a", "seen": "a"}
    assert after["spec"]["containers"] == [{"name": "c", "image": "nginx:1.25", "imagePullPolicy": "Always"}]


def test_controllers_get_the_template_variant_and_conditions_skip() -> None:
    spec = {"matchConditions": [{"name": "no-label", "expression": "!has(object.metadata.labels)"}],
            "mutations": [{"patchType": "ApplyConfiguration", "applyConfiguration": {
                "expression": "Object{metadata: Object.metadata{labels: {'x': 'y'}}}"}}]}
    after, [result] = _mutate(spec, deployment())
    assert result.rule.name == "autogen-p" and result.status == "skip"  # the template has labels
    after, [result] = _mutate(spec, pod())
    assert after["metadata"]["labels"] == {"x": "y"}


def test_failed_patches_are_errors() -> None:
    spec = {"mutations": [{"patchType": "JSONPatch", "jsonPatch": {
        "expression": "[JSONPatch{op: 'replace', path: '/spec/nope/x', value: 1}]"}}]}
    after, [result] = _mutate(spec, pod())
    assert result.status == "error" and after == pod()


def test_apply_merges_keyed_lists_and_replaces_others() -> None:
    resource = pod(containers=[{"name": "a", "image": "x"}, {"name": "b", "image": "y"}],
                   tolerations=[{"key": "k"}])
    merged = apply_configuration(resource, {"spec": {"containers": [{"name": "b", "image": "z"}],
                                                     "tolerations": [{"key": "other"}]}})
    assert merged["spec"]["containers"] == [{"name": "a", "image": "x"}, {"name": "b", "image": "z"}]
    assert merged["spec"]["tolerations"] == [{"key": "other"}]
