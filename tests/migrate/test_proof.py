"""The proof catches a wrong conversion: a converted policy edited to disagree with its source, or a converter
that writes the wrong comparison, comes out `differs` with the resource that shows it."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml
from migrating import migrated_fixture, pod  # noqa: F401  (the migrated fixture)

import assertree
from assertree.languages.kyverno.language import compile_document
from assertree.languages.load import compile_document as compile_any
from assertree.migrate import migrate
from assertree.migrate.convert import leaves
from assertree.migrate.convert.policy import convert_policy
from assertree.migrate.proof import Probe, Runner, converted_rules, prove, source_rules

SOURCE = yaml.safe_load("""
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: replicas}
spec:
  validationFailureAction: Enforce
  rules:
    - name: at-most-three
      match: {any: [{resources: {kinds: [Deployment]}}]}
      validate:
        pattern:
          spec:
            replicas: "<=3"
""")


def deployment(replicas: int) -> dict:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": f"d{replicas}", "namespace": "x"},
            "spec": {"replicas": replicas}}


def probes() -> list[Probe]:
    return [Probe(deployment(count), "test", assertree.ScanContext()) for count in (1, 3, 4, 9)]


def test_the_faithful_conversion_is_verified() -> None:
    compiled = compile_document(SOURCE)
    converted = convert_policy(SOURCE, compiled).rules[0].documents
    proof = prove(Runner(source_rules(compiled, "at-most-three")),
                  Runner(converted_rules([compile_any(document) for document in converted])), probes())
    assert proof.verified and proof.probes == 4


def test_an_edited_conversion_is_caught_on_the_resources_that_show_it() -> None:
    compiled = compile_document(SOURCE)
    converted = copy.deepcopy(convert_policy(SOURCE, compiled).rules[0].documents)
    validation = converted[0]["spec"]["validations"][0]
    validation["expression"] = validation["expression"].replace("3", "4")  # an off-by-one conversion
    proof = prove(Runner(source_rules(compiled, "at-most-three")),
                  Runner(converted_rules([compile_any(document) for document in converted])), probes())
    assert not proof.verified
    assert [(d.probe.value["spec"]["replicas"], d.source, d.converted) for d in proof.disagreements] == [
        (4, "fail", "pass")]


def test_a_wrong_converter_is_reported_as_differs_by_the_migration(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    source = tmp_path / "src"
    source.mkdir()
    (source / "policy.yaml").write_text(yaml.safe_dump(SOURCE))
    (tmp_path / "resources.yaml").write_text(yaml.safe_dump_all([deployment(2), deployment(5)]))
    leaves._form.cache_clear()
    monkeypatch.setitem(leaves._FORMS, "operators", lambda value, pattern: f"{value} < 3")  # `<=` written as `<`
    monkeypatch.setitem(leaves._FORMS, "typed", lambda value, pattern: f"{value} < 3")
    monkeypatch.setattr(leaves, "_agrees", lambda *args, **kwargs: True)
    try:
        report = migrate([source], tmp_path / "out", resources=[tmp_path / "resources.yaml"])
    finally:
        leaves._form.cache_clear()
    rule = report.policies[0].rules[0]
    assert rule.status == "differs"
    assert "get another verdict" in rule.reason and "source pass, converted fail" in rule.reason
    assert not report.all_verified


def test_a_mutation_that_patches_differently_is_caught(migrated, monkeypatch: pytest.MonkeyPatch) -> None:
    from assertree.migrate.convert import mutate

    original = mutate.mutate_spec

    def wrong(*args, **kwargs):
        spec = original(*args, **kwargs)
        for mutation in spec.mutations:
            configuration = mutation.get("applyConfiguration")
            if configuration:
                configuration["expression"] = configuration["expression"].replace("'platform'", "'other'")
        return spec

    monkeypatch.setattr(mutate, "mutate_spec", wrong)
    result = migrated("""
- name: team
  match: {any: [{resources: {kinds: [Pod]}}]}
  mutate:
    patchStrategicMerge:
      metadata:
        labels:
          +(team): platform
""", [pod()])
    assert result.statuses == ["differs"]
    assert "patched to" in result.reasons[0]


def test_resources_made_up_for_a_rule_are_objects_the_api_server_admits() -> None:
    """With no test to give one, the proof makes a resource of each matched kind: a cluster-scoped kind
    (ClusterRole, Node) has no namespace, as no admitted object of it has."""
    from assertree.migrate.migration import _made_up

    rule = {"match": {"any": [{"resources": {"kinds": ["ClusterRole", "Node", "Role", "Pod"]}}]}}
    made = {resource["kind"]: resource["metadata"] for resource in _made_up(rule)}
    assert made == {"ClusterRole": {"name": "probe"}, "Node": {"name": "probe"},
                    "Role": {"name": "probe", "namespace": "default"}, "Pod": {"name": "probe", "namespace": "default"}}


def test_a_deny_rule_on_containers_is_verified_without_a_test(migrated) -> None:
    """With no test, the Pod the proof makes up has a container, as every admitted Pod has: a rule reading
    ``spec.containers`` is not called ``differs`` on a Pod without a spec, where JMESPath gives null and CEL
    an error, a Pod no cluster would ever admit."""
    result = migrated("""
- name: no-added-capabilities
  match:
    any:
    - resources:
        kinds: [Pod]
  validate:
    message: no capabilities may be added
    deny:
      conditions:
        all:
        - key: "{{ request.object.spec.containers[].securityContext.capabilities.add[] }}"
          operator: AnyNotIn
          value: [CHOWN]
""")
    assert result.statuses == ["verified"], result.reasons


def test_a_validate_cel_expression_that_errors_is_a_fail_in_kyverno_and_the_rule_differs(migrated) -> None:
    # Kyverno's validate.cel handler denies on an evaluation error (a fail); the converted ValidatingPolicy
    # reports an error: on every resource, not only the tests', that is another verdict
    rules = """
- name: replicas
  match: {any: [{resources: {kinds: [Deployment]}}]}
  validate:
    cel:
      expressions:
        - expression: "object.spec.replicas <= 5"
"""
    without = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "namespace": "default"},
               "spec": {"template": {"spec": {"containers": [{"name": "a", "image": "nginx"}]}}}}
    result = migrated(rules, [without], spec="validationFailureAction: Enforce")
    assert result.statuses == ["differs"]
    assert result.reasons[0].startswith("an expression that cannot be evaluated fails a validate.cel rule in "
                                        "Kyverno"), result.reasons[0]
    assert "source fail, converted error" in result.reasons[0]
