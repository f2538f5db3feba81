"""A program that calls the CLI in-process again and again keeps its memory: only a one-shot process (the
console script) may freeze what it parsed out of the garbage collector's sight."""

from __future__ import annotations

import contextlib
import gc
import io
from pathlib import Path

from assertree.cli import main

SAMPLES = Path(__file__).resolve().parents[2] / "samples" / "kubernetes"


def test_repeated_in_process_scans_freeze_nothing():
    before = gc.get_freeze_count()
    for _ in range(20):
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            code = main(["scan", "--policy", str(SAMPLES / "policies"), str(SAMPLES / "deployment-bad.yaml")])
        assert code == 1
    assert gc.get_freeze_count() == before
