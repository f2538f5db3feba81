"""Start-up stays light: what `import assertree`, `assertree --version` and a small scan import.

Each check runs a fresh interpreter with ``-X importtime`` (which lists every
module a process imports, whichever way it ends: the console script skips the
interpreter's teardown with ``os._exit``) and names the heavy packages that
must not be among them. No timings: what a command imports is what decides
its start-up, and that does not depend on the machine's load.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import GEN_TFPLAN, REPO

import assertree

# Heavy or optional packages (each costs from a few to a hundred milliseconds to import).
NEVER_AT_START = {"typer", "click", "pydantic", "jsonschema", "jsonschema_rs", "yaml", "orjson", "re2",
                  "cel_expr_python", "starlette", "ruamel", "rich"}
NEVER_IN_A_PLAIN_SCAN = {"jsonschema", "pydantic", "starlette", "ruamel", "cel_expr_python", "rich"}
POLICIES = REPO / "bench" / "reference" / "policies"


def imported(*args: str, cwd: Path | None = None) -> tuple[subprocess.CompletedProcess, set[str]]:
    """Run ``python -X importtime ARGS``; the finished process and the top-level packages it imported."""
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPROFILEIMPORTTIME"}
    done = subprocess.run([sys.executable, "-X", "importtime", *args], capture_output=True, text=True,
                          cwd=cwd, env=env, timeout=120)
    names = re.findall(r"^import time:\s+\d+ \|\s+\d+ \| +(\S+)$", done.stderr, flags=re.MULTILINE)
    assert names, done.stderr[-2000:]  # -X importtime did report
    return done, {name.split(".")[0] for name in names}


def test_import_assertree_imports_no_heavy_package():
    done, packages = imported("-c", "import assertree; print(assertree.__version__)")
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout == f"{assertree.__version__}\n"
    assert "assertree" in packages
    assert packages & NEVER_AT_START == set()


@pytest.mark.parametrize("flag", ["--version", "-V"])
def test_version_imports_neither_typer_nor_the_library(flag):
    done, packages = imported("-m", "assertree", flag)
    assert (done.returncode, done.stdout) == (0, f"assertree {assertree.__version__}\n"), done.stderr[-2000:]
    assert packages & NEVER_AT_START == set()
    loaded = set(re.findall(r"\| +(assertree[.\w]*)$", done.stderr, flags=re.MULTILINE))
    assert loaded <= {"assertree", "assertree.__main__", "assertree.cli", "assertree.cli.exit_codes",
                      "assertree.cli.process"}


@pytest.fixture(scope="module")
def plan(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A ten-resource Terraform plan from the benchmark's generator, with the benchmark's eight checks."""
    path = tmp_path_factory.mktemp("plan") / "plan.json"
    subprocess.run([sys.executable, str(GEN_TFPLAN), "--resources", "10", "--seed", "1", "--out", str(path)],
                   check=True, capture_output=True, timeout=120)
    return path


def test_a_plain_scan_imports_no_schema_explainer_server_or_cel(plan, tmp_path, monkeypatch):
    monkeypatch.setenv("ASSERTREE_CACHE", "off")  # policies read and checked, as on a first run
    report = tmp_path / "report.json"
    done, packages = imported("-m", "assertree", "scan", "--payload", str(plan), "--policy", str(POLICIES),
                              "--terraform", "-o", "text", "-o", f"json={report}")
    assert done.returncode == 0, done.stderr[-2000:]
    assert "8 passed, 0 failed" in done.stdout
    assert packages & NEVER_IN_A_PLAIN_SCAN == set()
    assert {"typer", "yaml"} <= packages  # the check above looked at a real scan's imports
    assert json.loads(report.read_text(encoding="utf-8"))["summary"]["passed"] == 8  # whole before the exit
    commands = {name for name in assertree_modules(done.stderr) if name in OTHER_COMMANDS | {"assertree.cli.scan"}}
    assert commands == {"assertree.cli.scan"}  # the command that runs is the one command module imported


def test_a_small_payload_read_for_some_members_is_parsed_whole_without_msgspec(plan):
    """Importing msgspec costs more than skipping members saves below `payload._MEMBERS_FROM` bytes."""
    done, packages = imported("-m", "assertree", "scan", "--payload", str(plan), "--policy", str(POLICIES),
                              "--pre-process", "planned_values.root_module.resources")
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Checked 4 resources" in done.stdout  # the plan's root module's
    assert "msgspec" not in packages and "orjson" in packages


OTHER_COMMANDS = {f"assertree.cli.{name}" for name in
                  ("test", "apply", "compare", "lint", "migrate", "serve", "config", "jp", "kyverno")}


# What a kyverno-json scan of a JSON payload needs once its policies are in the cache of checked files
# (`assertree.documents.cache`): no YAML parser, no schema validator, no hashing library, no other language.
NEVER_IN_A_CACHED_SCAN = {"yaml", "_yaml", "jsonschema", "jsonschema_rs", "hashlib", "_hashlib"}
OTHER_LANGUAGES = ("assertree.languages.kyverno.", "assertree.languages.admission.", "assertree.languages.cel.")


def assertree_modules(stderr: str) -> set[str]:
    return set(re.findall(r"\| +(assertree[.\w]*)$", stderr, flags=re.MULTILINE))


def test_a_kyverno_json_scan_with_cached_policies_reads_no_yaml_and_validates_nothing(plan, tmp_path, monkeypatch):
    monkeypatch.setenv("ASSERTREE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("ASSERTREE_CACHE", raising=False)
    scan = ("-m", "assertree", "scan", "--payload", str(plan), "--policy", str(POLICIES), "--terraform")
    cold, cold_packages = imported(*scan)
    warm, warm_packages = imported(*scan)
    assert cold.stdout == warm.stdout and "8 passed, 0 failed" in warm.stdout, warm.stderr[-2000:]
    assert {"yaml", "jsonschema_rs"} <= cold_packages  # the first run read and checked them
    assert warm_packages & (NEVER_IN_A_CACHED_SCAN | NEVER_IN_A_PLAIN_SCAN) == set()
    assert "typer" in warm_packages  # a real scan's imports
    assert not [name for name in assertree_modules(warm.stderr) if name.startswith(OTHER_LANGUAGES)]


# A kyverno-json scan's classes are written out on `assertree.records`: @dataclass compiles each class's methods at
# import (~0.6 ms a class), and `Record.replace` does what `dataclasses.replace` did for the ones callers rebuild.
RECORD_DATACLASSES = """
import dataclasses, json, sys
made = []
process = dataclasses._process_class
def recording(cls, *args, **kwargs):
    made.append(f"{cls.__module__}.{cls.__qualname__}")
    return process(cls, *args, **kwargs)
dataclasses._process_class = recording
@dataclasses.dataclass
class Probe:  # the recording sees a dataclass made here
    x: int
from assertree.cli import main
sys.argv = ["assertree", *sys.argv[1:]]
code = main()
print(json.dumps(sorted(name for name in made if name.startswith(("assertree.", "__main__.")))), file=sys.stderr)
sys.exit(code)
"""


def test_a_kyverno_json_scan_generates_no_dataclass(plan, tmp_path, monkeypatch):
    monkeypatch.setenv("ASSERTREE_CACHE_DIR", str(tmp_path / "cache"))
    scan = [sys.executable, "-c", RECORD_DATACLASSES, "scan", "--payload", str(plan), "--policy", str(POLICIES),
            "--terraform", "-o", "text", "-o", f"sarif={tmp_path / 'report.sarif'}"]
    for _ in range(2):  # the second run takes the policies from the cache
        done = subprocess.run(scan, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0 and "8 passed, 0 failed" in done.stdout, done.stderr[-2000:]
    made = json.loads(done.stderr.strip().splitlines()[-1])
    assert made == ["__main__.Probe"]  # and none of assertree's


# What a plain kyverno-json scan (no --labels, --baseline, --explain, PolicyExceptions; policies calling json_parse and
# contains, not regex functions) leaves unimported: each is imported where the option or function that needs it is.
MODULES_AT_EXIT = """
import json, sys
from assertree.cli import main
sys.argv = ["assertree", *sys.argv[1:]]
code = main()
print(json.dumps(sorted(sys.modules)), file=sys.stderr)
sys.exit(code)
"""
NOT_IN_A_PLAIN_KYVERNO_JSON_SCAN = {
    "assertree.languages.selectors",  # --labels
    "assertree.findings.baseline", "assertree.findings.fingerprint",  # --baseline, --write-baseline, SARIF
    "assertree.findings.exceptions",  # PolicyExceptions (--exceptions)
    "assertree.explanation", "assertree.report.explain",  # --explain
    "assertree.jp.functions.regex",  # regex_match, pattern_match, ... (kyverno-json's wildcard is not one)
    "assertree.inputs.stream",  # JSON Lines payloads, --stream
    "assertree.inputs.bindings",  # --bindings
}
# `struct` (Go's float32 text of a number given to a regex function) is not in the set: other libraries import it
# themselves at some of their allowed versions (the lowest-dependency run's zoneinfo chain does); the test below holds
# assertree's own import of it to the function that needs it


def test_a_plain_kyverno_json_scan_imports_only_what_it_uses(plan, tmp_path, monkeypatch):
    monkeypatch.setenv("ASSERTREE_CACHE_DIR", str(tmp_path / "cache"))
    scan = [sys.executable, "-c", MODULES_AT_EXIT, "scan", "--payload", str(plan), "--policy", str(POLICIES),
            "--terraform"]
    for _ in range(2):  # the second run takes the policies from the cache
        done = subprocess.run(scan, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0 and "8 passed, 0 failed" in done.stdout, done.stderr[-2000:]
    modules = set(json.loads(done.stderr.strip().splitlines()[-1]))
    assert {"assertree.jp.functions.kyverno_json", "assertree.findings.steps"} <= modules  # a real scan's
    assert modules & NOT_IN_A_PLAIN_KYVERNO_JSON_SCAN == set()


def test_struct_is_imported_where_a_float32_is_written_not_with_the_functions():
    import assertree.jp.functions.conversions as conversions

    assert "struct" not in vars(conversions)


# The collector's passes while a scan starts (typer's application, the command's modules, the policies compiled), by
# the phase they ran in: `assertree.cli.process.starting` pauses it then, as it finds nothing to free there.
COLLECTIONS_BY_PHASE = """
import gc, json, sys
from assertree.cli import main, process
process.one_shot = sys.argv[1] == "one-shot"
phases = {"build_app": "application", "load_policy_arguments": "policies", "load_resources": "payloads",
          "scan": "checking", "write_outputs": "reports"}
passes = []
def record(phase, info):
    if phase == "start":
        frame, found = sys._getframe(), "other"
        while frame is not None:
            if frame.f_code.co_name in phases and frame.f_code.co_filename.endswith(".py"):
                found = phases[frame.f_code.co_name]
                break
            frame = frame.f_back
        passes.append(found)
gc.callbacks.append(record)
sys.argv = ["assertree", *sys.argv[2:]]
code = main()
print(json.dumps({"passes": passes, "enabled": gc.isenabled(), "frozen": gc.get_freeze_count() > 0}), file=sys.stderr)
sys.exit(code)
"""


@pytest.mark.parametrize("mode", ["one-shot", "in-process"])
def test_the_collector_is_paused_while_a_scan_starts(plan, tmp_path, monkeypatch, mode):
    monkeypatch.setenv("ASSERTREE_CACHE_DIR", str(tmp_path / "cache"))
    scan = [sys.executable, "-c", COLLECTIONS_BY_PHASE, mode, "scan", "--payload", str(plan), "--policy", str(POLICIES),
            "--terraform"]
    done = subprocess.run(scan, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "8 passed, 0 failed" in done.stdout, done.stderr[-2000:]
    seen = json.loads(done.stderr.strip().splitlines()[-1])
    assert seen["enabled"]  # on again once started
    assert seen["frozen"] == (mode == "one-shot")  # what start-up made is out of its sight only in a one-shot run
    assert "application" not in seen["passes"] and "policies" not in seen["passes"], seen["passes"]


def test_an_invalid_policy_is_still_explained_by_jsonschema(tmp_path, plan):
    policy = tmp_path / "policy.yaml"
    policy.write_text("apiVersion: json.kyverno.io/v1alpha1\nkind: ValidatingPolicy\nmetadata:\n  name: p\n"
                      "spec:\n  rules:\n  - name: r\n    asert:\n      all: []\n", encoding="utf-8")
    done, packages = imported("-m", "assertree", "scan", "--payload", str(plan), "--policy", str(policy))
    assert done.returncode == 2
    assert "spec.rules[0].asert: unknown field 'asert' (did you mean 'assert'?)" in done.stderr
    assert "jsonschema" in packages


def test_the_console_script_skips_teardown_after_flushing(plan):
    """`run` ends with os._exit: an atexit hook never runs, yet the piped report is complete."""
    code = ("import atexit, sys; atexit.register(print, 'teardown ran'); "
            f"sys.argv = ['assertree', 'scan', '--payload', {str(plan)!r}, '--policy', {str(POLICIES)!r}, "
            "'--terraform', '-o', 'json']; from assertree.cli import run; run()")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "teardown ran" not in done.stdout
    report = json.loads(done.stdout)  # the whole report reached the pipe
    assert (report["summary"]["passed"], report["summary"]["failed"]) == (8, 0)


def test_main_in_process_returns_and_the_process_goes_on(capsys):
    from assertree.cli import main

    assert main(["--version"]) == 0
    assert main(["-V"]) == 0
    assert capsys.readouterr().out == f"assertree {assertree.__version__}\n" * 2


@pytest.mark.parametrize(("redirect", "code", "stderr"), [
    (">&-", 0, ""),  # no standard output at all
    ("| head -c 0", 0, ""),  # the reader left
    ("> /dev/full", 2, "assertree: error: cannot write to standard output: No space left on device\n"),
], ids=["closed", "reader-left", "full-disk"])
@pytest.mark.parametrize("unbuffered", ["1", ""], ids=["unbuffered", "buffered"])
def test_the_version_fast_path_answers_output_errors_as_main_does(redirect, code, stderr, unbuffered):
    shell = f"{sys.executable} -m assertree --version {redirect}; echo \"exit $?\" >&2"
    if "|" in redirect:
        shell = f"{sys.executable} -m assertree --version {redirect}; echo \"exit ${{PIPESTATUS[0]}}\" >&2"
    env = {**os.environ, "PYTHONUNBUFFERED": unbuffered}
    done = subprocess.run(["bash", "-c", shell], capture_output=True, text=True, env=env, timeout=120)
    assert done.stderr == f"{stderr}exit {code}\n"
