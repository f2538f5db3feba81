"""Reports written as a scan goes: every format is a writer fed one resource and its results at a time.

A writer (`ReportWriter`) is made with what is known before the scan (the
policies, the options), then gets `add(resource, results)` for each resource
in scan order, then `finish(tally, problems)` with the totals and the payload
files or lines that could not be used. It keeps nothing of a resource once it
has written it: what must come before the results but is only known at the end
(counts, file errors) is written first while the results wait in a `Spool`,
which goes to disk past a budget. So a streamed scan (`assertree.engine.stream`)
reports in bounded memory, and a whole `ScanResult` is rendered by the same
code (`render_whole`, fed `assertree.report.totals.units`): the two give the
same bytes by construction.
"""

from __future__ import annotations

import importlib
import io
from collections.abc import Iterator, Sequence
from typing import Any, Protocol

from assertree.documents.collector import collector_paused
from assertree.errors import Problem
from assertree.report.options import ReportOptions
from assertree.report.spool import Writable
from assertree.report.totals import Tally, units
from assertree.results import ERROR, PolicyInfo, Resource, RuleResult, ScanResult, Violation

__all__ = ["ReportWriter", "findings", "render_whole", "writer_for"]


class ReportWriter(Protocol):
    # False: `add` only reads the results, in order, and may be given those of many resources at once
    # (resource None), which is how a whole scan is written (one call instead of one per resource)
    by_resource: bool

    def add(self, resource: Resource | None, results: Sequence[RuleResult]) -> None: ...
    def finish(self, tally: Tally, problems: Sequence[Problem] = ()) -> None: ...
    def close(self) -> None: ...


def writer_for(format_name: str, policies: Sequence[PolicyInfo], options: ReportOptions, out: Writable,
               spill_dir: str | None = None) -> ReportWriter:
    """The writer of `format_name` (text, json, sarif, junit, github), writing to `out`; what it must hold
    back goes to files in `spill_dir` past a budget (None: kept in memory)."""
    module = importlib.import_module(f"assertree.report.{format_name}")
    writer: Any = module.Writer(list(policies), options, out, spill_dir)
    return writer


def render_whole(format_name: str, result: ScanResult, options: ReportOptions | None = None,
                 tally: Tally | None = None) -> str:
    """The report of a whole scan, written by the streaming writer over its resources; `tally` is the
    scan's (`Tally.of(result, options.baseline)`), when the caller has counted it already.

    The cyclic garbage collector is paused meanwhile: a report builds many small objects (SARIF results,
    XML elements, the positions of its findings) and none that form a cycle, and each pass it would
    trigger walks every object the scan left behind (at 10,000 resources, as long as placing every
    finding in the plan)."""
    options = options or ReportOptions()
    out = io.StringIO()
    writer = writer_for(format_name, result.policies, options, out)
    try:
        with collector_paused():
            if writer.by_resource:
                add = writer.add
                for resource, results in units(result):
                    add(resource, results)
            else:
                writer.add(None, result.results)
            writer.finish(tally or Tally.of(result, options.baseline), options.problems)
    finally:
        writer.close()
    return out.getvalue()


def findings(results: Sequence[RuleResult]) -> Iterator[tuple[RuleResult, Violation | None]]:
    """Every finding of a resource's results in report order: a rule that errored (violation None), then
    each violation (`ScanResult.findings`, one resource at a time)."""
    for result in results:
        if result.status == ERROR:
            yield result, None
        for violation in result.violations:
            yield result, violation
