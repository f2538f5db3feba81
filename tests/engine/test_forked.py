"""A large payload's resources checked by forked workers (``scan --jobs N``): the same reports as one process.

A Terraform plan of a few hundred resources (the threshold is lowered so that a quick test forks) with
failures, passes and rule errors, scanned with ``--terraform`` and with ``--pre-process``: every report,
text to standard output and JSON, SARIF, JUnit and GitHub to files, must be byte for byte that of
``--jobs 1``. A worker that dies or sends garbage loses nothing; stopping early leaves no worker behind.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from itertools import pairwise
from pathlib import Path

import pytest
from conftest import GEN_TFPLAN
from hypothesis import given
from hypothesis import strategies as st

from assertree.cli import main
from assertree.engine import forked
from assertree.engine.scan import Scanner, scan
from assertree.languages.load import load_policies

REFERENCE = Path(__file__).resolve().parents[2] / "bench" / "reference" / "policies"
ERRING = """\
apiVersion: json.kyverno.io/v1alpha1
kind: ValidatingPolicy
metadata:
  name: erring
spec:
  rules:
    - name: parse-the-name
      identifier: address
      match:
        any:
        - type: aws_s3_bucket
      assert:
        all:
        - message: "{{ address }} has a name"
          check:
            (json_parse(name)): {}
"""
PRE_PROCESS = ("planned_values.root_module.[resources, child_modules[].resources[], "
               "child_modules[].child_modules[].resources[]][]")


@pytest.fixture(scope="module")
def plan(tmp_path_factory) -> tuple[Path, Path]:
    """A 300-resource plan, and a policy folder: the bench's eight policies and one whose rule errors."""
    folder = tmp_path_factory.mktemp("forked")
    path = folder / "plan.json"
    subprocess.run([sys.executable, str(GEN_TFPLAN), "--resources", "300", "--seed", "3", "--out", str(path)],
                   check=True, capture_output=True)
    policies = folder / "policies"
    policies.mkdir()
    for policy in REFERENCE.glob("*.yaml"):
        (policies / policy.name).write_bytes(policy.read_bytes())
    (policies / "erring.yaml").write_text(ERRING)
    return path, policies


@pytest.fixture
def workers(monkeypatch) -> list[forked._Worker]:
    """Every worker forked during the test (the threshold lowered to 500 pairs: 50 resources of this plan; a
    CPU taken as idle, whatever else runs)."""
    monkeypatch.setattr(forked, "MIN_PAIRS", 500)
    monkeypatch.setattr(forked, "_idle_cpu", lambda: True)
    started: list[forked._Worker] = []
    fork = forked._Worker.fork

    def spy(*args, **kwargs):
        worker = fork(*args, **kwargs)
        if worker is not None:
            started.append(worker)
        return worker

    monkeypatch.setattr(forked._Worker, "fork", spy)
    return started


def reports(capsys, folder: Path, plan: Path, policies: Path, *options: str) -> tuple[int, dict[str, bytes]]:
    """Exit code, and every report's bytes (standard output, standard error, and the report files)."""
    folder.mkdir()
    code = main(["scan", "--payload", str(plan), "--policy", str(policies), "--color", "never", "-o", "text",
                 "-o", f"json={folder / 'report.json'}", "-o", f"sarif={folder / 'report.sarif'}",
                 "-o", f"junit={folder / 'report.xml'}", "-o", f"github={folder / 'report.github'}", *options])
    out, err = capsys.readouterr()
    found = {"stdout": out.encode(), "stderr": err.encode()}
    found.update((path.name, path.read_bytes()) for path in sorted(folder.iterdir()))
    return code, found


@pytest.mark.parametrize("reading", [["--terraform"], ["--pre-process", PRE_PROCESS]], ids=["terraform", "pre-process"])
@pytest.mark.parametrize("jobs", [2, 3])
def test_reports_are_those_of_one_job(capsys, tmp_path, plan, workers, jobs, reading):
    code_one, one = reports(capsys, tmp_path / "one", *plan, "--jobs", "1", *reading)
    assert not workers
    code_many, many = reports(capsys, tmp_path / "many", *plan, "--jobs", str(jobs), *reading)
    assert len(workers) == jobs - 1  # the workers really ran
    assert (code_many, many) == (code_one, one)
    text = one["stdout"].decode()
    assert code_one == 1 and "- FAILED" in text and "- PASSED" in text and "- ERROR" in text
    sarif = json.loads(one["report.sarif"])
    assert {result["ruleId"].split("/")[0] for result in sarif["runs"][0]["results"]} >= {"erring"}


def resources_and_policies(plan: tuple[Path, Path]):
    from assertree.inputs.resources import load_resources

    path, policies = plan
    return load_resources([str(path)], terraform=True).resources, load_policies(policies)


def test_results_are_those_of_one_process(plan, workers):
    """The units `check_forked` yields are those of checking every resource here, object for object where
    the reports look (the same resource, policy and rule objects)."""
    resources, policies = resources_and_policies(plan)
    alone = scan(resources, policies)
    together = scan(resources, policies, jobs=2)
    assert len(workers) == 1
    assert together == alone
    assert all(a.resource is b.resource and a.policy is b.policy and a.rule is b.rule and
               type(a.status) is type(b.status)
               for a, b in zip(alone.results, together.results, strict=True))


def _dies(scanner, share, pairs, writer):
    os._exit(9)


def _garbage(scanner, share, pairs, writer):
    with open(writer, "wb") as pipe:
        pipe.write(b"\x00not marshal")


def _short(scanner, share, pairs, writer):
    _REAL_WORK(scanner, share[:-1], pairs, writer)


_REAL_WORK = forked._work


@pytest.mark.parametrize("work", [_dies, _garbage, _short], ids=["dies", "garbage", "too-few"])
def test_a_worker_that_fails_loses_nothing(plan, workers, monkeypatch, work):
    """A worker killed mid-scan (out of memory, a signal) or sending what cannot be read: its whole share is
    checked here."""
    resources, policies = resources_and_policies(plan)
    alone = scan(resources, policies)
    monkeypatch.setattr(forked, "_work", work)
    assert scan(resources, policies, jobs=2) == alone
    assert len(workers) == 1
    assert_reaped(workers)


def test_a_worker_that_cannot_be_forked_loses_nothing(plan, workers, monkeypatch):
    """The second of two workers cannot be forked (no memory, a process limit): its share is checked here."""
    resources, policies = resources_and_policies(plan)
    alone = scan(resources, policies)
    fork = os.fork
    calls = []

    def second_fails() -> int:
        calls.append(None)
        if len(calls) == 2:
            raise BlockingIOError(11, "Resource temporarily unavailable")
        return fork()

    monkeypatch.setattr(os, "fork", second_fails)
    assert scan(resources, policies, jobs=3) == alone
    assert len(calls) == 2 and len(workers) == 1
    assert_reaped(workers)


def test_stopping_early_ends_the_workers(plan, workers):
    """Ctrl-C in the main process (or a caller that stops reading) leaves no worker behind and never hangs."""
    resources, policies = resources_and_policies(plan)
    units = forked.check_forked(Scanner(policies), resources, 3)
    next(units)
    with pytest.raises(KeyboardInterrupt):
        units.throw(KeyboardInterrupt)
    assert len(workers) == 2
    assert_reaped(workers)
    units = forked.check_forked(Scanner(policies), resources, 2)
    next(units)
    units.close()
    assert len(workers) == 3
    assert_reaped(workers)


def assert_reaped(workers: list[forked._Worker]) -> None:
    for worker in workers:
        with pytest.raises(ChildProcessError):
            os.waitpid(worker.pid, os.WNOHANG)


def test_little_work_one_job_or_a_busy_machine_start_no_worker(plan, monkeypatch):
    resources, policies = resources_and_policies(plan)
    monkeypatch.setattr(os, "fork", None)  # any fork would fail
    monkeypatch.setattr(forked, "_idle_cpu", lambda: True)
    scanner = Scanner(policies)
    assert len(resources) * 9 < forked.MIN_PAIRS and not forked.forks(scanner, resources, 8)
    assert scan(resources, policies, jobs=8) == scan(resources, policies)
    monkeypatch.setattr(forked, "MIN_PAIRS", 500)
    assert not forked.forks(scanner, resources, 1)
    assert forked.forks(scanner, resources, 2)
    monkeypatch.setattr(forked, "_idle_cpu", lambda: False)
    assert not forked.forks(scanner, resources, 2)


@pytest.mark.parametrize(("load", "idle"), [(0.0, True), (64.0, False)])
def test_a_cpu_is_idle_when_the_load_average_leaves_one(monkeypatch, load, idle):
    monkeypatch.setattr(os, "getloadavg", lambda: (load, load, load))
    assert forked._idle_cpu() is idle


MUTATE = """\
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: add-team
spec:
  rules:
    - name: add-team
      match:
        any:
        - resources:
            kinds: [ConfigMap]
      mutate:
        patchStrategicMerge:
          metadata:
            labels:
              team: a
"""


def test_a_scan_that_mutates_starts_no_worker(tmp_path, monkeypatch):
    """A mutating policy's results hold the patched resource: every resource would be checked again here."""
    (tmp_path / "mutate.yaml").write_text(MUTATE)
    monkeypatch.setattr(forked, "MIN_PAIRS", 2)
    monkeypatch.setattr(forked, "_idle_cpu", lambda: True)
    scanner = Scanner(load_policies(tmp_path / "mutate.yaml"))
    resources = [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"c{index}"}} for index in range(4)]
    assert scanner.mutates and not forked.forks(scanner, resources, 2)


@given(st.integers(0, 50_000), st.integers(2, 64))
def test_shares_cover_every_resource_once_in_order(count, jobs):
    shares = forked._shares(count, jobs)
    assert len(shares) == jobs
    assert shares[0][0] == 0 and shares[-1][1] == count
    assert all(stop == start for (_, stop), (start, _) in pairwise(shares))
    assert all(start <= stop for start, stop in shares)
