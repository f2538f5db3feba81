"""`pooled`: work shared as it goes between this process and its workers, outcomes in order, nothing lost."""

from __future__ import annotations

import multiprocessing
import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assertree.inputs import parallel
from assertree.inputs.parallel import HERE, _Split, pooled

_MAIN = os.getpid()


def _doubled(chunk: list[int]) -> list[tuple[int, int]]:
    """A worker's job: each item with its double, and which process worked it out."""
    return [(item * 2, os.getpid()) for item in chunk]


def _dies(chunk: list[int]) -> list[tuple[int, int]]:
    """A worker's job that kills every worker that takes a chunk (never the main process)."""
    if os.getpid() != _MAIN:
        os._exit(9)
    return _doubled(chunk)


@pytest.fixture
def forked(monkeypatch):
    """Workers forked from this process: they see this module's functions and patches."""
    monkeypatch.setattr(parallel, "_context", lambda: multiprocessing.get_context("fork"))
    before = set(multiprocessing.active_children())  # another test's processes, in this test process
    yield
    assert set(multiprocessing.active_children()) <= before  # the workers are gone


def work(items: list[int], processes: int, job=_doubled, remote=None, window=parallel._WINDOW,
         ) -> list[tuple[int, object]]:
    """What the caller of `pooled` sees, with HERE items worked out as a caller would (here, in order)."""
    seen = []
    for item, found in pooled(items, processes, job, remote, window=window):
        seen.append((item, _doubled([item])[0] if found is HERE else found))
    return seen


@pytest.mark.parametrize("processes", [2, 3])
def test_every_item_once_in_order_shared_between_processes(forked, processes):
    """Over several windows, with items only this process may take: each item once, in order, with its own
    result; this process and the workers both worked (the first chunk a worker takes is sent at once)."""
    items = list(range(200))
    seen = work(items, processes, remote=lambda item: item % 7 != 3, window=5)
    assert [item for item, _ in seen] == items
    assert [value for _, (value, _pid) in seen] == [item * 2 for item in items]
    workers = {pid for _, (_value, pid) in seen} - {_MAIN}
    assert workers and len(workers) <= processes - 1
    assert all(pid == _MAIN for item, (_value, pid) in seen if item % 7 == 3)


def test_a_worker_that_dies_loses_no_item(forked):
    """Every chunk a worker takes kills it: those items are worked out here, and the others too."""
    items = list(range(120))
    seen = work(items, 2, job=_dies)
    assert [(item, value) for item, (value, _pid) in seen] == [(item, item * 2) for item in items]
    assert {pid for _, (_value, pid) in seen} == {_MAIN}


def test_no_item_for_the_workers_starts_none(monkeypatch):
    monkeypatch.setattr("concurrent.futures.ProcessPoolExecutor", None)  # any pool would fail
    assert [found for _, found in pooled([1, 2, 3], 2, _doubled, remote=lambda item: False)] == [HERE] * 3


@settings(max_examples=300, deadline=None)
@given(count=st.integers(1, 400), processes=st.integers(2, 5), window=st.integers(1, 40), smallest=st.integers(1, 9),
       steps=st.lists(st.integers(0, 3), max_size=400))
def test_the_split_takes_every_position_once(count, processes, window, smallest, steps):
    """Whatever the pace of this process against its workers (`steps`: how many chunks the workers take
    before this process takes its next position): every position is taken once, by this process (in order,
    a prefix of each window) or in one worker chunk; workers take only from this process's window, from the
    back, in chunks that never grow, of at least `smallest` items but the last."""
    split = _Split(count, processes, window, smallest)
    size = window * processes
    mine: list[int] = []
    chunks: list[tuple[int, int]] = []
    pace = iter(steps)
    for position in range(count):
        for _ in range(next(pace, 1)):
            taken = split.take(position)
            if taken is None:
                assert split.front[position // size] == split.back[position // size]
                break
            start, end = taken
            assert start < end and start // size == (end - 1) // size == position // size
            chunks.append(taken)
        if split.mine(position):
            mine.append(position)
    assert split.done()
    taken_by_workers = [position for start, end in chunks for position in range(start, end)]
    assert sorted(mine + taken_by_workers) == list(range(count))
    for number in range(-(-count // size)):
        in_window = [position for position in mine if position // size == number]
        assert in_window == list(range(number * size, number * size + len(in_window)))
        sizes = [end - start for start, end in chunks if start // size == number]
        assert sizes == sorted(sizes, reverse=True)
        assert all(size >= smallest for size in sizes[:-1])
        assert [start for start, end in chunks if start // size == number] == \
            sorted((start for start, end in chunks if start // size == number), reverse=True)
