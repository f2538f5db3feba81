"""``mutate.targets``: a trigger's rule patches existing resources, looked up in the scan's cluster."""

from __future__ import annotations

from typing import Any

from assertree.languages.base import ScanContext
from assertree.languages.kubernetes.cluster import Cluster
from assertree.languages.kyverno.language import compile_document
from assertree.results import ERROR, PASS, SKIP, Resource

TRIGGER = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "dictionary", "namespace": "staging"},
           "data": {"owner": "team-a"}}


def secret(name: str, namespace: str, **labels: str) -> dict:
    return {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name, "namespace": namespace,
                                                               **({"labels": labels} if labels else {})}}


def policy(targets: list[dict], patch: dict | None = None, **rule: Any) -> dict:
    mutate = {"targets": targets, "patchStrategicMerge": patch or {"metadata": {"labels": {
        "owner": "{{request.object.data.owner}}", "was": "{{target.metadata.name}}"}}}}
    return {"apiVersion": "kyverno.io/v1", "kind": "ClusterPolicy", "metadata": {"name": "sync"},
            "spec": {"rules": [{"name": "label-secrets", "match": {"any": [{"resources": {"kinds": ["ConfigMap"]}}]},
                                "mutate": mutate, **rule}]}}


def run(document: dict, cluster: Any) -> tuple[Resource, list]:
    compiled = compile_document(document)
    assert compiled.rules == [] and len(compiled.mutate_rules) == 1
    mutator = compiled.mutator(ScanContext(cluster=cluster))
    return mutator(Resource(TRIGGER))


def test_each_target_is_patched_and_the_trigger_is_left_alone():
    cluster = Cluster.of([secret("s1", "staging"), secret("s1", "prod"), secret("other", "staging")])
    after, results = run(policy([{"apiVersion": "v1", "kind": "Secret", "name": "s1"}]), cluster)
    assert after.value == TRIGGER
    assert [(r.status, r.action, r.target["metadata"]["namespace"]) for r in results] == [
        (PASS, "mutate existing", "staging"), (PASS, "mutate existing", "prod")]
    assert results[0].target["metadata"]["labels"] == {"owner": "team-a", "was": "s1"}
    assert results[0].message == "mutated Secret/s1 in namespace staging"


def test_names_and_namespaces_may_be_wildcards_and_selectors_filter():
    cluster = Cluster.of([secret("db-1", "staging", app="db"), secret("db-2", "staging"), secret("web", "staging")])
    _, results = run(policy([{"apiVersion": "v1", "kind": "Secret", "namespace": "stag*", "name": "db-*",
                              "selector": {"matchLabels": {"app": "db"}}}]), cluster)
    assert [r.target["metadata"]["name"] for r in results] == ["db-1"]


def test_variables_resolve_against_the_trigger_and_a_missing_literal_target_errors():
    targets = [{"apiVersion": "v1", "kind": "Secret", "name": "{{request.object.data.owner}}",
                "namespace": "{{request.object.metadata.namespace}}"}]
    _, found = run(policy(targets), Cluster.of([secret("team-a", "staging")]))
    assert [r.status for r in found] == [PASS]
    _, missing = run(policy(targets), Cluster())
    assert [(r.status, r.message) for r in missing] == [(ERROR, 'secrets "team-a" not found')]


def test_target_preconditions_and_unchanged_targets_skip():
    targets = [{"apiVersion": "v1", "kind": "Secret", "name": "*",
                "preconditions": {"all": [{"key": "{{target.metadata.name}}", "operator": "Equals", "value": "a"}]}}]
    patch = {"metadata": {"labels": {"fixed": "yes"}}}
    cluster = Cluster.of([secret("a", "staging"), secret("b", "staging", fixed="yes")])
    _, results = run(policy(targets, patch), cluster)
    assert [r.status for r in results] == [PASS, SKIP]
    already = Cluster.of([secret("a", "staging", fixed="yes")])
    _, unchanged = run(policy(targets, patch), already)
    assert [r.status for r in unchanged] == [SKIP]


def test_without_existing_resources_the_rule_says_what_it_would_mutate():
    _, results = run(policy([{"apiVersion": "v1", "kind": "Secret", "name": "s1", "namespace": "staging"}]), None)
    assert [(r.status, r.message) for r in results] == [
        (SKIP, ("would mutate existing v1 Secret staging/s1: the existing resources are not known (give them with "
                "--target)"))]


def test_api_versions_are_read_as_kyverno_reads_kind_selectors():
    deployment = {"apiVersion": "apps/v1", "kind": "Secret", "metadata": {"name": "s1", "namespace": "staging"}}
    cluster = Cluster.of([secret("s1", "staging"), deployment])
    names = {}
    for api_version in ("*", "v1", "apps/v1", "v2"):
        _, results = run(policy([{"apiVersion": api_version, "kind": "Secret", "name": "s*"}]), cluster)
        names[api_version] = [r.target["apiVersion"] for r in results]
    # `*` and a version alone stand for any group (ParseKindSelector), a group/version for itself
    assert names == {"*": ["v1", "apps/v1"], "v1": ["v1", "apps/v1"], "apps/v1": ["apps/v1"], "v2": []}
    _, results = run(policy([{"apiVersion": "*", "kind": "Secret", "name": "s1", "namespace": "staging"}]), cluster)
    assert [r.status for r in results] == [PASS]
