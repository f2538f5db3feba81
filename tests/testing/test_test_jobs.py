"""``assertree test --jobs N``: test files run in worker processes, reports byte for byte those of one process."""

from __future__ import annotations

import multiprocessing
import os
from pathlib import Path

import pytest

import assertree.testing as testing
from assertree.cli import main
from assertree.inputs import parallel
from assertree.inputs.parallel import jobs_for
from assertree.testing import find_test_files, run_tests

DATA = Path(__file__).parents[1] / "conformance" / "data" / "kyverno-policies"
FOLDERS = [DATA / "best-practices", DATA / "pod-security-cel", DATA / "other-mpol", DATA / "istio",
           DATA / "best-practices-vpol"]
"""Kyverno ClusterPolicies, CEL ValidatingPolicies and MutatingPolicies: passing rows, and istio's failing ones
(add-ambient-mode-namespace's rows name a rule its policy does not have)."""


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(["test", *map(str, FOLDERS), *args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def small_jobs(monkeypatch):
    """Few enough files per process that these folders use every job asked for."""
    monkeypatch.setattr(testing, "MIN_TEST_FILES_PER_JOB", 4)


@pytest.mark.parametrize("jobs", ["2", "3"])
@pytest.mark.parametrize("report", [[], ["--detailed-results"], ["-o", "json"], ["-o", "junit"]])
def test_reports_are_those_of_one_process(capsys, small_jobs, jobs, report):
    files = find_test_files(FOLDERS)
    assert jobs_for(len(files), int(jobs), testing.MIN_TEST_FILES_PER_JOB) == int(jobs)  # workers really run
    one = run(capsys, "--jobs", "1", *report)
    many = run(capsys, "--jobs", jobs, *report)
    assert many == one
    assert one[0] == 1  # a real outcome: istio holds failing rows


def test_coverage_and_explanations_come_back_from_the_workers(capsys, small_jobs):
    """Rows keep what the reports read of their rule results (explanations, coverage) when a worker ran them."""
    one = run(capsys, "--jobs", "1", "--explain", "--coverage", "markdown")
    many = run(capsys, "--jobs", "2", "--explain", "--coverage", "markdown")
    assert many == one
    code, out, _err = one
    assert code == 1
    assert "| Policy | Rule | Pass | Fail |" in out and "| yes |" in out  # the coverage table, rows counted
    assert sum(line.startswith("  #") for line in out.splitlines()) > 10  # expected failures explained


def test_outcomes_are_those_of_one_process(small_jobs):
    one, many = run_tests(FOLDERS, jobs=1), run_tests(FOLDERS, jobs=2)
    assert [(o.file, o.name, [(r.resource, r.rule, r.actual, r.ok) for r in o.rows]) for o in many.outcomes] == \
        [(o.file, o.name, [(r.resource, r.rule, r.actual, r.ok) for r in o.rows]) for o in one.outcomes]
    assert many.summary_line() == one.summary_line()


def test_reports_only_leaves_the_documents_in_the_workers(small_jobs):
    """By default a worker's rows keep their rule results whole; with reports_only (the CLI) their resources'
    documents stay in the worker, and what the reports read is the same."""
    one = run_tests(FOLDERS, jobs=1)
    whole, lean = run_tests(FOLDERS, jobs=2), run_tests(FOLDERS, jobs=2, reports_only=True)

    def values(run):
        return [row.result.resource.value if row.result is not None else None
                for outcome in run.outcomes for row in outcome.rows]

    assert values(whole) == values(one)
    assert any(value is not None for value in values(lean))  # this process's rows keep theirs
    assert sum(value is None for value in values(lean)) > sum(value is None for value in values(one))
    assert [[(row.as_dict(), row.result.rule.name if row.result else None, row.result.status if row.result else None)
             for row in outcome.rows] for outcome in lean.outcomes] == \
        [[(row.as_dict(), row.result.rule.name if row.result else None, row.result.status if row.result else None)
          for row in outcome.rows] for outcome in one.outcomes]


def test_few_test_files_start_no_worker(monkeypatch):
    monkeypatch.setattr("concurrent.futures.ProcessPoolExecutor", None)  # any pool would fail
    assert run_tests([DATA / "best-practices-vpol"], jobs=8).outcomes  # 8 files: one process


@pytest.mark.parametrize("jobs", ["0", "-1"])
def test_jobs_below_one_is_a_usage_error(capsys, jobs):
    code, out, err = run(capsys, "--jobs", jobs)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "--jobs" in err and "1 or more" in err


_RUN_CHUNK = testing._run_chunk
_MAIN = os.getpid()


def _dies_on_pod_security(files: list[Path], **options) -> list:
    """A worker's share that kills the worker (never the main process) when it holds a pod-security-cel test."""
    if os.getpid() != _MAIN and any("pod-security-cel" in str(file) for file in files):
        os._exit(9)
    return _RUN_CHUNK(files, **options)


def test_a_worker_that_dies_loses_no_test(capsys, small_jobs, monkeypatch):
    """A worker killed mid-run (out of memory, a signal): its test files run in the main process."""
    one = run(capsys, "--jobs", "1")
    monkeypatch.setattr(testing, "_run_chunk", _dies_on_pod_security)
    monkeypatch.setattr(parallel, "_context", lambda: multiprocessing.get_context("fork"))  # the child sees the patch
    before = set(multiprocessing.active_children())
    assert run(capsys, "--jobs", "2") == one
    assert set(multiprocessing.active_children()) <= before
