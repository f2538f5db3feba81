"""What a worker runs on its share of the resources: one `Scanner`, one record per resource.

Engine-neutral (Dask calls it per partition; another engine could call it per batch): the policies arrive
pickled (each compiled once per process, `assertree.languages.base.recompile`), the scan is prepared once
for the share, and each resource gives the plain record `assertree.scale.records` describes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from assertree.engine.scan import Scanner
from assertree.languages.base import ScanContext
from assertree.scale.records import encode, light, rule_positions

__all__ = ["scan_records"]


def scan_records(resources: Iterable[Any], policies: Iterable[Any], bindings: Mapping[str, Any] | None = None,
                 *, context: ScanContext | None = None) -> list[dict]:
    """The record of each resource (a `Resource` or a JSON value), in order, as `assertree.scan` would check it."""
    scanner = Scanner(policies, bindings, context=context)
    positions = rule_positions(scanner.policies)
    check = scanner.check
    records = []
    for item in resources:
        given = light(item)
        checked, results = check(given)
        records.append(encode(given, checked, results, positions))
    return records
