"""patchesJson6902 as Kyverno applies it: evanphx/json-patch v5 with Kyverno's three options."""

from __future__ import annotations

import pytest

from assertree.languages.kubernetes.jsonpatch import PatchError
from assertree.languages.kyverno.mutate import apply_json6902, apply_patch, decode_patch
from assertree.results import Status


def config_map(**data: str) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "config-game", "namespace": "default"},
        "data": data,
    }


def pod() -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "labels": {"purpose": "x", "a/b": "1", "t~x": "2"}},
        "spec": {"containers": [{"name": "a", "image": "a"}, {"name": "b", "image": "b"}], "tolerations": []},
    }


# ---- seed examples ------------------------------------------------------------------------------


def test_seed_add_entries_to_a_config_map() -> None:
    patch = """- path: "/data/ship.properties"
  op: add
  value: |
    type=starship
    owner=utany.corp
- path: "/data/newKey1"
  op: add
  value: newValue1
"""
    result = apply_json6902(config_map(existing="1"), patch)
    assert result.status is Status.PASS
    assert result.message == "mutated ConfigMap/config-game in namespace default"
    assert result.resource["data"] == {
        "existing": "1",
        "ship.properties": "type=starship\nowner=utany.corp\n",
        "newKey1": "newValue1",
    }


def test_seed_add_data_to_an_empty_config_map() -> None:
    resource = config_map()
    del resource["data"]
    patch = '- path: "/data"\n  op: add\n  value: {"ship.properties": "{\\"type\\": \\"starship\\"}"}'
    assert apply_json6902(resource, patch).resource["data"] == {"ship.properties": '{"type": "starship"}'}


def test_seed_remove_a_label() -> None:
    result = apply_json6902(pod(), '- path: "/metadata/labels/purpose"\n  op: remove')
    assert "purpose" not in result.resource["metadata"]["labels"]


def test_seed_insert_a_container_and_its_command() -> None:
    patch = """- op: add
  path: "/spec/containers/1"
  value: {"name":"busybox","image":"busybox:latest"}
- op: add
  path: "/spec/containers/1/command"
  value:
  - ls
"""
    containers = apply_json6902(pod(), patch).resource["spec"]["containers"]
    assert [c["name"] for c in containers] == ["a", "busybox", "b"]
    assert containers[1]["command"] == ["ls"]


def test_seed_append_a_toleration_with_dash() -> None:
    patch = '- op: add\n  path: "/spec/tolerations/-"\n  value: {"key":"networkzone","operator":"Equal","value":"dmz"}'
    assert apply_json6902(pod(), patch).resource["spec"]["tolerations"] == [
        {"key": "networkzone", "operator": "Equal", "value": "dmz"}
    ]


def test_seed_escaped_slash_in_an_annotation_key() -> None:
    patch = '- op: add\n  path: /metadata/annotations/config.linkerd.io~1skip-outbound-ports\n  value: "8200"'
    assert apply_json6902(pod(), patch).resource["metadata"]["annotations"] == {
        "config.linkerd.io/skip-outbound-ports": "8200"
    }


# ---- evanphx with Kyverno's options -------------------------------------------------------------


def test_add_creates_missing_objects_and_arrays() -> None:
    document = apply_patch({}, [{"op": "add", "path": "/a/b/2/c", "value": 1}])
    assert document == {"a": {"b": [None, None, {"c": 1}]}}
    assert apply_patch({}, [{"op": "add", "path": "/x/-", "value": 1}]) == {"x": [1]}


def test_add_replaces_a_null_parent() -> None:
    assert apply_patch({"spec": None}, [{"op": "add", "path": "/spec/x", "value": 1}]) == {"spec": {"x": 1}}


def test_add_through_a_scalar_fails() -> None:
    with pytest.raises(PatchError, match="invalid state detected"):
        apply_patch({"a": "text"}, [{"op": "add", "path": "/a/b", "value": 1}])


def test_negative_indexes_count_from_the_end() -> None:
    document = {"l": [1, 2, 3]}
    assert apply_patch(document, [{"op": "replace", "path": "/l/-1", "value": 9}]) == {"l": [1, 2, 9]}
    assert apply_patch(document, [{"op": "add", "path": "/l/-1", "value": 9}]) == {"l": [1, 2, 3, 9]}  # appends
    assert apply_patch(document, [{"op": "remove", "path": "/l/-3"}]) == {"l": [2, 3]}
    assert document == {"l": [1, 2, 3]}


def test_add_past_the_end_fails() -> None:
    with pytest.raises(PatchError, match="Unable to access invalid index: 5"):
        apply_patch({"l": [1]}, [{"op": "add", "path": "/l/5", "value": 2}])


def test_remove_of_something_missing_is_a_no_op() -> None:
    document = {"a": {"b": 1}, "l": [1]}
    for path in ("/a/c", "/x/y/z", "/l/7"):
        assert apply_patch(document, [{"op": "remove", "path": path}]) == document
    result = apply_json6902(pod(), '[{"op": "remove", "path": "/metadata/labels/is-mutated"}]')
    assert (result.status, result.message) == (Status.SKIP, "no patches applied")


def test_replace_needs_an_existing_target() -> None:
    result = apply_json6902(pod(), '[{"op": "replace", "path": "/metadata/annotations/x", "value": "1"}]')
    assert result.status is Status.ERROR
    assert result.message == (
        "failed to patch resource: replace operation does not apply: doc is missing path: "
        "/metadata/annotations/x: missing value"
    )
    assert apply_patch({"a": 1}, [{"op": "replace", "path": "/a", "value": 2}]) == {"a": 2}


def test_pointer_tokens_are_unescaped() -> None:
    document = apply_patch(
        pod(), [{"op": "remove", "path": "/metadata/labels/a~1b"}, {"op": "remove", "path": "/metadata/labels/t~0x"}]
    )
    assert document["metadata"]["labels"] == {"purpose": "x"}


def test_move_and_copy() -> None:
    document = {"a": {"x": 1}, "l": [1, 2]}
    assert apply_patch(document, [{"op": "move", "from": "/a/x", "path": "/b"}]) == {"a": {}, "b": 1, "l": [1, 2]}
    assert apply_patch(document, [{"op": "copy", "from": "/a", "path": "/l/0"}]) == {
        "a": {"x": 1},
        "l": [{"x": 1}, 1, 2],
    }
    with pytest.raises(PatchError, match="unable to move entire document"):
        apply_patch(document, [{"op": "move", "from": "", "path": "/c"}])


def test_copies_are_independent() -> None:
    document = apply_patch(
        {"a": {"x": 1}}, [{"op": "copy", "from": "/a", "path": "/b"}, {"op": "add", "path": "/b/y", "value": 2}]
    )
    assert document == {"a": {"x": 1}, "b": {"x": 1, "y": 2}}


def test_test_operation() -> None:
    document = {"a": 1, "s": "x", "m": {"k": [1, True]}}
    assert apply_patch(document, [{"op": "test", "path": "/a", "value": 1.0}]) == document
    assert apply_patch(document, [{"op": "test", "path": "/m", "value": {"k": [1, True]}}]) == document
    assert apply_patch(document, [{"op": "test", "path": "/missing", "value": None}]) == document
    for value in ("1", True, None):
        with pytest.raises(PatchError, match="testing value /a failed"):
            apply_patch(document, [{"op": "test", "path": "/a", "value": value}])


def test_add_at_the_root_replaces_the_document() -> None:
    assert apply_patch({"a": 1}, [{"op": "add", "path": "", "value": {"b": 2}}]) == {"b": 2}


def test_decode_accepts_json_and_yaml_and_rejects_bad_operations() -> None:
    assert decode_patch('[{"op": "add", "path": "/a", "value": 1}]') == decode_patch(
        "- op: add\n  path: /a\n  value: 1"
    )
    assert decode_patch("") == []
    with pytest.raises(PatchError, match="failed to decode 'value'"):
        decode_patch('[{"op": "add", "path": "/a"}]')
    with pytest.raises(PatchError, match="unsupported operation"):
        decode_patch('[{"op": "merge", "path": "/a"}]')
    with pytest.raises(PatchError, match="failed to decode 'from'"):
        decode_patch('[{"op": "copy", "path": "/a"}]')


def test_errors_leave_the_resource_as_it_was() -> None:
    resource = pod()
    result = apply_json6902(
        resource,
        '[{"op": "add", "path": "/metadata/labels/x", "value": "1"}, {"op": "test", "path": "/kind", "value": "Job"}]',
    )
    assert result.status is Status.ERROR
    assert result.message == "failed to patch resource: testing value /kind failed: test failed"
    assert result.resource == pod() == resource


def test_yaml_patches_are_read_as_sigs_k8s_yaml_reads_them() -> None:
    # go-yaml v2 (YAML 1.1): y and on are booleans, 1e3 is a number
    operations = decode_patch("- op: add\n  path: /a\n  value: [y, on, 1e3, '1e3']")
    assert operations[0]["value"] == [True, True, 1000, "1e3"]
    with pytest.raises(PatchError, match="failed to convert patchesJSON6902 to JSON"):
        decode_patch("- op: add\n  path: [unclosed")
