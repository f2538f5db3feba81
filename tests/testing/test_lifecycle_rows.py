"""`assertree test` rows of generate, mutate-existing and deleting policies, compared as ``kyverno test`` does."""

from __future__ import annotations

from pathlib import Path

import yaml

from assertree.testing import run_tests

GENERATE = """apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: add-cm}
spec:
  rules:
  - name: settings
    match: {any: [{resources: {kinds: [Namespace]}}]}
    generate:
      apiVersion: v1
      kind: ConfigMap
      name: settings
      namespace: "{{request.object.metadata.name}}"
      data:
        data: {team: "{{request.object.metadata.name}}"}
  - name: copy
    match: {any: [{resources: {kinds: [Namespace]}}]}
    generate:
      apiVersion: v1
      kind: Secret
      name: regcred
      namespace: "{{request.object.metadata.name}}"
      clone: {namespace: default, name: regcred}
"""
SYNC = """apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: sync}
spec:
  rules:
  - name: label-secret
    match: {any: [{resources: {kinds: [ConfigMap]}}]}
    mutate:
      targets: [{apiVersion: v1, kind: Secret, name: creds}]
      patchStrategicMerge: {metadata: {labels: {synced: "yes"}}}
"""
DELETING = """apiVersion: policies.kyverno.io/v1beta1
kind: DeletingPolicy
metadata: {name: cleanup}
spec:
  schedule: "*/5 * * * *"
  matchConstraints:
    resourceRules: [{apiGroups: [""], apiVersions: [v1], resources: [configmaps]}]
  conditions: [{name: stale, expression: "has(object.metadata.labels) && object.metadata.labels.stale == 'yes'"}]
"""


def configmap(namespace: str, team: str, **labels: str) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings", "namespace": namespace,
                                                                  **({"labels": labels} if labels else {})},
            "data": {"team": team}}


def write(folder: Path, files: dict[str, object], results: list[dict], **fields: object) -> Path:
    for name, value in files.items():
        text = value if isinstance(value, str) else yaml.safe_dump_all(value if isinstance(value, list) else [value])
        (folder / name).write_text(text)
    test = {"apiVersion": "cli.kyverno.io/v1alpha1", "kind": "Test", "metadata": {"name": "t"},
            "policies": ["policy.yaml"], "resources": ["resources.yaml"], "results": results, **fields}
    (folder / "kyverno-test.yaml").write_text(yaml.safe_dump(test))
    return folder


def rows(folder: Path) -> list[tuple]:
    [outcome] = run_tests([folder]).outcomes
    assert outcome.error is None, outcome.error
    return [(row.rule, row.actual, row.reason) for row in outcome.rows]


NAMESPACE = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a"}}
SOURCE = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "regcred", "namespace": "default"},
          "data": {"k": "dg=="}}


def test_a_generated_resource_is_compared_with_the_file_labels_normalised(tmp_path: Path):
    good = {**configmap("team-a", "team-a"), "metadata": {"name": "settings", "namespace": "team-a",
                                                           "labels": {"app.kubernetes.io/managed-by": "kyverno"}}}
    result = {"policy": "add-cm", "rule": "settings", "resources": ["team-a"], "result": "pass"}
    write(tmp_path, {"policy.yaml": GENERATE, "resources.yaml": NAMESPACE, "good.yaml": good,
                     "bad.yaml": configmap("team-a", "team-b")},
          [{**result, "generatedResource": "good.yaml"}, {**result, "generatedResource": "bad.yaml"},
           {**result, "generatedResources": ["bad.yaml", "good.yaml"]}, {**result, "generatedResource": "none.yaml"}])
    assert rows(tmp_path) == [("settings", "pass", "Ok"), ("settings", "pass", "Resource diff"),
                              ("settings", "pass", "Ok"), ("settings", "pass", "Resource error")]


def test_a_clone_reads_its_source_from_the_clone_source_resource(tmp_path: Path):
    expected = {**SOURCE, "metadata": {"name": "regcred", "namespace": "team-a"}}
    row = {"policy": "add-cm", "rule": "copy", "resources": ["team-a"], "result": "pass",
           "generatedResource": "generated.yaml"}
    write(tmp_path, {"policy.yaml": GENERATE, "resources.yaml": NAMESPACE, "source.yaml": SOURCE,
                     "generated.yaml": expected}, [{**row, "cloneSourceResource": "source.yaml"}])
    assert rows(tmp_path) == [("copy", "pass", "Ok")]
    write(tmp_path, {}, [row])  # no source: Kyverno generates nothing, and the row is its status alone
    assert rows(tmp_path) == [("copy", "pass", "Ok")]


def test_target_resources_rows_compare_the_patched_target(tmp_path: Path):
    targets = [{"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "creds", "namespace": ns}}
               for ns in ("staging", "prod")]
    patched = [{**target, "metadata": {**target["metadata"], "labels": {"synced": "yes"}}} for target in targets]
    write(tmp_path, {"policy.yaml": SYNC, "resources.yaml": configmap("staging", "a"), "targets.yaml": targets,
                     "patched.yaml": patched},
          [{"policy": "sync", "rule": "label-secret", "resources": ["staging/creds", "prod/creds"], "result": "pass",
            "patchedResources": "patched.yaml"}], targetResources=["targets.yaml"])
    assert rows(tmp_path) == [("label-secret", "pass", "Ok"), ("label-secret", "pass", "Ok")]


def test_a_resource_a_deleting_policy_keeps_is_kyverno_tests_fail(tmp_path: Path):
    write(tmp_path, {"policy.yaml": DELETING, "resources.yaml": [configmap("a", "x", stale="yes"),
                                                                 {**configmap("b", "y"), "metadata": {
                                                                     "name": "kept", "namespace": "b"}}]},
          [{"policy": "cleanup", "resources": ["a/settings"], "result": "pass", "isDeletingPolicy": True},
           {"policy": "cleanup", "resources": ["b/kept"], "result": "fail", "isDeletingPolicy": True}])
    assert rows(tmp_path) == [(None, "pass", "Ok"), (None, "fail", "Ok")]


CLUSTER_RESOURCES = {"apiVersion": "cli.kyverno.io/v1alpha1", "kind": "ClusterResource",
                     "metadata": {"name": "existing"}, "spec": {"resources": []}}


def test_cluster_resources_are_the_existing_objects_targets_are_patched_in(tmp_path: Path):
    """One fake cluster: a mutate.targets rule finds its target among the clusterResources, as Kyverno's fake
    client holds them, and the row of that target (a targetResource) compares the patched object."""
    target = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "creds", "namespace": "staging"}}
    patched = {**target, "metadata": {**target["metadata"], "labels": {"synced": "yes"}}}
    cluster = {**CLUSTER_RESOURCES, "spec": {"resources": [target]}}
    write(tmp_path, {"policy.yaml": SYNC, "resources.yaml": configmap("staging", "a"), "cluster.yaml": cluster,
                     "targets.yaml": target, "patched.yaml": patched},
          [{"policy": "sync", "rule": "label-secret", "resources": ["staging/creds"], "result": "pass",
            "patchedResources": "patched.yaml"}], targetResources=["targets.yaml"],
          clusterResources=["cluster.yaml"])
    assert rows(tmp_path) == [("label-secret", "pass", "Ok")]


def test_cel_lookups_read_the_same_cluster_with_cluster_resources(tmp_path: Path):
    """A DeletingPolicy's resource.Get reads the test's cluster: its clusterResources and its own resources."""
    policy = DELETING.replace(
        "conditions: [{name: stale, expression: \"has(object.metadata.labels) && object.metadata.labels.stale == "
        "'yes'\"}]",
        "conditions: [{name: owner-gone, expression: \"resource.Get('v1', 'configmaps', object.metadata.namespace, "
        "'owner') == null\"}]")
    owner = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "owner", "namespace": "a"}}
    write(tmp_path, {"policy.yaml": policy, "resources.yaml": [configmap("a", "x"), configmap("b", "y")],
                     "cluster.yaml": {**CLUSTER_RESOURCES, "spec": {"resources": [owner]}}},
          [{"policy": "cleanup", "resources": ["a/settings"], "result": "fail", "isDeletingPolicy": True},
           {"policy": "cleanup", "resources": ["b/settings"], "result": "pass", "isDeletingPolicy": True}],
          clusterResources=["cluster.yaml"])
    assert rows(tmp_path) == [(None, "fail", "Ok"), (None, "pass", "Ok")]


def test_a_crd_names_its_kind_for_every_object_of_the_cluster(tmp_path: Path):
    """The CRDs of clusterResources are registered before the test's own resources join the cluster, so a
    custom kind's objects are stored under the CRD's resource name, whichever file they come from."""
    from assertree.testing.lookups import test_cluster
    from assertree.testing.testfile import read_test_file

    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "gizmoz.example.com"},
           "spec": {"group": "example.com", "scope": "Namespaced", "names": {"kind": "Gizmo", "plural": "gizmoz"},
                    "versions": [{"name": "v1"}]}}
    gizmo = {"apiVersion": "example.com/v1", "kind": "Gizmo", "metadata": {"name": "g", "namespace": "a"}}
    write(tmp_path, {"policy.yaml": DELETING, "resources.yaml": gizmo, "crd.yaml": crd,
                     "cluster.yaml": {**CLUSTER_RESOURCES, "spec": {"crds": ["crd.yaml"], "resources": []}}}, [],
          clusterResources=["cluster.yaml"])
    [test] = read_test_file(tmp_path / "kyverno-test.yaml")
    cluster = test_cluster(test, [gizmo])
    assert cluster.get("example.com/v1", "gizmoz", "a", "g") == gizmo
    assert cluster.find("", "Gizmo", "a", "g") == gizmo
