"""A program that calls the CLI in-process again and again keeps its memory: only a one-shot process (the
console script) may freeze what it parsed out of the garbage collector's sight."""

from __future__ import annotations

import contextlib
import gc
import io
from pathlib import Path

from assertree.cli import main, process
from assertree.inputs import payload as payload_module

SAMPLES = Path(__file__).resolve().parents[2] / "samples" / "kubernetes"


def test_repeated_in_process_scans_freeze_nothing():
    before = gc.get_freeze_count()
    for _ in range(20):
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            code = main(["scan", "--policy", str(SAMPLES / "policies"), str(SAMPLES / "deployment-bad.yaml")])
        assert code == 1
    assert gc.get_freeze_count() == before
    assert not process._kept and not payload_module._last_payload  # nothing is held past the run either


def test_a_one_shot_run_holds_what_it_read_until_the_process_ends(monkeypatch):
    """The console script never frees the scan's objects (it `os._exit`s): the last payload file read and
    the scan's results stay referenced, the earlier payloads do not (memory stays that of the largest)."""
    monkeypatch.setattr(process, "one_shot", True)
    monkeypatch.setattr(process, "_kept", [])
    monkeypatch.setattr(payload_module, "_last_payload", [])
    files = [SAMPLES / "deployment-bad.yaml", SAMPLES / "deployment-good.yaml"]
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            code = main(["scan", "--policy", str(SAMPLES / "policies"), "--pre-process", "@", *map(str, files)])
    finally:
        gc.unfreeze()
    assert code == 1
    assert [payload.source for payload in payload_module._last_payload] == [str(files[-1])]
    loaded, result = process._kept[:2]
    assert {resource.source for resource in loaded.resources} == {str(file) for file in files}
    assert result.failed
