"""A streamed scan keeps no resource and no result: its peak memory does not grow with the input.

Measured with tracemalloc (allocations, not time): the peak while streaming 1,000 resources through
every report format stays within a small multiple of the peak for 100. A scan that kept each resource
or each result, or a report that held its results in memory, needs more than three times as much
(the second test shows the measure sees it).

Each measure runs in a fresh interpreter (this file as a script): tracemalloc counts every thread's
allocations, and in a long test run other threads and what the process already holds added 200 KB to the
peak of the larger run now and then (seen in CI), which is not the scan's.
"""

from __future__ import annotations

import gc
import json
import subprocess
import sys
import tracemalloc
from pathlib import Path

from stream_inputs import deployment, inputs_fixture, policies_in  # noqa: F401  (a fixture)

from assertree.cli.outputs import parse_outputs
from assertree.cli.streamed import scan_streamed
from assertree.report import FORMATS, ReportOptions, spool, totals


def peak_of_streaming(folder: Path, count: int) -> int:
    path = folder / f"r{count}.ndjson"
    with path.open("w") as stream:
        for index in range(count):  # every other one fails, so every report has findings to write
            stream.write(json.dumps(deployment(f"d{index}", 1 + 4 * (index % 2))) + "\n")
    policies = policies_in(folder)
    outputs = parse_outputs([f"{name}={folder / f'out{count}.{name}'}" for name in FORMATS])
    gc.collect()  # what earlier tests left for the collector is not this scan's
    tracemalloc.start()
    try:
        tally, stream_input = scan_streamed([str(path)], policies, None, outputs, ReportOptions())
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert tally.resources == count and tally.failed and not stream_input.problems
    return peak


def peaks(folder: Path) -> tuple[int, int]:
    """Peaks for 100 and 1,000 resources, after a first run of 1,000 has made what every run makes once
    (lazy imports, the package's metadata, entries of bounded caches for the resources' names: seen in
    CI as 230 KB more for the first 1,000 in a process that had run other tests)."""
    peak_of_streaming(folder, 1_000)
    return peak_of_streaming(folder, 100), peak_of_streaming(folder, 1_000)


def measured(folder: Path, keep: bool = False) -> tuple[int, int]:
    """`peaks` over `folder`'s policies in a fresh interpreter; `keep`: with a scan made to keep every
    resource and its results."""
    run = subprocess.run([sys.executable, __file__, str(folder), *(["--keep"] if keep else [])],
                         cwd=folder, capture_output=True, text=True, timeout=600, check=False)
    assert run.returncode == 0, run.stderr[-3000:]
    small, large = map(int, run.stdout.split())
    return small, large


def test_peak_memory_does_not_grow_with_the_number_of_resources(inputs):
    small, large = measured(inputs)
    assert large < 1.5 * small, (small, large)
    assert "1000 resources" in (inputs / "out1000.text").read_text()


def test_the_measure_sees_a_scan_that_keeps_its_resources(inputs):
    """The same measure, on a scan made to keep every resource and its results: it fails the bound."""
    small, large = measured(inputs, keep=True)
    assert large > 3 * small, (small, large)


def _keep_every_resource() -> None:
    kept: list = []
    add = totals.Tally.add

    def keeping(self, resource, results):
        kept.append((resource, results))
        add(self, resource, results)

    totals.Tally.add = keeping  # type: ignore[method-assign]


if __name__ == "__main__":  # the measure, in its own interpreter: FOLDER [--keep]
    spool.SPILL_BYTES = 16_384  # well below what 100 resources' reports hold
    if "--keep" in sys.argv:
        _keep_every_resource()
    print(*peaks(Path(sys.argv[1])))
