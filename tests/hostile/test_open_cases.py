"""The hostile cases issue 21 found still open, each in a real process or with a real hostile input.

Standard input closed (``<&-``) under every command that may read it; a
100,000-character expression that does not parse, quoted in one short line
around the error; a payload that is not UTF-8 named with the byte and where
it is, whichever reader meets it.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from hostile_processes import REPO

from assertree.cli import main

DATA = Path(__file__).parent / "data"
POD = DATA / "pod.json"
POLICY = DATA / "needs-team-label-policy.yaml"
LONG = " || ".join(["a"] * 25_000) + " |||"  # 100,003 characters; the error is at the very end


def closed_stdin(*args: str | Path) -> subprocess.CompletedProcess:
    """``python -m assertree ARGS <&-``: the process starts with no descriptor 0 at all."""
    command = " ".join(f"'{arg}'" for arg in map(str, args))
    return subprocess.run(["sh", "-c", f"exec {sys.executable} -m assertree {command} <&-"], capture_output=True,
                          text=True, timeout=120, cwd=REPO)


@pytest.mark.parametrize("args", [
    ["scan", "--payload", "-", "--policy", POLICY],
    ["scan", "--payload", "-", "--payload", POD, "--policy", POLICY],  # streamed: the other file is still read
    ["scan", "--stream", "--payload", "-", "--policy", POLICY],
    ["scan", "--payload-format", "ndjson", "--payload", "-", "--policy", POLICY],
    ["jp", "query", "a"],
    ["jp", "parse"],
    ["apply", "--policy", REPO / "samples" / "kubernetes" / "mutate", "-"],
    ["kyverno", "apply", REPO / "samples" / "kubernetes" / "mutate", "--resource", "-"],
    ["kyverno", "apply", "-", "--resource", POD],
], ids=lambda args: " ".join(str(arg).rsplit("/", 1)[-1] for arg in args))
def test_closed_standard_input_is_one_line_naming_it(args):
    done = closed_stdin(*args)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr
    assert "assertree: error: <stdin>: standard input is closed: nothing to read" in done.stderr.splitlines()


def test_a_long_invalid_pre_process_expression_is_quoted_around_the_error(capsys):
    assert main(["scan", "--policy", str(POLICY), "-p", str(POD), "--pre-process", LONG]) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert len(line) < 300
    assert line.startswith("assertree: error: invalid --pre-process expression '...|| a || a")
    assert line.endswith(" || a ...': nested too deeply (over 128 levels) at column 638")


def test_a_long_invalid_kyverno_variable_is_quoted_around_the_error(tmp_path, capsys):
    policy = tmp_path / "policy.yaml"
    policy.write_text(f"""\
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {{name: long}}
spec:
  rules:
  - name: long
    match: {{any: [{{resources: {{kinds: [Pod]}}}}]}}
    validate:
      deny:
        conditions:
          any:
          - key: "{{{{ {LONG} }}}}"
            operator: Equals
            value: x
""")
    assert main(["scan", "--policy", str(policy), "-p", str(POD)]) == 1
    out = capsys.readouterr().out
    [line] = [line for line in out.splitlines() if "ERROR" in line]
    assert len(line) < 1000 and "incorrect query ...|| a || a" in line and "at column 638" in line


def test_a_long_invalid_jp_expression_shows_a_window_and_a_caret(tmp_path, capsys):
    (tmp_path / "query").write_text(LONG)
    assert main(["jp", "query", "-q", str(tmp_path / "query"), "-i", str(POD)]) == 2
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == "assertree: error: invalid expression:" and all(len(line) < 200 for line in lines)
    assert lines[-1].strip() == "^"


@pytest.mark.parametrize("expression", ["a.b[" + "x" * 100_000, "a.b + '" + "y" * 100_000, "x" * 100_000 + " ="])
def test_a_long_invalid_token_is_not_echoed_whole(tmp_path, capsys, expression):
    """The parser's reason quotes the offending token, which may be the whole 100,000-character text."""
    (tmp_path / "query").write_text(expression)
    assert main(["jp", "query", "-q", str(tmp_path / "query"), "-i", str(POD)]) == 2
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == "assertree: error: invalid expression:" and all(len(line) < 300 for line in lines), \
        [len(line) for line in lines]
    assert main(["scan", "--policy", str(POLICY), "-p", str(POD), "--pre-process", expression]) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert line.startswith("assertree: error: invalid --pre-process expression") and len(line) < 600, len(line)


@pytest.mark.parametrize("args", [
    ["kyverno", "apply", str(REPO / "samples" / "kubernetes" / "mutate"), "--resource", "-"],
    ["kyverno", "apply", "-", "--resource", str(POD)],
])
def test_kyverno_apply_reads_standard_input_as_the_other_commands_do(args):
    """The drop-in read standard input as text: bytes that are not UTF-8 were an internal error (exit 3)."""
    done = subprocess.run([sys.executable, "-m", "assertree", *args], input=b'{"a": "caf\xe9"}', capture_output=True,
                          timeout=120, cwd=REPO)
    err = done.stderr.decode()
    assert done.returncode == 2 and "Traceback" not in err and "internal error" not in err, err
    assert "assertree: error: <stdin>:1:11: not UTF-8 text (byte 10): save the file as UTF-8" in err.splitlines()


@pytest.mark.parametrize(("name", "data", "where"), [
    ("bad.json", b'{"a": "caf\xe9"}', "bad.json:1:11: payload is not UTF-8 text (byte 10)"),
    ("bad.yaml", b"a: caf\xe9\n", "bad.yaml:1:7: payload is not UTF-8 text (byte 6)"),
    ("bad", b"a: caf\xe9\n", "bad:1:7: payload is not UTF-8 text (byte 6)"),
])
def test_jp_query_on_a_file_that_is_not_utf8_names_it(tmp_path, monkeypatch, capsys, name, data, where):
    monkeypatch.chdir(tmp_path)
    Path(name).write_bytes(data)
    assert main(["jp", "query", "a", "-i", name]) == 2
    assert capsys.readouterr().err == f"assertree: error: {where}: save the file as UTF-8\n"


def test_a_json_lines_line_that_is_not_utf8_names_its_line(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    Path("lines.jsonl").write_bytes(b'{"kind": "Pod"}\n{"a": "caf\xe9"}\n')
    assert main(["scan", "--policy", str(POLICY), "-p", "lines.jsonl"]) == 2
    assert ("assertree: error: lines.jsonl:2:11: not UTF-8 text (byte 10 of the line): save the file as UTF-8"
            in capsys.readouterr().err.splitlines())


# -- found by tests/hostile/test_fuzz_apply_test.py ---------------------------------------------------------


@pytest.mark.parametrize("command", ["apply", "test"])
def test_a_map_tag_on_a_scalar_is_a_located_yaml_error(tmp_path, monkeypatch, capsys, command):
    """``!!map 1`` in a resource: PyYAML's merge-key flattening met a scalar (exit 3 before)."""
    monkeypatch.chdir(tmp_path)
    Path("pod.yaml").write_text("apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\nspec: !!map 1\n")
    Path("policy.yaml").write_text(
        "apiVersion: kyverno.io/v1\nkind: ClusterPolicy\nmetadata: {name: p}\nspec:\n  rules:\n  - name: r\n"
        "    match: {any: [{resources: {kinds: [Pod]}}]}\n    mutate: {patchStrategicMerge: {metadata: {labels: "
        "{a: b}}}}\n")
    Path("kyverno-test.yaml").write_text(
        "apiVersion: cli.kyverno.io/v1alpha1\nkind: Test\nmetadata: {name: t}\npolicies: [policy.yaml]\n"
        "resources: [pod.yaml]\nresults: [{policy: p, rule: r, resources: [web], kind: Pod, result: pass}]\n")
    args = ["apply", "--policy", "policy.yaml", "pod.yaml"] if command == "apply" else ["test", "."]
    code = main(args)
    out, err = capsys.readouterr()
    assert code == (2 if command == "apply" else 1)
    assert "pod.yaml:5:7: invalid YAML: expected a mapping node, but found scalar" in out + err


@pytest.mark.parametrize(("patch", "error"), [
    ('[{"op": "replace", "path": "", "value": [1]}]',
     "failed to apply patches: the patched resource is a JSON array, not an object (Kubernetes cannot decode it)"),
    ('[{"op": "add", "path": "/metadata", "value": "a"}]',  # the next rule read its name from the string: exit 3
     ("failed to apply patches: the patched resource's metadata is a JSON string, not an object (Kubernetes cannot "
      "decode it)")),
    ('[{"op": "move", "from": "/", "path": "/"}]',  # "/" names the document itself: a cycle, never written out
     "failed to patch resource: error in move for path: '/': / cannot be moved into itself"),
], ids=["root-replaced-by-a-list", "metadata-made-a-string", "moved-into-itself"])
def test_a_json_patch_that_breaks_the_resource_is_that_rule_s_error(tmp_path, monkeypatch, capsys, patch, error):
    monkeypatch.chdir(tmp_path)
    Path("pod.yaml").write_text("apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\ndata: [[[[1]]]]\n")
    Path("policy.yaml").write_text(
        "apiVersion: kyverno.io/v1\nkind: ClusterPolicy\nmetadata: {name: p}\nspec:\n  rules:\n  - name: r\n"
        f"    match: {{any: [{{resources: {{kinds: [Pod]}}}}]}}\n    mutate: {{patchesJson6902: '{patch}'}}\n"
        "  - name: then\n    match: {any: [{resources: {kinds: [Pod]}}]}\n"
        "    mutate: {patchStrategicMerge: {metadata: {labels: {a: b}}}}\n")
    assert main(["apply", "--in-place", "--policy", "policy.yaml", "pod.yaml"]) == 1  # a rule could not patch
    err = capsys.readouterr().err
    assert f"assertree: error: pod.yaml: Pod/web: p/r: {error}" in err.splitlines()
    assert "labels:\n    a: b" in Path("pod.yaml").read_text()  # the next rule still ran, on the whole resource


def test_a_changed_document_nested_deep_is_rewritten_without_ruamel_s_quadratic_reading(tmp_path, monkeypatch,
                                                                                       capsys):
    """ruamel's scanner took 20 s on a flow list nested 1,000 deep (past the fuzzer's time limit): a document nested
    past ROUND_TRIP_DEPTH is written afresh, and reads back as the mutated resource. (200 levels: within what
    Python 3.12's fixed C recursion limit lets every path reach.)"""
    from assertree.languages.kyverno.manifests import go_yaml_documents

    monkeypatch.chdir(tmp_path)
    Path("deep.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: deep}\ndata: "
                                 + "[" * 200 + "]" * 200 + "\n")
    Path("policy.yaml").write_text(
        "apiVersion: kyverno.io/v1\nkind: ClusterPolicy\nmetadata: {name: p}\nspec:\n  rules:\n  - name: r\n"
        "    match: {any: [{resources: {kinds: [ConfigMap]}}]}\n"
        "    mutate: {patchStrategicMerge: {metadata: {labels: {team: x}}}}\n")
    from assertree.apply.rewrite import ROUND_TRIP_DEPTH

    assert ROUND_TRIP_DEPTH < 200
    assert main(["apply", "-q", "--in-place", "--policy", "policy.yaml", "deep.yaml"]) == 0
    [written] = go_yaml_documents(Path("deep.yaml").read_text())
    assert written["metadata"] == {"name": "deep", "labels": {"team": "x"}}
    depth, value = 0, written["data"]
    while value:
        depth, value = depth + 1, value[0]
    assert depth == 199  # the innermost list is empty
    capsys.readouterr()


@pytest.mark.parametrize("command", ["scan", "apply", "test"])
def test_a_resource_whose_metadata_is_not_a_mapping(tmp_path, monkeypatch, capsys, command):
    """``metadata: [1]`` (exit 3 in every Kyverno path before): no Kyverno rule selects such a payload in a scan;
    a file ``apply`` or ``test`` reads as Kubernetes resources is refused, naming it."""
    monkeypatch.chdir(tmp_path)
    Path("odd.yaml").write_text("apiVersion: v1\nkind: Pod\nmetadata: [1]\n")
    Path("policy.yaml").write_text(
        "apiVersion: kyverno.io/v1\nkind: ClusterPolicy\nmetadata: {name: p}\nspec:\n  rules:\n  - name: r\n"
        "    match: {any: [{resources: {kinds: [Pod]}}]}\n    mutate: {patchStrategicMerge: {metadata: {labels: "
        "{a: b}}}}\n  - name: v\n    match: {any: [{resources: {kinds: [Pod]}}]}\n"
        "    validate: {pattern: {metadata: {name: '?*'}}}\n")
    Path("kyverno-test.yaml").write_text(
        "apiVersion: cli.kyverno.io/v1alpha1\nkind: Test\nmetadata: {name: t}\npolicies: [policy.yaml]\n"
        "resources: [odd.yaml]\nresults: [{policy: p, rule: v, resources: [x], kind: Pod, result: pass}]\n")
    args = {"scan": ["scan", "--policy", "policy.yaml", "-p", "odd.yaml"],
            "apply": ["apply", "--policy", "policy.yaml", "odd.yaml"], "test": ["test", "."]}[command]
    code = main(args)
    out, err = capsys.readouterr()
    assert "internal error" not in err
    if command == "scan":
        assert code == 0 and "nothing was checked" in err
    else:
        assert code == (2 if command == "apply" else 1)
        assert ("odd.yaml: document 0 is not a Kubernetes resource: its metadata is a JSON array, not a mapping"
                in out + err)
