"""Kyverno's CEL lifecycle kinds: GeneratingPolicy (expressions and YAML templates), DeletingPolicy,
ImageValidatingPolicy offline, and MutatingPolicy's mutateExisting targets."""

from __future__ import annotations

import pytest
from cel_helpers import pod, policy_document, run

from assertree.errors import PolicyError
from assertree.languages.base import ScanContext
from assertree.languages.kubernetes.cluster import Cluster
from assertree.languages.kyverno.cel_policies.environment import Lookups
from assertree.languages.kyverno.cel_policies.language import compile_document
from assertree.languages.kyverno.cel_policies.template import TemplateError, scan
from assertree.results import ERROR, FAIL, PASS, SKIP, Resource

NAMESPACES = [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE", "UPDATE"],
               "resources": ["namespaces"]}]
NAMESPACE = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a", "labels": {"tier": "gold"}}}
CONFIG_MAP = ('[{"apiVersion": dyn("v1"), "kind": dyn("ConfigMap"), "metadata": dyn({"name": "settings"}), '
              '"data": dyn({"tier": string(object.metadata.labels.tier)})}]')


ALIAS_BOMB = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{name}: &{name} [{', '.join([f'*{previous}'] * 9)}]\n" for previous, name in zip("abcde", "bcdef", strict=True))


def generating(generate: list[dict], **spec: object) -> dict:
    return policy_document({"matchConstraints": {"resourceRules": NAMESPACES}, "generate": generate, **spec},
                           kind="GeneratingPolicy", name="gen", version="v1beta1")


def test_generator_apply_puts_each_object_in_the_namespace_named():
    [result] = run(generating([{"expression": f"generator.Apply(object.metadata.name, {CONFIG_MAP})"}]), NAMESPACE)
    assert (result.status, result.action, result.message) == (PASS, "generate",
                                                              "would generate ConfigMap/team-a/settings")
    assert result.generated == [{"apiVersion": "v1", "kind": "ConfigMap",
                                 "metadata": {"name": "settings", "namespace": "team-a"}, "data": {"tier": "gold"}}]


def test_clones_come_from_the_lookups_and_lists_are_spread():
    secrets = [{"apiVersion": "v1", "kind": "Secret", "metadata": {"name": n, "namespace": "default"}}
               for n in ("a", "b")]
    document = generating([{"expression": 'generator.apply(object.metadata.name, '
                                          '[resource.List("v1", "secrets", "default")])'}])
    [result] = run(document, NAMESPACE, ScanContext(lookups=Lookups(cluster=Cluster.of(secrets))))
    assert [(item["metadata"]["namespace"], item["metadata"]["name"]) for item in result.generated] == [
        ("team-a", "a"), ("team-a", "b")]


def test_match_conditions_that_are_false_give_no_result_and_errors_are_errors():
    document = generating([{"expression": f"generator.Apply('x', {CONFIG_MAP})"}],
                          matchConditions=[{"name": "gold", "expression": "object.metadata.labels.tier == 'silver'"}])
    assert run(document, NAMESPACE) == []
    failing = generating([{"expression": "generator.Apply('x', [object.metadata.missing])"}])
    [result] = run(failing, NAMESPACE)
    assert result.status == ERROR and result.message.startswith("failed to evaluate policy: ")


TEMPLATE = """apiVersion: v1
kind: ConfigMap
metadata:
  name: (( object.metadata.name ))-config
  namespace: (( object.metadata.name ))
  labels: '(( {"tier": object.metadata.labels.tier} ))'
data:
  replicas: (( 2 ))
  text: "size (( 2.5 )) and \\\\(( literal"
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: second
  namespace: other
"""


def test_templates_splice_whole_placeholders_and_write_others_into_strings():
    [result] = run(generating([{"template": {"interpolate": "cel", "value": TEMPLATE}}]), NAMESPACE)
    first, second = result.generated
    assert first["metadata"] == {"name": "team-a-config", "namespace": "team-a", "labels": {"tier": "gold"}}
    assert first["data"] == {"replicas": 2, "text": "size 2.5 and (( literal"}
    assert second["metadata"]["namespace"] == "other"


def test_without_interpolation_a_template_is_taken_as_it_is():
    value = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: (( kept )), namespace: x}\n"
    [result] = run(generating([{"template": {"value": value}}]), NAMESPACE)
    assert result.generated[0]["metadata"]["name"] == "(( kept ))"


@pytest.mark.parametrize(("value", "words"), [
    ("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  (( object.metadata.name )): x\n", "mapping keys"),
    ("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: (( object.metadata. ))}\n", "invalid CEL expression"),
    ("- a list\n", "must be a mapping"),
    (ALIAS_BOMB, "excessive aliasing"),
])
def test_template_problems_are_load_time_errors(value: str, words: str):
    with pytest.raises(PolicyError) as raised:
        compile_document(generating([{"template": {"interpolate": "cel", "value": value}}]))
    assert words in raised.value.message and raised.value.path == ("spec", "generate", 0, "template", "value")


def test_placeholders_scan_parentheses_and_quotes():
    assert [(s.text, s.expression) for s in scan('a (( f(")") ))b')] == [("a ", False), ('f(")")', True),
                                                                            ("b", False)]
    with pytest.raises(TemplateError):
        scan("(( open")


def test_a_namespaced_policy_generates_into_its_own_namespace_only():
    document = generating([{"template": {"interpolate": "cel",
                                         "value": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n"}}])
    document["kind"] = "NamespacedGeneratingPolicy"
    document["metadata"]["namespace"] = "team-a"
    ns_pod = pod(namespace="team-a")
    document["spec"]["matchConstraints"]["resourceRules"] = [
        {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["pods"]}]
    [result] = run(document, ns_pod)
    assert result.generated[0]["metadata"]["namespace"] == "team-a"


def deleting(conditions: list[dict], **constraints: object) -> dict:
    rules = [{"apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"]}]
    return policy_document({"schedule": "*/5 * * * *", "conditions": conditions,
                            "matchConstraints": {"resourceRules": rules, **constraints}},
                           kind="DeletingPolicy", name="cleanup", version="v1beta1")


def test_a_deleting_policy_says_what_it_would_delete_whatever_the_operation():
    document = deleting([{"name": "old", "expression": "object.metadata.labels.stale == 'true'"}])
    [gone] = run(document, pod("a", labels={"stale": "true"}))
    assert (gone.status, gone.action, gone.message) == (PASS, "delete", "would delete Pod/default/a")
    [kept] = run(document, pod("b", labels={"stale": "false"}))
    assert kept.status == SKIP and kept.action is None and "condition 'old' is false" in kept.message
    selector = deleting([], objectSelector={"matchExpressions": [{"key": "stale", "operator": "Exists"}]})
    assert run(selector, pod("c", labels={})) == []


def images_policy(validations: list[dict], **spec: object) -> dict:
    rules = [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["pods"]}]
    attestors = [{"name": "notary", "notary": {"certs": {"value": "(a certificate)"}}}]  # required by Kyverno's CRD
    return policy_document({"matchConstraints": {"resourceRules": rules}, "validations": validations,
                            "attestors": attestors, **spec},
                           kind="ImageValidatingPolicy", name="images", version="v1beta1")


def test_an_image_validating_policy_checks_image_references_offline():
    only_acme = images_policy([{"expression": "images.containers.all(i, i.startsWith('ghcr.io/acme/'))",
                                "message": "acme images only"}], matchImageReferences=[{"glob": "ghcr.io/*"}])
    assert [r.status for r in run(only_acme, pod(containers=[{"name": "c", "image": "ghcr.io/acme/app:1"}]))] == [PASS]
    [failed] = run(only_acme, pod(containers=[{"name": "c", "image": "ghcr.io/other/app:1"}]))
    assert (failed.status, failed.message) == (FAIL, "acme images only")
    digest = images_policy([{"expression": "true"}], validationConfigurations={"verifyDigest": True})
    [undigested] = run(digest, pod(containers=[{"name": "c", "image": "nginx:1.25"}]))
    assert (undigested.status, undigested.message) == (FAIL, "image nginx:1.25 does not have a digest")


def test_an_image_validating_policy_that_reads_signatures_is_refused():
    compiled = compile_document(images_policy([{"expression": "images.containers.map(i, verifyImageSignatures(i, "
                                                              "[attestors.notary])).all(e, e > 0)"}]))
    [refused] = compiled.refused
    assert "verifyImageSignatures" in refused.problem.message and compiled.rules == []


def test_mutate_existing_patches_the_targets_of_the_cluster():
    document = policy_document({
        "matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"],
                                                "resources": ["secrets"]}]},
        "evaluation": {"mutateExisting": {"enabled": True}},
        "targetMatchConstraints": {"expression": 'resource.Get("v1", "configmaps", object.metadata.namespace, "t")'},
        "mutations": [{"patchType": "ApplyConfiguration", "applyConfiguration": {
            "expression": 'Object{metadata: Object.metadata{labels: {"synced": "yes"}}}'}}],
    }, kind="MutatingPolicy", name="sync", version="v1beta1")
    trigger = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "namespace": "ns"}}
    targets = [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "ns"}}
               for name in ("t", "other")]
    compiled = compile_document(document)
    _, results = compiled.mutator(ScanContext(cluster=Cluster.of(targets)))(Resource(trigger))
    existing = [result for result in results if result.target is not None]
    assert [(r.status, r.target["metadata"]["name"], r.target["metadata"]["labels"]) for r in existing] == [
        (PASS, "t", {"synced": "yes"})]
