"""A scan as a stream: each resource is checked as it comes and handed on with its results, never kept.

`assertree.engine.scan.scan` collects every resource and result into a
`ScanResult`; for inputs larger than memory (an inventory export of millions of
resources as JSON Lines) `check_stream` yields each resource with the results of
its check instead, in the same order, so that reports
(`assertree.report.stream`) write them and let them go. The results are the
ones `scan` gives: both run `Scanner.check`, one resource at a time.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from assertree.engine.scan import Scanner
from assertree.results import Resource, RuleResult

__all__ = ["check_stream"]


def check_stream(scanner: Scanner, resources: Iterable[Any]) -> Iterator[tuple[Resource, list[RuleResult]]]:
    """Each of `resources` (JSON values or `Resource`s) after the mutating policies, with the result of
    every rule that applied to it, in order; nothing is kept once the next is asked for."""
    check = scanner.check
    for item in resources:
        yield check(item if isinstance(item, Resource) else Resource(item))
