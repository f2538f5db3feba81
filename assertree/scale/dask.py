"""Scans over a Dask bag or dataframe of resources: assertree on a Dask cluster.

    import assertree
    from assertree.scale import dask as scale
    from dask.distributed import Client

    client = Client()                                   # or Client("scheduler:8786"), or no client: threads
    policies = assertree.load_policies("policies/")
    resources = assertree.load_resources(["plan.json"], terraform=True).resources
    result = scale.scan(resources, policies, scheduler=client)   # a ScanResult, as assertree.scan gives
    print(assertree.render("text", result))

    records = scale.scan_bag(dask.bag.read_text("inventory/*.jsonl").map(json.loads), policies)
    failures = records.filter(lambda record: any(r["status"] == "fail" for r in record["results"]))

Why Dask: a bag is a partitioned sequence of Python objects, which is what a stream of resources is, and
`dask.distributed` runs it on one machine's processes or a cluster with the same code. Dask's bag and
distributed scheduler are pure Python (~35 MB installed with their dependencies); Ray's wheel installs
202 MB (a compiled runtime with its own object store), and Ray Data wants pandas and pyarrow (~300 MB)
even for a list of dicts.

The policies travel once to each worker (one graph key, not one copy per task) and each worker process
compiles them once (`assertree.languages.base.recompile`); each partition is checked by one `Scanner` and
gives one record per resource (`assertree.scale.records`), which `scan_result` turns back into the
`ScanResult` the reporters read. Dask is imported when this module is: ``pip install 'assertree[dask]'``
(``dask[dataframe]`` too for `scan_dataframe`).
"""

from __future__ import annotations

import math
import pickle
import uuid
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import dask
import dask.bag

from assertree.documents.reader import collector_paused
from assertree.engine.scan import Scanner
from assertree.languages.base import ScanContext
from assertree.results import Resource, RuleResult, ScanResult
from assertree.scale.records import light, scan_result
from assertree.scale.worker import scan_records

if TYPE_CHECKING:
    import dask.dataframe
    import pandas

__all__ = ["FRAME_COLUMNS", "scan", "scan_bag", "scan_dataframe", "scan_result"]

FRAME_COLUMNS = ("row", "policy", "rule", "status", "identifier", "message", "violations", "findings")
"""`scan_dataframe`'s columns: one row per rule result (rules that did not apply give no row)."""


def scan_bag(resources: dask.bag.Bag, policies: Iterable[Any], bindings: Mapping[str, Any] | None = None, *,
             context: ScanContext | None = None) -> dask.bag.Bag:
    """A bag of records, one per resource of `resources` (JSON values or `Resource`s), in the same order.

    Lazy, like any bag: ``.compute()`` it (then `scan_result` gives the `ScanResult`), or filter, count
    and write it on the cluster. `bindings` and `context` are `assertree.scan`'s.
    """
    return resources.map_partitions(_scan_partition, _shipped(policies, bindings, context))


def scan(resources: Iterable[Any], policies: Iterable[Any], bindings: Mapping[str, Any] | None = None, *,
         context: ScanContext | None = None, npartitions: int | None = None, scheduler: Any = None) -> ScanResult:
    """`assertree.scan` with the resources split over Dask: the same `ScanResult`, results in the same order.

    `scheduler` is given to ``compute`` (a ``distributed.Client``, ``"processes"``, ...; None: Dask's
    default, the client made last if there is one). `npartitions` defaults to two per worker thread (each
    partition prepares the scan once; more partitions balance better).
    """
    items = [item if isinstance(item, Resource) else Resource(item) for item in resources]
    policies = list(policies)
    if not items:
        return scan_result([], policies, [])
    count = min(npartitions or 2 * _threads(scheduler), len(items))
    size = -(-len(items) // count)
    # Each share travels as one pickled blob, and its records come back as one: dask.bag.from_sequence
    # hashes every item for the graph's keys (~2 s per 1,000 Terraform resources, measured on a busy
    # 2-core machine), and distributed moved 10,000 resources as objects ~15x slower than as bytes.
    with collector_paused():  # pickles of many small objects: no collector passes over this process's heap
        parts = [pickle.dumps([light(item) for item in items[start:start + size]], pickle.HIGHEST_PROTOCOL)
                 for start in range(0, len(items), size)]
    if callable(getattr(scheduler, "scatter", None)):  # a client: straight to its workers, not in the graph
        pieces: list[Any] = scheduler.scatter(parts, hash=False)
    else:
        pieces = [dask.delayed(part, name=f"assertree-resources-{uuid.uuid4().hex}") for part in parts]
    shipped = _shipped(policies, bindings, context)
    blobs = dask.bag.from_delayed([dask.delayed(_scan_packed)(piece, shipped) for piece in pieces])
    packed = blobs.compute(scheduler=scheduler)
    with collector_paused():
        records = [record for blob in packed for record in pickle.loads(blob)]
        return scan_result(records, policies, items)


def scan_dataframe(frame: dask.dataframe.DataFrame, policies: Iterable[Any],
                   bindings: Mapping[str, Any] | None = None, *, context: ScanContext | None = None,
                   column: str | None = None) -> dask.dataframe.DataFrame:
    """A dataframe of results (`FRAME_COLUMNS`) of the resources in `frame`, one row per rule result.

    Each row of `frame` is a resource: its fields as a mapping (missing values left out; a column has the
    type Dask gives it, and Dask reads object columns as text unless ``dataframe.convert-string`` is off),
    or, with `column`, that column's value (a mapping, or JSON text). ``row`` is the resource's index label;
    ``violations`` counts the violations and ``findings`` words them, one line each. For reports, scan a
    bag instead (``scan_bag``, then `scan_result`): a row keeps only what a table can hold.
    """
    import pandas as pd

    meta = pd.DataFrame({name: pd.Series(dtype="int64" if name == "violations" else object)
                         for name in FRAME_COLUMNS})
    return frame.map_partitions(_scan_frame_partition, _shipped(policies, bindings, context), column, meta=meta,
                                align_dataframes=False, enforce_metadata=False)


def _shipped(policies: Iterable[Any], bindings: Mapping[str, Any] | None, context: ScanContext | None) -> Any:
    """The scan's inputs as one graph key, so the scheduler sends them once to each worker (named: Dask
    would otherwise hash the compiled policies for a key)."""
    return dask.delayed((list(policies), dict(bindings or {}), context), name=f"assertree-policies-{uuid.uuid4().hex}",
                        traverse=False)


def _scan_partition(items: Iterable[Any], shipped: tuple) -> list[dict]:
    policies, bindings, context = shipped
    with collector_paused():  # records are many small objects: no collector passes while they are made
        return scan_records(items, policies, bindings, context=context)


def _scan_packed(part: bytes, shipped: tuple) -> list[bytes]:
    """`_scan_partition` on a pickled share, its records pickled (`scan`)."""
    with collector_paused():
        records = _scan_partition(pickle.loads(part), shipped)
        return [pickle.dumps(records, pickle.HIGHEST_PROTOCOL)]


def _scan_frame_partition(part: pandas.DataFrame, shipped: tuple, column: str | None) -> pandas.DataFrame:
    import orjson
    import pandas as pd

    policies, bindings, context = shipped
    if column is None:
        values: list[Any] = [{key: value for key, value in row.items() if not _missing(value)}
                             for row in part.to_dict(orient="records")]
    else:
        values = [orjson.loads(value) if isinstance(value, (str, bytes)) else value for value in part[column]]
    check = Scanner(policies, bindings, context=context).check
    rows: list[tuple] = []
    for label, value in zip(part.index, values):
        for result in check(Resource(value))[1]:
            rows.append((label, result.policy.name, result.rule.name, str(result.status), result.identifier,
                         result.message, len(result.violations), _findings(result)))
    return pd.DataFrame.from_records(rows, columns=list(FRAME_COLUMNS)).astype({"violations": "int64"})


def _findings(result: RuleResult) -> str:
    """A result's violations (or error), one line each, as the text report words them."""
    lines = [str(result.error)] if result.error is not None else []
    for violation in result.violations:
        errors = "; ".join(str(error) for error in violation.errors)
        lines.append(f"{violation.headline()}: {errors}" if errors else violation.headline())
    return "\n".join(lines)


def _missing(value: Any) -> bool:
    """A dataframe's "no value here" (None, NaN, pandas' NA and NaT): the field is absent from the resource."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return True
    import pandas as pd

    return value is pd.NA or value is pd.NaT


def _threads(scheduler: Any) -> int:
    """Worker threads the scheduler has (a client's workers', else this machine's cores)."""
    nthreads = getattr(scheduler, "nthreads", None)
    if callable(nthreads):
        try:
            return max(1, sum(nthreads().values()))
        except (OSError, TimeoutError):  # no workers reachable yet: fall back on this machine's count
            pass
    import os

    return os.cpu_count() or 1
