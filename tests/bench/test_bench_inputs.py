"""The benchmark's generators (bench/gen_manifests.py, bench/gen_ndjson.py): same arguments, same bytes;
and inputs that PyYAML (YAML 1.1) and assertree (YAML 1.2 core) read alike."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from bench_modules import bench_module, make_plan

from assertree.inputs.payload import read_payload

gen_manifests = bench_module("gen_manifests")
gen_ndjson = bench_module("gen_ndjson")


def tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def manifests(tmp_path_factory):
    root = tmp_path_factory.mktemp("manifests")
    expected = gen_manifests.generate(root, 60, 3, 0.2)
    return root, expected


def test_manifests_are_reproducible(manifests, tmp_path):
    root, expected = manifests
    again = gen_manifests.generate(tmp_path / "again", 60, 3, 0.2)
    assert tree(tmp_path / "again") == tree(root)
    assert again == expected
    other = gen_manifests.generate(tmp_path / "other", 60, 4, 0.2)
    assert tree(tmp_path / "other") != tree(root) and other != expected


def test_manifests_have_what_the_docstring_promises(manifests):
    root, expected = manifests
    files = tree(root)
    assert len(files) == 60 and all(name.endswith(".yaml") for name in files)
    streams = [list(yaml.load_all(data, Loader=yaml.CSafeLoader)) for data in files.values()]
    assert {len(docs) for docs in streams} <= {1, 2, 3} and sum(map(len, streams)) == expected["documents"]
    kinds = {doc["kind"] for docs in streams for doc in docs}
    assert kinds == set(gen_manifests.KINDS)
    for name, check in expected["checks"].items():
        assert 0 < check["violations"] == len(check["ids"]) < check["applicable"], name


def test_yaml_1_1_and_1_2_read_every_manifest_alike(manifests):
    root, _ = manifests
    for path in sorted(root.rglob("*.yaml")):
        payload = read_payload(str(path))
        ours = payload.value if payload.documents else [payload.value]
        assert ours == list(yaml.load_all(path.read_text(), Loader=yaml.CSafeLoader)), path  # YAML 1.1


def test_scalars_that_could_be_read_as_something_else_are_quoted():
    text = gen_manifests.to_yaml({"a": "true", "b": "0755", "c": "1:30", "d": "", "e": "yes", "f": "500m",
                                  "g": "/healthz", "h": "nginx:1.25", "i": "two words", "j": "null",
                                  "k": "line one\nline two\n", "l": [], "m": {}})
    assert yaml.safe_load(text) == {"a": "true", "b": "0755", "c": "1:30", "d": "", "e": "yes", "f": "500m",
                                    "g": "/healthz", "h": "nginx:1.25", "i": "two words", "j": "null",
                                    "k": "line one\nline two\n", "l": [], "m": {}}
    assert "f: 500m\n" in text and "h: nginx:1.25\n" in text  # plain where people write them plain


@pytest.fixture(scope="module")
def small_plan(tmp_path_factory):
    plan, expected = make_plan(tmp_path_factory.mktemp("plan"), 150, 5)
    return json.loads(plan.read_text()), json.loads(expected.read_text())


def test_ndjson_is_reproducible_with_distinct_addresses(small_plan, tmp_path):
    plan, expected = small_plan
    first = gen_ndjson.generate(plan, expected, 400, tmp_path / "a.ndjson")
    second = gen_ndjson.generate(plan, expected, 400, tmp_path / "b.ndjson")
    data = (tmp_path / "a.ndjson").read_bytes()
    assert data == (tmp_path / "b.ndjson").read_bytes() and first == second
    lines = [json.loads(line) for line in data.splitlines()]
    assert len(lines) == 400
    assert len({line["address"] for line in lines}) == 400
    flat = list(gen_ndjson.planned_resources(plan["planned_values"]["root_module"]))
    assert lines[0] == flat[0]  # copy 0 is the plan's own resources, unchanged
    assert lines[len(flat)] == {**flat[0], "address": f"module.shard[1].{flat[0]['address']}"}
