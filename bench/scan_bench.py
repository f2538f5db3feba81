#!/usr/bin/env python3
"""Benchmark: ``assertree scan`` on generated Terraform plans, against the hand-written baseline.

Not a test. For each plan size it generates a plan with
``bench/reference/gen_tfplan.py`` (cached in ``bench-data/``), then times, as
whole processes and in the same run:

* ``baseline.py PLAN`` (plain Python loops over the plan, orjson), the
  practical lower bound for a Python tool;
* ``assertree scan --payload PLAN --policy bench/reference/policies
  --pre-process <the policies' expression>`` (text report).

It checks assertree's findings against ``gen_tfplan.py --expected`` address
by address, then prints the median wall-clock seconds and the ratio to the
baseline (lower is better; kyverno-json's Go engine is at about 2.8x).

    python bench/scan_bench.py                    # 1,000 and 10,000 resources, 5 runs each
    python bench/scan_bench.py --sizes 10000 --repeat 9
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BENCH = REPO / "bench" / "reference"  # the team's plan generator, checks and baseline (scripts/sync-conformance)
DATA = REPO / "bench-data"
PRE_PROCESS = (
    "planned_values.root_module.[resources, child_modules[].resources[], "
    "child_modules[].child_modules[].resources[]][]"
)


def plan(size: int) -> tuple[Path, Path]:
    DATA.mkdir(exist_ok=True)
    path, expected = DATA / f"plan-{size}.json", DATA / f"plan-{size}.expected.json"
    if not path.exists() or not expected.exists():
        subprocess.run(
            [sys.executable, str(BENCH / "gen_tfplan.py"), "--resources", str(size), "--seed", "1",
             "--out", str(path), "--expected", str(expected)],
            check=True, capture_output=True,
        )
    return path, expected


def run_once(command: list[str]) -> tuple[float, bytes]:
    """Wall-clock seconds of one run of `command`, and its stdout."""
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True)
    elapsed = time.perf_counter() - start
    if done.returncode not in (0, 1):
        sys.exit(f"command failed ({done.returncode}): {' '.join(command)}\n{done.stderr.decode()}")
    return elapsed, done.stdout


def timed_pair(first: list[str], second: list[str], repeat: int) -> tuple[float, float, bytes]:
    """Median seconds of each command over `repeat` runs, alternating them so that drift in the
    machine's speed affects both alike; and the second command's last stdout."""
    first_times, second_times, output = [], [], b""
    for _ in range(repeat):
        first_times.append(run_once(first)[0])
        elapsed, output = run_once(second)
        second_times.append(elapsed)
    return statistics.median(first_times), statistics.median(second_times), output


STATUS_LINE = re.compile(r"^- (FAILED|ERROR: .*) \(POLICY=([^,]+), RULE=[^,]+, ID=(.*)\)$")


def findings_of(report: bytes) -> dict[str, set[str]]:
    """Policy name -> identifiers (addresses) of the resources that failed it, from the text report."""
    found: dict[str, set[str]] = {}
    for line in report.decode().splitlines():
        match = STATUS_LINE.match(line)
        if match:
            found.setdefault(match.group(2), set()).add(match.group(3))
    return found


def check_findings(found: dict[str, set[str]], expected_file: Path) -> None:
    expected = json.loads(expected_file.read_text())["checks"]
    for name, check in expected.items():
        want = set(check["addresses"])
        got = found.get(name, set())
        if got != want:
            sys.exit(f"{name}: findings differ from gen_tfplan --expected: "
                     f"missing {sorted(want - got)[:5]}, unexpected {sorted(got - want)[:5]}")
    extra = set(found) - set(expected)
    if extra:
        sys.exit(f"findings for unknown checks: {sorted(extra)}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    assertree = [sys.executable, "-m", "assertree"]
    print(f"{'resources':>9}  {'baseline s':>10}  {'assertree s':>11}  {'ratio':>6}  findings")
    for size in args.sizes:
        path, expected = plan(size)
        baseline_s, ours_s, report = timed_pair(
            [sys.executable, str(BENCH / "baseline.py"), str(path), "--out", os.devnull],
            [*assertree, "scan", "--payload", str(path), "--policy", str(BENCH / "policies"),
             "--pre-process", PRE_PROCESS],
            args.repeat,
        )
        check_findings(findings_of(report), expected)
        total = sum(c["violations"] for c in json.loads(expected.read_text())["checks"].values())
        print(f"{size:>9}  {baseline_s:>10.3f}  {ours_s:>11.3f}  {ours_s / baseline_s:>5.2f}x  {total} ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
