"""Many payload files, read by worker processes (``assertree scan --jobs N``): the same reports as one process.

The directory mixes what a repository holds: multi-document manifests, JSON,
comment-only files, and files that cannot be used (a syntax error, a YAML
alias bomb, binary bytes, a repeated key, an unrendered template). Every
report, text to standard output and JSON/SARIF/JUnit to files (SARIF asks
for line numbers), must be byte for byte that of ``--jobs 1``, with the same
exit code; each bad file stays its own located problem.
"""

from __future__ import annotations

import multiprocessing
import os
from pathlib import Path

import pytest

from assertree.cli import main
from assertree.errors import AssertreeError
from assertree.inputs import parallel
from assertree.inputs.parallel import default_jobs, jobs_for, read_payloads
from assertree.inputs.payload import read_payload

HOSTILE = Path(__file__).resolve().parents[1] / "hostile" / "data"
POLICY = """\
apiVersion: json.kyverno.io/v1alpha1
kind: ValidatingPolicy
metadata:
  name: workloads
spec:
  rules:
    - name: team-label
      match:
        any:
        - kind: Deployment
        - kind: ConfigMap
      assert:
        all:
        - check:
            metadata:
              labels:
                team: {}
    - name: pinned-image
      match:
        any:
        - kind: Deployment
      assert:
        all:
        - check:
            spec:
              template:
                spec:
                  ~.containers:
                    (ends_with(image, ':latest')): false
"""


def deployment(index: int) -> str:
    labels = "    team: a\n" if index % 3 else ""
    tag = "latest" if index % 5 == 0 else "1.2"
    return (f"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app-{index}\n  labels:\n{labels}"
            f"    tier: web\nspec:\n  replicas: {index % 4}\n  template:\n    spec:\n      containers:\n"
            f"        - name: main\n          image: registry/app-{index}:{tag}\n"
            "          ports: [{containerPort: 0x1F}]\n")


def configmap(index: int) -> str:
    return (f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: config-{index}\n  labels: {{team: b}}\n"
            f"data:\n  enabled: on\n  port: '8080'\n  when: 2024-01-0{index % 9 + 1}\n")


def write_tree(root: Path, good: int = 120) -> Path:
    """`good` manifest files (one to three documents each) in nested folders, and the bad files among them."""
    for index in range(good):
        folder = root / f"team-{index % 4}"
        folder.mkdir(parents=True, exist_ok=True)
        documents = [deployment(index), configmap(index), "# only a comment\n"][: index % 3 + 1]
        (folder / f"app-{index:03d}.yaml").write_text("---\n".join(documents))
    (root / "team-1" / "anchors.yaml").write_text(
        "base: &base {apiVersion: v1, kind: ConfigMap}\nmerged:\n  <<: *base\n  metadata: {name: m}\n"
        "ref: !Ref Logs\n")
    (root / "team-2" / "plain.json").write_text('{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "j"}}')
    (root / "team-2" / "empty.yaml").write_text("# nothing here\n")
    (root / "team-0" / "broken.yaml").write_text("kind: Deployment\nmetadata: {name: [unclosed\n")
    (root / "team-0" / "bomb.yaml").write_bytes((HOSTILE / "alias-bomb-payload.yaml").read_bytes())
    (root / "team-3" / "binary.yaml").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(128, 256)) * 4)
    (root / "team-3" / "repeated.yaml").write_text("kind: ConfigMap\nmetadata: {name: r}\nkind: Secret\n")
    (root / "team-3" / "template.yaml").write_text("kind: ConfigMap\nmetadata:\n  name: {{ .Values.name }}\n")
    return root


def scan(capsys, root: Path, policy: Path, reports: Path, *options: str) -> tuple[int, dict[str, bytes]]:
    """Exit code, and every report's bytes (standard output, standard error, and the report files)."""
    reports.mkdir()
    code = main(["scan", str(root), "--policy", str(policy), "--color", "never", "-o", "text",
                 "-o", f"json={reports / 'report.json'}", "-o", f"sarif={reports / 'report.sarif'}",
                 "-o", f"junit={reports / 'report.xml'}", *options])
    out, err = capsys.readouterr()
    found = {"stdout": out.encode(), "stderr": err.encode()}
    found.update((path.name, path.read_bytes()) for path in sorted(reports.iterdir()))
    return code, found


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> tuple[Path, Path]:
    root = write_tree(tmp_path_factory.mktemp("many") / "repo")
    policy = root.parent / "policy.yaml"
    policy.write_text(POLICY)
    return root, policy


@pytest.mark.parametrize("jobs", ["2", "3"])
def test_reports_are_those_of_one_job(capsys, tmp_path, tree, jobs, monkeypatch):
    root, policy = tree
    monkeypatch.setattr(parallel, "MIN_FILES_PER_JOB", 20)  # a tree small enough for a quick test uses every job
    code_one, one = scan(capsys, root, policy, tmp_path / "one", "--jobs", "1")
    code_many, many = scan(capsys, root, policy, tmp_path / "many", "--jobs", jobs)
    assert jobs_for(len(list(root.rglob("*.y*ml"))), int(jobs)) == int(jobs)  # workers really ran
    assert (code_many, many) == (code_one, one)
    assert code_one == 2  # the bad files are problems of their own
    text = one["stdout"].decode()
    for name, message in [("broken.yaml", "invalid YAML"), ("bomb.yaml", "excessive aliasing"),
                          ("binary.yaml", "not UTF-8 text"), ("repeated.yaml", "duplicate key 'kind'"),
                          ("template.yaml", "unrendered template")]:
        assert any(name in line and message in line for line in text.splitlines()), (name, text)
    assert "app-005" in text and "team-label" in text  # results of the good files are all there


def test_default_is_one_job_per_cpu_and_few_files_stay_in_one_process():
    assert default_jobs() == (len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count())
    assert jobs_for(10, 8) == 1
    assert jobs_for(2 * parallel.MIN_FILES_PER_JOB, 8) == 2
    assert jobs_for(2 * parallel.MIN_FILES_PER_JOB - 1, 8) == 1
    assert jobs_for(10_000, 4) == 4


def test_few_files_start_no_worker(tmp_path, monkeypatch):
    paths = []
    for index in range(5):
        paths.append(str(tmp_path / f"f{index}.yaml"))
        Path(paths[-1]).write_text(configmap(index))
    monkeypatch.setattr("concurrent.futures.ProcessPoolExecutor", None)  # any pool would fail
    read = [reader() for _, reader in read_payloads(paths, jobs=8)]
    assert [payload.value for payload in read] == [read_payload(path).value for path in paths]


@pytest.mark.parametrize("jobs", ["0", "-2"])
def test_jobs_below_one_is_a_usage_error(capsys, tree, jobs):
    root, policy = tree
    code = main(["scan", str(root), "--policy", str(policy), "--jobs", jobs])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "--jobs" in err and "1 or more" in err


def _dies_on_app_050(chunk: list[str]) -> list:
    """A worker's job that kills the worker (never the main process) when its chunk holds app-050.yaml."""
    if os.getpid() != _MAIN and any(path.endswith("app-050.yaml") for path in chunk):
        os._exit(9)
    return _READ_CHUNK(chunk)


_READ_CHUNK = parallel._read_chunk
_MAIN = os.getpid()


def test_a_worker_that_dies_loses_no_file(tree, monkeypatch):
    """A worker killed mid-scan (out of memory, a signal): its files are read in the main process."""
    root, _ = tree
    paths = sorted(str(path) for path in root.rglob("*") if path.is_file())
    monkeypatch.setattr(parallel, "_read_chunk", _dies_on_app_050)
    monkeypatch.setattr(parallel, "_context", lambda: multiprocessing.get_context("fork"))  # the child sees the patch
    before = set(multiprocessing.active_children())  # another test's processes, in this test process
    assert outcomes(read_payloads(paths, jobs=2)) == outcomes(read_payloads(paths, jobs=1))
    assert set(multiprocessing.active_children()) <= before


def test_stopping_early_ends_the_workers(tree):
    """Ctrl-C in the main process (or a caller that stops reading) leaves no worker behind and never hangs."""
    root, _ = tree
    paths = sorted(str(path) for path in root.rglob("*.yaml"))
    before = set(multiprocessing.active_children())  # another test's processes, in this test process
    read = read_payloads(paths, jobs=2)
    next(read)
    with pytest.raises(KeyboardInterrupt):
        read.throw(KeyboardInterrupt)  # as if Ctrl-C came while a chunk was awaited
    assert set(multiprocessing.active_children()) <= before
    read = read_payloads(paths, jobs=2)
    next(read)
    read.close()
    assert set(multiprocessing.active_children()) <= before


def outcomes(read) -> list[tuple[str, object]]:
    found: list[tuple[str, object]] = []
    for path, reader in read:
        try:
            payload = reader()
            found.append((path, (payload.value, payload.documents, payload.data)))
        except AssertreeError as error:
            found.append((path, error.problem))
    return found
