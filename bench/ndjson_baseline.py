#!/usr/bin/env python3
"""Hand-written plain-Python checks over an NDJSON file of Terraform resources, one line at a time.

Why: the lower bound for issue 15's streaming case. It is the loop a user
would write, ``for line in f: orjson.loads(line)``, feeding the eight checks
of ``bench/reference/baseline.py`` (imported, not copied: that file is the
shared benchmark's and is not edited here). Memory stays constant apart from
the findings, as a streaming tool's should.

    python bench/ndjson_baseline.py RESOURCES.ndjson > FINDINGS.json

Writes ``{"tool": ..., "findings": {check: [address, ...]}}`` (baseline.py's
format) to standard output.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import orjson

REFERENCE_BASELINE = Path(__file__).resolve().parent / "reference" / "baseline.py"


def reference_baseline() -> ModuleType:
    """bench/reference/baseline.py as a module (it is a script, not part of a package)."""
    spec = importlib.util.spec_from_file_location("bench_reference_baseline", REFERENCE_BASELINE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def scan(path: Path) -> dict[str, list[str]]:
    """Check name -> addresses of the resources (lines) of `path` that fail it."""
    baseline = reference_baseline()
    with open(path, "rb") as f:
        # baseline.scan walks planned_values.root_module.resources: hand it the lines, parsed lazily
        stream = (orjson.loads(line) for line in f if line.strip())
        return baseline.scan({"planned_values": {"root_module": {"resources": stream}}}, orjson.loads)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("ndjson", help="one Terraform planned_values resource object per line")
    args = parser.parse_args(argv)
    print(json.dumps({"tool": "ndjson-orjson-loop", "findings": scan(Path(args.ndjson))}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
