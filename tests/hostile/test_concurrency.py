"""Compiled policies are shared safely between threads (issue 14).

A library user (a web service, a test runner) loads policies once and scans
from many threads. Eight threads scanning the samples' policies and
kyverno-json's conformance scan policies at the same time, over many
resources each, must report exactly what one thread reports: compiled
objects hold no state that one scan could leave behind for another (the
kyverno-json rule runner's scope, cached expressions, lazy context entries).
The interpreter switches threads every microsecond here to make interleavings
likely.
"""

from __future__ import annotations

import json
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from conftest import CONFORMANCE, REPO

import assertree
from assertree.inputs.payload import compile_preprocessors, read_payload, resources_from

THREADS = 8
COPIES = 10  # each scan checks every resource of a case this many times over
SCAN = CONFORMANCE / "kyverno-json" / "scan"


def _sample_cases():
    for folder in sorted((REPO / "samples").iterdir()):
        if not (folder / "policies").is_dir():
            continue
        payloads = sorted(str(p) for p in folder.iterdir() if p.suffix in (".json", ".yaml")
                          and not p.name.endswith(".expected.json"))
        terraform = "terraform" in folder.name
        resources = assertree.load_resources(payloads, terraform=terraform).resources
        yield f"samples/{folder.name}", assertree.load_policies(folder / "policies"), resources, None


def _conformance_cases():
    for row in json.loads((SCAN / "manifest.json").read_text()):
        if row["want_error"]:
            continue
        policies = assertree.load_policies(*(SCAN / p for p in row["policies"]))
        bindings = read_payload(str(SCAN / row["bindings"])).value if row["bindings"] else None
        payload = read_payload(str(SCAN / row["payload"]))
        resources = resources_from(payload, compile_preprocessors(row["preprocessors"]))
        yield f"scan/{row['name']}", policies, resources, bindings


def outcome(result) -> list:
    """Everything a scan reported, as plain comparable data."""
    return [
        (r.policy.name, r.rule.name, r.identifier, r.status, r.message, str(r.error) if r.error else None,
         [(v.check, v.message, [str(e) for e in v.errors]) for v in r.violations],
         json.dumps(r.feedback_json(), sort_keys=True, default=str))
        for r in result.results
    ]


@pytest.fixture(scope="module")
def cases():
    found = [*_sample_cases(), *_conformance_cases()]
    assert len(found) >= 10 and all(resources for _, _, resources, _ in found)
    assert len({name for name, *_ in found}) == len(found)
    return found


def test_eight_threads_report_what_one_thread_reports(cases):
    def run(case):
        name, policies, resources, bindings = case
        return name, outcome(assertree.scan(list(resources) * COPIES, policies, bindings))

    expected = dict(run(case) for case in cases)
    assert sum(len(results) for results in expected.values()) > 500  # enough work to interleave
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        with ThreadPoolExecutor(THREADS) as pool:
            got = list(pool.map(run, cases * THREADS))
    finally:
        sys.setswitchinterval(interval)
    assert len(got) == len(cases) * THREADS
    for name, results in got:
        assert results == expected[name], name


def test_threads_share_one_compiled_expression_cache():
    """jp.compile hands every thread the same Expression; evaluating it concurrently with different
    bindings never mixes them up."""
    from assertree import jp

    expression = jp.compile("let $double = multiply($n, `2`) in [$n, $double, items[?@ > $n] | length(@)]")

    def run(n: int) -> bool:
        data = {"items": list(range(50))}
        return all(expression.search(data, {"n": n}) == [n, 2 * n, max(0, 49 - n)] for _ in range(200))

    with ThreadPoolExecutor(THREADS) as pool:
        assert all(pool.map(run, range(40)))


def test_paths_used_exist():
    assert Path(SCAN / "manifest.json").is_file()
