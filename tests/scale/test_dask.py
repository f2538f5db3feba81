"""Scans on a Dask cluster of worker processes equal the single-process scan (assertree.scale.dask)."""

from __future__ import annotations

import logging
import os

import dask.bag
import dask.dataframe
import orjson
import pandas as pd
import pytest
from scale_cases import CASES, policies, resources, scan_fields, single_scan

import assertree
from assertree.scale import dask as scale
from assertree.scale.records import light


@pytest.fixture(scope="session")
def dask_client():
    """A Dask cluster of two worker processes (one thread each), as a user would start one. Here, not in a
    conftest.py: the suite's modules import the top-level conftest by name."""
    from dask.distributed import Client, LocalCluster

    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
                           silence_logs=logging.ERROR)
    client = Client(cluster, set_as_default=False)
    try:
        yield client
    finally:
        client.close()
        cluster.close()


def test_on_a_cluster_of_worker_processes(dask_client, subtests):
    """Every check on the cluster, as subtests of one test: one xdist worker then starts the one cluster
    (xdist's ``--dist loadgroup``, which would keep separate tests together, does not group under pytest 9)."""
    for name in sorted(CASES):
        with subtests.test(f"{name}: a scan spread over worker processes equals the single-process scan"):
            check_a_scan_spread_over_worker_processes(name, dask_client)
    for check in (check_the_workers_are_other_processes, check_a_bag_built_and_filtered_on_the_cluster,
                  check_a_dataframe_of_json_documents, check_a_dataframe_of_flat_records_leaves_missing_values_out):
        with subtests.test(check.__name__.removeprefix("check_").replace("_", " ")):
            check(dask_client)


def check_a_scan_spread_over_worker_processes(name, dask_client):
    compiled, items, expected = policies(name), resources(name), single_scan(name)
    spread = scale.scan(items, compiled, scheduler=dask_client, npartitions=3)
    assert scan_fields(spread) == scan_fields(expected)
    assert assertree.render("json", spread) == assertree.render("json", expected)


def check_the_workers_are_other_processes(dask_client):
    pids = set(dask_client.run(os.getpid).values())
    assert len(pids) == 2 and os.getpid() not in pids


def check_a_bag_built_and_filtered_on_the_cluster(dask_client):
    compiled, items, expected = policies("kyverno-json"), resources("kyverno-json"), single_scan("kyverno-json")
    records = scale.scan_bag(dask.bag.from_sequence([light(item) for item in items], npartitions=4), compiled)
    # without the parent's resources: the records carry each resource's value and provenance
    assert scan_fields(scale.scan_result(records.compute(scheduler=dask_client), compiled)) == scan_fields(expected)
    failing = records.filter(lambda record: any(result["status"] == "fail" for result in record["results"]))
    assert failing.count().compute(scheduler=dask_client) == len({id(result.resource) for result in expected.results
                                                                  if result.status == "fail"}) > 0


def check_a_dataframe_of_json_documents(dask_client):
    compiled = policies("kyverno")
    values = [item.value for item in resources("kyverno")]
    frame = pd.DataFrame({"manifest": [orjson.dumps(value).decode() for value in values]},
                         index=pd.RangeIndex(100, 100 + len(values)))
    rows = scale.scan_dataframe(dask.dataframe.from_pandas(frame, npartitions=3), compiled,
                                column="manifest").compute(scheduler=dask_client)
    assert list(rows.columns) == list(scale.FRAME_COLUMNS)
    expected = [(100 + position, result) for position, value in enumerate(values)
                for result in assertree.scan([value], compiled).results]
    assert [tuple(None if pd.isna(cell) else cell for cell in row)  # a frame's "no value" is NA
            for row in rows[["row", "policy", "rule", "status", "identifier", "message", "violations"]]
            .itertuples(index=False)] == [
        (label, result.policy.name, result.rule.name, str(result.status), result.identifier, result.message,
         len(result.violations)) for label, result in expected]
    worded = [(findings, result) for findings, (_, result) in zip(rows["findings"], expected) if result.violations]
    assert worded and all(violation.headline() in findings for findings, result in worded
                          for violation in result.violations)


def check_a_dataframe_of_flat_records_leaves_missing_values_out(dask_client):
    policy = assertree.compile_document({
        "apiVersion": "json.kyverno.io/v1alpha1", "kind": "ValidatingPolicy", "metadata": {"name": "buckets"},
        "spec": {"rules": [{"name": "encrypted", "identifier": "name", "match": {"any": [{"type": "bucket"}]},
                            "assert": {"all": [{"message": "not encrypted", "check": {"encrypted": True}}]}}]},
    })
    inventory = pd.DataFrame({"name": ["logs", "site", "tmp", "vm"], "type": ["bucket", "bucket", "bucket", "vm"],
                              "encrypted": pd.array([True, False, None, None], dtype="boolean"),
                              "size": [1.5, 2.0, float("nan"), 4.0]})
    rows = scale.scan_dataframe(dask.dataframe.from_pandas(inventory, npartitions=2), [policy]).compute(
        scheduler=dask_client)
    expected = assertree.scan([{"name": "logs", "type": "bucket", "encrypted": True, "size": 1.5},
                               {"name": "site", "type": "bucket", "encrypted": False, "size": 2.0},
                               {"name": "tmp", "type": "bucket"}], [policy])
    assert [(row.row, row.identifier, row.status, row.violations) for row in rows.itertuples()] == [
        (position, result.identifier, str(result.status), len(result.violations))
        for position, result in enumerate(expected.results)]
    assert list(rows["status"]) == ["pass", "fail", "fail"]
    assert "Required value" in rows["findings"].iloc[2]  # tmp has no encrypted field at all


@pytest.mark.parametrize("scheduler", ["sync", "threads"])
def test_dasks_local_schedulers_give_the_same_scan_with_bindings(scheduler):
    policy = assertree.compile_document({
        "apiVersion": "json.kyverno.io/v1alpha1", "kind": "ValidatingPolicy", "metadata": {"name": "envs"},
        "spec": {"rules": [{"name": "env", "identifier": "name",
                            "assert": {"all": [{"message": "not for {{ $env }}", "check": {"env": "($env)"}}]}}]},
    })
    items = [{"name": f"app-{n}", "env": "prod" if n % 3 else "dev"} for n in range(9)]
    expected = assertree.scan(items, [policy], {"env": "prod"})
    assert {str(result.status) for result in expected.results} == {"pass", "fail"}
    spread = scale.scan(items, [policy], {"env": "prod"}, scheduler=scheduler, npartitions=4)
    assert scan_fields(spread) == scan_fields(expected)
