"""Kyverno's context lookups served offline from a context file, or refused with a reason."""

from __future__ import annotations

from cel_helpers import POD_RULES, pod, policy_document, run

from assertree.languages.base import ScanContext
from assertree.languages.kubernetes.cluster import Cluster
from assertree.languages.kyverno.cel_policies.environment import Lookups, read_context_file

CONFIG = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "allowed", "namespace": "default"},
          "data": {"registries": "ghcr.io"}}


def _status(expression: str, context=None) -> tuple[str, str]:
    spec = {"matchConstraints": {"resourceRules": POD_RULES}, "validations": [{"expression": expression}]}
    [result] = run(policy_document(spec), pod(), context)
    return result.status, result.message or ""


def _context_file(*resources: dict) -> Lookups:
    cluster = Cluster(discovery=False)
    cluster.extend(resources)
    return Lookups(cluster=cluster)


def test_resource_get_and_list_read_the_context() -> None:
    context = ScanContext(lookups=_context_file(CONFIG))
    for get in ("Get", "get"):
        expression = f"resource.{get}('v1', 'configmaps', 'default', 'allowed').data.registries == 'ghcr.io'"
        assert _status(expression, context)[0] == "pass"
    assert _status("size(resource.List('v1', 'configmaps', 'default').items) == 1", context)[0] == "pass"
    assert _status("size(resource.list('v1', 'configmaps', 'default', {'x': 'y'}).items) == 0", context)[0] == "pass"
    # the SDK's library: a missing object is null; listing a resource the context file has none of is an error
    assert _status("resource.Get('v1', 'configmaps', 'default', 'other') == null", context)[0] == "pass"
    listing = _status("size(resource.List('v1', 'secrets', 'default').items) == 0", context)
    assert listing[0] == "error" and "secrets resource not found" in listing[1]


def test_a_namespaced_policy_reads_its_own_namespace() -> None:
    spec = {"matchConstraints": {"resourceRules": POD_RULES},
            "validations": [{"expression": "resource.Get('v1', 'configmaps', 'allowed').data.registries != ''"}]}
    document = {**policy_document(spec, kind="NamespacedValidatingPolicy", version="v1beta1"),
                "metadata": {"name": "p", "namespace": "default"}}
    [result] = run(document, pod(), ScanContext(lookups=_context_file(CONFIG)))
    assert result.status == "pass"


def test_image_metadata_reads_the_context() -> None:
    lookups = Lookups(images={"nginx:1.25": {"image": "nginx:1.25", "config": {"User": "1000"}}})
    expression = "object.spec.containers.all(c, image.GetMetadata(c.image).config.User != '0')"
    assert _status(expression, ScanContext(lookups=lookups))[0] == "pass"


def test_without_a_context_lookups_say_what_they_need() -> None:
    status, message = _status("resource.Get('v1', 'configmaps', 'default', 'allowed') != null")
    assert status == "error" and "context file" in message
    assert _status("globalContext.Get('entry', '') == null")[0] == "pass"  # the CLI: an unknown entry is null


def test_http_is_refused_unless_mocked() -> None:
    status, message = _status("http.Get('https://example.com') != null", ScanContext(lookups=Lookups()))
    assert status == "error" and "network" in message
    mocks = Lookups(http={"POST:https://x.test/check": {"body": {"allowed": True}, "statusCode": 200},
                          "https://x.test/list": {"body": {"items": []}, "statusCode": 200}})
    context = ScanContext(lookups=mocks)
    assert _status("http.Post('https://x.test/check', {'a': 1}).body.allowed", context)[0] == "pass"
    assert _status("http.get('https://x.test/list').body.items.size() == 0", context)[0] == "pass"
    assert _status("http.Get('https://x.test/check').statusCode == 200", context)[0] == "error"


def test_context_files_are_read(tmp_path) -> None:
    path = tmp_path / "context.yaml"
    path.write_text("apiVersion: cli.kyverno.io/v1alpha1\nkind: Context\nmetadata: {name: c}\nspec:\n"
                    "  resources:\n  - apiVersion: v1\n    kind: ConfigMap\n    metadata: {name: allowed}\n"
                    "  images:\n  - image: nginx:1.25\n    config: {User: '1000'}\n")
    lookups = read_context_file(path)
    assert lookups.resources[0]["metadata"] == {"name": "allowed", "namespace": "default"}
    assert lookups.images["nginx:1.25"]["config"] == {"User": "1000"}
