"""`engine.scan` pauses the cyclic garbage collector, yet keeps what a scan can leave behind bounded.

The pause must not change a result, must restore the collector as the caller had it, must still run a pass
of the young generations once `YOUNG_LIMIT` objects were made (a rule that errors on every resource leaves
exceptions behind), and must run none when the caller paused the collector itself.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from assertree.engine import scan as engine_scan
from assertree.engine.scan import scan
from assertree.languages.load import load_policies
from assertree.results import Resource

POLICY = """\
apiVersion: json.kyverno.io/v1alpha1
kind: ValidatingPolicy
metadata:
  name: names
spec:
  rules:
    - name: parse-the-name
      identifier: name
      match:
        any:
        - type: bucket
      assert:
        all:
        - check:
            (json_parse(name)): {}
"""


@pytest.fixture
def policies(tmp_path):
    path = tmp_path / "policy.yaml"
    path.write_text(POLICY)
    return load_policies(path)


def _resources(count: int) -> list[Resource]:
    return [Resource({"type": "bucket", "name": "{}" if index % 2 else f"not json {index}"})
            for index in range(count)]


@contextmanager
def passes() -> Iterator[list[int]]:
    """The generations of the collector's passes meanwhile (the scan's; its input is made before)."""
    seen: list[int] = []

    def record(phase: str, info: dict) -> None:
        if phase == "start":
            seen.append(info["generation"])

    gc.collect()  # nothing left over from before
    gc.callbacks.append(record)
    try:
        yield seen
    finally:
        gc.callbacks.remove(record)


def test_the_results_are_those_of_a_scan_with_the_collector_running(policies, monkeypatch):
    paused = scan(_resources(50), policies)
    monkeypatch.setattr(engine_scan, "collector_paused", _running)
    running = scan(_resources(50), policies)
    assert [(item.status, item.identifier, str(item.error)) for item in paused.results] == [
        (item.status, item.identifier, str(item.error)) for item in running.results]
    assert {item.status for item in paused.results} == {"pass", "error"}


def test_past_the_limit_the_young_generations_are_collected_during_the_scan(policies, monkeypatch):
    monkeypatch.setattr(engine_scan, "YOUNG_LIMIT", 500)
    resources = _resources(3000)
    assert gc.isenabled()
    with passes() as seen:
        scan(resources, policies)
    assert seen[:2] == [1, 1]  # at resources 1024 and 2048, each past 500 new objects
    assert gc.isenabled()


def test_below_the_limit_the_scan_runs_no_pass(policies):
    resources = _resources(3000)
    with passes() as seen:
        scan(resources, policies)
    assert seen in ([], [0])  # 3,000 resources make far fewer than YOUNG_LIMIT objects; [0]: as the scan returns


def test_a_caller_that_paused_the_collector_keeps_it_paused(policies, monkeypatch):
    monkeypatch.setattr(engine_scan, "YOUNG_LIMIT", 0)
    resources = _resources(3000)
    gc.disable()
    try:
        with passes() as seen:
            scan(resources, policies)
        assert not gc.isenabled()
    finally:
        gc.enable()
    assert seen == []


def test_freeze_moves_the_results_out_of_the_collectors_sight(policies):
    before = gc.get_freeze_count()
    try:
        result = scan(_resources(20), policies, freeze=True)
        assert gc.get_freeze_count() >= before + len(result.results)
    finally:
        gc.unfreeze()


class _running:
    """A stand-in for `collector_paused` that leaves the collector running."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None
