"""Shared test fixtures: where the peer conformance data lives, and JSON comparison."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from assertree.documents.nesting import make_room_for_nesting

# Property tests are reproducible in the default run (same examples every time, so CI never flakes);
# HYPOTHESIS_PROFILE=explore draws new examples on each run. No profile has a per-example deadline or the too-slow
# health check: those are timed assertions, and on a loaded machine they failed examples that were right.
_UNTIMED = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow]}
settings.register_profile("default", derandomize=True, **_UNTIMED)
settings.register_profile("explore", derandomize=False, **_UNTIMED)
# Long fuzzing (tests/hostile/test_fuzz.py, `pytest -m slow`): new examples each run; FUZZ_EXAMPLES per property.
settings.register_profile("slow", derandomize=False, database=None, **_UNTIMED,
                          max_examples=int(os.environ.get("FUZZ_EXAMPLES", "20000")))
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))

# Tests run commands in this process (`assertree.cli.main`), which let Python recurse as deep as the documents the
# readers accept need (assertree/documents/nesting.py); done once here, so that Hypothesis, which checks the limit
# around each example, never sees it change halfway through a run.
make_room_for_nesting()

REPO = Path(__file__).resolve().parents[1]

# The cache of checked documents (assertree.documents.cache) goes to a folder of this run, for every test and the
# processes they start, never to the user's own; it stays on, so the suite also runs every policy a second time
# from it. ASSERTREE_CACHE=off in the environment still turns it off.
if not os.environ.get("ASSERTREE_CACHE_DIR"):  # the process that made it (xdist's workers inherit it) removes it
    import atexit
    import shutil
    import tempfile

    os.environ["ASSERTREE_CACHE_DIR"] = tempfile.mkdtemp(prefix="assertree-test-cache-")
    atexit.register(shutil.rmtree, os.environ["ASSERTREE_CACHE_DIR"], ignore_errors=True)
# The peer suites, vendored (scripts/sync-conformance refreshes them; data/README.md gives each source).
CONFORMANCE = REPO / "tests" / "conformance" / "data"
GEN_TFPLAN = REPO / "bench" / "reference" / "gen_tfplan.py"

if not (CONFORMANCE / "README.md").is_file():  # fail loudly: a missing corpus must never look like a pass
    raise pytest.UsageError(f"conformance data not found at {CONFORMANCE}; run scripts/sync-conformance")
