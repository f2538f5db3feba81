"""The one fake cluster (`assertree.languages.kubernetes.cluster.Cluster`) that generate, mutate-existing,
cleanup and the CEL lookups all read: storing, naming, finding and listing as Kyverno's clients do."""

import pytest

from assertree.languages.kubernetes.cluster import Cluster, NotFound, split_api_version

CONFIG = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings", "namespace": "apps",
                                                                 "labels": {"team": "a"}}, "data": {"x": "1"}}
OTHER = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "other", "namespace": "web",
                                                                "labels": {"team": "b"}}}
NAMESPACE = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "apps", "labels": {"env": "prod"}}}
DEPLOYMENT = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "apps"}}
CRD = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgets.example.com"},
    "spec": {"group": "example.com", "scope": "Cluster", "names": {"kind": "Widget", "plural": "Widgets"},
             "versions": [{"name": "v1"}]},
}
WIDGET = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w1", "namespace": "ignored"}}


def test_get_by_resource_name_and_kubernetes_not_found():
    cluster = Cluster.of([CONFIG, DEPLOYMENT])
    assert cluster.get("v1", "configmaps", "apps", "settings") == CONFIG
    assert cluster.get("apps/v1", "deployments", "apps", "web") == DEPLOYMENT
    with pytest.raises(NotFound, match=r'^configmaps "nope" not found$'):
        cluster.get("v1", "configmaps", "apps", "nope")
    with pytest.raises(NotFound, match=r'^deployments\.apps "web" not found$'):
        cluster.get("apps/v1", "deployments", "other", "web")


def test_list_one_namespace_every_namespace_and_labels():
    cluster = Cluster.of([CONFIG, OTHER])
    assert cluster.list("v1", "configmaps", "apps") == [CONFIG]
    assert sorted(item["metadata"]["name"] for item in cluster.list("v1", "configmaps")) == ["other", "settings"]
    assert cluster.list("v1", "configmaps", "", {"team": "b"}) == [OTHER]
    assert cluster.list("v1", "secrets", "apps") == []  # a cluster knows its resource types and lists none


def test_context_file_resources_know_no_types():
    """Kyverno's fake provider (a Context file): only what was stored can be listed, one namespace at a time."""
    provider = Cluster(discovery=False)
    provider.extend([CONFIG, OTHER])
    assert provider.list("v1", "configmaps", "apps") == [CONFIG]
    assert provider.list("v1", "configmaps", "") == []
    with pytest.raises(NotFound, match=r"^secrets resource not found$"):
        provider.list("v1", "secrets", "apps")


def test_a_crd_names_and_scopes_its_kind():
    cluster = Cluster.of([CRD, WIDGET])
    assert cluster.get("example.com/v1", "widgets", "", "w1") == WIDGET  # cluster-scoped: stored without namespace
    assert cluster.kind_of("example.com", "widgets") == "Widget"
    assert cluster.find("example.com/v1", "Widget", "anywhere", "w1") == WIDGET


def test_a_list_stores_its_items():
    cluster = Cluster.of([{"apiVersion": "v1", "kind": "List", "items": [CONFIG, NAMESPACE]}])
    assert cluster.namespace("apps") == NAMESPACE
    assert cluster.get("v1", "configmaps", "apps", "settings") == CONFIG


def test_find_and_select_by_kind_as_generate_and_targets_name_them():
    cluster = Cluster.of([CONFIG, OTHER, NAMESPACE])
    assert cluster.find("", "ConfigMap", "apps", "settings") == CONFIG  # "" is any version
    assert cluster.find("v1", "ConfigMap", "web", "settings") is None
    assert cluster.find("v1", "Namespace", "web", "apps") == NAMESPACE  # cluster-scoped: in every namespace
    assert cluster.select("v1", "ConfigMap", None, {"matchLabels": {"team": "a"}}) == [CONFIG]
    assert cluster.select("v1", "ConfigMap", "web") == [OTHER]
    expressions = {"matchExpressions": [{"key": "team", "operator": "In", "values": ["a", "b"]}]}
    assert len(cluster.select("v1", "ConfigMap", None, expressions)) == 2


def test_get_path_answers_rest_paths_as_api_call_reads_them():
    cluster = Cluster.of([CONFIG, OTHER, NAMESPACE])
    assert cluster.get_path("/api/v1/namespaces/apps/configmaps/settings") == CONFIG
    assert cluster.get_path("/api/v1/namespaces/apps") == NAMESPACE
    listed = cluster.get_path("/api/v1/configmaps?labelSelector=team=b")
    assert listed["kind"] == "ConfigMapList" and listed["items"] == [OTHER]
    listed["items"][0]["metadata"]["name"] = "changed"  # a copy: the cluster keeps its object
    assert cluster.get("v1", "configmaps", "web", "other")["metadata"]["name"] == "other"
    with pytest.raises(NotFound):
        cluster.get_path("/nothing/here")


def test_copy_adds_without_changing_the_original():
    cluster = Cluster.of([CONFIG])
    copied = cluster.copy()
    copied.add(OTHER)
    assert cluster.list("v1", "configmaps") == [CONFIG]
    assert len(copied.list("v1", "configmaps")) == 2


def test_split_api_version():
    assert split_api_version("apps/v1") == ("apps", "v1")
    assert split_api_version("v1") == ("", "v1")
    assert split_api_version("") == ("", "")
