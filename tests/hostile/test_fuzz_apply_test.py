"""Hostile inputs to ``assertree apply`` and ``assertree test`` never end badly, and no write loses a file (issue 21).

Hypothesis draws resource files (Kubernetes manifests around random YAML nodes,
alias bombs, deep nesting, bytes that are not text, byte-order marks and CRLF),
mutate policies (strategic merge with anchors and variables, JSON patches,
foreach), and ``kyverno-test.yaml`` files naming hostile or missing policies,
resources, values and patched resources. Each example runs the command in this
process (`assertree.cli.main`) under the limits of `test_fuzz.bounded` (a time
limit per example, a memory ceiling), and must end with exit 0, 1 or 2,
without a traceback or an internal error, and:

- ``apply``: every file it may write (in place, under ``-o DIR``, ``-o FILE``)
  is afterwards byte for byte the old file or the new one that ``apply -o`` wrote
  for the same input, whatever hostile condition the example added (a file-size
  limit, a folder where the file goes, a read-only file, a symbolic link), and
  no temporary file is left;
- ``test``: exit 0 only when every file the test names exists and some row
  compared a result (nothing passes vacuously).

A few examples run as real processes killed with SIGKILL or SIGTERM at a random
moment of an in-place rewrite: the file is the old one or the new one.

The default run is small. ``pytest -m slow tests/hostile/test_fuzz_apply_test.py``
runs the same properties with the ``slow`` profile (``FUZZ_EXAMPLES`` each);
``FUZZ_FINDINGS=file.jsonl`` records failures and goes on, as in `test_fuzz`.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import string
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

import pytest
from hostile_processes import REPO
from hypothesis import given, settings
from hypothesis import strategies as st
from test_fuzz import FAST, SLOW, bounded, laughs, surveyed, yaml_nodes

from assertree.cli import main

# -- generators: resource files ---------------------------------------------------------------------------

NAMES = st.sampled_from(["web", "db", "a", "x" * 300, "ünï", "web", "default", "-", "0755", "yes"])
KINDS = st.sampled_from(["Pod", "Deployment", "ConfigMap", "Namespace", "CronJob", "Secret", "List"])


@st.composite
def manifests(draw) -> str:
    """One Kubernetes-looking document in block style, with random flow nodes where the fields go."""
    kind = draw(KINDS)
    name = draw(NAMES)
    lines = [f"apiVersion: {draw(st.sampled_from(['v1', 'apps/v1', 'batch/v1', '']))}", f"kind: {kind}",
             "metadata:", f"  name: {json.dumps(name)}"]
    if draw(st.booleans()):
        lines.append(f"  namespace: {draw(st.sampled_from(['default', 'prod', 'kube-system']))}")
    if draw(st.booleans()):
        lines.append(f"  labels: {draw(yaml_nodes())}")
    if draw(st.booleans()):
        lines.append("  # a comment that must stay")
    lines.append(f"spec: {draw(yaml_nodes())}")
    if draw(st.booleans()):
        image = draw(st.sampled_from(["nginx:latest", "nginx", "registry.example.com/a:1.0", "", "{{x}}"]))
        lines.append(f"data: {{image: {json.dumps(image)}}}")
    return "\n".join(lines) + "\n"


def _deep(depth: int, flow: bool) -> str:
    return ("{a: " * depth + "1" + "}" * depth) if flow else "[" * depth + "]" * depth


@st.composite
def resource_bytes(draw) -> bytes:
    kind = draw(st.sampled_from(["manifests", "manifests", "manifests", "yaml", "laughs", "bytes", "deep", "json"]))
    if kind == "manifests":
        text = "---\n".join(draw(st.lists(manifests(), min_size=1, max_size=4)))
        if draw(st.integers(0, 5)) == 0:
            text = text.replace("\n", "\r\n")
        data = text.encode()
        return (b"\xef\xbb\xbf" + data) if draw(st.integers(0, 5)) == 0 else data
    if kind == "yaml":
        return "\n---\n".join(draw(st.lists(yaml_nodes(), min_size=1, max_size=3))).encode()
    if kind == "laughs":
        return ("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: lol}\n" + laughs(
            draw(st.integers(2, 12)), draw(st.integers(2, 12)), draw(st.booleans()))).encode()
    if kind == "bytes":
        return draw(st.binary(max_size=300))
    if kind == "deep":
        return (f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: deep}}\ndata: "
                f"{_deep(draw(st.integers(900, 1100)), draw(st.booleans()))}\n").encode()
    value = {"apiVersion": "v1", "kind": draw(KINDS), "metadata": {"name": draw(NAMES)},
             "spec": draw(st.recursive(st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70),
                                                 st.floats(allow_nan=False), st.text(max_size=10)),
                                       lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                               st.dictionaries(st.text(max_size=4), inner,
                                                                               max_size=3)), max_leaves=12))}
    return json.dumps(value, indent=draw(st.sampled_from([None, 2, 4]))).encode()


# -- generators: mutate policies ---------------------------------------------------------------------------

PATCH_KEYS = st.sampled_from(["metadata", "spec", "data", "+(team)", "(name)", "=(kind)", "<(x)", "^(x)",
                              "X(y)", "labels", "containers", "(image)", "a"])
PATCH_VALUES = st.one_of(
    st.sampled_from(["x", "{{ request.object.metadata.name }}", "{{ team }}", "{{ request.object.spec }}", 1, True,
                     None, "", "?*", "*", "{{ to_string(request.object) }}", "0755", "yes", "a\nb"]),
    st.text(string.ascii_letters + "{}$*?()", max_size=12),
)


def _patch_tree(depth: int = 0):
    if depth >= 3:
        return PATCH_VALUES
    inner = _patch_tree(depth + 1)
    return st.one_of(PATCH_VALUES, st.dictionaries(PATCH_KEYS, inner, max_size=3),
                     st.lists(st.dictionaries(PATCH_KEYS, inner, max_size=2), max_size=2))


POINTERS = st.sampled_from(["/metadata/labels/team", "/spec", "/metadata", "/data/k", "/spec/0", "/-", "", "/",
                            "/metadata/labels/a~1b", "/spec/template/spec/containers/0/image", "/nope/deeper",
                            "/metadata/name"])


@st.composite
def json_patch(draw) -> list:
    operations = []
    for _ in range(draw(st.integers(0, 4))):
        op = draw(st.sampled_from(["add", "replace", "remove", "copy", "move", "test", "bogus"]))
        operation = {"op": op, "path": draw(POINTERS)}
        if op in ("add", "replace", "test"):
            operation["value"] = draw(_patch_tree())
        if op in ("copy", "move"):
            operation["from"] = draw(POINTERS)
        operations.append(operation)
    return operations


@st.composite
def mutate_policy_texts(draw) -> str:
    rules = []
    for number in range(draw(st.integers(1, 3))):
        how = draw(st.sampled_from(["merge", "merge", "json6902", "foreach", "garbage"]))
        if how == "merge":
            mutate = {"patchStrategicMerge": draw(st.dictionaries(PATCH_KEYS, _patch_tree(), min_size=1,
                                                                  max_size=3))}
        elif how == "json6902":
            mutate = {"patchesJson6902": json.dumps(draw(json_patch()))}
        elif how == "foreach":
            mutate = {"foreach": [{"list": draw(st.sampled_from(["request.object.spec.containers", "request.object",
                                                                 "`[1, 2]`", "nope", "request.object.data"])),
                                   "patchStrategicMerge": draw(st.dictionaries(PATCH_KEYS, _patch_tree(),
                                                                               max_size=2))}]}
        else:
            mutate = draw(_patch_tree())
        rule = {"name": f"r{number}", "match": {"any": [{"resources": {"kinds": draw(st.lists(KINDS, min_size=1,
                                                                                            max_size=2))}}]},
                "mutate": mutate}
        if draw(st.integers(0, 3)) == 0:
            rule["context"] = [{"name": "team", "variable": {"value": draw(PATCH_VALUES)}}]
        rules.append(rule)
    document = {"apiVersion": "kyverno.io/v1", "kind": draw(st.sampled_from(["ClusterPolicy", "ClusterPolicy",
                                                                               "Policy"])),
                "metadata": {"name": "fuzz", "namespace": "default"}, "spec": {"rules": rules}}
    return json.dumps(document) if draw(st.booleans()) else _as_yaml(document)


def _as_yaml(document) -> str:
    import yaml

    return yaml.safe_dump(document, sort_keys=False)


# -- the apply property ------------------------------------------------------------------------------------

CONDITIONS = st.sampled_from(["none", "none", "size-limit", "read-only", "folder-in-the-way", "symlink",
                              "stale-output"])
MODES = st.sampled_from(["in-place", "in-place", "dir", "file", "stdout", "diff"])


def clean_exit(code: int, err: str) -> None:
    assert code in (0, 1, 2), (code, err[-2000:])
    assert "Traceback" not in err and "internal error" not in err, err[-2000:]


@contextmanager
def file_size_limit(limit: int | None):
    """RLIMIT_FSIZE in this process for the block (a write past it fails with EFBIG: Python ignores SIGXFSZ)."""
    if limit is None:
        yield
        return
    previous = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, previous[1]))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, previous)


def run_cli(capsys, *args: str | Path) -> tuple[int, str]:
    code = main([str(arg) for arg in args])
    return code, capsys.readouterr().err


def leftovers(folder: Path) -> list[str]:
    return sorted(str(path) for path in folder.rglob("*.tmp") if path.name.startswith("."))


def apply_case(capsys, policy: str, files: list[bytes], mode: str, condition: str, limit: int) -> None:
    with tempfile.TemporaryDirectory() as name, bounded():
        work = Path(name)
        (work / "policy.yaml").write_text(policy)
        (work / "in").mkdir()
        inputs = []
        for number, data in enumerate(files):
            path = work / "in" / f"r{number}.{'json' if data.lstrip()[:1] == b'{' else 'yaml'}"
            path.write_bytes(data)
            inputs.append(path)
        originals = {path: path.read_bytes() for path in inputs}
        if mode == "file":
            inputs = inputs[:1]
        sources = [work / "in"] if mode in ("in-place", "dir") else inputs
        code, err = run_cli(capsys, "apply", "-q", "--policy", work / "policy.yaml", "-o", work / "reference",
                            *sources)  # what the command writes for these inputs, when it writes
        clean_exit(code, err)
        reference = {path: (work / "reference" / path.name).read_bytes()
                     for path in inputs if (work / "reference" / path.name).is_file()}
        target_of = {"in-place": {path: path for path in inputs},
                     "dir": {path: work / "out" / path.name for path in inputs},
                     "file": {inputs[0]: work / "out.yaml"}}.get(mode, {})
        before = {}
        for source, target in target_of.items():
            if condition == "stale-output" and target != source:
                target.parent.mkdir(exist_ok=True)
                target.write_bytes(b"previous output\n")
            if condition == "folder-in-the-way" and target != source:
                target.mkdir(parents=True)
            if condition == "read-only" and target.is_file():
                target.chmod(0o444)
            if condition == "symlink" and target == source:
                real = work / f"real-{source.name}"
                source.rename(real)
                source.symlink_to(real)
            before[source] = target.read_bytes() if target.is_file() else None
        args = {"in-place": ["--in-place"], "dir": ["-o", work / "out"], "file": ["-o", work / "out.yaml"],
                "stdout": [], "diff": ["--diff"]}[mode]
        with file_size_limit(limit if condition == "size-limit" else None):
            code, err = run_cli(capsys, "apply", "-q", "--policy", work / "policy.yaml", *args, *sources)
        clean_exit(code, err)
        for source, target in target_of.items():
            now = target.read_bytes() if target.is_file() else None
            new = reference.get(source)
            if mode == "file" and new is not None and not new.endswith(b"\n") and new:
                new += b"\n"  # -o FILE holds what stdout would (each file ending with a line break)
            if mode == "in-place" and new == originals[source]:
                new = None
            assert now in (before[source], new), (mode, condition, str(target), code, err[-500:])
            if code == 2 and condition == "size-limit":
                assert now == before[source], (mode, str(target), err[-500:])
            if target == source and condition == "symlink":
                assert source.is_symlink()
        assert leftovers(work) == []


@FAST
@given(mutate_policy_texts(), st.lists(resource_bytes(), min_size=1, max_size=3), MODES, CONDITIONS,
       st.integers(0, 4096))
def test_apply_never_damages_a_file(capsys, policy, files, mode, condition, limit):
    apply_case(capsys, policy, files, mode, condition, limit)


# -- the test property -------------------------------------------------------------------------------------

VALIDATE_POLICY = """\
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: check}
spec:
  validationFailureAction: Audit
  rules:
  - name: no-latest
    match: {any: [{resources: {kinds: [Pod, Deployment, ConfigMap]}}]}
    validate:
      message: "{{ request.object.metadata.name }}"
      pattern: {metadata: {name: "?*"}}
  - name: only-prod
    match: {any: [{resources: {kinds: [Pod], namespaces: [prod]}}]}
    validate: {pattern: {metadata: {name: "?*"}}}
"""
FILE_NAMES = st.sampled_from(["policy.yaml", "resources.yaml", "values.yaml", "patched.yaml", "missing.yaml",
                              "folder", "", "../outside.yaml", "kyverno-test.yaml", "deep.yaml", "garbage.bin",
                              "/dev/null", "resources.yaml"])


@st.composite
def kyverno_test_folders(draw) -> dict[str, bytes]:
    """The files of a folder holding one kyverno-test.yaml, and the test itself under that name."""
    files: dict[str, bytes] = {}
    policy_kind = draw(st.sampled_from(["validate", "validate", "mutate", "hostile"]))
    files["policy.yaml"] = (VALIDATE_POLICY if policy_kind == "validate" else draw(mutate_policy_texts())
                            if policy_kind == "mutate" else draw(yaml_nodes())).encode()
    files["resources.yaml"] = draw(resource_bytes())
    files["patched.yaml"] = draw(resource_bytes())
    files["garbage.bin"] = draw(st.binary(max_size=100))
    files["deep.yaml"] = f"a: {_deep(draw(st.integers(900, 1100)), True)}\n".encode()
    files["values.yaml"] = draw(st.sampled_from([
        b"apiVersion: cli.kyverno.io/v1alpha1\nkind: Values\nglobalValues: {team: core}\n",
        b"globalValues: {team: core}\n", b"apiVersion: cli.kyverno.io/v1alpha1\nkind: Values\npolicies: 3\n",
        b"", b"[1, 2]\n", laughs(8, 8, True).encode()]))
    resources = draw(st.lists(FILE_NAMES, max_size=3))
    test: dict = {"apiVersion": "cli.kyverno.io/v1alpha1", "kind": "Test", "metadata": {"name": "fuzz"},
                  "policies": draw(st.lists(FILE_NAMES, min_size=0, max_size=2)) or ["policy.yaml"],
                  "resources": resources}
    for field in ("variables", "userinfo"):
        if draw(st.integers(0, 3)) == 0:
            test[field] = draw(FILE_NAMES)
    if draw(st.integers(0, 4)) == 0:
        test["values"] = draw(st.sampled_from([{"globalValues": {"team": "x"}}, {"policies": []}, {"x": 1}]))
    results = []
    for _ in range(draw(st.integers(0, 4))):
        row = {"policy": draw(st.sampled_from(["check", "fuzz", "default/fuzz", "missing", ""])),
               "rule": draw(st.sampled_from(["no-latest", "only-prod", "r0", "autogen-no-latest", "nope", ""])),
               "resources": draw(st.lists(NAMES, max_size=2)),
               "kind": draw(KINDS), "result": draw(st.sampled_from(["pass", "fail", "skip", "error", "warn"]))}
        if draw(st.integers(0, 3)) == 0:
            row["patchedResources"] = draw(FILE_NAMES)
        results.append(row)
    test["results"] = results
    text = _as_yaml(test) if draw(st.integers(0, 9)) else draw(yaml_nodes())
    files["kyverno-test.yaml"] = text.encode()
    return files


def _named_files(test_text: bytes) -> list[str] | None:
    """The files a test names (None when the text is not a Test mapping), read as `assertree test` reads it."""
    from assertree.documents.reader import load_documents
    from assertree.errors import AssertreeError

    try:
        documents = load_documents("kyverno-test.yaml", test_text.decode("utf-8"))
    except (AssertreeError, UnicodeDecodeError):
        return None
    if len(documents) != 1 or not isinstance(documents[0].value, dict):
        return None
    document = documents[0].value
    names = [*(document.get("policies") or []), *(document.get("resources") or [])]
    names += [document[field] for field in ("variables", "userinfo") if document.get(field)]
    return [name for name in names if isinstance(name, str)]


def kyverno_test_case(capsys, files: dict[str, bytes], report_format: str) -> None:
    with tempfile.TemporaryDirectory() as name, bounded():
        work = Path(name) / "case"
        work.mkdir()
        for file_name, data in files.items():
            (work / file_name).write_bytes(data)
        (work / "folder").mkdir()
        code, err = run_cli(capsys, "test", work, "-o", f"{report_format}={Path(name) / 'report'}")
        clean_exit(code, err)
        named = _named_files(files["kyverno-test.yaml"])
        if code == 0:  # a pass is never vacuous: every file named is there, and something was compared
            assert named is not None
            assert all(file_name.strip() and (work / file_name).exists() for file_name in named), named
            if report_format == "json":
                report = json.loads((Path(name) / "report").read_text())
                for entry in report["tests"]:
                    assert any(row["actual"] not in ("excluded", "not-found") for row in entry["results"]), entry
        assert leftovers(Path(name)) == []


@FAST
@given(kyverno_test_folders(), st.sampled_from(["json", "json", "junit", "text"]))
def test_test_never_passes_vacuously_nor_ends_badly(capsys, files, report_format):
    kyverno_test_case(capsys, files, report_format)


# -- real processes, killed while they rewrite -------------------------------------------------------------


def killed_case(policy: str, data: bytes, signal_number: int, delay: float) -> None:
    with tempfile.TemporaryDirectory() as name:
        work = Path(name)
        (work / "policy.yaml").write_text(policy)
        (work / "r.yaml").write_bytes(data)
        env = {**os.environ, "PYTHONPATH": str(REPO)}
        command = [sys.executable, "-m", "assertree", "apply", "-q", "--policy", "policy.yaml"]
        done = subprocess.run([*command, "-o", "reference", "r.yaml"], cwd=work, capture_output=True, text=True,
                              timeout=120, env=env)
        clean_exit(done.returncode, done.stderr)
        new = (work / "reference" / "r.yaml").read_bytes() if (work / "reference" / "r.yaml").is_file() else None
        process = subprocess.Popen([*command, "--in-place", "r.yaml"], cwd=work, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.PIPE, env=env)
        time.sleep(delay)
        process.send_signal(signal_number)
        _, err = process.communicate(timeout=120)
        assert "Traceback" not in err.decode() and "internal error" not in err.decode()
        assert (work / "r.yaml").read_bytes() in (data, new)
        stray = [path.name for path in work.iterdir() if path.name.endswith(".tmp")]
        assert stray == [] or signal_number == signal.SIGKILL, stray


PADDED = st.builds(lambda docs, size: ("---\n".join(docs) + f"---\napiVersion: v1\nkind: Secret\nmetadata: "
                                       f"{{name: pad}}\nstringData: {{k: {'v' * size}}}\n").encode(),
                   st.lists(manifests(), min_size=1, max_size=3), st.integers(0, 8_000_000))


@settings(FAST, max_examples=3)
@given(mutate_policy_texts(), PADDED, st.sampled_from([signal.SIGTERM, signal.SIGKILL]), st.floats(0, 1.5))
def test_a_killed_rewrite_leaves_the_old_file_or_the_new_one(policy, data, signal_number, delay):
    killed_case(policy, data, signal_number, delay)


# -- the same properties, long (pytest -m slow) -----------------------------------------------------------


@pytest.mark.slow
@SLOW
@given(mutate_policy_texts(), st.lists(resource_bytes(), min_size=1, max_size=3), MODES, CONDITIONS,
       st.integers(0, 4096))
def test_apply_long(capsys, policy, files, mode, condition, limit):
    surveyed(apply_case, capsys, policy, files, mode, condition, limit)


@pytest.mark.slow
@SLOW
@given(kyverno_test_folders(), st.sampled_from(["json", "json", "junit", "text"]))
def test_test_long(capsys, files, report_format):
    surveyed(kyverno_test_case, capsys, files, report_format)


@pytest.mark.slow
@settings(SLOW, max_examples=max(3, settings.get_profile("slow").max_examples // 100))
@given(mutate_policy_texts(), PADDED, st.sampled_from([signal.SIGTERM, signal.SIGKILL]), st.floats(0, 1.5))
def test_killed_rewrite_long(policy, data, signal_number, delay):
    surveyed(killed_case, policy, data, signal_number, delay)

