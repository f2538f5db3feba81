"""MutatingAdmissionPolicy as the apiserver's mutating plugin runs it: apply configurations, JSON patches,
failure policy, params, reinvocation, and validation after mutation.

Expected outcomes follow k8s.io/apiserver/pkg/admission/plugin/policy/mutating (dispatcher.go, patch/).
"""

from __future__ import annotations

import pickle

from admission_helpers import binding, compiled, config_map, map_, pod, run, vap

from assertree.apply import apply_mutations
from assertree.engine.scan import scan
from assertree.languages.base import ScanContext

LABEL = {"patchType": "ApplyConfiguration", "applyConfiguration": {
    "expression": "Object{metadata: Object.metadata{labels: {'owner': 'platform'}}}"}}


def mutated(documents: list[dict], resource: dict, **context) -> tuple[dict, list]:
    result = scan([resource], compiled(*documents), context=ScanContext(**context))
    return result.resources[0].value, [(str(found.policy.name), str(found.status)) for found in result.results]


def test_an_apply_configuration_merges_in() -> None:
    value, results = mutated([map_(mutations=[LABEL]), binding("m", mutating=True)], pod(labels={"app": "web"}))
    assert value["metadata"]["labels"] == {"app": "web", "owner": "platform"}
    assert results == [("m", "pass")]


def test_keyed_lists_merge_by_key_and_other_lists_are_replaced() -> None:
    sidecar = {"patchType": "ApplyConfiguration", "applyConfiguration": {"expression": """
        Object{spec: Object.spec{containers: [Object.spec.containers{name: 'app', imagePullPolicy: 'Always'},
                                              Object.spec.containers{name: 'proxy', image: 'envoy'}]}}"""}}
    value, _ = mutated([map_(mutations=[sidecar]), binding("m", mutating=True)], pod())
    assert value["spec"]["containers"] == [{"name": "app", "image": "nginx:1.27", "imagePullPolicy": "Always"},
                                           {"name": "proxy", "image": "envoy"}]


def test_a_json_patch_applies_as_the_apiserver_applies_it() -> None:
    patch = {"patchType": "JSONPatch", "jsonPatch": {"expression": """[
        JSONPatch{op: 'add', path: '/metadata/annotations', value: {}},
        JSONPatch{op: 'add', path: '/metadata/annotations/' + jsonpatch.escapeKey('example.com/owner'),
                  value: 'platform'}]"""}}
    value, results = mutated([map_(mutations=[patch]), binding("m", mutating=True)], pod())
    assert value["metadata"]["annotations"] == {"example.com/owner": "platform"}
    assert results == [("m", "pass")]


def test_a_json_patch_makes_no_missing_parent_and_fails_the_request() -> None:
    patch = {"patchType": "JSONPatch", "jsonPatch": {"expression": (
        "[JSONPatch{op: 'add', path: '/metadata/annotations/owner', value: 'platform'}]")}}
    value, results = mutated([map_(mutations=[patch]), binding("m", mutating=True)], pod())
    assert "annotations" not in value["metadata"]
    assert results == [("m", "error")]
    _ignored, results = mutated([map_(mutations=[patch], failurePolicy="Ignore"), binding("m", mutating=True)], pod())
    assert results == [("m", "skip")]


def test_a_failed_test_operation_leaves_the_object_as_it_was() -> None:
    patch = {"patchType": "JSONPatch", "jsonPatch": {"expression": (
        "[JSONPatch{op: 'test', path: '/metadata/name', value: 'db'},"
        " JSONPatch{op: 'add', path: '/metadata/labels', value: {'x': 'y'}}]")}}
    value, results = mutated([map_(mutations=[patch]), binding("m", mutating=True)], pod())
    assert "labels" not in value["metadata"]
    assert results == [("m", "pass")]


def test_match_conditions_and_unbound_policies_skip() -> None:
    only_db = [{"name": "db", "expression": "object.metadata.name == 'db'"}]
    conditional = map_(mutations=[LABEL], matchConditions=only_db)
    value, results = mutated([conditional, binding("m", mutating=True)], pod())
    assert results == [("m", "skip")] and "labels" not in value["metadata"]
    value, results = mutated([map_(mutations=[LABEL])], pod())
    assert results == [("m", "skip")] and "labels" not in value["metadata"]
    value, results = mutated([map_(mutations=[LABEL])], pod(), run_unbound=True)
    assert value["metadata"]["labels"] == {"owner": "platform"}


def test_params_reach_mutations() -> None:
    from_params = {"patchType": "ApplyConfiguration", "applyConfiguration": {
        "expression": "Object{metadata: Object.metadata{labels: {'owner': params.data.owner}}}"}}
    policy = map_(mutations=[from_params], paramKind={"apiVersion": "v1", "kind": "ConfigMap"})
    value, _ = mutated([policy, binding("m", mutating=True, paramRef={"name": "owners", "parameterNotFoundAction":
                                                                        "Deny"})],
                       pod(), params=(config_map("owners", owner="team-a"),))
    assert value["metadata"]["labels"] == {"owner": "team-a"}


def test_mutations_come_before_validation() -> None:
    documents = [map_(mutations=[LABEL]), binding("m", mutating=True),
                 vap(validations=[{"expression": "object.metadata.labels.owner == 'platform'"}]), binding()]
    results = run(documents, [pod()])
    assert [(result.policy.name, str(result.status)) for result in results] == [("m", "pass"), ("p", "pass")]


def test_reinvocation_if_needed() -> None:
    """A MAP that runs first and reads a label a later MAP sets is run again when reinvocationPolicy allows."""
    copy_owner = {"patchType": "ApplyConfiguration", "applyConfiguration": {"expression": (
        "has(object.metadata.labels) && 'owner' in object.metadata.labels ? "
        "Object{metadata: Object.metadata{annotations: {'owner': object.metadata.labels['owner']}}} : Object{}")}}
    for policy, expected in (("IfNeeded", {"owner": "platform"}), ("Never", None)):
        first = map_("a-copy", mutations=[copy_owner], reinvocationPolicy=policy)
        value, results = mutated([first, binding("a-copy", mutating=True), map_("b-label", mutations=[LABEL]),
                                  binding("b-label", mutating=True)], pod())
        assert value["metadata"].get("annotations") == expected, policy
        assert results == [("a-copy", "pass"), ("b-label", "pass")]


def test_apply_writes_fixes_back_without_adding_the_request_namespace() -> None:
    policies = compiled(map_(mutations=[LABEL]), binding("m", mutating=True))
    applied = apply_mutations([pod(namespace=None)], policies)
    assert applied[0].mutated["metadata"] == {"name": "web", "labels": {"owner": "platform"}}
    assert applied[0].changed


def test_a_compiled_policy_pickles_with_its_bindings() -> None:
    policy = compiled(vap(validations=[{"expression": "false"}]), binding())[0]
    again = pickle.loads(pickle.dumps(policy))
    assert [found.name for found in again.policy.bindings] == ["p-binding"]
    assert scan([pod()], [again]).results[0].status == "fail"


def test_a_fix_written_back_leaves_out_the_defaults_the_policy_saw() -> None:
    pull = {"patchType": "ApplyConfiguration", "applyConfiguration": {"expression": (
        "Object{spec: Object.spec{containers: object.spec.containers.filter(c, c.imagePullPolicy == 'Always')"
        ".map(c, Object.spec.containers{name: c.name, imagePullPolicy: 'IfNotPresent'})}}")}}
    policies = compiled(map_(mutations=[pull]), binding("m", mutating=True))
    applied = apply_mutations([pod(namespace=None, containers=[{"name": "a", "image": "nginx"}])], policies)
    assert applied[0].mutated == {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"},
                                  "spec": {"containers": [{"name": "a", "image": "nginx",
                                                           "imagePullPolicy": "IfNotPresent"}]}}


def test_under_ignore_a_failing_mutation_is_left_out_and_the_others_apply() -> None:
    broken = {"patchType": "JSONPatch", "jsonPatch": {"expression": (
        "[JSONPatch{op: 'remove', path: '/metadata/annotations/missing'}]")}}
    policy = map_(mutations=[broken, LABEL], failurePolicy="Ignore")
    value, results = mutated([policy, binding("m", mutating=True)], pod())
    assert value["metadata"]["labels"] == {"owner": "platform"}
    assert results == [("m", "pass")]
    value, results = mutated([map_(mutations=[broken, LABEL]), binding("m", mutating=True)], pod())
    assert results == [("m", "error")] and "labels" not in value["metadata"]
