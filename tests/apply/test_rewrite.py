"""Writing new values into YAML text: only what changed changes, and the result reads back as the new value."""

from __future__ import annotations

import copy
import json

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from assertree.apply.files import unified_diff
from assertree.apply.rewrite import document_spans, rewrite_json, rewrite_stream
from assertree.languages.kyverno.manifests import GoYAMLLoader, normalise, parse_manifests, to_float64

STREAM = """\
# leading comment
apiVersion: v1
kind: ConfigMap
metadata:
  name: first   # trailing comment
  labels: {app: web, tier: "front"}
data:
  mode: 'strict'
  count: 3
  list:
  - one
  - two
---   # marker comment
# comment before the second document
apiVersion: v1
kind: ConfigMap
metadata:
    name: second
data:
    key: "value"
...
---
apiVersion: v1
kind: Secret
metadata: {name: third}
"""


def read(text: str) -> list:
    """Every document of `text` as the Kyverno CLI reads it, numbers as float64."""
    return [to_float64(manifest.value) for manifest in parse_manifests(text)]


def change(text: str, index: int, edit) -> tuple[str, dict]:
    """`text` with its `index`-th resource edited by `edit` (a function on a copy of its value)."""
    manifest = parse_manifests(text)[index]
    old = to_float64(manifest.value)
    new = copy.deepcopy(old)
    edit(new)
    return rewrite_stream(text, {manifest.document: (old, new)}), new


def changed_lines(old: str, new: str) -> tuple[list[str], list[str]]:
    removed, added = [], []
    for line in unified_diff(old, new, "f").splitlines()[2:]:
        if line.startswith("-"):
            removed.append(line[1:])
        elif line.startswith("+"):
            added.append(line[1:])
    return removed, added


def test_spans_cover_every_document_and_leave_markers_out() -> None:
    spans = document_spans(STREAM)
    assert len(spans) == 3
    bodies = [STREAM[span.body_start:span.body_end] for span in spans]
    assert bodies[0].startswith("# leading comment") is False and bodies[0].startswith("apiVersion")
    assert bodies[1].startswith("# comment before") and "..." not in bodies[1]
    assert bodies[2] == "apiVersion: v1\nkind: Secret\nmetadata: {name: third}\n"


def test_unchanged_documents_are_kept_byte_for_byte() -> None:
    written, new = change(STREAM, 1, lambda value: value["data"].update(key="other"))
    removed, added = changed_lines(STREAM, written)
    assert removed == ['    key: "value"'] and added == ['    key: "other"']
    assert written.startswith(STREAM[:STREAM.index("---")])  # the first document, untouched
    assert written.endswith("...\n---\napiVersion: v1\nkind: Secret\nmetadata: {name: third}\n")
    assert read(written)[1] == new


def test_a_changed_document_keeps_comments_quotes_flow_style_and_indentation() -> None:
    def edit(value: dict) -> None:
        value["metadata"]["labels"]["team"] = "platform"
        value["data"]["count"] = 4.0
        value["data"]["list"].append("three")

    written, new = change(STREAM, 0, edit)
    removed, added = changed_lines(STREAM, written)
    assert removed == ['  labels: {app: web, tier: "front"}', "  count: 3"]
    assert added == ['  labels: {app: web, tier: "front", team: platform}', "  count: 4", "  - three"]
    assert "name: first   # trailing comment" in written and "mode: 'strict'" in written
    assert read(written)[0] == new


def test_removed_keys_take_only_their_lines() -> None:
    written, new = change(STREAM, 0, lambda value: value["data"].pop("mode"))
    assert changed_lines(STREAM, written) == (["  mode: 'strict'"], [])
    assert read(written)[0] == new


def test_defaults_the_reader_adds_are_not_written() -> None:
    written, new = change(STREAM, 2, lambda value: value["metadata"].update(labels={"a": "b"}))
    assert read(written)[2] == new and new["metadata"]["namespace"] == "default"
    assert "namespace" not in written


@pytest.mark.parametrize("text", ["yes", "no", "on", "Off", "y", "N", "true", "0755", "0x1F", "1_000", "1e3", "~",
                                  "null", "12", "3.5", "", "2024-01-01"])
def test_new_strings_that_yaml_would_read_as_something_else_are_quoted(text: str) -> None:
    written, _new = change(STREAM, 2, lambda value: value["metadata"].update(labels={"backup-needed": text}))
    assert read(written)[2]["metadata"]["labels"] == {"backup-needed": text}


def test_new_keys_that_yaml_would_read_as_something_else_are_quoted() -> None:
    written, _new = change(STREAM, 2, lambda value: value.update(data={"yes": "1", "true": "2", "3": "4"}))
    assert read(written)[2]["data"] == {"yes": "1", "true": "2", "3": "4"}
    assert yaml.load(written.split("---")[-1], Loader=GoYAMLLoader)["data"] == {"yes": "1", "true": "2", "3": "4"}


def test_multi_line_strings_are_written_as_literal_blocks() -> None:
    written, new = change(STREAM, 1, lambda value: value["data"].update(script="echo one\necho two\n"))
    assert "    script: |\n        echo one\n        echo two\n" in written  # the document indents by 4
    assert read(written)[1] == new


def test_whole_numbers_are_written_as_integers() -> None:
    written, _ = change(STREAM, 2, lambda value: value.update(spec={"replicas": 3.0, "ratio": 0.5}))
    assert "replicas: 3\n" in written and "ratio: 0.5\n" in written


def test_indentation_style_of_the_document_is_kept() -> None:
    text = "kind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: a\n    image: a:1\n"
    written, _new = change(text, 0, lambda value: value["spec"]["containers"].append({"name": "b", "image": "b:1"}))
    assert written == text + "  - name: b\n    image: b:1\n"


def test_list_items_are_paired_by_name_when_a_rule_reorders_them() -> None:
    text = ("kind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n"
            "    - name: side   # the sidecar\n      image: busybox:1\n"
            "    - name: web\n      image: nginx:latest\n")

    def edit(value: dict) -> None:  # kyaml puts the merged element first
        side, web = value["spec"]["containers"]
        value["spec"]["containers"] = [{**web, "imagePullPolicy": "IfNotPresent"}, side]

    written, new = change(text, 0, edit)
    assert read(written)[0] == new
    assert "- name: side   # the sidecar\n" in written
    assert "- name: web\n      image: nginx:latest\n      imagePullPolicy: IfNotPresent\n" in written


def test_a_shared_anchor_changed_in_one_place_is_written_afresh() -> None:
    text = "kind: Pod\nmetadata:\n  name: p\n  labels: &labels\n    app: web\n  annotations: *labels\n"
    written, new = change(text, 0, lambda value: value["metadata"]["labels"].update(team="a"))
    assert read(written)[0] == new
    assert new["metadata"]["annotations"] == {"app": "web"}


def test_json_documents_keep_key_order_and_indentation() -> None:
    text = '{\n    "kind": "Pod",\n    "metadata": {"name": "p"},\n    "spec": {"replicas": 1}\n}\n'
    old = to_float64(json.loads(text))
    new = copy.deepcopy(old)
    new["metadata"]["labels"] = {"team": "a"}
    written = rewrite_json(text, old, new)
    assert list(json.loads(written)) == ["kind", "metadata", "spec"]
    assert json.loads(written)["metadata"] == {"name": "p", "labels": {"team": "a"}}
    assert '\n    "kind": "Pod"' in written and '"replicas": 1' in written


VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-10, 10) | st.floats(allow_nan=False, allow_infinity=False)
    | st.sampled_from(["yes", "0755", "a b", "x: y", "- z", "#", ""])
    | st.text(alphabet=" \n\r\tab:#-'\"é*&!%@`{}[],?|>\x85\u2028", max_size=8),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.sampled_from(["a", "b", "on", "1"]),
                                                                      children, max_size=3),
    max_leaves=8)


@settings(max_examples=80, deadline=None)
@given(st.dictionaries(st.sampled_from(["labels", "data", "extra", "spec"]), VALUES, max_size=3))
def test_any_new_value_reads_back_and_other_documents_stay(extra: dict) -> None:
    written, new = change(STREAM, 0, lambda value: value.update(extra))
    documents = read(written)
    assert documents[0] == normalise(new)  # as read: an empty `labels:` is {}
    assert written[written.index("---"):] == STREAM[STREAM.index("---"):]


def test_extra_spaces_in_unchanged_lines_are_kept() -> None:
    text = ("kind: Pod\nmetadata:\n  name:    spaced   # a comment\nspec:\n  containers:\n"
            "  - name: web\n    args: [\"a\",   'b']\n    env:  {A:   '1'}\n")
    written, new = change(text, 0, lambda value: value["metadata"].update(labels={"team": "a"}))
    assert changed_lines(text, written) == ([], ["  labels:", "    team: a"])
    assert read(written)[0] == new


def test_a_document_that_mixes_indentation_still_reads_back() -> None:
    text = ("kind: Pod\nmetadata:\n    name: p\n    labels:\n        app: web\nspec:\n  containers:\n"
            "  - name: web\n    image: nginx:1\n")
    written, new = change(text, 0, lambda value: value["spec"]["containers"][0].update(image="nginx:2"))
    assert read(written)[0] == new
    assert "image: nginx:2" in written and "image: nginx:1" not in written


def test_a_document_ruamel_refuses_is_written_afresh() -> None:
    text = "kind: Pod\nmetadata:\n  name: a\n  name: b\nspec: {x: 1}\n"  # the reader keeps the last key
    written, new = change(text, 0, lambda value: value["spec"].update(x=2))
    assert read(written)[0] == new and new["metadata"]["name"] == "b"


def test_null_documents_count_in_the_index_and_stay() -> None:
    text = "---\n# only a comment\n---\n---\nkind: Pod\nmetadata: {name: a}\n...\n# tail\n"
    [manifest] = parse_manifests(text)
    assert manifest.document == 2
    written, _ = change(text, 0, lambda value: value["metadata"].update(labels={"x": "y"}))
    assert written == text.replace("{name: a}", '{name: a, labels: {x: "y"}}')  # `y` alone would be true
