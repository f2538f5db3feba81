"""``assertree scan`` without ``--terraform`` or ``--pre-process`` (and any scan of JSON Lines): check and
report one resource at a time.

The command's other half (`assertree.cli.scan`, for Terraform plans and
pre-processed payloads, which are read whole) loads every payload, scans,
then renders; here the payloads are read as a stream (`assertree.inputs.stream`),
each resource is checked as it comes (`assertree.engine.stream`), and the
reports are written as results arrive (`assertree.cli.outputs.write_streamed`),
so memory stays bounded however many resources there are. The reports are the
bytes the whole scan would write for the same resources.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from assertree.cli.outputs import Output, write_streamed
from assertree.report.options import ReportOptions


def scan_streamed(files: Sequence[str], policies: Sequence[Any], context: Any, outputs: list[Output],
                  options: ReportOptions, *, payload_format: str = "auto", jobs: int = 1,
                  per_document_limit: bool = True, steps: Any = None) -> tuple[Any, Any]:
    """Scan `files` as a stream and write `outputs`; returns the totals (a `Tally`: ``failed``,
    ``results``, ``unmatched_rules()``, as a `ScanResult` has them) and the input (its ``problems``,
    ``resources`` read, ``plans_without_terraform``). `jobs` > 1 parses files in worker processes;
    `per_document_limit` as `assertree.inputs.stream.ResourceStream` has it (``--stream``); `steps` (an
    `assertree.findings.steps.FindingSteps`) marks each resource's results before the reports see them."""
    from assertree.engine.scan import Scanner
    from assertree.engine.stream import check_stream
    from assertree.inputs.stream import ResourceStream

    scanner = Scanner(policies, context=context)
    stream = ResourceStream(files, payload_format=payload_format, jobs=jobs, per_document_limit=per_document_limit)
    units = check_stream(scanner, stream)
    if steps is not None:
        units = steps.units(units)
    tally = write_streamed(outputs, scanner.policies, options, units, stream.problems)
    return tally, stream
