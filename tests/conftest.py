"""Shared test fixtures: where the peer conformance data lives, and JSON comparison."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("ASSERTREE_SHARED", REPO.parent / "shared")).resolve()
CONFORMANCE = SHARED / "conformance"

if not CONFORMANCE.is_dir():  # fail loudly: a missing corpus must never look like a pass
    raise pytest.UsageError(
        f"conformance data not found at {CONFORMANCE}; set ASSERTREE_SHARED to the shared folder"
    )
