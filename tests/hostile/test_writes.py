"""No write loses a file (issue 21): every file assertree writes is whole, old or new, whatever happens.

Real hostile conditions, in real child processes: ``apply --in-place`` killed
(SIGTERM, SIGKILL) while it rewrites a 40 MB file; a file-size limit
(RLIMIT_FSIZE: the write fails with EFBIG, as on a full disk) under ``apply``
in place, ``-o DIR``, ``-o FILE``, scan reports (rendered whole and streamed)
and ``test`` reports; permissions that hold even for root (the child gives up
root's overrides, `hostile_processes`): a read-only file, a read-only folder.
Each ends in one line naming the file and the reason, exit 2, the file as it
was and no temporary file left. The unit tests below hold `assertree.writes`
to its promises one by one.
"""

from __future__ import annotations

import os
import signal
import stat
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from hostile_processes import permissions_skip, run_assertree, start_assertree

from assertree.writes import ReplacingFile, WriteError, write_file, write_files

REPO = Path(__file__).resolve().parents[2]
DATA = Path(__file__).parent / "data"
POD = DATA / "pod.json"
FAILING_POLICY = DATA / "needs-team-label-policy.yaml"  # fails on pod.json
KYVERNO_TEST = REPO / "tests" / "conformance" / "data" / "kyverno-policies" / "best-practices" / "disallow-latest-tag"
MUTATE = """\
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: add-team}
spec:
  rules:
    - name: add-team
      match: {any: [{resources: {kinds: [ConfigMap]}}]}
      mutate:
        patchStrategicMerge:
          metadata:
            labels:
              team: platform
"""


def config_map(name: str, padding: int = 2000) -> str:
    return f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\ndata:\n  filler: {'x' * padding}\n"


def error_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("assertree: error:")]


def clean(stderr: str) -> None:
    assert "Traceback" not in stderr and "internal error" not in stderr, stderr[-2000:]


def contents(folder: Path) -> dict[str, bytes | None]:
    """Every entry under `folder` (folders as None), by relative path: what a failed write must not change."""
    return {str(path.relative_to(folder)): (None if path.is_dir() else path.read_bytes())
            for path in sorted(folder.rglob("*"))}


@pytest.fixture
def work(tmp_path: Path) -> Path:
    (tmp_path / "policy.yaml").write_text(MUTATE)
    return tmp_path


@pytest.fixture
def unprivileged() -> None:
    reason = permissions_skip()
    if reason:
        pytest.skip(reason)


# -- killed while rewriting a 40 MB file -----------------------------------------------------------------


FORTY_MB = 40


@pytest.fixture(scope="module")
def big_file(tmp_path_factory: pytest.TempPathFactory) -> tuple[bytes, bytes]:
    """A 40 MB resource file (one ConfigMap the policy changes, then 40 one-MiB Secrets it copies byte for
    byte) and what ``apply`` makes of it."""
    folder = tmp_path_factory.mktemp("big")
    (folder / "policy.yaml").write_text(MUTATE)
    original = (config_map("changed", 10) + "".join(
        f"---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: s{n}\nstringData:\n  k: {'v' * 2**20}\n"
        for n in range(FORTY_MB))).encode()
    (folder / "big.yaml").write_bytes(original)
    done = run_assertree(["apply", "-q", "--policy", "policy.yaml", "-o", "fixed.yaml", "big.yaml"], cwd=folder)
    assert done.returncode == 0, done.stderr
    fixed = (folder / "fixed.yaml").read_bytes()
    assert fixed != original and len(fixed) > FORTY_MB * 2**20
    return original, fixed


def _rewriting(folder: Path, target: Path, process) -> bool:
    """Wait until the rewrite of `target` has begun: a new file beside it, or the target itself changed (a
    writer that truncates it first). False when the process ended before."""
    names = {path.name for path in folder.iterdir()}
    before = target.stat()
    while process.poll() is None:
        now = target.stat()
        if {path.name for path in folder.iterdir()} != names or (now.st_size, now.st_mtime_ns) != (
                before.st_size, before.st_mtime_ns):
            return True
        time.sleep(0.0005)
    return False


@pytest.mark.parametrize("delay", [0.0, 0.05], ids=["at-once", "50ms"])
@pytest.mark.parametrize("signal_number", [signal.SIGTERM, signal.SIGKILL], ids=["SIGTERM", "SIGKILL"])
def test_in_place_killed_while_rewriting_a_40_mb_file_leaves_it_whole(work, big_file, signal_number, delay):
    original, fixed = big_file
    target = work / "big.yaml"
    target.write_bytes(original)
    process = start_assertree(["apply", "-q", "--in-place", "--policy", "policy.yaml", "big.yaml"], cwd=work)
    assert _rewriting(work, target, process), process.stderr.read() if process.stderr else ""
    time.sleep(delay)
    process.send_signal(signal_number)
    process.wait(timeout=120)
    stderr = process.stderr.read().decode() if process.stderr else ""
    process.stderr.close() if process.stderr else None
    clean(stderr)
    now = target.read_bytes()
    assert now in (original, fixed), f"{len(now)} bytes: neither the old file nor the new one"
    if now == original:  # the signal came while the new file was being written (on a loaded machine the
        # writer may finish first: then the new file is whole, which the assertion above holds)
        assert process.returncode in (-signal.SIGKILL, 128 + signal.SIGTERM)
    leftovers = sorted(path.name for path in work.iterdir() if path.name not in ("big.yaml", "policy.yaml"))
    if signal_number == signal.SIGTERM:
        assert leftovers == []  # SIGTERM unwinds the command: its temporary file goes
        if process.returncode != 0:
            assert process.returncode == 128 + signal.SIGTERM and "assertree: terminated" in stderr
    else:  # SIGKILL cannot be answered: at most the temporary file stays, named as such
        assert all(name.startswith(".big.yaml.") and name.endswith(".tmp") for name in leftovers), leftovers


# -- a file-size limit (EFBIG, as a full disk) -------------------------------------------------------------


def test_size_limit_in_place_leaves_the_original_untouched(work):
    original = config_map("web", 5000).encode()
    (work / "web.yaml").write_bytes(original)
    before = contents(work)
    done = run_assertree(["apply", "--in-place", "--policy", "policy.yaml", "web.yaml"], cwd=work, fsize=2000)
    clean(done.stderr)
    assert done.returncode == 2
    assert error_lines(done.stderr) == ["assertree: error: web.yaml: cannot write the fixed file: File too large"]
    assert contents(work) == before  # the original untouched, no temporary file left


def test_size_limit_in_place_over_several_files_changes_none(work):
    (work / "small.yaml").write_text(config_map("small", 10))
    (work / "large.yaml").write_text(config_map("large", 5000))
    before = contents(work)
    done = run_assertree(["apply", "--in-place", "--policy", "policy.yaml", "small.yaml", "large.yaml"], cwd=work,
                         fsize=2000)
    clean(done.stderr)
    assert done.returncode == 2
    assert error_lines(done.stderr) == ["assertree: error: large.yaml: cannot write the fixed file: File too large"]
    assert contents(work) == before  # small.yaml could be written, but no file is replaced unless all can be


def test_size_limit_under_o_dir_leaves_the_previous_output_intact(work):
    (work / "k8s").mkdir()
    (work / "k8s" / "a.yaml").write_text(config_map("a", 10))
    (work / "k8s" / "b.yaml").write_text(config_map("b", 10))
    done = run_assertree(["apply", "-q", "--policy", "policy.yaml", "-o", "out", "k8s"], cwd=work)
    assert done.returncode == 0, done.stderr
    previous = contents(work / "out")
    assert set(previous) == {"a.yaml", "b.yaml"}
    (work / "k8s" / "b.yaml").write_text(config_map("b", 5000))  # now too large for the limit
    done = run_assertree(["apply", "-q", "--policy", "policy.yaml", "-o", "out", "k8s"], cwd=work, fsize=2000)
    clean(done.stderr)
    assert done.returncode == 2
    assert error_lines(done.stderr) == ["assertree: error: out/b.yaml: cannot write the fixed file: File too large"]
    assert contents(work / "out") == previous


def test_size_limit_under_o_file_leaves_it_untouched(work):
    (work / "web.yaml").write_text(config_map("web", 5000))
    (work / "fixed.yaml").write_text("previous: true\n")
    done = run_assertree(["apply", "-q", "--policy", "policy.yaml", "-o", "fixed.yaml", "web.yaml"], cwd=work,
                         fsize=2000)
    clean(done.stderr)
    assert done.returncode == 2
    assert error_lines(done.stderr) == [
        "assertree: error: fixed.yaml: cannot write the fixed resources: File too large"]
    assert (work / "fixed.yaml").read_text() == "previous: true\n"
    assert sorted(path.name for path in work.iterdir()) == ["fixed.yaml", "policy.yaml", "web.yaml"]


@pytest.mark.parametrize(("payloads", "how"), [([POD], "rendered whole"), ([POD, POD], "streamed")],
                         ids=["whole", "streamed"])
@pytest.mark.parametrize("report_format", ["json", "sarif", "junit", "text"])
def test_size_limit_on_a_scan_report_keeps_the_previous_report(work, payloads, how, report_format):
    report = work / "reports" / f"results.{report_format}"
    report.parent.mkdir()
    report.write_text("previous\n")
    payload_args = [item for payload in payloads for item in ("-p", payload)]
    done = run_assertree(["scan", "--policy", FAILING_POLICY, *payload_args, "-o", (f"{report_format}=reports/"
                          f"results.{report_format}")], cwd=work, fsize=200)
    clean(done.stderr)
    assert done.returncode == 2, (how, done.stderr)
    assert error_lines(done.stderr) == [(f"assertree: error: reports/results.{report_format}: cannot write the "
                                        f"{report_format} report: File too large")]
    assert contents(work / "reports") == {f"results.{report_format}": b"previous\n"}


def test_size_limit_on_a_test_report_keeps_the_previous_report(work):
    (work / "report.json").write_text("previous\n")
    done = run_assertree(["test", KYVERNO_TEST, "-o", "json=report.json"], cwd=work, fsize=500)
    clean(done.stderr)
    assert done.returncode == 2
    assert error_lines(done.stderr) == ["assertree: error: report.json: cannot write the json report: File too large"]
    assert sorted(path.name for path in work.iterdir()) == ["policy.yaml", "report.json"]
    assert (work / "report.json").read_text() == "previous\n"


# -- permissions, a folder where a file should be, an existing -o FILE --------------------------------------


@contextmanager
def read_only(folder: Path) -> Iterator[None]:
    """`folder` read-only for the block (writable again after, so that pytest can remove it)."""
    folder.chmod(0o555)
    try:
        yield
    finally:
        folder.chmod(0o755)


def test_read_only_file_is_not_rewritten(work, unprivileged):
    (work / "web.yaml").write_text(config_map("web", 10))
    (work / "web.yaml").chmod(0o444)
    before = contents(work)
    done = run_assertree(["apply", "--in-place", "--policy", "policy.yaml", "web.yaml"], cwd=work,
                         unprivileged=True)
    clean(done.stderr)
    assert done.returncode == 2
    assert error_lines(done.stderr) == ["assertree: error: web.yaml: cannot write the fixed file: Permission denied"]
    assert contents(work) == before


def test_o_into_a_read_only_folder(work, unprivileged):
    (work / "web.yaml").write_text(config_map("web", 10))
    (work / "out").mkdir()
    (work / "out" / "web.yaml").write_text("previous\n")
    with read_only(work / "out"):
        done = run_assertree(["apply", "-q", "--policy", "policy.yaml", "-o", "out", "web.yaml"], cwd=work,
                             unprivileged=True)
        assert contents(work / "out") == {"web.yaml": b"previous\n"}
    clean(done.stderr)
    assert done.returncode == 2
    assert error_lines(done.stderr) == [
        "assertree: error: out/web.yaml: cannot write the fixed file: Permission denied"]


def test_report_into_a_read_only_folder(work, unprivileged):
    (work / "reports").mkdir()
    with read_only(work / "reports"):
        done = run_assertree(["scan", "--policy", FAILING_POLICY, "-p", POD, "-o", "sarif=reports/scan.sarif"],
                             cwd=work, unprivileged=True)
        assert list((work / "reports").iterdir()) == []
    clean(done.stderr)
    assert done.returncode == 2
    assert error_lines(done.stderr) == [
        "assertree: error: reports/scan.sarif: cannot write the sarif report: Permission denied"]


def test_o_dir_where_the_target_is_a_folder(work):
    (work / "web.yaml").write_text(config_map("web", 10))
    (work / "out" / "web.yaml").mkdir(parents=True)
    done = run_assertree(["apply", "-q", "--policy", "policy.yaml", "-o", "out", "web.yaml"], cwd=work)
    clean(done.stderr)
    assert done.returncode == 2
    assert error_lines(done.stderr) == ["assertree: error: out/web.yaml: cannot write the fixed file: Is a directory"]
    assert contents(work / "out") == {"web.yaml": None}


def test_o_file_that_exists_is_replaced_whole(work):
    """``-o FILE`` with one resource file writes the result there (an existing file is replaced, keeping its
    mode); with several, it is a usage error, as is a FILE that is the input."""
    (work / "web.yaml").write_text(config_map("web", 10))
    (work / "fixed.yaml").write_text("previous: true\n")
    (work / "fixed.yaml").chmod(0o640)
    done = run_assertree(["apply", "-q", "--policy", "policy.yaml", "-o", "fixed.yaml", "web.yaml"], cwd=work)
    assert done.returncode == 0, done.stderr
    assert "team: platform" in (work / "fixed.yaml").read_text()
    assert stat.S_IMODE((work / "fixed.yaml").stat().st_mode) == 0o640
    (work / "db.yaml").write_text(config_map("db", 10))
    done = run_assertree(["apply", "-q", "--policy", "policy.yaml", "-o", "fixed.yaml", "web.yaml", "db.yaml"],
                         cwd=work)
    clean(done.stderr)
    assert done.returncode == 2
    assert error_lines(done.stderr) == [
        ("assertree: error: -o fixed.yaml names a file, and 2 resource files were given: -o takes a folder for "
        "several files")]
    done = run_assertree(["apply", "-q", "--policy", "policy.yaml", "-o", "web.yaml", "web.yaml"], cwd=work)
    assert done.returncode == 2
    assert error_lines(done.stderr) == [
        "assertree: error: -o web.yaml would overwrite an input file (use --in-place to rewrite inputs)"]


def test_standard_input_may_go_to_one_o_file(work):
    (work / "web.yaml").write_text(config_map("web", 10))
    with open(work / "web.yaml") as source:
        done = run_assertree(["apply", "-q", "--policy", "policy.yaml", "-o", "fixed.yaml", "-"], cwd=work,
                             stdin=source.fileno())
    assert done.returncode == 0, done.stderr
    assert "team: platform" in (work / "fixed.yaml").read_text()


# -- assertree.writes, promise by promise ----------------------------------------------------------------


def test_a_new_file_gets_the_umask_mode(tmp_path):
    previous = os.umask(0o027)
    try:
        write_file(tmp_path / "new.txt", "x")
    finally:
        os.umask(previous)
    assert stat.S_IMODE((tmp_path / "new.txt").stat().st_mode) == 0o640


def test_an_existing_file_keeps_its_mode_and_missing_folders_are_made(tmp_path):
    target = tmp_path / "a" / "b" / "file.txt"
    write_file(target, b"one")
    target.chmod(0o604)
    write_file(target, "two")
    assert target.read_text() == "two" and stat.S_IMODE(target.stat().st_mode) == 0o604


def test_a_symbolic_link_is_written_through_and_stays_a_link(tmp_path):
    real = tmp_path / "real.yaml"
    real.write_text("old")
    link = tmp_path / "link.yaml"
    link.symlink_to("real.yaml")
    write_file(link, "new")
    assert link.is_symlink() and os.readlink(link) == "real.yaml"
    assert real.read_text() == "new"
    dangling = tmp_path / "dangling.yaml"
    dangling.symlink_to("made/by/the/write.yaml")
    write_file(dangling, "created")
    assert (tmp_path / "made" / "by" / "the" / "write.yaml").read_text() == "created" and dangling.is_symlink()


def test_a_long_name_still_has_room_for_its_temporary_file(tmp_path):
    target = tmp_path / ("n" * 250)
    write_file(target, "x")
    assert target.read_text() == "x"


def test_a_folder_target_names_the_path(tmp_path):
    with pytest.raises(WriteError) as caught:
        write_file(tmp_path, "x", "the report")
    assert str(caught.value) == f"{tmp_path}: cannot write the report: Is a directory"


def test_a_parent_that_is_a_file_names_the_path(tmp_path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(WriteError) as caught:
        write_file(tmp_path / "file" / "report.json", "x", "the report")
    assert str(caught.value) == f"{tmp_path / 'file' / 'report.json'}: cannot write the report: Not a directory"


def test_text_utf8_cannot_say_is_a_write_error_and_leaves_nothing(tmp_path):
    target = tmp_path / "out.json"
    target.write_text("old")
    with pytest.raises(WriteError, match=r"U\+D800 has no UTF-8 form"):
        write_file(target, '{"a": "\ud800"}')
    assert target.read_text() == "old" and sorted(tmp_path.iterdir()) == [target]


def test_several_files_are_replaced_only_when_all_are_ready(tmp_path):
    first = tmp_path / "first.yaml"
    first.write_text("old")
    (tmp_path / "second.yaml").mkdir()
    with pytest.raises(WriteError, match=r"second\.yaml: cannot write the file: Is a directory"):
        write_files([(first, "new"), (tmp_path / "second.yaml", "new")])
    assert first.read_text() == "old"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["first.yaml", "second.yaml"]


def test_an_exception_while_writing_discards_the_temporary_file(tmp_path):
    target = tmp_path / "report.json"
    target.write_text("old")
    with pytest.raises(KeyboardInterrupt), ReplacingFile(target) as out:
        out.write("half")
        raise KeyboardInterrupt
    assert target.read_text() == "old" and sorted(tmp_path.iterdir()) == [target]


def test_streams_are_written_into_not_replaced(tmp_path):
    write_file("/dev/null", "into the void")  # not replaced by a regular file (that would need root, and break it)
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        write_file(fifo, "through the pipe")
        assert os.read(reader, 100) == b"through the pipe"
    finally:
        os.close(reader)
    assert stat.S_ISFIFO(fifo.stat().st_mode)

