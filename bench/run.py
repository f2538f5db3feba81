#!/usr/bin/env python3
"""Issue 15's benchmark: every figure it asks for, in one command, with findings checked.

Not a test. Each case runs a hand-written baseline and assertree as whole
processes, alternating them (the machine's drift touches both alike), and
reports per command the median wall-clock seconds and the median peak RSS
(``os.wait4``'s ``ru_maxrss``, taken by a small launcher process, see
`LAUNCHER`; with worker processes, that of the largest one, not their sum),
with the ratios assertree / baseline (lower is better). Each command's
findings (from its last run) are compared with what the generator says must
be found, id by id; a difference is printed in the table and makes the exit
status 1. The cases (README.md beside this file says more):

* ``ten``, ``1k``, ``10k``, ``100k``: Terraform plans of that many resources
  (``bench/reference/gen_tfplan.py``); ``baseline.py`` (orjson, plain loops)
  against ``assertree scan --pre-process ...`` and ``assertree scan --terraform``.
  ``plan-N`` runs any other size.
* ``files-2000``: 2,000 Kubernetes YAML files (``gen_manifests.py``) and the
  policies in ``manifests-policies/``, against the plain PyYAML loop
  (``manifests_baseline.py``, ``safe_load_all``, and with ``CSafeLoader``);
  with ``--jobs`` rows when the CLI has that option.
* ``ndjson-1M``: a 1,000,000-line NDJSON file of plan resources
  (``gen_ndjson.py``), against ``ndjson_baseline.py``; "n/a" while
  ``assertree scan`` cannot read NDJSON.
* ``test-core``: ``assertree test`` over the core tier of kyverno/policies'
  fixtures; milliseconds per row exclude start-up, measured as an
  ``assertree test`` run on an empty folder (see README.md).

Start-up (``python -c pass``, ``assertree --version``) is always measured;
``--startup`` adds the ``python -X importtime`` top ten of a ten-resource
scan. ``--ref REV`` runs a second assertree, from a git worktree of REV in
``bench-data/worktrees/``, in extra columns (before/after in one table).

    python bench/run.py                          # every case (6-8 minutes on 2 cores, inputs cached)
    python bench/run.py --cases 1k 10k --repeat 9
    python bench/run.py --ref HEAD~5 --startup

Results: a markdown table on stdout, also written with the raw figures to
``bench-data/results-<UTC timestamp>.md`` and ``.json``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
BENCH = REPO / "bench"
REFERENCE = BENCH / "reference"  # the shared benchmark's generator, checks and baseline (vendored, not edited)
DATA = REPO / "bench-data"  # git-ignored: generated inputs, worktrees and results
CORE_TESTS = REPO / "tests" / "conformance" / "data" / "kyverno-policies"
PRE_PROCESS = (
    "planned_values.root_module.[resources, child_modules[].resources[], "
    "child_modules[].child_modules[].resources[]][]"
)
PLAN_CASES = {"ten": 10, "1k": 1000, "10k": 10000, "100k": 100000}
OTHER_CASES = ("files-2000", "ndjson-1M", "test-core", "reports-10k", "test-shared", "library-5000", "test-library")
DEFAULT_CASES = (*PLAN_CASES, *OTHER_CASES)
DEFAULT_REPEAT = 5
REPEAT_CAP = {"100k": 3, "files-2000": 3, "ndjson-1M": 1, "library-5000": 1, "test-library": 3}  # big cases: fewer runs
LIBRARY_CASE = re.compile(r"library-(\d+)")  # library-N: the library case over a dump of N resources (one run)
MANIFEST_FILES, NDJSON_LINES = 2000, 1_000_000
# Issue 15's goals: assertree's time / the baseline's (at most), memory ratio (at most), ms per test row (under)
TIME_GOALS = {"ten": 1.8, "1k": 1.3, "10k": 0.45, "100k": 0.45, "files-2000": 1 / 1.5}  # ten, 10k: issue 28's
MEMORY_GOAL, MS_PER_ROW_GOAL = 1.1, 1.0
MEMORY_GOALS = {"1k": 1.2}  # issue 28's, where it differs from MEMORY_GOAL
# Issue 28's goals: sarif, junit and github at most this much of the text report's time (10,000 resources);
# `assertree test` over the whole shared copy of kyverno/policies' tests under this many seconds
REPORT_GOAL, TEST_SHARED_GOAL = 1.3, 1.0
SHARED_TESTS = REPO / "tests" / "conformance" / "data" / "kyverno-policies"
LIBRARY_RESOURCES = 5000
POLICIES_MIRROR = Path("/work/.mirror/kyverno+policies/repo")  # `fetch github:kyverno/policies`; or --policies-git


# --- running processes -------------------------------------------------------------------------------

@dataclass
class Command:
    """One thing to time: `tool` is "baseline", "current" (this checkout) or "ref" (the --ref worktree)."""

    variant: str  # what the row says: "scan --terraform", "PyYAML safe_load loop", ...
    tool: str
    argv: list[str]
    env: dict[str, str]
    findings: Callable[[bytes], dict[str, set[str]]] | None = None  # stdout -> findings, to check
    ok_codes: tuple[int, ...] = (0, 1)
    seconds: list[float] = field(default_factory=list)
    rss_kb: list[int] = field(default_factory=list)
    cpu_seconds: list[float] = field(default_factory=list)  # user + system, workers included
    stdout: bytes = b""
    error: str | None = None

    @property
    def median_s(self) -> float | None:
        return statistics.median(self.seconds) if self.seconds and not self.error else None

    @property
    def median_cpu_s(self) -> float | None:
        return statistics.median(self.cpu_seconds) if self.cpu_seconds and not self.error else None

    @property
    def median_mb(self) -> float | None:
        return statistics.median(self.rss_kb) / 1024 if self.rss_kb and not self.error else None

    def as_json(self) -> dict[str, Any]:
        return {"variant": self.variant, "tool": self.tool, "argv": self.argv, "seconds": self.seconds,
                "peak_rss_kb": self.rss_kb, "cpu_seconds": self.cpu_seconds, "median_s": self.median_s,
                "median_peak_rss_mb": self.median_mb, "median_cpu_s": self.median_cpu_s, "error": self.error}


# The launcher between run.py and each command. Linux gives a process, as ru_maxrss, the peak RSS of the
# memory it had before exec: a child forked or vforked from run.py starts with run.py's own peak (hundreds of
# MB after the 100k case), which then hides its own. So run.py starts this small interpreter (-S -I: no site,
# ~10 MB, below any command's own peak), which spawns the command, waits for it with os.wait4, and writes the
# command's wall seconds, ru_maxrss (KB on Linux), exit code and CPU seconds (user + system, its own and those of
# the worker processes it waited for) to the file named first.
LAUNCHER = """\
import os, sys, time
out, argv = sys.argv[1], sys.argv[2:]
start = time.perf_counter()
pid = os.posix_spawnp(argv[0], argv, os.environ)
_, status, usage = os.wait4(pid, 0)
elapsed = time.perf_counter() - start
with open(out, "w") as f:
    f.write(f"{elapsed!r} {usage.ru_maxrss} {os.waitstatus_to_exitcode(status)} {usage.ru_utime + usage.ru_stime!r}")
"""


@dataclass
class Run:
    """One run of a command, as `LAUNCHER` measured it."""

    seconds: float
    rss_kb: int
    code: int
    cpu_seconds: float
    stdout: bytes
    stderr: bytes


def run_once(argv: list[str], env: dict[str, str], cwd: Path) -> Run:
    """Wall seconds, peak RSS (KB), exit code, CPU seconds, stdout and stderr of one run of `argv` (through
    `LAUNCHER`).

    Output goes to temporary files, not pipes: nothing has to read while the launcher waits."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, \
            tempfile.NamedTemporaryFile("r", suffix=".rusage") as usage:
        subprocess.run([sys.executable, "-S", "-I", "-c", LAUNCHER, usage.name, *argv], stdout=out, stderr=err,
                       env=env, cwd=cwd, check=True)
        elapsed, rss, code, cpu = usage.read().split()
        out.seek(0)
        err.seek(0)
        return Run(float(elapsed), int(rss), int(code), float(cpu), out.read(), err.read())


def measure(commands: list[Command], repeat: int, cwd: Path) -> None:
    """Run every command `repeat` times, round-robin, the starting command moving by one each round."""
    for round_ in range(repeat):
        for i in range(len(commands)):
            command = commands[(i + round_) % len(commands)]
            if command.error:
                continue
            run = run_once(command.argv, command.env, cwd)
            if run.code not in command.ok_codes:
                tail = run.stderr.decode(errors="replace").strip().splitlines()[-3:]
                command.error = f"exit {run.code}: {' / '.join(tail)[:300]}"
                continue
            command.seconds.append(run.seconds)
            command.rss_kb.append(run.rss_kb)
            command.cpu_seconds.append(run.cpu_seconds)
            command.stdout = run.stdout


# --- findings ----------------------------------------------------------------------------------------

STATUS_LINE = re.compile(r"^- (?:FAILED|ERROR: .*) \(POLICY=([^,]+), RULE=[^,]+, ID=(.*?)(?:, SOURCE=([^)]*))?\)$")


def text_findings(report: bytes, root: Path | None = None) -> dict[str, set[str]]:
    """Policy name -> what failed it, from assertree's text report: the resource's ID (address), or, with
    `root`, its source relative to `root` and its document index (``file#index``, index 0 when absent)."""
    found: dict[str, set[str]] = {}
    for line in report.decode(errors="replace").splitlines():
        match = STATUS_LINE.match(line)
        if not match:
            continue
        policy, identifier, source = match.groups()
        if root is not None:
            if source is None:
                identifier = "<no SOURCE in the report>"
            else:
                path, _, index = source.partition("#")
                resolved = Path(path).resolve()
                name = resolved.relative_to(root).as_posix() if resolved.is_relative_to(root) else path
                identifier = f"{name}#{index or 0}"
        found.setdefault(policy, set()).add(identifier)
    return found


def json_findings(output: bytes) -> dict[str, set[str]]:
    """The baselines' ``{"findings": {check: [id, ...]}}``."""
    return {name: set(ids) for name, ids in json.loads(output)["findings"].items() if ids}


def expected_findings(path: Path, key: str = "addresses") -> dict[str, set[str]]:
    """A generator's ``--expected`` file (gen_tfplan's format): check -> the ids that violate it."""
    return {name: set(check[key]) for name, check in json.loads(path.read_text())["checks"].items() if check[key]}


def difference(found: dict[str, set[str]], expected: dict[str, set[str]]) -> str | None:
    """None when `found` equals `expected` check by check, else what differs (a few ids of each kind)."""
    problems = []
    for name in sorted(set(found) | set(expected)):
        got, want = found.get(name, set()), expected.get(name, set())
        if got != want:
            problems.append(f"{name}: missing {sorted(want - got)[:3]} ({len(want - got)}), "
                            f"unexpected {sorted(got - want)[:3]} ({len(got - want)})")
    return "; ".join(problems) or None


# --- inputs (cached in bench-data/) ------------------------------------------------------------------

def _generator_key(script: Path) -> str:
    """Part of a cached input's name: a new version of its generator makes a new input."""
    return hashlib.sha256(script.read_bytes()).hexdigest()[:10]


def plan(size: int) -> tuple[Path, Path]:
    """The gen_tfplan plan of `size` resources (seed 1) and its expected findings."""
    DATA.mkdir(exist_ok=True)
    path, expected = DATA / f"plan-{size}.json", DATA / f"plan-{size}.expected.json"
    if not path.exists() or not expected.exists():
        print(f"generating a {size}-resource plan ...", file=sys.stderr)
        subprocess.run([sys.executable, str(REFERENCE / "gen_tfplan.py"), "--resources", str(size), "--seed", "1",
                        "--out", str(path), "--expected", str(expected)], check=True, capture_output=True)
    return path, expected


def manifests(files: int) -> tuple[Path, Path]:
    """The gen_manifests tree of `files` files (seed 1) and its expected findings."""
    script = BENCH / "gen_manifests.py"
    root = DATA / f"manifests-{files}-{_generator_key(script)}"
    expected = root.with_suffix(".expected.json")
    if not expected.exists():
        print(f"generating {files} manifest files ...", file=sys.stderr)
        for old in DATA.glob(f"manifests-{files}-*"):  # this and older generators' copies
            if old.is_dir():
                shutil.rmtree(old)
            else:
                old.unlink()
        subprocess.run([sys.executable, str(script), "--files", str(files), "--seed", "1", "--out", str(root),
                        "--expected", str(expected)], check=True)
    return root, expected


def ndjson(lines: int) -> tuple[Path, Path]:
    """The gen_ndjson file of `lines` resources (from the 10,000-resource plan) and its expected findings."""
    script = BENCH / "gen_ndjson.py"
    stem = f"resources-{lines}-{_generator_key(script)}"
    path, expected = DATA / f"{stem}.ndjson", DATA / f"{stem}.expected.json"
    if not expected.exists():
        for old in DATA.glob(f"resources-{lines}-*"):  # an older generator's copy (a 1M file is ~1.2 GB)
            old.unlink()
        source, source_expected = plan(10000)
        print(f"generating a {lines}-line NDJSON file ...", file=sys.stderr)
        subprocess.run([sys.executable, str(script), "--plan", str(source), "--plan-expected", str(source_expected),
                        "--lines", str(lines), "--out", str(path), "--expected", str(expected)], check=True)
    return path, expected


def core_tests() -> tuple[list[str], int]:
    """The kyverno-test.yaml files of the core tier (manifest.json's ``tests``) and their row count."""
    manifest = json.loads((CORE_TESTS / "manifest.json").read_text())
    tests = manifest["tests"]
    return [str(CORE_TESTS / test["test"]) for test in tests], sum(len(test["rows"]) for test in tests)


# --- the assertree under test ------------------------------------------------------------------------

@dataclass
class Assertree:
    """One assertree to run: this checkout or a --ref worktree."""

    tool: str  # "current" or "ref"
    root: Path
    commit: str
    env: dict[str, str]

    @property
    def argv(self) -> list[str]:
        return [sys.executable, "-m", "assertree"]

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*self.argv, *args], env=self.env, cwd=DATA, capture_output=True, text=True)

    def has_option(self, command: str, option: str) -> bool:
        return option in self.run(command, "--help").stdout


def child_env(pythonpath: Path | None = None) -> dict[str, str]:
    """The children's environment: .pyc files are used as after a ``pip install`` (common.md), and
    PYTHONPATH names the tree to import assertree from (ahead of the editable install), with a cache folder
    of its own (``ASSERTREE_CACHE_DIR``: two trees, or other checkouts on the machine, sharing one would empty
    each other's cache at every run, `assertree.documents.cache`, and every run would be a first run)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPATH")}
    if pythonpath is not None:
        env["PYTHONPATH"] = str(pythonpath)
        digest = hashlib.sha256(str(pythonpath).encode()).hexdigest()[:12]
        env["ASSERTREE_CACHE_DIR"] = str(DATA / "cache" / digest)
    return env


def _git(*args: str, cwd: Path = REPO) -> str:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True).stdout.strip()


def assertree_trees(ref: str | None) -> list[Assertree]:
    """This checkout, and the --ref worktree (made once, detached, in bench-data/worktrees/), each
    byte-compiled, each checked to import its own assertree from the neutral working directory."""
    dirty = " (+ uncommitted changes)" if _git("status", "--porcelain", "--", "assertree") else ""
    trees = [Assertree("current", REPO, _git("rev-parse", "--short=12", "HEAD") + dirty, child_env(REPO))]
    if ref is not None:
        commit = _git("rev-parse", "--short=12", f"{ref}^{{commit}}")
        worktree = DATA / "worktrees" / commit
        if not worktree.exists():
            worktree.parent.mkdir(parents=True, exist_ok=True)
            subprocess.run(["git", "worktree", "add", "--detach", str(worktree), commit], cwd=REPO, check=True,
                           capture_output=True)
        trees.append(Assertree("ref", worktree, f"{commit} ({ref})", child_env(worktree)))
    DATA.mkdir(exist_ok=True)
    for tree in trees:
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(tree.root / "assertree")], check=True)
        where = subprocess.run([sys.executable, "-c", "import assertree; print(assertree.__file__)"], env=tree.env,
                               cwd=DATA, capture_output=True, text=True, check=True).stdout.strip()
        if not Path(where).is_relative_to(tree.root):
            sys.exit(f"{tree.tool}: assertree is imported from {where}, not from {tree.root}")
    return trees


# --- cases -------------------------------------------------------------------------------------------

@dataclass
class Case:
    """Commands measured together, and the rows of the table: (assertree variant, baseline variant)."""

    name: str
    commands: list[Command]
    rows: list[tuple[str, str]]
    note: str = ""
    expected: dict[str, set[str]] | None = None
    checked: list[str] = field(default_factory=list)  # what each command's findings check said

    def command(self, variant: str, tool: str) -> Command | None:
        return next((c for c in self.commands if c.variant == variant and c.tool == tool), None)

    def check(self) -> bool:
        """Compare every command's last findings with `expected`; True when all agree."""
        ok = True
        for command in self.commands:
            if command.findings is None or command.error or self.expected is None:
                continue
            try:
                problem = difference(command.findings(command.stdout), self.expected)
            except (ValueError, KeyError, TypeError) as error:  # output that is not what the parser expects
                problem = f"unreadable output ({error})"
            if problem:
                command.error = f"findings differ: {problem}"
                ok = False
        return ok


def plan_case(name: str, size: int, trees: list[Assertree]) -> Case:
    path, expected = plan(size)
    baseline = Command("orjson loops (baseline.py)", "baseline",
                       [sys.executable, str(REFERENCE / "baseline.py"), str(path), "--out", os.devnull],
                       child_env())
    commands = [baseline]
    scan = ["scan", "--payload", str(path), "--policy", str(REFERENCE / "policies")]
    for tree in trees:
        commands.append(Command("scan --pre-process", tree.tool, [*tree.argv, *scan, "--pre-process", PRE_PROCESS],
                                tree.env, text_findings))
        commands.append(Command("scan --terraform", tree.tool, [*tree.argv, *scan, "--terraform"], tree.env,
                                text_findings))
    rows = [("scan --pre-process", baseline.variant), ("scan --terraform", baseline.variant)]
    return Case(name, commands, rows, expected=expected_findings(expected))


def files_case(name: str, trees: list[Assertree]) -> Case:
    root, expected = manifests(MANIFEST_FILES)
    root = root.resolve()
    script = [sys.executable, str(BENCH / "manifests_baseline.py"), str(root)]
    baselines = [Command("PyYAML safe_load loop", "baseline", script, child_env(), json_findings),
                 Command("PyYAML CSafeLoader loop", "baseline", [*script, "--loader", "csafe"], child_env(),
                         json_findings)]
    commands, variants = list(baselines), ["scan -q"]
    scan = ["scan", str(root), "--policy", str(BENCH / "manifests-policies"), "-q"]
    jobs = os.cpu_count() or 1
    note = ""

    def findings(report: bytes) -> dict[str, set[str]]:
        return text_findings(report, root)

    for tree in trees:
        commands.append(Command("scan -q", tree.tool, [*tree.argv, *scan], tree.env, findings))
        if tree.has_option("scan", "--jobs"):
            for n in sorted({1, jobs}):
                variant = f"scan -q --jobs {n}"
                commands.append(Command(variant, tree.tool, [*tree.argv, *scan, "--jobs", str(n)], tree.env, findings))
                if variant not in variants:
                    variants.append(variant)
        else:
            note += f"{tree.tool}: no --jobs option. "
    rows = [(variant, baseline.variant) for variant in variants for baseline in baselines]
    return Case(name, commands, rows, note=note.strip(), expected=expected_findings(expected, "ids"))


def streams_ndjson(tree: Assertree) -> str | None:
    """None when `tree`'s ``assertree scan`` reads an NDJSON payload (tried on a small file, findings checked),
    else why not."""
    path, expected = DATA / "probe.ndjson", DATA / "probe.expected.json"
    source, source_expected = plan(1000)
    subprocess.run([sys.executable, str(BENCH / "gen_ndjson.py"), "--plan", str(source), "--plan-expected",
                    str(source_expected), "--lines", "1500", "--out", str(path), "--expected", str(expected)],
                   check=True)
    done = tree.run("scan", "--payload", str(path), "--policy", str(REFERENCE / "policies"), "-q")
    if done.returncode not in (0, 1):
        return f"exit {done.returncode}: {(done.stderr.strip().splitlines() or [''])[0][:120]}"
    return difference(text_findings(done.stdout.encode()), expected_findings(expected))


def ndjson_case(name: str, trees: list[Assertree]) -> Case:
    problems = {tree.tool: streams_ndjson(tree) for tree in trees}
    streaming = [tree for tree in trees if problems[tree.tool] is None]
    note = "".join(f"{tool}: n/a (no streaming input yet; probe: {problem}). "
                   for tool, problem in problems.items() if problem is not None)
    if not streaming:  # nothing to compare the baseline with: do not spend a minute generating the file
        return Case(name, [], [("scan -q", "orjson line loop")], note=note.strip())
    path, expected = ndjson(NDJSON_LINES)
    commands = [Command("orjson line loop", "baseline", [sys.executable, str(BENCH / "ndjson_baseline.py"), str(path)],
                        child_env(), json_findings)]
    for tree in streaming:
        commands.append(Command("scan -q", tree.tool, [*tree.argv, "scan", "--payload", str(path), "--policy",
                                                       str(REFERENCE / "policies"), "-q"], tree.env, text_findings))
    return Case(name, commands, [("scan -q", "orjson line loop")], note=note.strip(),
                expected=expected_findings(expected))


SUMMARY = re.compile(r"Test Summary: (\d+) tests passed and (\d+) tests failed")
FAILED_ROW = re.compile(r"^│\s*\d+\s*│\s*(\S+)\s*│\s*(\S+)\s*│\s*(\S+)\s*│\s*Fail\s*│", re.MULTILINE)
AMBIENT_ROWS = {f"add-ambient-mode-namespace/check-ambient-mode-enabled/v1/Namespace/istio-test-{name}-ns"
                for name in ("none", "dis", "en", "alt")}
"""The rows of kyverno/policies' tests `assertree test` fails on main (2026-11-27): the test names a rule its
policy does not have ("Rule not found"), which the Kyverno CLI fails too."""
EXPECTED_TESTS = {"test-core": (1439, AMBIENT_ROWS), "test-shared": (3924, AMBIENT_ROWS)}
"""Each ``assertree test`` case's passed rows and failed rows: its findings check (a run that gives others
prints no figure)."""


def test_findings(output: bytes) -> dict[str, set[str]]:
    """The summary line's passed count and the failed rows (policy/rule/resource) of ``assertree test``'s table."""
    text = output.decode(errors="replace")
    summary = SUMMARY.search(text)
    if summary is None:
        raise ValueError("no Test Summary line")
    failed = {"/".join(row) for row in FAILED_ROW.findall(text)}
    if len(failed) != int(summary.group(2)):
        raise ValueError(f"{summary.group(2)} failed in the summary, {len(failed)} failed rows in the table")
    return {"passed": {summary.group(1)}, "failed": failed}


def expected_tests(name: str) -> dict[str, set[str]]:
    passed, failed = EXPECTED_TESTS[name]
    return {"passed": {str(passed)}, "failed": set(failed)}


def test_case(name: str, trees: list[Assertree]) -> Case:
    files, rows = core_tests()
    empty = DATA / "empty"  # `assertree test` on a folder without tests: its start-up, subtracted per row
    empty.mkdir(parents=True, exist_ok=True)
    commands = []
    for tree in trees:
        commands.append(Command("test core tier", tree.tool, [*tree.argv, "test", *files], tree.env,
                                test_findings, ok_codes=(0, 1)))
        commands.append(Command("test (empty folder)", tree.tool, [*tree.argv, "test", str(empty)], tree.env,
                                ok_codes=(0, 1, 2)))
    return Case(name, commands, [], note=f"{len(files)} kyverno-test.yaml files, {rows} rows in manifest.json",
                expected=expected_tests(name))


def reports_case(name: str, trees: list[Assertree]) -> Case:
    """The text report against sarif, junit and github, all to standard output, on the 10,000-resource plan."""
    path, expected = plan(10000)
    scan = ["scan", "--payload", str(path), "--policy", str(REFERENCE / "policies"), "--terraform", "-o"]
    commands = []
    for tree in trees:
        commands += [Command(f"-o {fmt}", tree.tool, [*tree.argv, *scan, fmt], tree.env,
                             text_findings if fmt == "text" else None)
                     for fmt in ("text", "sarif", "junit", "github")]
    return Case(name, commands, [], expected=expected_findings(expected))


def library(resources: int = LIBRARY_RESOURCES) -> tuple[Path, dict[str, Any]]:
    """The library-scale inputs for a dump of `resources` (`gen_library.py`, cached in bench-data/) and their
    summary."""
    script = BENCH / "gen_library.py"
    root = DATA / f"library-{resources}-{_generator_key(script)}"
    if not (root / "summary.json").exists():
        print(f"generating the library case ({resources} resources) ...", file=sys.stderr)
        subprocess.run([sys.executable, str(script), "--out", str(root), "--resources", str(resources),
                        "--seed", "1", "--check"], check=True)
    return root, json.loads((root / "summary.json").read_text())


def library_case(name: str, trees: list[Assertree], files: str | None = None) -> Case:
    """Every policy of the shared kyverno/policies copy over a cluster dump (5,000 resources, or N for
    library-N), one process and --jobs (one per CPU); the scan's summary line gives the (rule, resource)
    pairs for the µs-per-pair figures. `files` (``--library-slice``): a glob of the dump's files to scan
    instead of all of them (each namespace's file is a random sample of the dump)."""
    root, summary = library(int(name.removeprefix("library-")))
    cluster = root / "cluster" / files if files else root / "cluster"
    scan = ["scan", str(cluster), "--policy", str(root / "policies"), "-q"]
    jobs = os.cpu_count() or 1
    commands = []
    for tree in trees:
        commands.append(Command("scan -q --jobs 1", tree.tool, [*tree.argv, *scan, "--jobs", "1"], tree.env))
        if jobs > 1:
            commands.append(Command(f"scan -q --jobs {jobs}", tree.tool, [*tree.argv, *scan, "--jobs", str(jobs)],
                                    tree.env))
    note = (f"{summary['policy_files']} policy files ({len(summary['policy_files_left_out'])} left out), "
            f"{summary['resources']} resources in {summary['files']} files")
    if files:
        note += f"; scanned: the slice `{files}` of those files (see the summary line for its resources)"
    return Case(name, commands, [], note=note)


def policies_checkout() -> Path | None:
    """A clone of kyverno/policies in bench-data/ (from the fetched mirror; never committed), or None."""
    target = DATA / "kyverno-policies"
    if (target / ".git").exists():
        return target
    if not POLICIES_MIRROR.exists():
        return None
    subprocess.run(["git", "clone", "-q", str(POLICIES_MIRROR), str(target)], check=True)
    return target


def test_files_under(root: Path) -> list[str]:
    return sorted(str(path) for path in root.rglob("kyverno-test.yaml") if ".git" not in path.parts)


def test_dir_case(name: str, trees: list[Assertree]) -> Case:
    """`assertree test` over a folder of kyverno tests: the shared copy (test-shared) or all of kyverno/policies
    (test-library), end to end."""
    root = SHARED_TESTS if name == "test-shared" else policies_checkout()
    if root is None:
        return Case(name, [], [], note=f"n/a: no kyverno/policies mirror at {POLICIES_MIRROR}")
    count = len(test_files_under(root))
    shared = name == "test-shared"
    commands = [Command("test", tree.tool, [*tree.argv, "test", str(root)], tree.env,
                        test_findings if shared else None, ok_codes=(0, 1))
                for tree in trees]
    return Case(name, commands, [], note=f"{root}: {count} kyverno-test.yaml files",
                expected=expected_tests(name) if shared else None)


def startup_case(trees: list[Assertree]) -> Case:
    commands = [Command("python -c pass", "baseline", [sys.executable, "-c", "pass"], child_env())]
    commands += [Command("assertree --version", tree.tool, [*tree.argv, "--version"], tree.env, ok_codes=(0,))
                 for tree in trees]
    return Case("start-up", commands, [])


def import_times(tree: Assertree, plan_path: Path) -> list[tuple[str, float, float]]:
    """``python -X importtime`` of a ten-resource scan: (top-level package, self ms, share of all) top ten."""
    done = subprocess.run([*tree.argv[:1], "-X", "importtime", *tree.argv[1:], "scan", "--payload", str(plan_path),
                           "--policy", str(REFERENCE / "policies"), "--terraform", "-q"],
                          env=tree.env, cwd=DATA, capture_output=True, text=True)
    by_package: dict[str, int] = {}
    for line in done.stderr.splitlines():
        match = re.match(r"import time:\s+(\d+) \|\s+\d+ \| ( *)(\S+)", line)
        if match:
            package = match.group(3).split(".")[0]
            by_package[package] = by_package.get(package, 0) + int(match.group(1))
    total = sum(by_package.values()) or 1
    top = sorted(by_package.items(), key=lambda item: -item[1])[:10]
    return [(package, us / 1000, us / total) for package, us in top]


# --- report ------------------------------------------------------------------------------------------

def _s(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def _mb(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.0f}"


def _ratio(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None or b == 0 else a / b


def _x(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}x"


def _verdict(value: float | None, goal: float) -> str:
    """PASS or MISS with the exact ratio (three decimals: 0.4504x misses a 0.45x goal)."""
    return "n/a" if value is None else f"{'PASS' if value <= goal else 'MISS'} ({value:.3f}x)"


def result_rows(cases: list[Case], tools: list[str]) -> tuple[list[str], list[dict[str, Any]]]:
    """The main table's lines and, per row, the figures the goals are checked on."""
    head = ["case", "assertree", "baseline", "baseline s", "baseline MB"]
    for tool in tools:
        tag = "" if tool == "current" else f" ({tool})"
        head += [f"assertree s{tag}", f"time ratio{tag}", f"assertree MB{tag}", f"memory ratio{tag}"]
    head += ["findings"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    figures = []
    for case in cases:
        for variant, baseline_variant in case.rows:
            baseline = case.command(baseline_variant, "baseline")
            base_s = baseline.median_s if baseline else None
            base_mb = baseline.median_mb if baseline else None
            cells = [case.name, variant, baseline_variant, _s(base_s), _mb(base_mb)]
            for tool in tools:
                command = case.command(variant, tool)
                s = command.median_s if command else None
                mb = command.median_mb if command else None
                cells += [_s(s), _x(_ratio(s, base_s)), _mb(mb), _x(_ratio(mb, base_mb))]
                figures.append({"case": case.name, "variant": variant, "baseline": baseline_variant, "tool": tool,
                                "time_ratio": _ratio(s, base_s), "memory_ratio": _ratio(mb, base_mb)})
            errors = [f"{c.tool} {c.variant}: {c.error}" for c in case.commands if c.error]
            if not case.commands:
                status = case.note
            elif errors:
                status = "; ".join(errors)
            elif case.expected is not None:
                status = f"{sum(map(len, case.expected.values()))} ok"
            else:
                status = "not checked"
            cells.append(status)
            lines.append("| " + " | ".join(cells) + " |")
    return lines, figures


def test_rows(case: Case, tools: list[str]) -> tuple[list[str], dict[str, float | None]]:
    lines = ["| assertree | end to end s | empty `assertree test` s | rows | ms per row | result |",
             "|---|---|---|---|---|---|"]
    per_row: dict[str, float | None] = {}
    for tool in tools:
        full, empty = case.command("test core tier", tool), case.command("test (empty folder)", tool)
        rows, ms, result = None, None, (full.error if full and full.error else "")
        if full and not full.error:
            summary = SUMMARY.search(full.stdout.decode(errors="replace"))
            if summary:
                passed, failed = int(summary.group(1)), int(summary.group(2))
                rows = passed + failed
                result = summary.group(0)
                if failed:
                    result += " (rows failed)"
            else:
                result = "no summary line"
        if rows and full and empty and full.median_s is not None and empty.median_s is not None:
            ms = (full.median_s - empty.median_s) / rows * 1000
        per_row[tool] = ms
        lines.append(f"| {tool} | {_s(full.median_s if full else None)} | {_s(empty.median_s if empty else None)} "
                     f"| {rows or 'n/a'} | {'n/a' if ms is None else f'{ms:.3f}'} | {result} |")
    return lines, per_row


def report_rows(case: Case, tools: list[str]) -> list[str]:
    lines = ["| assertree | format | s | MB | / text | goal |", "|---|---|---|---|---|---|"]
    for tool in tools:
        text = case.command("-o text", tool)
        base = text.median_s if text else None
        for fmt in ("text", "sarif", "junit", "github"):
            command = case.command(f"-o {fmt}", tool)
            s = command.median_s if command else None
            ratio = _ratio(s, base)
            verdict = "" if fmt == "text" else _verdict(ratio, REPORT_GOAL)
            error = f" ({command.error})" if command and command.error else ""
            lines.append(f"| {tool} | {fmt}{error} | {_s(s)} | {_mb(command.median_mb if command else None)} "
                         f"| {_x(ratio)} | {verdict} |")
    return lines


SCAN_SUMMARY = re.compile(r"Checked (\d+) resources against (\d+) policies \((\d+) rules\): "
                          r"(\d+) passed, (\d+) failed, (\d+) errored, (\d+) skipped")


def library_rows(case: Case, tools: list[str]) -> list[str]:
    """Seconds, CPU seconds (user + system, workers included: on a busy machine the steadier figure), peak
    memory, and both per (rule, resource) pair and per result."""
    lines = [("| assertree | command | s | CPU s | MB | rules | resources | results | µs per (rule, resource) "
              "| CPU µs per (rule, resource) | µs per result |"), "|---|---|---|---|---|---|---|---|---|---|---|"]
    for command in case.commands:
        summary = SCAN_SUMMARY.search(command.stdout.decode(errors="replace"))
        s, cpu = command.median_s, command.median_cpu_s
        if summary is None or s is None or cpu is None:
            lines.append(f"| {command.tool} | {command.variant} | {_s(s)} | {_s(cpu)} | {_mb(command.median_mb)} "
                         f"| | | | | | {command.error or 'no summary line'} |")
            continue
        resources, _, rules = (int(summary.group(i)) for i in (1, 2, 3))
        results = sum(int(summary.group(i)) for i in (4, 5, 6, 7))
        pairs = rules * resources
        lines.append(f"| {command.tool} | {command.variant} | {s:.2f} | {cpu:.2f} | {_mb(command.median_mb)} "
                     f"| {rules} | {resources} | {results} | {s / pairs * 1e6:.1f} | {cpu / pairs * 1e6:.1f} "
                     f"| {s / max(results, 1) * 1e6:.0f} |")
    return lines


def test_dir_rows(case: Case, tools: list[str]) -> list[str]:
    lines = ["| assertree | s | MB | result | goal |", "|---|---|---|---|---|"]
    for command in case.commands:
        summary = SUMMARY.search(command.stdout.decode(errors="replace"))
        result = summary.group(0) if summary else (command.error or "no summary line")
        goal = _verdict(command.median_s, TEST_SHARED_GOAL).replace("x)", " s)") if case.name == "test-shared" else ""
        lines.append(f"| {command.tool} | {_s(command.median_s)} | {_mb(command.median_mb)} | {result} | {goal} |")
    return lines


def goal_lines(figures: list[dict[str, Any]], per_row: dict[str, float | None], tools: list[str]) -> list[str]:
    lines = ["| goal | " + " | ".join(tools) + " |", "|---|" + "---|" * len(tools)]
    for case, goal in TIME_GOALS.items():
        for variant, baseline in dict.fromkeys((f["variant"], f["baseline"]) for f in figures if f["case"] == case):
            cells = []
            for tool in tools:
                value = next((f["time_ratio"] for f in figures if f["case"] == case and f["variant"] == variant
                              and f["baseline"] == baseline and f["tool"] == tool), None)
                cells.append(_verdict(value, goal))
            lines.append(f"| {case} {variant} vs {baseline}: time ≤ {goal:.2f}x | " + " | ".join(cells) + " |")
    for case in dict.fromkeys(f["case"] for f in figures):  # memory: every case, its worst row
        cells = []
        for tool in tools:
            ratios = [f["memory_ratio"] for f in figures
                      if f["case"] == case and f["tool"] == tool and f["memory_ratio"] is not None]
            cells.append(_verdict(max(ratios) if ratios else None, MEMORY_GOALS.get(case, MEMORY_GOAL)))
        goal = MEMORY_GOALS.get(case, MEMORY_GOAL)
        lines.append(f"| {case}: peak memory ≤ {goal}x the baseline (worst row) | " + " | ".join(cells) + " |")
    if per_row:
        cells = []
        for tool in tools:
            ms = per_row.get(tool)
            cells.append("n/a" if ms is None else f"{'PASS' if ms < MS_PER_ROW_GOAL else 'MISS'} ({ms:.3f} ms)")
        lines.append(f"| test-core < {MS_PER_ROW_GOAL} ms per row | " + " | ".join(cells) + " |")
    return lines


def uptime() -> str:
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    except OSError:
        return "load average: " + " ".join(f"{x:.2f}" for x in os.getloadavg())


# --- main --------------------------------------------------------------------------------------------

def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", nargs="+", default=list(DEFAULT_CASES), metavar="CASE",
                        help=f"any of {', '.join(DEFAULT_CASES)}, or plan-N (a plan of N resources), or library-N "
                        "(the library case over N resources)")
    parser.add_argument("--repeat", type=int, help=f"runs per command (default {DEFAULT_REPEAT}; "
                        + ", ".join(f"{k} {v}" for k, v in REPEAT_CAP.items()) + ")")
    parser.add_argument("--ref", metavar="GIT_REV", help="also run assertree from this revision (a worktree)")
    parser.add_argument("--startup", action="store_true", help="add python -X importtime of a ten-resource scan")
    parser.add_argument("--library-slice", metavar="GLOB", help="library cases: scan only the dump's files matching "
                        "GLOB (e.g. 'ns-00[0-3]*', about a tenth), when the whole dump takes too long")
    args = parser.parse_args(argv)
    for case in args.cases:
        if case not in DEFAULT_CASES and not re.fullmatch(r"plan-\d+", case) and not LIBRARY_CASE.fullmatch(case):
            parser.error(f"unknown case {case!r}")
    return args


def build_case(name: str, trees: list[Assertree], library_slice: str | None = None) -> Case:
    if name in PLAN_CASES or name.startswith("plan-"):
        return plan_case(name, PLAN_CASES.get(name) or int(name.removeprefix("plan-")), trees)
    if name == "files-2000":
        return files_case(name, trees)
    if name == "ndjson-1M":
        return ndjson_case(name, trees)
    if name == "reports-10k":
        return reports_case(name, trees)
    if LIBRARY_CASE.fullmatch(name):
        return library_case(name, trees, library_slice)
    if name in ("test-shared", "test-library"):
        return test_dir_case(name, trees)
    return test_case(name, trees)


def run_cases(names: list[str], trees: list[Assertree], repeat: int | None,
              library_slice: str | None = None) -> tuple[list[Case], bool]:
    """Build and measure the start-up case and each case of `names`; True when every findings check agreed."""
    cases, ok = [], True
    for name in ["start-up", *names]:
        case = startup_case(trees) if name == "start-up" else build_case(name, trees, library_slice)
        cap = REPEAT_CAP["library-5000"] if LIBRARY_CASE.fullmatch(name) else REPEAT_CAP.get(name, DEFAULT_REPEAT)
        runs = repeat or min(DEFAULT_REPEAT, cap)
        print(f"{name}: {len(case.commands)} commands x {runs} ...", file=sys.stderr)
        started = time.perf_counter()
        measure(case.commands, runs, DATA)
        ok = case.check() and ok and not any(c.error for c in case.commands)
        print(f"{name}: {time.perf_counter() - started:.0f} s", file=sys.stderr)
        cases.append(case)
    return cases, ok


def markdown(cases: list[Case], trees: list[Assertree], imports: dict[str, list[tuple[str, float, float]]],
             heading: list[str]) -> tuple[list[str], list[dict[str, Any]], dict[str, float | None]]:
    """The report's lines; the figures the goals were checked on; ms per test row by tool."""
    tools = [tree.tool for tree in trees]
    extra = ("test-core", "reports-10k", "test-shared", "test-library")
    startup = cases[0]
    measured = [c for c in cases[1:] if c.name not in extra and not LIBRARY_CASE.fullmatch(c.name)]
    tests = next((c for c in cases if c.name == "test-core"), None)
    out = list(heading)
    table, figures = result_rows(measured, tools)
    out += table
    notes = [f"- {c.name}: {c.note}" for c in measured if c.note]
    out += ["", *notes] if notes else []
    per_row: dict[str, float | None] = {}
    if tests is not None:
        lines, per_row = test_rows(tests, tools)
        out += ["", (f"`assertree test`, core tier of kyverno/policies ({tests.note}); "
                    "ms per row = (end to end - empty run) / rows:"), "", *lines]
    for case in cases:
        if case.name == "reports-10k":
            out += ["", ("Reports at 10,000 resources (`scan --terraform -o FORMAT`, to standard output), against "
                         "the text report:"), "", *report_rows(case, tools)]
        elif LIBRARY_CASE.fullmatch(case.name):
            out += ["", f"Library scale, {case.name} ({case.note}):", "", *library_rows(case, tools)]
        elif case.name in ("test-shared", "test-library"):
            out += ["", f"`assertree test` ({case.name}; {case.note}):", "", *test_dir_rows(case, tools)]
    out += ["", "Start-up:", "", "| command | s | MB |", "|---|---|---|"]
    out += [f"| {c.variant}{'' if c.tool in ('baseline', 'current') else f' ({c.tool})'} | {_s(c.median_s)} "
            f"| {_mb(c.median_mb)} |" for c in startup.commands]
    for tool, top in imports.items():
        out += ["", (f"`python -X importtime` of a ten-resource `scan --terraform` ({tool}), "
                    "self time by top-level package:"), "", "| package | ms | share |", "|---|---|---|"]
        out += [f"| {package} | {ms:.1f} | {share:.0%} |" for package, ms, share in top]
    out += ["", "Goals (issues 15 and 28):", "", *goal_lines(figures, per_row, tools)]
    return out, figures, per_row


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    started = time.perf_counter()
    stamp = datetime.now(UTC)
    trees = assertree_trees(args.ref)
    cases, ok = run_cases(args.cases, trees, args.repeat, args.library_slice)
    imports = {tree.tool: import_times(tree, plan(10)[0]) for tree in trees} if args.startup else {}
    command = " ".join(["python", "bench/run.py", *(sys.argv[1:] if argv is None else argv)])
    heading = [f"# assertree benchmark, {stamp:%Y-%m-%d %H:%M} UTC", "",
               f"- `{command}`",
               f"- machine: {os.cpu_count()} CPUs, Python {platform.python_version()}, {uptime()}",
               *[f"- {tree.tool}: assertree at {tree.commit} ({tree.root})" for tree in trees],
               ("- seconds: median wall-clock of whole processes over alternating runs; MB: median peak RSS "
                "(ru_maxrss); ratios: assertree / baseline (lower is better)"), ""]
    out, figures, per_row = markdown(cases, trees, imports, heading)
    elapsed = time.perf_counter() - started
    out += ["", f"Whole run: {elapsed / 60:.1f} minutes (load average at the end: {uptime().rpartition(': ')[2]})."]
    text = "\n".join(out) + "\n"
    print(text)
    DATA.mkdir(exist_ok=True)
    base = DATA / f"results-{stamp:%Y%m%dT%H%M%SZ}"
    base.with_suffix(".md").write_text(text)
    raw = {"date": stamp.isoformat(), "command": command, "uptime": uptime(), "cpus": os.cpu_count(),
           "python": platform.python_version(), "seconds": elapsed,
           "trees": [{"tool": t.tool, "commit": t.commit, "root": str(t.root)} for t in trees],
           "cases": [{"name": c.name, "note": c.note, "commands": [x.as_json() for x in c.commands]} for c in cases],
           "figures": figures, "ms_per_row": per_row, "import_times": imports}
    base.with_suffix(".json").write_text(json.dumps(raw, indent=1) + "\n")
    print(f"written: {base}.md, {base}.json", file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
