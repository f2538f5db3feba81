"""CleanupPolicy and ClusterCleanupPolicy: which existing resources would be deleted."""

from __future__ import annotations

import pytest

from assertree.errors import PolicyError
from assertree.languages.base import ScanContext
from assertree.languages.kyverno.language import compile_document
from assertree.results import PASS, SKIP, Resource


def cleanup(kind: str = "ClusterCleanupPolicy", **spec: object) -> dict:
    metadata = {"name": "clean", **({"namespace": "team-a"} if kind == "CleanupPolicy" else {})}
    return {"apiVersion": "kyverno.io/v2", "kind": kind, "metadata": metadata,
            "spec": {"schedule": "*/5 * * * *", "match": {"any": [{"resources": {"kinds": ["Pod"]}}]}, **spec}}


def pod(name: str, namespace: str = "team-a", **labels: str) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace, "labels": labels}}


def run(document: dict, resource: dict):
    [rule] = compile_document(document).rules
    return rule.runner(ScanContext())(Resource(resource))


CONDITIONS = {"all": [{"key": "{{ target.metadata.labels.keep || '' }}", "operator": "NotEquals", "value": "yes"}]}


def test_conditions_on_the_target_decide():
    deleted = run(cleanup(conditions=CONDITIONS), pod("old"))
    assert (deleted.status, deleted.action, deleted.message) == (PASS, "delete", "would delete Pod/team-a/old")
    kept = run(cleanup(conditions=CONDITIONS), pod("pinned", keep="yes"))
    assert kept.status == SKIP and kept.action is None and kept.message.startswith("would not delete Pod/team-a/pinned")


def test_match_exclude_and_the_namespace_of_a_cleanup_policy_select():
    assert run(cleanup(), {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}}) is None
    excluded = cleanup(exclude={"any": [{"resources": {"names": ["keep-*"]}}]})
    assert run(excluded, pod("keep-me")) is None
    assert run(cleanup("CleanupPolicy"), pod("elsewhere", namespace="team-b")) is None
    assert run(cleanup("CleanupPolicy"), pod("here")).status == PASS


def test_a_cleanup_policy_without_match_is_refused():
    document = cleanup()
    del document["spec"]["match"]
    with pytest.raises(PolicyError) as raised:
        compile_document(document)
    assert raised.value.path == ("spec", "match")


@pytest.mark.parametrize(("spec", "path", "message"), [
    ({"schedule": "invalid-schedule"}, ("spec", "schedule"), "expected exactly 5 fields, found 1"),
    ({"schedule": None}, ("spec", "schedule"), "empty spec string"),
    ({"context": [{"name": "cm", "configMap": {"name": "c", "namespace": "n"}}]}, ("spec", "context", 0, "configMap"),
     "ConfigMap is not allowed"),
    ({"context": [{"name": "i", "imageRegistry": {"reference": "nginx"}}]}, ("spec", "context", 0, "imageRegistry"),
     "ImageRegistry is not allowed"),
    ({"match": {"any": [{"resources": {"kinds": ["Pod"]}, "roles": ["admin"]}]}}, ("spec", "match", "any", 0, "roles"),
     "user info is forbidden"),
    ({"exclude": {"any": [{"resources": {"kinds": ["Pod"]}}]}}, ("spec", "exclude"), "matching an empty set"),
])
def test_what_kyverno_refuses_in_a_cleanup_policy_is_refused(spec, path, message):
    with pytest.raises(PolicyError) as raised:
        compile_document(cleanup(**spec))
    assert raised.value.path == path and message in str(raised.value)
