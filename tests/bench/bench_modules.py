"""For tests/bench: the benchmark's scripts (bench/*.py are scripts, not a package) as modules, and plans."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

BENCH = Path(__file__).resolve().parents[2] / "bench"


def make_plan(folder: Path, resources: int, seed: int) -> tuple[Path, Path]:
    """A gen_tfplan plan in `folder`, and its expected findings."""
    plan, expected = folder / "plan.json", folder / "expected.json"
    subprocess.run([sys.executable, str(BENCH / "reference" / "gen_tfplan.py"), "--resources", str(resources),
                    "--seed", str(seed), "--out", str(plan), "--expected", str(expected)],
                   check=True, capture_output=True)
    return plan, expected


def bench_module(name: str) -> ModuleType:
    """bench/<name>.py as the module ``bench_<name>`` (registered in sys.modules: dataclasses need it)."""
    key = f"bench_{name}"
    if key not in sys.modules:
        spec = importlib.util.spec_from_file_location(key, BENCH / f"{name}.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[key] = module
        spec.loader.exec_module(module)
    return sys.modules[key]
