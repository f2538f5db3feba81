"""Hostile files and processes at the edges: the document reader, the payload reader and the CLI.

Each case of issue 14 runs a real file from tests/hostile/data/ or a real
process (a FIFO with a writer thread, a pipe into ``python -m assertree``, a
closed or full standard output) and checks the promise: a one-line error
naming the file, line or field and exit 2, never a traceback, an internal
error (exit 3) or a hang.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import assertree
from assertree.cli import main
from assertree.documents import reader
from assertree.documents.limits import check_aliases, excessive_aliasing, yaml_alias_ratio
from assertree.documents.reader import load_documents, parse_values
from assertree.errors import DocumentError
from assertree.jp import limits as jp_limits

DATA = Path(__file__).parent / "data"
POD = str(DATA / "pod.json")
FAILING_POLICY = str(DATA / "needs-team-label-policy.yaml")  # fails on pod.json: exit code 1
SECONDS = 10


def cli(capsys, *args: str) -> tuple[int, str]:
    """Run the command in-process: its exit code and standard error, which must be clean."""
    code = main([*args])
    err = capsys.readouterr().err
    assert "Traceback" not in err and "internal error" not in err
    return code, err


def error_lines(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("assertree: error:")]


def run_process(command: str, *, stdin: bytes | None = None, env: dict | None = None) -> subprocess.CompletedProcess:
    """A shell command line where ``assertree`` is this interpreter's ``python -m assertree``."""
    assertree_command = f"{sys.executable} -m assertree"
    return subprocess.run(["sh", "-c", command.replace("assertree", assertree_command, 1)], input=stdin,
                          capture_output=True, timeout=60, env={**os.environ, **(env or {})},
                          cwd=Path(__file__).parents[2])


# -- 1. YAML alias bombs and self-containing anchors -----------------------------------------------------


def test_alias_bomb_policy_is_a_located_error_not_a_hang(capsys):
    started = time.monotonic()
    code, err = cli(capsys, "scan", "--policy", str(DATA / "alias-bomb-policy.yaml"), "-p", POD)
    assert time.monotonic() - started < SECONDS
    assert code == 2
    (line,) = error_lines(err)
    assert "alias-bomb-policy.yaml:14:" in line and "excessive aliasing" in line


@pytest.mark.parametrize("path", ["fast", "positioned"])
def test_alias_bomb_payload_is_refused_by_both_readers(path):
    data = (DATA / "alias-bomb-payload.yaml").read_bytes()
    started = time.monotonic()
    with pytest.raises(DocumentError, match="excessive aliasing") as caught:
        if path == "fast":
            parse_values(data, "bomb.yaml", "yaml", payload=True)
        else:
            load_documents("bomb.yaml", data.decode(), payload=True)
    assert time.monotonic() - started < SECONDS
    assert caught.value.problem.location.line == 9  # where the alias that passes the budget points


def test_alias_bomb_payload_on_the_command_line(capsys):
    code, err = cli(capsys, "scan", "--policy", FAILING_POLICY, "-p", str(DATA / "alias-bomb-payload.yaml"))
    assert code == 2
    (line,) = error_lines(err)
    assert "alias-bomb-payload.yaml:9:" in line and "excessive aliasing" in line


DEEP = "apiVersion: v1\nkind: Pod\nmetadata: {name: deep}\nspec: " + "[" * 5000 + "]" * 5000 + "\n"
KYVERNO_LIMITS = [pytest.param("alias-bomb", "excessive aliasing", id="alias-bomb"),
                  pytest.param("deep", "nested more than 1024 levels deep", id="deep")]


@pytest.mark.parametrize(("case", "message"), KYVERNO_LIMITS)
def test_kyverno_manifests_keep_the_reader_limits(case, message):
    """The go-yaml v2 reader of `kyverno test` and `apply` resources refuses what the payload reader
    refuses: an alias bomb would expand in every walk after parsing (a hang), a deep enough document
    would crash libyaml's composer (the process)."""
    from assertree.errors import PayloadError
    from assertree.languages.kyverno.manifests import parse_manifests

    text = DEEP if case == "deep" else (DATA / "alias-bomb-payload.yaml").read_text()
    started = time.monotonic()
    with pytest.raises(PayloadError, match=message):
        parse_manifests(text, "m.yaml")
    assert time.monotonic() - started < SECONDS


@pytest.mark.parametrize(("case", "message"), KYVERNO_LIMITS)
def test_kyverno_test_resources_keep_the_reader_limits(tmp_path, capsys, case, message):
    (tmp_path / "policy.yaml").write_text((DATA / "needs-team-label-policy.yaml").read_text())
    (tmp_path / "resource.yaml").write_text(DEEP if case == "deep" else (DATA / "alias-bomb-payload.yaml").read_text())
    (tmp_path / "kyverno-test.yaml").write_text(
        "apiVersion: cli.kyverno.io/v1alpha1\nkind: Test\nmetadata: {name: limits}\npolicies: [policy.yaml]\n"
        "resources: [resource.yaml]\nresults: []\n")
    started = time.monotonic()
    code = main(["test", str(tmp_path)])
    out = capsys.readouterr()
    assert time.monotonic() - started < SECONDS
    assert code == 1 and "internal error" not in out.err
    assert "resource.yaml:" in out.out and message in out.out


@pytest.mark.parametrize(("content", "message"), [
    pytest.param(b"apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {a: \"\xff\"}\n",
                 "resource.yaml:4:12: cannot read resource file: not UTF-8 text", id="not-utf8"),
    pytest.param(b"apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n" + b"# padding\n" * 200,
                 "resource.yaml: cannot read resource file: larger than 1,000 bytes, the input limit", id="too-large"),
])
def test_kyverno_test_resource_files_are_read_as_every_input(tmp_path, capsys, monkeypatch, content, message):
    """Resource files of `assertree test` go through the reader every input uses: its encodings and its
    size limit (a FIFO or /dev/zero is never read without end), with the file's own error."""
    monkeypatch.setenv("ASSERTREE_MAX_INPUT_BYTES", "1000")
    (tmp_path / "policy.yaml").write_text((DATA / "needs-team-label-policy.yaml").read_text())
    (tmp_path / "resource.yaml").write_bytes(content)
    (tmp_path / "kyverno-test.yaml").write_text(
        "apiVersion: cli.kyverno.io/v1alpha1\nkind: Test\nmetadata: {name: inputs}\npolicies: [policy.yaml]\n"
        "resources: [resource.yaml]\nresults: []\n")
    code = main(["test", str(tmp_path)])
    out = capsys.readouterr()
    assert code == 1 and "internal error" not in out.err
    assert message in out.out


def test_a_values_file_that_is_not_utf8_is_a_located_error(tmp_path, capsys):
    values = tmp_path / "values.yaml"
    values.write_bytes(b"apiVersion: cli.kyverno.io/v1alpha1\nkind: Values\nglobalValues: {a: \"\xff\"}\n")
    code, err = cli(capsys, "scan", "--policy", FAILING_POLICY, "-p", POD, "--values", str(values))
    assert code == 2
    (line,) = error_lines(err)
    assert f"{values}:3:" in line and "cannot read values file: not UTF-8 text" in line


@pytest.mark.parametrize("payload", [True, False])
@pytest.mark.parametrize("path", ["fast", "positioned"])
def test_anchor_containing_itself_is_a_located_error(path, payload):
    text = (DATA / "self-alias-payload.yaml").read_text()
    with pytest.raises(DocumentError, match="anchor value contains itself") as caught:
        if path == "fast":
            parse_values(text.encode(), "cycle.yaml", "yaml", payload=payload)
        else:
            load_documents("cycle.yaml", text, payload=payload)
    assert caught.value.problem.location.line == 6


def test_ordinary_sharing_is_within_the_budget():
    text = "base: &base {image: nginx, ports: [80, 443]}\n" + "".join(f"c{i}: *base\n" for i in range(2000))
    (value,) = parse_values(text.encode(), "shared.yaml", "yaml", payload=True)
    assert len(value) == 2001 and value["c1999"] == {"image": "nginx", "ports": [80, 443]}
    assert [d.value for d in load_documents("shared.yaml", text)] == [value]


def test_the_budget_is_go_yamls_rule_and_jp_uses_the_same_one():
    assert jp_limits.yaml_alias_ratio is yaml_alias_ratio
    assert yaml_alias_ratio(1000) == 0.99 and yaml_alias_ratio(10_000_000) == 0.10
    assert not excessive_aliasing(1000, 990) and excessive_aliasing(1001, 992)
    assert not excessive_aliasing(900, 899)  # small documents may alias freely
    import yaml

    check_aliases(yaml.compose("a: &a [1, 2]\nb: *a\n"))  # no error


# -- 2. explicit tags on text they do not fit --------------------------------------------------------------


MISTAGGED = (DATA / "mistagged-payload.yaml").read_text().split("---\n")[1:]


@pytest.mark.parametrize("payload", [True, False])
@pytest.mark.parametrize("document", MISTAGGED, ids=lambda text: text.splitlines()[1].split(":")[0])
def test_mistagged_scalar_is_a_located_error(document, payload):
    for read in (lambda: parse_values(document.encode(), "tags.yaml", "yaml", payload=payload),
                 lambda: load_documents("tags.yaml", document, payload=payload)):
        with pytest.raises(DocumentError) as caught:
            read()
        location = caught.value.problem.location
        assert (location.source, location.line) == ("tags.yaml", 2)
        assert str(caught.value).startswith("tags.yaml:2:")


def test_mistagged_payload_file_exits_2_with_one_line(capsys):
    code, err = cli(capsys, "scan", "--policy", FAILING_POLICY, "-p", str(DATA / "mistagged-payload.yaml"))
    assert code == 2
    (line,) = error_lines(err)
    assert "mistagged-payload.yaml:4:8:" in line and "'maybe' as bool" in line


def test_explicit_tags_on_fitting_text_still_read():
    text = "a: !!int '12'\nb: !!float '1.5'\nc: !!bool 'true'\nd: !!timestamp 2024-01-02\n"
    expected = {"a": 12, "b": 1.5, "c": True, "d": "2024-01-02"}
    assert parse_values(text.encode(), "ok.yaml", "yaml", payload=True) == [expected]
    assert parse_values(text.encode(), "ok.yaml", "yaml") == [expected]


# -- 3. integers past 64 bits, as yaml.v3 reads them --------------------------------------------------------


def test_big_integers_follow_yaml_v3():
    (resource,) = assertree.load_resources([str(DATA / "big-numbers-payload.yaml")]).resources
    value = resource.value
    assert value["uint64"] == 2**64 - 1  # still an integer (Go's ParseUint)
    assert value["float64"] == float(123456789012345678901234567890)  # past 64 bits: ParseFloat
    assert value["huge"] == "1" + "0" * 400  # past float64's range ParseFloat fails: the text stays
    assert not any(isinstance(v, float) and math.isinf(v) for v in value.values())


# -- 4. blank paths -------------------------------------------------------------------------------------


@pytest.mark.parametrize("arguments", [
    ["scan", "--policy", "", "-p", POD],
    ["scan", "--policy", " ", "-p", POD],
    ["lint", ""],
    ["test", ""],
    ["apply", "--policy", "", POD],
    ["compare", "--old", "", "--new", FAILING_POLICY, POD],
    ["compare", "--old", FAILING_POLICY, "--new", "", POD],
    ["serve", "--policy", "", "--port", "0"],
])
def test_blank_policy_path_is_refused_not_the_working_directory(capsys, arguments):
    code, err = cli(capsys, *arguments)
    assert code == 2
    (line,) = error_lines(err)
    assert "an empty path names nothing" in line


# -- 5. policies without rules -------------------------------------------------------------------------


def test_policy_without_rules_is_warned_about(capsys):
    code, err = cli(capsys, "scan", "--policy", str(DATA / "empty-rules-policy.yaml"), "--policy", FAILING_POLICY,
                    "-p", POD)
    assert code == 1  # the other policy's rule fails
    warnings = [line for line in err.splitlines() if "has no rules" in line]
    assert warnings == ["assertree: warning: " + str(DATA / "empty-rules-policy.yaml") + ":1: policy "
                        "'checks-nothing': the policy has no rules: it checks nothing"]


def test_fail_on_empty_counts_a_policy_without_rules(capsys, tmp_path):
    passing = tmp_path / "kind-is-pod.yaml"
    passing.write_text(Path(FAILING_POLICY).read_text().replace("labels:\n                  team: \"?*\"",
                                                                 "name: web"))
    code, _ = cli(capsys, "scan", "--policy", str(passing), "-p", POD)
    assert code == 0
    code, err = cli(capsys, "scan", "--policy", str(passing), "--policy", str(DATA / "empty-rules-policy.yaml"),
                    "-p", POD)
    assert code == 0 and "has no rules" in err
    code, err = cli(capsys, "scan", "--fail-on-empty", "--policy", str(passing), "--policy",
                    str(DATA / "empty-rules-policy.yaml"), "-p", POD)
    assert code == 1 and "1 policy without rules checked nothing (--fail-on-empty)" in err


# -- 6. input size cap -----------------------------------------------------------------------------------


def test_endless_standard_input_stops_at_the_cap():
    started = time.monotonic()
    done = run_process(f"head -c 50000000 /dev/zero | assertree scan --policy {FAILING_POLICY} -",
                       env={"ASSERTREE_MAX_INPUT_BYTES": "1000000"})
    assert time.monotonic() - started < 30
    assert done.returncode == 2
    err = done.stderr.decode()
    assert "Traceback" not in err
    (line,) = error_lines(err)
    assert line == ("assertree: error: <stdin>: larger than 1,000,000 bytes, the input limit "
                    "(set ASSERTREE_MAX_INPUT_BYTES to raise it)")


def test_file_over_the_cap_is_refused_before_reading(capsys, monkeypatch):
    limit = Path(FAILING_POLICY).stat().st_size  # the policy fits; the payload does not
    assert (DATA / "big-numbers-payload.yaml").stat().st_size > limit
    monkeypatch.setenv("ASSERTREE_MAX_INPUT_BYTES", str(limit))
    code, err = cli(capsys, "scan", "--policy", FAILING_POLICY, "-p", str(DATA / "big-numbers-payload.yaml"))
    assert code == 2
    (line,) = error_lines(err)
    assert f"big-numbers-payload.yaml: larger than {limit:,} bytes, the input limit" in line


# -- 7. FIFOs ----------------------------------------------------------------------------------------------


def _write_later(path: Path, data: bytes, delay: float = 0.2) -> threading.Thread:
    def write() -> None:
        time.sleep(delay)
        with open(path, "wb") as stream:
            stream.write(data)

    thread = threading.Thread(target=write, daemon=True)
    thread.start()
    return thread


def test_payload_from_a_fifo_is_read(capsys, tmp_path):
    fifo = tmp_path / "plan"
    os.mkfifo(fifo)
    writer = _write_later(fifo, Path(POD).read_bytes())
    code, err = cli(capsys, "scan", "--policy", FAILING_POLICY, "-p", str(fifo))
    writer.join(5)
    assert code == 1, err  # read and checked: the rule fails on this pod


def test_process_substitution_is_a_payload():
    done = run_process(f"bash -c 'exec assertree scan --policy {FAILING_POLICY} -p <(sleep 0.2; cat {POD})'")
    assert done.returncode == 1, done.stderr.decode()
    assert "1 failed" in done.stdout.decode()


def test_policy_fifo_without_a_writer_does_not_block(capsys, tmp_path, monkeypatch):
    monkeypatch.setattr(reader, "FIFO_WRITER_TIMEOUT", 0.3)
    fifo = tmp_path / "policy.yaml"
    os.mkfifo(fifo)
    started = time.monotonic()
    code, err = cli(capsys, "scan", "--policy", str(fifo), "-p", POD)
    assert time.monotonic() - started < SECONDS
    assert code == 2
    (line,) = error_lines(err)
    assert f"{fifo}: no process wrote to this FIFO within 0.3 seconds" in line


def test_policy_fifo_with_a_writer_is_read(capsys, tmp_path):
    fifo = tmp_path / "policy.yaml"
    os.mkfifo(fifo)
    writer = _write_later(fifo, Path(FAILING_POLICY).read_bytes())
    code, _ = cli(capsys, "scan", "--policy", str(fifo), "-p", POD)
    writer.join(5)
    assert code == 1


# -- 8. closed or full standard output ----------------------------------------------------------------------


@pytest.mark.parametrize("report", ["text", "json"])
def test_closed_pipe_keeps_the_exit_code_quietly(report):
    # a pipeline's status is its last command's: assertree's own goes to standard error
    done = run_process(f"(assertree scan --policy {FAILING_POLICY} -p {POD} -o {report}; echo $? >&2) | head -c 1")
    err = done.stderr.decode()
    assert "Traceback" not in err and "error:" not in err
    assert err.strip().splitlines()[-1] == "1"


def test_closed_standard_output_keeps_the_exit_code():
    done = run_process(f"assertree scan --policy {FAILING_POLICY} -p {POD} >&-")
    assert done.returncode == 1
    assert "Traceback" not in done.stderr.decode() and "error:" not in done.stderr.decode()


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs Linux's /dev/full")
@pytest.mark.parametrize("command", [f"scan --policy {FAILING_POLICY} -p {POD}",
                                     f"scan --policy {FAILING_POLICY} -p {POD} -o json",
                                     f"lint {FAILING_POLICY}"])
def test_full_disk_is_one_line_and_exit_2(command):
    done = run_process(f"assertree {command} > /dev/full")
    assert done.returncode == 2
    err = done.stderr.decode()
    assert "Traceback" not in err
    assert error_lines(err) == ["assertree: error: cannot write to standard output: No space left on device"]


def test_no_standard_output_at_all(capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdout", None)
    assert main(["scan", "--policy", FAILING_POLICY, "-p", POD]) == 1
    closed = open(os.devnull, "w")  # noqa: SIM115
    closed.close()
    monkeypatch.setattr(sys, "stdout", closed)
    assert main(["scan", "--policy", FAILING_POLICY, "-p", POD, "-o", "json"]) == 1


# -- 9. report files are written whole or not at all (real hostile cases: test_writes.py) -----------------


def test_report_into_a_missing_folder_is_created(capsys, tmp_path):
    report = tmp_path / "out" / "results.sarif"
    code, _ = cli(capsys, "scan", "--policy", FAILING_POLICY, "-p", POD, "-o", f"sarif={report}")
    assert code == 1 and json.loads(report.read_text())["version"] == "2.1.0"


# -- 10. error messages never print a whole shared value ---------------------------------------------------


def test_marshal_error_quotes_an_excerpt_of_a_shared_value():
    from assertree.languages.kyverno.substitution import VariableError
    from assertree.languages.kyverno.variables import render

    shared: list = [1]
    for _ in range(60):  # 2**60 leaves once written out
        shared = [shared, shared]
    started = time.monotonic()
    with pytest.raises(VariableError, match=r"failed to marshal \[NaN,\[\[.*\.\.\.: json: unsupported value: NaN"):
        render([math.nan, shared])
    assert time.monotonic() - started < 1
