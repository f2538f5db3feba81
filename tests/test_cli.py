"""The command line: outputs pinned with snapshots, exit codes, and one clean error per bad input."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from assertree.cli import main

REPO = Path(__file__).resolve().parents[1]
SAMPLES = REPO / "samples"


def run(args, capsys, monkeypatch=None, cwd=None):
    if monkeypatch is not None and cwd is not None:
        monkeypatch.chdir(cwd)
    code = main([str(a) for a in args])
    out = capsys.readouterr()
    assert "Traceback" not in out.err
    return code, out.out, out.err


POLICY = """\
apiVersion: json.kyverno.io/v1alpha1
kind: ValidatingPolicy
metadata:
  name: limits
spec:
  rules:
    - name: replicas
      identifier: name
      assert:
        all:
        - message: "{{ name }} runs too many replicas"
          check:
            (replicas <= `3`): true
"""


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "policy.yaml").write_text(POLICY)
    (tmp_path / "ok.json").write_text('{"name": "a", "replicas": 2}')
    (tmp_path / "bad.json").write_text('[{"name": "b", "replicas": 5}, {"name": "c", "replicas": 1}]')
    return tmp_path


# -- outputs -------------------------------------------------------------------------------------


def test_sample_text_output(capsys, monkeypatch, snapshot):
    code, out, err = run(["scan", "--payload", "samples/kubernetes/deployment-bad.yaml",
                          "--policy", "samples/kubernetes/policies/"], capsys, monkeypatch, REPO)
    assert code == 1
    assert out == snapshot
    assert err == ""


def test_sample_passing_scan_exits_0(capsys, monkeypatch):
    code, out, _ = run(["scan", "--payload", "samples/kubernetes/deployment-good.yaml",
                        "--policy", "samples/kubernetes/policies/"], capsys, monkeypatch, REPO)
    assert code == 0
    assert out.count("- PASSED") == 4


def test_json_output(workdir, capsys, snapshot):
    code, out, _ = run(["scan", "--payload", "bad.json", "--policy", "policy.yaml", "-o", "json"], capsys)
    assert code == 1
    report = json.loads(out)
    assert report["summary"] == {"resources": 2, "policies": 1, "rules": 1, "passed": 1, "failed": 1,
                                 "errors": 0, "skipped": 0, "notMatched": 0, "warned": 0, "violations": 1,
                                 "fileErrors": 0, "baselined": 0, "fixed": 0}
    # resources and policies are referred to, not embedded
    assert report["reports"][0]["resource"] == {"source": "bad.json", "document": 0, "path": "[0]", "identifier": "b"}
    assert report["reports"][0]["results"][0]["policy"]["metadata"] == {"name": "limits"}
    assert report == snapshot
    code, out, _ = run(["scan", "bad.json", "--policy", "policy.yaml", "-o", "json", "--kyverno-json"], capsys)
    embedded = json.loads(out)[0]  # kyverno-json's shape: a list of reports, nothing else
    assert embedded["resource"] == {"name": "b", "replicas": 5} and "source" not in embedded
    assert embedded["results"][0]["policy"]["spec"]["rules"][0]["name"] == "replicas"


@pytest.mark.parametrize("format_name", ["json", "sarif", "junit", "github"])
def test_every_output_format_of_the_sample(format_name, capsys, monkeypatch, snapshot):
    code, out, _ = run(["scan", "samples/kubernetes/deployment-bad.yaml", "--policy", "samples/kubernetes/policies/",
                        "-o", format_name], capsys, monkeypatch, REPO)
    assert code == 1
    assert out == snapshot


def test_quiet_prints_only_failures(workdir, capsys):
    code, out, _ = run(["scan", "bad.json", "--policy", "policy.yaml", "-q"], capsys)
    assert code == 1
    assert out.splitlines() == [
        "- FAILED (POLICY=limits, RULE=replicas, ID=b)",
        " -> b runs too many replicas (CHECK=spec.rules[0].assert.all[0])",
        "  -> Invalid value: false: Expected value: true (PATH=(replicas <= `3`))",
        "Checked 2 resources against 1 policy (1 rule): 1 passed, 1 failed, 0 errored, 0 skipped",
    ]


def test_several_payloads_name_their_source(workdir, capsys):
    code, out, _ = run(["scan", "ok.json", "bad.json", "--policy", "policy.yaml"], capsys)
    assert code == 1
    assert "- PASSED (POLICY=limits, RULE=replicas, ID=a, SOURCE=ok.json)" in out
    assert "- FAILED (POLICY=limits, RULE=replicas, ID=b, SOURCE=bad.json#0)" in out


def test_output_to_a_file_and_stdout(workdir, capsys):
    code, out, _ = run(["scan", "bad.json", "--policy", "policy.yaml", "-o", "text", "-o", "json=out/r.json"],
                       capsys)
    assert code == 1
    assert out.startswith("Loading policies ...")
    assert json.loads((workdir / "out" / "r.json").read_text())["summary"]["failed"] == 1


def test_color(workdir, capsys, monkeypatch):
    _, out, _ = run(["scan", "bad.json", "--policy", "policy.yaml", "--color", "always"], capsys)
    assert "\x1b[31mFAILED\x1b[0m" in out
    _, out, _ = run(["scan", "bad.json", "--policy", "policy.yaml"], capsys)  # not a terminal
    assert "\x1b[" not in out


def test_soft_fail_and_fail_on_empty(workdir, capsys):
    assert run(["scan", "bad.json", "--policy", "policy.yaml", "--soft-fail"], capsys)[0] == 0
    (workdir / "pod.yaml").write_text(POLICY.replace("assert:", "match:\n        any:\n        - kind: Pod\n"
                                                     "      assert:"))
    code, _, err = run(["scan", "ok.json", "--policy", "pod.yaml"], capsys)
    assert code == 0
    assert "no rule applied to any resource: nothing was checked" in err
    code, _, err = run(["scan", "ok.json", "--policy", "pod.yaml", "--fail-on-empty"], capsys)
    assert code == 1
    assert "nothing was checked (--fail-on-empty)" in err


def test_labels_select_policies(workdir, capsys):
    labelled = POLICY.replace("  name: limits\n", "  name: limits\n  labels:\n    env: prod\n")
    (workdir / "policy.yaml").write_text(labelled)
    assert run(["scan", "bad.json", "--policy", "policy.yaml", "--labels", "env=prod"], capsys)[0] == 1
    code, _, err = run(["scan", "bad.json", "--policy", "policy.yaml", "--labels", "env in (dev)"], capsys)
    assert code == 2
    assert "no policies match the --labels selector" in err


def test_bindings_file(workdir, capsys):
    (workdir / "bindings.yaml").write_text("limit: 1\n")
    (workdir / "p.yaml").write_text(POLICY.replace("(replicas <= `3`)", "(replicas <= $limit)"))
    code, out, _ = run(["scan", "ok.json", "--policy", "p.yaml", "--bindings", "bindings.yaml"], capsys)
    assert code == 1
    assert "Loading bindings ...\n- limit -> 1\n" in out


def test_terraform_plan_hint(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "plan.json").write_text(json.dumps({
        "terraform_version": "1.9.0", "planned_values": {"root_module": {"resources": [
            {"address": "aws_s3_bucket.a", "mode": "managed", "type": "aws_s3_bucket", "name": "a",
             "values": {"tags": {"Team": "x"}}}]}},
        "resource_changes": [{"address": "aws_s3_bucket.a", "change": {"actions": ["create"]}}],
    }))
    (tmp_path / "p.yaml").write_text(textwrap.dedent("""\
        apiVersion: json.kyverno.io/v1alpha1
        kind: ValidatingPolicy
        metadata: {name: s3}
        spec:
          rules:
          - name: team
            match: {any: [{type: aws_s3_bucket}]}
            assert: {all: [{check: {values: {tags: {Team: {}}}, change: {actions: [create]}}}]}
        """))
    code, _, err = run(["scan", "plan.json", "--policy", "p.yaml"], capsys)
    assert code == 0
    assert "add --terraform" in err
    code, out, err = run(["scan", "plan.json", "--policy", "p.yaml", "--terraform"], capsys)
    assert code == 0
    assert "- PASSED (POLICY=s3, RULE=team, ID=aws_s3_bucket.a)" in out
    assert err == ""


# -- one clean error (exit 2, one line, no traceback) per kind of bad input ------------------------


def error_of(args, capsys):
    code, _, err = run(args, capsys)
    assert code == 2, err
    assert err.count("\n") == 1 and err.startswith("assertree: error: "), err
    return err.strip().removeprefix("assertree: error: ")


def test_invalid_policy_names_file_line_and_field(workdir, capsys):
    (workdir / "p.yaml").write_text(POLICY.replace("(replicas <= `3`)", "(replicas <= )"))
    assert error_of(["scan", "ok.json", "--policy", "p.yaml"], capsys) == (
        "p.yaml:13:13: spec.rules[0].assert.all[0].check.(replicas <= ): invalid expression 'replicas <= ': "
        "unexpected end of expression at column 13"
    )


def test_schema_violation(workdir, capsys):
    (workdir / "p.yaml").write_text(POLICY.replace("      identifier: name", "      identifer: name"))
    assert error_of(["scan", "ok.json", "--policy", "p.yaml"], capsys) == (
        "p.yaml:8:7: spec.rules[0].identifer: unknown field 'identifer' (did you mean 'identifier'?)"
    )


def test_wrong_kind_of_document(workdir, capsys):
    (workdir / "p.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
    assert "unsupported document: apiVersion 'v1', kind 'ConfigMap'" in error_of(
        ["scan", "ok.json", "--policy", "p.yaml"], capsys)


def test_unreadable_and_missing_policy(workdir, capsys):
    assert error_of(["scan", "ok.json", "--policy", "nope.yaml"], capsys) == (
        "nope.yaml: policy file or directory not found")
    (workdir / "p.yaml").write_text("a: [1\n")
    assert error_of(["scan", "ok.json", "--policy", "p.yaml"], capsys).startswith("p.yaml:2:1: invalid YAML")


def test_no_policies(workdir, capsys):
    (workdir / "empty").mkdir()
    assert "no policies were found in empty" in error_of(["scan", "ok.json", "--policy", "empty"], capsys)


def test_bad_payloads(workdir, capsys):
    (workdir / "empty.json").write_text("")
    (workdir / "broken.json").write_text('{"a": }')
    (workdir / "scalar.json").write_text('"text"')
    (workdir / "latin1.yaml").write_bytes(b"name: caf\xe9\n")
    cases = {
        "empty.json": "empty.json: empty file: a .json file must hold a JSON value",
        "broken.json": "broken.json:1:7: invalid JSON: ",  # the reason after it is orjson's
        "scalar.json": "scalar.json: payload must be an object or a list of objects, not a string",
        "latin1.yaml": "latin1.yaml:1:10: payload is not UTF-8 text (byte 9): save the file as UTF-8",
    }
    for name, message in cases.items():
        # each bad file is an ERROR line of the report, and the scan goes on with the other files
        code, out, _ = run(["scan", name, "ok.json", "--policy", "policy.yaml"], capsys)
        assert code == 2
        assert any(line.startswith(f"- ERROR: {message}") for line in out.splitlines()), out
        assert "- PASSED (POLICY=limits, RULE=replicas, ID=a, SOURCE=ok.json)" in out
        assert out.splitlines()[-1].endswith("1 passed, 0 failed, 0 errored, 0 skipped; 1 file could not be read")
    # a path that names nothing is a mistake on the command line: it stops the scan up front
    assert error_of(["scan", "missing.json", "--policy", "policy.yaml"], capsys) == (
        "missing.json: payload file not found")


def test_bad_bindings(workdir, capsys):
    (workdir / "b.yaml").write_text("- a\n- b\n")
    assert error_of(["scan", "ok.json", "--policy", "policy.yaml", "--bindings", "b.yaml"], capsys) == (
        "b.yaml: the bindings file must hold one mapping of names to values")


def test_bad_pre_process(workdir, capsys):
    assert "invalid --pre-process expression 'items[?'" in error_of(
        ["scan", "ok.json", "--policy", "policy.yaml", "--pre-process", "items[?"], capsys)
    code, out, _ = run(["scan", "ok.json", "--policy", "policy.yaml", "--pre-process", "nothing"], capsys)
    assert code == 2
    assert "- ERROR: ok.json: --pre-process 'nothing' returned null: nothing to check" in out


def test_bad_options(workdir, capsys):
    assert "invalid label selector" in error_of(
        ["scan", "ok.json", "--policy", "policy.yaml", "--labels", "a in b"], capsys)
    assert "unknown --output format 'xml'" in error_of(
        ["scan", "ok.json", "--policy", "policy.yaml", "-o", "xml"], capsys)
    assert "only one --output can go to standard output" in error_of(
        ["scan", "ok.json", "--policy", "policy.yaml", "-o", "text", "-o", "json"], capsys)
    assert "--include-deleted only applies with --terraform" in error_of(
        ["scan", "ok.json", "--policy", "policy.yaml", "--include-deleted"], capsys)
    code, _, err = run(["scan", "ok.json", "--policy", "policy.yaml", "--nope"], capsys)
    assert code == 2 and "--nope" in err  # the wording around it is click's


def test_runtime_expression_error_is_a_rule_error(workdir, capsys):
    (workdir / "p.yaml").write_text(POLICY.replace("(replicas <= `3`)", "(to_string(`1` / `0`))"))
    code, out, _ = run(["scan", "ok.json", "--policy", "p.yaml"], capsys)
    assert code == 1
    # an evaluation error is no internal error: assertree words it plainly ...
    assert "- ERROR: (to_string(`1` / `0`)): to_string(): json: unsupported value: +Inf (POLICY=" in out
    # ... and kyverno-json's wording is kept for --kyverno-json
    _, out, _ = run(["scan", "ok.json", "--policy", "p.yaml", "--kyverno-json"], capsys)
    assert "- ERROR: (to_string(`1` / `0`)): Internal error: to_string(): json: unsupported value: +Inf" in out
    assert out.endswith("Done\n")


def test_version(capsys):
    from importlib import metadata

    code, out, _ = run(["--version"], capsys)
    assert code == 0 and out == f"assertree {metadata.version('assertree')}\n"


def test_help_off_a_terminal_has_no_boxes_and_no_broken_sentences():
    """Help and usage errors off a terminal (a pipe, a CI log) are plain text: no box drawing, and a help
    sentence is never broken at 80 columns (COLUMNS, when set, is the width)."""
    import os
    import subprocess
    import sys

    env = {key: value for key, value in os.environ.items() if key != "COLUMNS"}
    env["GITHUB_ACTIONS"] = "true"  # typer draws boxes in GitHub Actions logs unless told otherwise
    command = [sys.executable, "-m", "assertree"]
    shown = subprocess.run([*command, "scan", "--help"], capture_output=True, text=True, env=env, check=True).stdout
    assert not set("╭╮╰╯│─") & set(shown)
    assert ("Exit 1 when no rule applied to any resource: nothing was checked." in shown)
    error = subprocess.run([*command, "scan", "--bogus"], capture_output=True, text=True, env=env, check=False)
    assert error.returncode == 2 and "No such option: --bogus" in error.stderr
    assert not set("╭╮╰╯│─") & set(error.stderr)
    narrow = subprocess.run([*command, "scan", "--help"], capture_output=True, text=True, check=True,
                            env={**env, "COLUMNS": "60"}).stdout
    assert max(len(line) for line in narrow.splitlines()) <= 60


def test_help_on_a_terminal_is_typers_rich_help(monkeypatch):
    import sys

    from assertree.cli.help import context_settings, markup_mode

    monkeypatch.setattr(sys.stdout, "isatty", lambda: True, raising=False)
    assert markup_mode() == "rich"
    assert context_settings() == {"help_option_names": ["-h", "--help"]}  # rich wraps at the terminal's width
