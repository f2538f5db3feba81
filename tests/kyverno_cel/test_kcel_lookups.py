"""Kyverno's context lookups served offline from a context file, or refused with a reason."""

from __future__ import annotations

from cel_helpers import POD_RULES, LookupContext, pod, policy_document, run

from assertree.languages.kyverno.cel_policies.environment import Lookups, read_context_file

CONFIG = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "allowed", "namespace": "default"},
          "data": {"registries": "ghcr.io"}}


def _status(expression: str, context=None) -> tuple[str, str]:
    spec = {"matchConstraints": {"resourceRules": POD_RULES}, "validations": [{"expression": expression}]}
    [result] = run(policy_document(spec), pod(), context)
    return result.status, result.message or ""


def test_resource_get_and_list_read_the_context() -> None:
    context = LookupContext(lookups=Lookups(resources=[CONFIG]))
    get = "resource.Get('v1', 'configmaps', 'default', 'allowed').data.registries == 'ghcr.io'"
    assert _status(get, context)[0] == "pass"
    assert _status("size(resource.List('v1', 'configmaps', 'default').items) == 1", context)[0] == "pass"
    missing = _status("resource.Get('v1', 'configmaps', 'default', 'other') != null", context)
    assert missing[0] == "error" and "not found" in missing[1]


def test_image_metadata_reads_the_context() -> None:
    lookups = Lookups(images={"nginx:1.25": {"image": "nginx:1.25", "config": {"User": "1000"}}})
    expression = "object.spec.containers.all(c, image.GetMetadata(c.image).config.User != '0')"
    assert _status(expression, LookupContext(lookups=lookups))[0] == "pass"


def test_without_a_context_lookups_say_what_they_need() -> None:
    status, message = _status("resource.Get('v1', 'configmaps', 'default', 'allowed') != null")
    assert status == "error" and "context file" in message


def test_http_is_refused() -> None:
    status, message = _status("http.Get('https://example.com') != null", LookupContext(lookups=Lookups()))
    assert status == "error" and "network" in message


def test_context_files_are_read(tmp_path) -> None:
    path = tmp_path / "context.yaml"
    path.write_text("apiVersion: cli.kyverno.io/v1alpha1\nkind: Context\nmetadata: {name: c}\nspec:\n"
                    "  resources:\n  - apiVersion: v1\n    kind: ConfigMap\n    metadata: {name: allowed}\n"
                    "  images:\n  - image: nginx:1.25\n    config: {User: '1000'}\n")
    lookups = read_context_file(path)
    assert lookups.resources[0]["metadata"] == {"name": "allowed", "namespace": "default"}
    assert lookups.images["nginx:1.25"]["config"] == {"User": "1000"}
