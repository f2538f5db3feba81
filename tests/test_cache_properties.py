"""The cache of checked files never changes a result: property tests that hold it to reading afresh.

The invariant (`assertree.documents.cache`, `assertree.languages.checked_files`): what a run takes from the
cache is what reading the same bytes, in the same format, with the same code gives. So:

* every reader (a scan's `load_policy_set`, ``assertree test``, lint) gives the same results with the
  cache off, cold (being filled) and warm (read from it), for every policy kind main loads: kyverno-json
  and CEL ``ValidatingPolicy``, the other ``policies.kyverno.io`` kinds, ClusterPolicy/Policy,
  ValidatingAdmissionPolicy/MutatingAdmissionPolicy and their bindings, PolicyExceptions beside them;
  a file with a problem is never stored (its problems are found on every run);
* a file whose bytes or format changed, another assertree version or an edited reader is never served an
  entry of before (checked with an entry planted to say something else);
* a damaged entry, or a folder that cannot be made or written, is a miss and never an error;
* entries are written through `assertree.writes`, whole.

Held over the kyverno-cli conformance folders of every kind and kyverno/policies folders (``assertree
test`` rows), and over policy files generated from the conformance data's policies by random edits (some
still valid: cached; some not: never cached). Examples are derandomized (tests/conftest.py);
``HYPOTHESIS_PROFILE=explore`` draws new ones.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import CONFORMANCE
from document_places import places
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_document_cache import POLICY

import assertree
from assertree import writes
from assertree.documents import cache as cache_module
from assertree.documents.cache import DocumentCache
from assertree.languages import checked_files
from assertree.languages.kyverno import manifests
from assertree.languages.load import lint_files, load_policy_set
from assertree.testing import run_tests

CLI = CONFORMANCE / "kyverno-cli" / "test" / "cli"
POLICIES = CONFORMANCE / "kyverno-policies"
EXAMPLES = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# -- the cache, switched ----------------------------------------------------------------------------

@contextmanager
def cache_at(folder: Path | None) -> Iterator[None]:
    """Both caches of checked files (policies, manifests) in `folder`, or off (None), while open."""
    saved = {name: os.environ.get(name) for name in (cache_module.CACHE_DIR_VARIABLE,
                                                      cache_module.CACHE_SWITCH_VARIABLE)}
    policy_cache, manifest_cache = checked_files._POLICY_CACHE, manifests._MANIFEST_CACHE
    if folder is None:
        os.environ[cache_module.CACHE_SWITCH_VARIABLE] = "off"
    else:
        os.environ.pop(cache_module.CACHE_SWITCH_VARIABLE, None)
        os.environ[cache_module.CACHE_DIR_VARIABLE] = str(folder)
    checked_files._POLICY_CACHE = DocumentCache("policies", policy_cache.modules)  # the folder is worked out anew
    manifests._MANIFEST_CACHE = DocumentCache("manifests", manifest_cache.modules)
    try:
        yield
    finally:
        checked_files._POLICY_CACHE, manifests._MANIFEST_CACHE = policy_cache, manifest_cache
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def entries(folder: Path) -> list[Path]:
    return sorted(path for path in folder.rglob("*") if path.is_file()) if folder.exists() else []


# -- what a run gives -------------------------------------------------------------------------------

def _policy(item: Any) -> tuple:
    policy = getattr(item, "policy", item)
    return (type(item).__name__, getattr(policy, "name", None), getattr(policy, "source", None),
            getattr(policy, "line", None), getattr(policy, "document_index", None),
            json.dumps(getattr(policy, "document", None), sort_keys=True, default=repr),
            tuple(getattr(getattr(rule, "rule", rule), "name", repr(rule))
                  for rule in getattr(item, "rules", ()) or ()))


def scan_outcome(paths: list[Path]) -> tuple:
    """What a scan's reading of `paths` gives: each policy (its document, where it is, its rules), the
    errors and refusals as worded, the files passed over."""
    found = load_policy_set(paths)
    return ([_policy(item) for item in found.policies], [p.text(severity=True) for p in found.errors],
            [p.text(severity=True) for p in found.refused], sorted(found.skipped.items()))


def lint_outcome(paths: list[Path]) -> tuple:
    problems, checked = lint_files(paths)
    return [str(problem.location) + " " + problem.text(severity=True) for problem in problems], checked


def rows_of(paths: list[Path]) -> list[tuple]:
    """Every row of every Test, as ``assertree test`` judges it (or the error that stopped the Test)."""
    out = []
    for outcome in run_tests(paths).outcomes:
        rows = [(row.policy, row.rule, row.resource, row.actual, row.ok, row.reason, row.message)
                for row in outcome.rows]
        out.append((str(outcome.file), outcome.name, str(outcome.error) if outcome.error else None,
                    tuple(outcome.warnings), tuple(rows)))
    return out


def off_cold_warm(run, folder: Path) -> tuple[Any, Any, Any]:
    with cache_at(None):
        off = run()
    with cache_at(folder):
        cold = run()
        warm = run()
    return off, cold, warm


# -- the conformance folders: every kind, through assertree test ---------------------------------------

CACHED = ["test-validating-policy", "test-mutating-policy", "test-validating-admission-policy",
          "test-mutating-admission-policy", "test-exceptions", "test-mutate", "test/autogen", "test/foreach",
          "test/mixed", "test/preconditions", "test/variables-deprecated"]
"""Folders of every kind assertree runs: their policy files compile, so the cache holds them."""
NOT_RUN = ["test-image-validating-policy", "test-deleting-policy", "test-generating-policy",
           "test-ruleless-policy"]
"""Folders of kinds assertree refuses (or with Tests it refuses): never cached, the same refusals each run."""
KINDS = CACHED + NOT_RUN


@pytest.mark.parametrize("folder", KINDS)
def test_assertree_test_gives_the_same_rows_cached_or_not(folder, tmp_path):
    paths = [CLI / folder]
    off, cold, warm = off_cold_warm(lambda: (rows_of(paths), scan_outcome(paths)), tmp_path)
    assert off[0], "no Test ran"
    assert cold == off
    assert warm == off
    if folder in CACHED:
        assert entries(tmp_path / "policies"), "nothing was cached: the warm run did not use the cache"


POLICY_FOLDERS = sorted({path.parent for path in POLICIES.rglob("kyverno-test.yaml")})


@EXAMPLES
@given(st.lists(st.sampled_from(POLICY_FOLDERS), min_size=1, max_size=3, unique=True))
def test_kyverno_policies_give_the_same_rows_cached_or_not(folders):
    with tempfile.TemporaryDirectory() as folder:
        off, cold, warm = off_cold_warm(lambda: (rows_of(folders), scan_outcome(folders)), Path(folder))
    assert cold == off
    assert warm == off


# -- generated policy files -----------------------------------------------------------------------------

def _seed_policies() -> list[dict]:
    """Policy documents of every kind in the conformance data (one file per folder, a few per kind)."""
    from assertree.languages.load import language_of

    by_kind: dict[tuple, list[dict]] = {}
    for path in sorted(CLI.rglob("*.yaml")):
        try:
            documents = list(yaml.safe_load_all(path.read_text(encoding="utf-8")))
        except (yaml.YAMLError, UnicodeDecodeError):
            continue
        for document in documents:
            if isinstance(document, dict) and (language_of(document) is not None
                                               or document.get("kind") == "PolicyException"):
                group = (str(document.get("apiVersion")), str(document.get("kind")))
                if len(by_kind.setdefault(group, [])) < 4 and document not in by_kind[group]:
                    by_kind[group].append(document)
    return [document for group in sorted(by_kind) for document in by_kind[group]]


SEEDS = _seed_policies()


def test_the_seeds_hold_every_kind():
    kinds = {document["kind"] for document in SEEDS}
    assert {"ClusterPolicy", "ValidatingPolicy", "MutatingPolicy", "ValidatingAdmissionPolicy",
            "ValidatingAdmissionPolicyBinding", "MutatingAdmissionPolicy", "PolicyException"} <= kinds


def _edit(value: Any, path: tuple, how: str, replacement: Any) -> Any:
    """`value` with the node at `path` removed, replaced, or (its parent) given an unknown field."""
    if not path:
        return replacement if how == "replace" else value
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        copy = dict(value)
        if not rest and how == "remove":
            copy.pop(head, None)
        elif not rest and how == "add":
            copy["unexpectedField"] = replacement
        else:
            copy[head] = _edit(value[head], rest, how, replacement)
        return copy
    copy_list = list(value)
    if not rest and how == "remove":
        del copy_list[head]
    else:
        copy_list[head] = _edit(value[head], rest, how, replacement)
    return copy_list


@st.composite
def policy_files(draw: st.DrawFn) -> tuple[str, str]:
    """(suffix, text): one to three seed documents, each kept or edited at a random field (removed, given
    another type, an unknown field beside it), as YAML or JSON."""
    documents = []
    for _ in range(draw(st.integers(1, 3))):
        document = draw(st.sampled_from(SEEDS))
        if draw(st.integers(0, 2)):
            path = draw(st.sampled_from(list(places(document))))
            how = draw(st.sampled_from(["remove", "replace", "add"]))
            replacement = draw(st.sampled_from([None, 1, "x", True, [], {}, ["a"], {"a": 1}, 2.5]))
            document = _edit(document, path, how, replacement)
        documents.append(document)
    if draw(st.booleans()) and len(documents) == 1:
        return ".json", json.dumps(documents[0], indent=draw(st.sampled_from([None, 2])))
    return ".yaml", yaml.safe_dump_all(documents, sort_keys=False)


def _every_reader(folder: Path, file: Path) -> Any:
    """The file through every reader: named (scan, lint), found in a folder (scan), and as a Test's policy."""
    def run() -> tuple:
        test = folder / "kyverno-test.yaml"
        test.write_text(f"apiVersion: cli.kyverno.io/v1alpha1\nkind: Test\nmetadata:\n  name: t\n"
                        f"policies: [{file.name}]\nresources: []\nresults: []\n", encoding="utf-8")
        try:
            return (scan_outcome([file]), scan_outcome([folder]), lint_outcome([file]), rows_of([test]))
        finally:
            test.unlink()
    return run


@EXAMPLES
@given(policy_files())
def test_generated_policy_files_give_the_same_results_cached_or_not(file_text):
    suffix, text = file_text
    with tempfile.TemporaryDirectory() as root:
        folder, cache = Path(root, "policies"), Path(root, "cache")
        folder.mkdir()
        file = folder / f"p{suffix}"
        file.write_text(text, encoding="utf-8")
        off, cold, warm = off_cold_warm(_every_reader(folder, file), cache)
        assert cold == off
        assert warm == off
        key = checked_files.entry_key(str(file), file.read_bytes())
        with cache_at(cache):
            stored = checked_files._POLICY_CACHE.get(key)
        if _every_document_compiles(file):
            assert stored is not None  # the warm run read it from the cache
        else:  # never stored: its problems are found on every run
            assert stored is None


def _every_document_compiles(file: Path) -> bool:
    from assertree.documents.reader import load_documents
    from assertree.errors import AssertreeError
    from assertree.languages.load import compile_document

    try:
        for document in load_documents(file):
            compile_document(document.value)
    except AssertreeError:
        return False
    return True


# -- never stale ------------------------------------------------------------------------------------------

def _plant(file: Path, name: str) -> None:
    """Store, for `file`'s bytes and format, what a file naming the policy `name` holds: if it is ever
    served for `file`, the policy's name shows it."""
    other = yaml.safe_load(POLICY.format(name=name))
    checked_files._POLICY_CACHE.put(checked_files.entry_key(str(file), file.read_bytes()), [(0, 1, other)])


def _names(paths: list[Path]) -> list[str | None]:
    return [item[1] for item in scan_outcome(paths)[0]]


def test_a_planted_entry_is_served_for_the_same_bytes(tmp_path):
    """The check the stale tests below rely on: an entry for the same bytes and format is what a run gets."""
    file = tmp_path / "p.yaml"
    file.write_text(POLICY.format(name="real"), encoding="utf-8")
    with cache_at(tmp_path / "cache"):
        _plant(file, "planted")
        assert _names([file]) == ["planted"]


@EXAMPLES
@given(st.text(alphabet="abcdefghij-", min_size=1, max_size=12), st.text(alphabet="klmnopqrst-", min_size=1,
                                                                          max_size=12))
def test_a_changed_file_is_never_served_stale(first, second):
    name_a, name_b = f"a{first}", f"b{second}"
    with tempfile.TemporaryDirectory() as root:
        file, cache = Path(root, "p.yaml"), Path(root, "cache")
        with cache_at(cache):
            file.write_text(POLICY.format(name=name_a), encoding="utf-8")
            assert _names([file]) == [name_a]  # cached
            file.write_text(POLICY.format(name=name_b), encoding="utf-8")
            assert _names([file]) == [name_b]
            assert _names([file]) == [name_b]  # and again, from the cache
            file.write_text(POLICY.format(name=name_a), encoding="utf-8")
            assert _names([file]) == [name_a]


def test_the_same_bytes_in_another_format_are_never_served_stale(tmp_path):
    """An entry made from the file read as YAML is not what the same bytes give read as JSON."""
    text = json.dumps(yaml.safe_load(POLICY.format(name="json-one")))
    yaml_file, json_file = tmp_path / "p.yaml", tmp_path / "p.json"
    yaml_file.write_text(text, encoding="utf-8")
    json_file.write_text(text, encoding="utf-8")
    with cache_at(tmp_path / "cache"):
        _plant(yaml_file, "planted")
        assert _names([yaml_file]) == ["planted"]
        assert _names([json_file]) == ["json-one"]


def test_another_version_is_never_served_stale(tmp_path, monkeypatch):
    file = tmp_path / "p.yaml"
    file.write_text(POLICY.format(name="real"), encoding="utf-8")
    with cache_at(tmp_path / "cache"):
        _plant(file, "planted")
    monkeypatch.setattr(assertree, "__version__", assertree.__version__ + ".next")
    with cache_at(tmp_path / "cache"):
        assert _names([file]) == ["real"]
        assert _names([file]) == ["real"]  # from the new version's folder; the old one is kept beside it
    assert len([path for path in (tmp_path / "cache" / "policies").iterdir()]) == 2


def test_an_edited_reader_is_never_served_stale(tmp_path):
    """A reader's source file with another size or modification time (a checkout being edited) is another
    fingerprint: the entries made by the code before are not used."""
    reader = tmp_path / "reader.py"
    reader.write_text("# one\n", encoding="utf-8")
    file = tmp_path / "p.yaml"
    file.write_text(POLICY.format(name="real"), encoding="utf-8")
    modules = checked_files._POLICY_CACHE.modules
    with cache_at(tmp_path / "cache"):
        checked_files._POLICY_CACHE = DocumentCache("policies", [*modules, str(reader)])
        _plant(file, "planted")
        assert _names([file]) == ["planted"]
        reader.write_text("# two, edited\n", encoding="utf-8")
        checked_files._POLICY_CACHE = DocumentCache("policies", [*modules, str(reader)])
        assert _names([file]) == ["real"]


def test_the_fingerprint_covers_what_decides_a_cached_value():
    """The readers, the schema check and the schemas: editing any of them starts a new folder."""
    covered = {Path(module).name for module in checked_files._POLICY_CACHE.modules}
    assert {"documents", "schema_problems.py", "schemas"} <= covered
    assert any(Path(module).name == "documents" for module in manifests._MANIFEST_CACHE.modules)


# -- damaged entries, a folder that cannot be written --------------------------------------------------------

@st.composite
def damage(draw: st.DrawFn) -> Any:
    """A change to an entry's bytes: cut short, a byte flipped, bytes added, emptied."""
    how = draw(st.sampled_from(["cut", "flip", "append", "empty"]))
    at = draw(st.integers(0, 10_000))
    extra = draw(st.binary(min_size=1, max_size=8))

    def apply(data: bytes) -> bytes:
        if how == "cut":
            return data[:at % max(len(data), 1)]
        if how == "flip":
            position = at % len(data)
            return data[:position] + bytes([data[position] ^ 0xFF]) + data[position + 1:]
        if how == "append":
            return data + extra
        return b""

    return apply


@EXAMPLES
@given(damage(), st.sampled_from(CACHED[:6]))
def test_a_damaged_entry_is_a_miss(change, folder):
    paths = [CLI / folder]
    with tempfile.TemporaryDirectory() as root:
        cache = Path(root)
        with cache_at(None):
            off = rows_of(paths)
        with cache_at(cache):
            rows_of(paths)
            found = entries(cache)
            assert found
            for entry in found:
                entry.write_bytes(change(entry.read_bytes()))
            assert rows_of(paths) == off
            assert rows_of(paths) == off


@pytest.mark.parametrize("obstacle", ["a file where the folder goes", "folders where entries go"])
def test_a_folder_that_cannot_be_written_is_no_error(tmp_path, obstacle):
    paths = [CLI / "test-validating-admission-policy", CLI / "test-exceptions"]
    cache = tmp_path / "cache"
    with cache_at(None):
        off = rows_of(paths)
    if obstacle == "a file where the folder goes":
        cache.write_text("not a folder", encoding="utf-8")
    else:  # every entry's name taken by a folder: each write fails at the rename
        with cache_at(cache):
            rows_of(paths)
            found = entries(cache)
        for entry in found:
            entry.unlink()
            entry.mkdir()
    with cache_at(cache):
        assert rows_of(paths) == off
        assert rows_of(paths) == off


def test_entries_are_written_through_assertree_writes_whole(tmp_path, monkeypatch):
    """Every entry is made by `assertree.writes.write_file` (a temporary file beside it, renamed over it),
    and nothing else is left in the folder."""
    written: list[Path] = []
    real = writes.write_file

    def recording(path, data, *args, **kwargs):
        written.append(Path(path))
        return real(path, data, *args, **kwargs)

    monkeypatch.setattr(writes, "write_file", recording)
    with cache_at(tmp_path / "cache"):
        rows_of([CLI / "test-validating-policy", CLI / "test-mutating-admission-policy"])
    found = entries(tmp_path / "cache")
    assert found
    assert set(found) == set(written)
