"""Test files taken from the cache of test files read before give the Tests that parsing them gives."""

from __future__ import annotations

from pathlib import Path

import pytest

from assertree.documents import reader
from assertree.testing import testfile
from assertree.testing.testfile import KyvernoTestError, find_test_files, read_test_file

DATA = Path(__file__).parents[1] / "conformance" / "data"


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ASSERTREE_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("ASSERTREE_CACHE", raising=False)
    testfile._test_cache.cache_clear()
    yield tmp_path
    testfile._test_cache.cache_clear()


def outcome(path: Path) -> object:
    try:
        return read_test_file(path)
    except KyvernoTestError as error:
        return ("error", str(error))


def test_every_conformance_test_file_reads_from_the_cache_as_parsed(cache, monkeypatch, tmp_path):
    bad = tmp_path / "bad" / "kyverno-test.yaml"
    bad.parent.mkdir()
    bad.write_text("apiVersion: cli.kyverno.io/v1alpha1\nkind: Test\nresults: 5\n")
    files = [*find_test_files([DATA / "kyverno-policies", DATA / "kyverno-cli"]), bad]
    assert len(files) > 450
    monkeypatch.setenv("ASSERTREE_CACHE", "off")
    parsed = [outcome(path) for path in files]
    monkeypatch.delenv("ASSERTREE_CACHE")
    testfile._test_cache.cache_clear()
    assert [outcome(path) for path in files] == parsed  # cold: parsed, the good ones kept
    testfile._test_cache.cache_clear()
    reads = []
    real = reader.load_documents
    monkeypatch.setattr(reader, "load_documents", lambda *args, **kwargs: reads.append(args) or real(*args, **kwargs))
    assert [outcome(path) for path in files] == parsed  # warm: from the cache
    assert len(reads) == sum(isinstance(result, tuple) for result in parsed) == 1  # only the bad file parsed again


def test_a_file_with_a_problem_is_never_kept(cache, tmp_path):
    path = tmp_path / "kyverno-test.yaml"
    path.write_text("apiVersion: cli.kyverno.io/v1alpha1\nkind: Test\nmetadata:\n  name: t\npolicies: policy.yaml\n")
    for _ in range(2):
        with pytest.raises(KyvernoTestError) as caught:
            read_test_file(path)
        assert caught.value.line == 5 and "must be a list of file paths" in str(caught.value)
    assert not [entry for entry in (cache / "tests").rglob("*") if entry.is_file()]
