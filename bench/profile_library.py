"""Where the library-scale case's time goes: its scan, in this process, under cProfile.

    python bench/profile_library.py [--top 15] [--cluster ns-000.yaml]

Runs `scan CLUSTER --policy POLICIES -q --jobs 1` on the inputs `run.py --cases library-5000` makes
(bench-data/library-5000-*/, made here too when missing) through `assertree.cli.main` (in process: the
command line ends with os._exit, which would lose the profile; `--cluster` names files of the dump (a glob),
a realistic slice that takes a minute instead of the whole dump's half hour), then prints markdown: self time by stage
(the package of the function: reading YAML, the Kyverno engine, CEL, JMESPath, reports, ...), inclusive time by
phase (each kind of policy's mutate and validate runners, loading the policies) and the functions with the most
self time. Times are this process's CPU seconds (`time.process_time`), not wall-clock: on a busy machine the
wall clock counts other processes' turns. cProfile slows Python code by about 1.5-2x, C code less: the
shares, not the seconds, are the figure.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from run import library  # bench/ is not a package: run.py is imported from this folder

STAGES = [  # (what, path fragment of the function's file): the first that matches
    ("reading YAML (PyYAML, libyaml, assertree.documents)", ("/yaml/", "assertree/documents/", "_yaml")),
    ("Kyverno CEL policy kinds and validate.cel (policies.kyverno.io)", ("assertree/languages/kyverno/cel_policies/",)),
    ("Kyverno mutate (patches, strategic merge, foreach)", ("assertree/languages/kyverno/mutate/",
                                                            "assertree/languages/kubernetes/jsonpatch",
                                                            "assertree/languages/kubernetes/merge_schema")),
    ("Kyverno match, conditions, variables, patterns", ("assertree/languages/kyverno/",)),
    ("CEL", ("assertree/languages/cel", "/cel_expr", "celpy", "/cel/")),
    ("JMESPath and its functions", ("assertree/jp/",)),
    ("reports and totals", ("assertree/report/", "assertree/findings/")),
    ("the scan loop and matching", ("assertree/engine/", "assertree/cli/", "assertree/inputs/")),
    ("other assertree", ("assertree/",)),
]


PHASES = [  # (what, file suffix, function): inclusive time of the functions a scan calls per resource
    ("the whole scan loop (all policies, all resources)", "assertree/engine/scan.py", "_check"),
    ("Kyverno ClusterPolicy/Policy mutate rules", "languages/kyverno/mutation.py", "mutate"),
    ("Kyverno ClusterPolicy/Policy validate rules", "languages/kyverno/evaluate.py", "run"),
    ("CEL policy kinds' mutations (MutatingPolicy)", "languages/kyverno/cel_policies/compile.py", "mutate"),
    ("CEL policy kinds' rules (ValidatingPolicy, ...)", "languages/kyverno/cel_policies/compile.py", "run"),
    ("loading and compiling the policies", "assertree/languages/load.py", "load_policy_set"),
]


def phases(stats: dict) -> list[tuple[str, int, float]]:
    """(what, calls, inclusive seconds) of each `PHASES` entry found in the profile."""
    found = []
    for what, suffix, name in PHASES:
        rows = [row for (file, _line, function), row in stats.items() if file.endswith(suffix) and function == name]
        if rows:
            found.append((what, sum(row[1] for row in rows), sum(row[3] for row in rows)))
    return found


def stage_of(file: str) -> str:
    for what, fragments in STAGES:
        if any(fragment in file for fragment in fragments):
            return what
    return "Python and other libraries" if file != "~" else "built-ins (C)"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--top", type=int, default=15)
    parser.add_argument("--cluster", help="a file or glob in the dump's cluster/ folder (default: the whole folder)")
    args = parser.parse_args()
    root, summary = library()
    cluster = root / "cluster" / args.cluster if args.cluster else root / "cluster"
    argv = ["scan", str(cluster), "--policy", str(root / "policies"), "-q", "--jobs", "1"]
    from assertree.cli import main as assertree_main

    profile = cProfile.Profile(time.process_time)  # CPU seconds: others' load on the machine does not count
    out = io.StringIO()
    stdout, sys.stdout = sys.stdout, out
    try:
        profile.runcall(assertree_main, argv)
    finally:
        sys.stdout = stdout
    stats = pstats.Stats(profile)
    total = sum(row[2] for row in stats.stats.values())  # type: ignore[attr-defined]
    calls = sum(row[1] for row in stats.stats.values())  # type: ignore[attr-defined]
    by_stage: dict[str, float] = defaultdict(float)
    for (file, _line, _name), row in stats.stats.items():  # type: ignore[attr-defined]
        by_stage[stage_of(file)] += row[2]
    scanned = args.cluster or f"{summary['resources']} resources"
    print(f"`scan -q --jobs 1`, {scanned}, {summary['policy_files']} policy files, "
          f"under cProfile: {total:.1f} CPU s of self time, {calls:,} Python function calls (the load-independent "
          "figure)\n")
    print("| stage | self s | share |\n|---|---|---|")
    for what, seconds in sorted(by_stage.items(), key=lambda item: -item[1]):
        print(f"| {what} | {seconds:.1f} | {seconds / total:.0%} |")
    print("\n| phase (inclusive) | calls | s | share |\n|---|---|---|---|")
    for what, calls, seconds in phases(stats.stats):  # type: ignore[attr-defined]
        print(f"| {what} | {calls:,} | {seconds:.1f} | {seconds / total:.0%} |")
    print("\n| function | calls | self s | share |\n|---|---|---|---|")
    rows = sorted(stats.stats.items(), key=lambda item: -item[1][2])[:args.top]  # type: ignore[attr-defined]
    for (file, line, name), (_primitive, calls, self_time, _cumulative, _callers) in rows:
        where = file.split("site-packages/")[-1].split("/assertree/", 1)[-1] if file != "~" else ""
        print(f"| `{name}` {where}:{line} | {calls:,} | {self_time:.2f} | {self_time / total:.0%} |")
    tail = out.getvalue().strip().splitlines()
    print(f"\nThe scan printed: {tail[-1] if tail else '(nothing)'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
