"""The cache of checked policy files (`assertree.documents.cache`): a hit gives what a fresh read gives, a
problem is never cached, and the cache never fails a run (corrupt entries, an unwritable folder, concurrent
runs, the switch turned off)."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from assertree.documents.cache import DocumentCache, fingerprint
from assertree.errors import PolicyError
from assertree.languages import checked_files, load, schema_problems

POLICY = """\
apiVersion: json.kyverno.io/v1alpha1
kind: ValidatingPolicy
metadata:
  name: {name}
spec:
  rules:
  - name: has-team
    assert:
      all:
      - check:
          tags:
            Team: ~
"""


@pytest.fixture
def cache_dir(tmp_path, monkeypatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("ASSERTREE_CACHE_DIR", str(folder))
    monkeypatch.delenv("ASSERTREE_CACHE", raising=False)
    monkeypatch.setattr(checked_files, "_POLICY_CACHE", DocumentCache("policies", checked_files._POLICY_CACHE.modules))
    return folder


def entries(folder: Path) -> list[Path]:
    return sorted(path for path in folder.rglob("*") if path.is_file()) if folder.exists() else []


def summary(policies) -> list:
    return [(item.policy.name, item.policy.source, item.policy.line, item.policy.document_index,
             [rule.rule.name for rule in item.rules], item.policy.document) for item in policies]


def no_parse_no_validation(monkeypatch) -> None:
    """Make parsing YAML and validating a schema fail: only the cache can answer now."""
    def refuse(*args, **kwargs):
        raise AssertionError("read again")

    monkeypatch.setattr(checked_files, "load_documents", refuse)
    monkeypatch.setattr(schema_problems, "_fast_validator", refuse)
    monkeypatch.setattr(schema_problems, "_validator", refuse)


def test_a_second_load_takes_the_documents_from_the_cache(cache_dir, tmp_path, monkeypatch):
    policy = tmp_path / "p.yaml"
    policy.write_text(POLICY.format(name="one") + "---\n" + POLICY.format(name="two"), encoding="utf-8")
    first = summary(load.load_policies(policy))
    assert len(entries(cache_dir)) == 1
    no_parse_no_validation(monkeypatch)
    assert summary(load.load_policies(policy)) == first  # same documents, lines and indexes
    assert [(name, line, index) for name, _, line, index, _, _ in first] == [("one", 1, 0), ("two", 14, 1)]


def test_a_policy_with_a_problem_is_never_cached(cache_dir, tmp_path):
    policy = tmp_path / "p.yaml"
    policy.write_text(POLICY.format(name="good") + "---\n" + POLICY.format(name="bad").replace("assert:", "asert:"),
                      encoding="utf-8")
    for _ in range(2):
        with pytest.raises(PolicyError, match=r"p\.yaml:21:5: spec\.rules\[0\]\.asert: unknown field"):
            load.load_policies(policy)
    assert entries(cache_dir) == []


def test_the_same_bytes_as_json_and_as_yaml_are_two_entries(cache_dir, tmp_path):
    """JSON text read as YAML may give other values (a repeated key is an error there): never the other's."""
    text = ('{"apiVersion": "json.kyverno.io/v1alpha1", "kind": "ValidatingPolicy", "metadata": {"name": "x"}, '
            '"spec": {"rules": [{"name": "r", "assert": {"all": [{"check": {"a": 1}}]}}]}, "spec": {"rules": []}}')
    (tmp_path / "p.json").write_text(text, encoding="utf-8")
    (tmp_path / "p.yaml").write_text(text, encoding="utf-8")
    assert [item.rules for item in load.load_policies(tmp_path / "p.json")] == [[]]  # JSON: the last key wins
    for _ in range(2):
        with pytest.raises(PolicyError, match=r"p\.yaml"):
            load.load_policies(tmp_path / "p.yaml")


def test_other_bytes_are_read_again(cache_dir, tmp_path):
    policy = tmp_path / "p.yaml"
    policy.write_text(POLICY.format(name="one"), encoding="utf-8")
    load.load_policies(policy)
    policy.write_text(POLICY.format(name="one").replace("assert:", "asert:"), encoding="utf-8")
    with pytest.raises(PolicyError, match="unknown field 'asert'"):
        load.load_policies(policy)


@pytest.mark.parametrize("damage", ["flip", "truncate", "empty", "directory"])
def test_a_damaged_entry_is_a_miss(cache_dir, tmp_path, monkeypatch, damage):
    policy = tmp_path / "p.yaml"
    policy.write_text(POLICY.format(name="one"), encoding="utf-8")
    first = summary(load.load_policies(policy))
    [entry] = entries(cache_dir)
    data = entry.read_bytes()
    if damage == "flip":
        entry.write_bytes(data[:-5] + bytes([data[-5] ^ 1]) + data[-4:])
    elif damage == "truncate":
        entry.write_bytes(data[: len(data) // 2])
    elif damage == "empty":
        entry.write_bytes(b"")
    else:
        entry.unlink()
        entry.mkdir()
    calls = []
    real = checked_files.load_documents
    monkeypatch.setattr(checked_files, "load_documents", lambda *a, **k: calls.append(a) or real(*a, **k))
    assert summary(load.load_policies(policy)) == first
    assert len(calls) == 1  # read again


def test_an_entry_of_another_shape_is_a_miss(cache_dir, tmp_path):
    policy = tmp_path / "p.yaml"
    policy.write_text(POLICY.format(name="one"), encoding="utf-8")
    checked_files._POLICY_CACHE.put(b"yaml\0" + policy.read_bytes(), {"not": "a list of documents"})
    assert [item.policy.name for item in load.load_policies(policy)] == ["one"]


def test_off_writes_nothing(cache_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("ASSERTREE_CACHE", "off")
    monkeypatch.setattr(checked_files, "_POLICY_CACHE", DocumentCache("policies", checked_files._POLICY_CACHE.modules))
    policy = tmp_path / "p.yaml"
    policy.write_text(POLICY.format(name="one"), encoding="utf-8")
    load.load_policies(policy)
    assert entries(cache_dir) == []


def test_a_folder_that_cannot_be_written_is_no_problem(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder", encoding="utf-8")
    monkeypatch.setenv("ASSERTREE_CACHE_DIR", str(blocker / "cache"))
    monkeypatch.setattr(checked_files, "_POLICY_CACHE", DocumentCache("policies", checked_files._POLICY_CACHE.modules))
    policy = tmp_path / "p.yaml"
    policy.write_text(POLICY.format(name="one"), encoding="utf-8")
    for _ in range(2):
        assert [item.policy.name for item in load.load_policies(policy)] == ["one"]


def test_editing_the_reader_starts_a_new_folder_and_drops_the_old(cache_dir, tmp_path, monkeypatch):
    from assertree.documents import cache

    monkeypatch.setattr(cache, "KEPT_FOLDERS", 1)
    module = tmp_path / "reader.py"
    module.write_text("one", encoding="utf-8")
    old = DocumentCache("policies", [str(module)])
    old.put(b"x", [1])
    old_folder = old.folder
    module.write_text("two!", encoding="utf-8")
    new = DocumentCache("policies", [str(module)])
    assert new.folder != old_folder
    assert new.get(b"x") is None
    new.put(b"x", [2])
    assert new.get(b"x") == [2]
    assert old_folder is not None and old_folder.exists()  # kept: the one other folder allowed
    module.write_text("three!!", encoding="utf-8")
    newest = DocumentCache("policies", [str(module)])
    newest.put(b"x", [3])
    assert not old_folder.exists() and new.folder is not None and new.folder.exists()
    assert (newest.get(b"x"), new.get(b"x")) == ([3], [2])


def test_two_versions_used_in_turn_keep_their_own_entries(cache_dir, tmp_path):
    """Two installs of different versions run in turn (a venv's and pipx's): each finds what it stored."""
    first, second = tmp_path / "first.py", tmp_path / "second.py"
    first.write_text("one", encoding="utf-8")
    second.write_text("two!", encoding="utf-8")
    for round_ in range(3):
        for number, module in enumerate((first, second)):
            store = DocumentCache("policies", [str(module)])
            if round_:
                assert store.get(b"x") == [number]
            store.put(b"x", [number])


def test_fingerprint_counts_each_file_of_a_folder(tmp_path):
    (tmp_path / "a.json").write_text("{}", encoding="utf-8")
    before = fingerprint([str(tmp_path)])
    (tmp_path / "a.json").write_text('{"type": "object"}', encoding="utf-8")
    assert fingerprint([str(tmp_path)]) != before


def test_the_cache_is_bounded(cache_dir, monkeypatch):
    from assertree.documents import cache

    monkeypatch.setattr(cache, "MAX_ENTRIES", 3)
    store = DocumentCache("policies", [])
    for number in range(7):
        store.put(str(number).encode(), [number])
    assert store.folder is not None and len(os.listdir(store.folder)) <= 3
    assert store.get(b"6") == [6]


def _same(a, b) -> bool:
    """Equal, with the same types all the way down (1 is not 1.0 nor True), NaN equal to NaN."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[key], b[key]) and type(key) is type(other)
                                         for key, other in zip(a, b, strict=True))
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    return a == b


scalars = st.none() | st.booleans() | st.integers() | st.floats() | st.text()
keys = st.text() | st.integers() | st.booleans() | st.none() | st.floats(allow_nan=False)
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(keys, inner, max_size=4),
                      max_leaves=30)


@given(value=values)
def test_whatever_a_reader_builds_comes_back_the_same(value):
    """Values, types (1, 1.0, True), key types and key order: exactly what was stored (the entry's contents,
    without writing them)."""
    import marshal

    store = DocumentCache("property", [])
    store._folder = Path("unused")
    packed = store.pack(value)
    assert packed is not None
    assert _same(marshal.loads(packed), value)


def test_values_round_trip_through_the_folder(cache_dir):
    store = DocumentCache("policies", [])
    value = [(0, 1, {"a": [1, 1.0, True, None, "x", 2**80, float("inf")], 3: {"k": -0.0}})]
    store.put(b"data", value)
    assert _same(store.get(b"data"), value)


def test_concurrent_runs_share_the_cache(tmp_path, monkeypatch):
    """Processes loading the same policies at once, with a cold cache: every one gets the policies, and
    every entry left is whole (a later load reads it)."""
    folder = tmp_path / "cache"
    policies = tmp_path / "policies"
    policies.mkdir()
    for number in range(20):
        (policies / f"p{number}.yaml").write_text(POLICY.format(name=f"p{number}"), encoding="utf-8")
    code = ("import sys; from assertree.languages.load import load_policies; "
            "print(len(load_policies(sys.argv[1])))")
    env = {**os.environ, "ASSERTREE_CACHE_DIR": str(folder)}
    env.pop("ASSERTREE_CACHE", None)
    runs = [subprocess.Popen([sys.executable, "-c", code, str(policies)], stdout=subprocess.PIPE, text=True, env=env)
            for _ in range(6)]
    assert [run.communicate(timeout=120)[0] for run in runs] == ["20\n"] * 6
    monkeypatch.setenv("ASSERTREE_CACHE_DIR", str(folder))
    store = DocumentCache("policies", checked_files._POLICY_CACHE.modules)
    found = list(entries(folder))
    assert len(found) == 20
    for number in range(20):
        assert isinstance(store.get(b"yaml\0" + (policies / f"p{number}.yaml").read_bytes()), list)


def test_a_cached_document_that_fails_now_is_still_located_at_its_field(cache_dir, tmp_path, monkeypatch):
    """Every check but the schema runs on every run: a problem found by newer code in a document from the
    cache names the line and column of its field, as a fresh read does."""
    from assertree.languages.kyverno_json import language

    policy = tmp_path / "p.yaml"
    policy.write_text(POLICY.format(name="one"), encoding="utf-8")
    load.load_policies(policy)  # cached
    real = language.compile_policy

    def stricter(model, *args, **kwargs):
        raise PolicyError("a rule name this code refuses", path=("spec", "rules", 0, "name"))

    monkeypatch.setattr(language, "compile_policy", stricter)
    with pytest.raises(PolicyError, match=r"p\.yaml:7:5: spec\.rules\[0\]\.name: a rule name"):
        load.load_policies(policy)
    monkeypatch.setattr(language, "compile_policy", real)


def test_manifests_read_again_come_from_the_cache_as_they_were_read(cache_dir, monkeypatch):
    """Kubernetes manifests (``assertree test`` resources): the cached values are those before normalising,
    so a second read gives the same normalised manifests without parsing YAML."""
    from assertree.languages.kyverno import manifests

    monkeypatch.setattr(manifests, "_MANIFEST_CACHE", DocumentCache("manifests", manifests._MANIFEST_CACHE.modules))
    text = ("apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\nspec:\n  replicas: 3\n  ratio: 1.5\n  on: yes\n"
            "---\n# empty\n---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: ns\n  labels:\n")
    first = [(m.value, m.source, m.document) for m in manifests.parse_manifests(text, "r.yaml")]
    assert first[0][0]["metadata"]["namespace"] == "default"  # normalised
    assert first[1][0]["metadata"]["labels"] == {}
    monkeypatch.setattr(manifests, "go_yaml_documents", lambda text: pytest.fail("parsed again"))
    again = [(m.value, m.source, m.document) for m in manifests.parse_manifests(text, "r.yaml")]
    assert again == first
    assert [_same(a[0], b[0]) for a, b in zip(again, first, strict=True)] == [True, True]
