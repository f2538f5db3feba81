"""The benchmark's baselines find what assertree finds, on small generated inputs, and bench/run.py reads
assertree's text report right: the figures of bench/run.py compare tools doing the same work."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import orjson
import pytest
from bench_modules import BENCH, bench_module, make_plan

import assertree
from assertree.results import Resource

run = bench_module("run")
gen_manifests = bench_module("gen_manifests")
gen_ndjson = bench_module("gen_ndjson")
manifests_baseline = bench_module("manifests_baseline")
ndjson_baseline = bench_module("ndjson_baseline")


def failures(result, key) -> dict[str, set[str]]:
    """Policy name -> key(resource) of every failed or errored rule result of an in-process scan."""
    found: dict[str, set[str]] = {}
    for rule_result in result.results:
        if rule_result.failed:
            found.setdefault(rule_result.policy.name, set()).add(key(rule_result.resource))
    return found


@pytest.fixture(scope="module")
def manifests(tmp_path_factory):
    root = tmp_path_factory.mktemp("manifests")
    expected = gen_manifests.generate(root, 50, 2, 0.15)
    policies = assertree.load_policies(str(BENCH / "manifests-policies"))
    result = assertree.scan(assertree.load_resources([str(root)]).resources, policies)
    return root, {name: set(check["ids"]) for name, check in expected["checks"].items() if check["ids"]}, result


def test_manifest_policies_and_checks_are_the_same_four():
    names = {compiled.policy.name for compiled in assertree.load_policies(str(BENCH / "manifests-policies"))}
    assert names == set(manifests_baseline.CHECKS) == set(gen_manifests.CHECKS)


@pytest.mark.parametrize("loader", ["safe", "csafe"])
def test_pyyaml_loops_find_what_the_generator_made(manifests, loader):
    root, expected, _ = manifests
    found = {name: set(ids) for name, ids in manifests_baseline.scan(root, loader).items() if ids}
    assert run.difference(found, expected) is None


def test_assertree_finds_the_same_documents(manifests):
    root, expected, result = manifests

    def document(resource: Resource) -> str:
        return f"{Path(str(resource.source)).relative_to(root).as_posix()}#{resource.document or 0}"

    assert run.difference(failures(result, document), expected) is None


def test_run_reads_files_and_documents_from_the_text_report(manifests):
    root, expected, result = manifests
    text = assertree.render("text", result, assertree.ReportOptions(quiet=True, multiple_sources=True))
    assert run.difference(run.text_findings(text.encode(), root.resolve()), expected) is None


@pytest.fixture(scope="module")
def plan(tmp_path_factory):
    return make_plan(tmp_path_factory.mktemp("plan"), 300, 3)


def test_run_reads_addresses_from_the_text_report(plan):
    path, expected = plan
    policies = assertree.load_policies(str(BENCH / "reference" / "policies"))
    result = assertree.scan(assertree.load_resources([str(path)], terraform=True).resources, policies)
    text = assertree.render("text", result, assertree.ReportOptions())
    found = run.text_findings(text.encode())
    assert found and run.difference(found, run.expected_findings(expected)) is None


def test_ndjson_loop_finds_what_assertree_finds(plan, tmp_path):
    path, expected = plan
    lines = tmp_path / "resources.ndjson"
    want = gen_ndjson.generate(json.loads(path.read_text()), json.loads(expected.read_text()), 900, lines)
    want = {name: set(check["addresses"]) for name, check in want["checks"].items() if check["addresses"]}
    found = {name: set(ids) for name, ids in ndjson_baseline.scan(lines).items() if ids}
    assert run.difference(found, want) is None
    # assertree on the same objects, one resource per line (how the NDJSON reader hands them over)
    resources = [Resource(orjson.loads(line), source=str(lines)) for line in lines.read_bytes().splitlines()]
    result = assertree.scan(resources, assertree.load_policies(str(BENCH / "reference" / "policies")))
    assert run.difference(failures(result, lambda r: r.value["address"]), want) is None


def test_difference_names_what_is_missing_and_unexpected():
    assert run.difference({"a": {"x"}}, {"a": {"x"}}) is None
    problem = run.difference({"a": {"x", "y"}, "b": {"z"}}, {"a": {"x", "w"}})
    assert problem is not None and "missing ['w']" in problem and "unexpected ['y']" in problem and "b:" in problem


def test_measure_alternates_and_records_time_rss_and_failures(tmp_path):
    ok = run.Command("ok", "baseline", [sys.executable, "-c", "print('hi')"], run.child_env())
    bad = run.Command("bad", "current", [sys.executable, "-c", "raise SystemExit(3)"], run.child_env())
    run.measure([ok, bad], 2, tmp_path)
    assert len(ok.seconds) == len(ok.rss_kb) == len(ok.cpu_seconds) == 2 and ok.stdout == b"hi\n"
    assert all(s > 0 for s in ok.seconds) and all(kb > 1000 for kb in ok.rss_kb)
    assert all(cpu > 0 for cpu in ok.cpu_seconds)  # an interpreter's start-up takes some CPU
    assert bad.error is not None and bad.error.startswith("exit 3") and bad.median_s is None


def test_cpu_seconds_count_the_workers_a_command_waited_for(tmp_path):
    """--jobs runs workers: the launcher's CPU seconds include those of the children the command waited for."""
    spin = "import time\nend = time.process_time() + 0.3\nwhile time.process_time() < end: pass"
    code = (f"import subprocess, sys\nsubprocess.run([sys.executable, '-c', {spin!r}], check=True)")
    command = run.Command("parent", "baseline", [sys.executable, "-c", code], run.child_env())
    run.measure([command], 1, tmp_path)
    assert command.cpu_seconds and command.cpu_seconds[0] >= 0.3


def test_peak_memory_is_the_commands_own_not_the_benchmarks(tmp_path):
    """A forked child starts with its parent's peak RSS as its own ru_maxrss (Linux): run.py measures through
    a small launcher, so a large run.py does not inflate the figures of small commands."""
    ballast = bytearray(300 * 1024 * 1024)
    ballast[::4096] = b"x" * len(ballast[::4096])  # touch every page: this process's peak is now > 300 MB
    del ballast
    command = run.Command("pass", "baseline", [sys.executable, "-c", "pass"], run.child_env())
    run.measure([command], 1, tmp_path)
    assert command.rss_kb and command.rss_kb[0] < 100 * 1024
