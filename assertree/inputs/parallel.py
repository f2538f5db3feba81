"""Reading many payload files with a pool of worker processes (``assertree scan --jobs N``).

Why: a repository-wide or pre-commit scan reads thousands of small YAML files,
and building their values (libyaml, then Python objects) is most of such a
scan. Parsing is independent per file, so worker processes parse while the
main process parses its own share (the files it reaches before a worker has
taken them) and turns what comes back into resources. Only parsing moves: a
worker sends back the `Payload` (its value and bytes, pickled) or the problem
of a file that cannot be read, and the main process scans and writes the
reports exactly as with one job. Measured on 2,000 small manifests, pickling the values costs about a tenth
of parsing them in the worker and another tenth to unpickle them in the main
process (so the main process does not just wait: with N workers it would use a
sixth of the CPU time of parsing everything itself, idle the rest). Scanning in the workers
as well would have to send back results that point at resources and files
(the reports' positions come from the files' bytes), and the engine is the
smaller share of such a scan.

What it promises:

* `read_payloads` yields one outcome per path, in the order of the paths, for
  any number of jobs: the same payloads and the same problems as `read_payload`
  in one process, so reports are byte for byte those of ``--jobs 1``;
* one bad file is the problem of that file and never hides another;
* standard input, FIFOs (``<(command)``) and other non-regular files are read
  in the main process, which alone can read them;
* Ctrl-C never hangs: workers ignore SIGINT, the main process stops them and
  re-raises; a worker that dies (killed, out of memory) loses nothing: the
  files it had not returned are read in the main process.

The pool itself (`pooled`: outcomes in order, work shared as it goes, a dead
worker's chunk worked on here, Ctrl-C) serves any work of that shape: ``assertree
test --jobs N`` runs test files with it.

Workers are forked when the process has one thread (cheap: nothing to import
again), else started from a fork server (forking a process with threads can
deadlock a child).
"""

from __future__ import annotations

import contextlib
import functools
import os
import stat
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from assertree.errors import AssertreeError, Problem
from assertree.inputs.payload import STDIN, Payload, read_payload

if TYPE_CHECKING:
    from concurrent.futures import Future, ProcessPoolExecutor

    from assertree.documents.members import Members

MIN_FILES_PER_JOB = 50
"""Fewer files than this per process are read in one process. A small manifest parses in about 0.4 ms;
starting a pool costs 15-20 ms (forked) and a file sent back about 0.15 ms to pickle and unpickle: by that
estimate two processes break even at about 100 files."""
_MAX_CHUNK = 128  # files in one round trip to a worker
_AHEAD = 2  # chunks in flight per worker: one being parsed, one waiting to be taken
_WINDOW = 128  # items per process in a window of `_Split` (`pooled`): what a streamed scan holds ahead of itself
_GUIDED = 8  # a worker's chunk: 1 / (_GUIDED * processes) of what is left of its window, at most _MAX_CHUNK
_SMALLEST_READ = 16  # files: a file parses in about 0.4 ms, a round trip costs this process about 0.3 ms

Outcome = Payload | Problem
Reader = Callable[[], Payload]


def available_cpus() -> int:
    """The CPUs this process may run on (its affinity mask, as ``os.process_cpu_count`` in Python 3.13)."""
    counter = getattr(os, "process_cpu_count", None)
    if counter is not None:
        return counter() or 1
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0)) or 1
    return os.cpu_count() or 1


def default_jobs() -> int:
    """``--jobs`` when not given: one process per CPU this process may use."""
    return available_cpus()


def jobs_for(files: int, jobs: int, per_job: int | None = None) -> int:
    """How many processes (this one and its workers) `files` files are read with when `jobs` are allowed:
    each must have at least `per_job` files (default MIN_FILES_PER_JOB), for a worker to pay for its start."""
    return max(1, min(jobs, files // (per_job or MIN_FILES_PER_JOB)))


def read_payloads(paths: Sequence[str], jobs: int = 1, *,
                  members: Members | None = None) -> Iterator[tuple[str, Reader]]:
    """For each path, in order: the path and a function that returns its `Payload` or raises the
    `AssertreeError` that `read_payload` raises for it (`members`: as `read_payload`'s). With `jobs` > 1 (and
    enough files, `jobs_for`) regular files are parsed by `jobs` - 1 worker processes and this one."""
    workers = jobs_for(len(paths), jobs)
    if workers <= 1:
        for path in paths:
            yield path, _reader(path, members)
        return
    yield from _pooled(paths, workers, members)


def _reader(path: str, members: Members | None) -> Reader:
    return lambda: read_payload(path, members=members)


def _outcome_reader(outcome: Outcome) -> Reader:
    def read() -> Payload:
        if isinstance(outcome, Problem):
            raise AssertreeError.of(outcome)
        return outcome

    return read


def _regular(path: str) -> bool:
    try:
        return path != STDIN and stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False  # read in this process, which reports why it cannot be


def _pooled(paths: Sequence[str], processes: int, members: Members | None) -> Iterator[tuple[str, Reader]]:
    """Regular files parsed by `processes` - 1 workers, the others (and this process's share) here."""
    read_chunk = _read_chunk if members is None else functools.partial(_read_chunk, members=members)
    for path, outcome in pooled(paths, processes, read_chunk, remote=_regular, window=_WINDOW,
                                smallest=_SMALLEST_READ):
        yield path, _reader(path, members) if isinstance(outcome, Here) else _outcome_reader(outcome)


class Here:
    """The type of `HERE`."""

    def __repr__(self) -> str:
        return "HERE"


HERE = Here()
"""What `pooled` gives for an item this process is to work on itself, when the caller reaches it."""

_Item = TypeVar("_Item")
_Result = TypeVar("_Result")


def pooled(items: Sequence[_Item], processes: int, run_chunk: Callable[[list[_Item]], list[_Result]],
           remote: Callable[[_Item], bool] | None = None, *, window: int = _WINDOW, smallest: int = 1,
           ) -> Iterator[tuple[_Item, _Result | Here]]:
    """Each item in order with its result, worked out by `processes` - 1 worker processes, or `HERE` for the
    items this process works on itself when the caller reaches them.

    Who works on what is decided as the work goes (`_Split`), not fixed ahead: this process takes items from
    the front as the caller reaches them, the workers chunks from the back, until they meet; then the same
    in the next window of `window` items per process. So items that cost more in one process than in
    another (slow test files, a busy CPU) never leave one side idle waiting for the other but where they
    meet, and for at most the small chunks a worker is finishing. The results held ahead of the caller are
    at most a window's: a caller that keeps every result anyway gives a window as large as `items`. A
    worker's chunk holds at least `smallest` items (but the last of a window): items that cost less than a
    round trip go in larger chunks.

    `run_chunk` (a module-level function, or a `functools.partial` of one: it is pickled) gives the results of
    a list of items, one per item; it runs in a worker, and here again for a chunk whose worker died. Only the
    items `remote` accepts (all when None) go to workers. The caller must take every item, or close the
    iterator, to stop the workers."""
    from concurrent.futures import ProcessPoolExecutor  # imported only when used: start-up time
    from concurrent.futures.process import BrokenProcessPool

    sent = [index for index, item in enumerate(items) if remote is None or remote(item)]
    if not sent:  # nothing a worker may take (standard input, FIFOs)
        for item in items:
            yield item, HERE
        return
    position_of = {index: position for position, index in enumerate(sent)}
    split = _Split(len(sent), processes, window, smallest)
    executor = ProcessPoolExecutor(max_workers=processes - 1, mp_context=_context(), initializer=_start_worker)
    chunks: dict[int, tuple[int, Future | None]] = {}  # first position -> (end, future) of each chunk not taken back
    running: list[Future] = []  # submitted and not done

    def chunk_items(start: int, end: int) -> list[_Item]:
        return [items[sent[position]] for position in range(start, end)]

    def top_up(position: int) -> None:
        """Keep `_AHEAD` chunks per worker in flight (one being worked on, one waiting to be taken)."""
        running[:] = [future for future in running if not future.done()]
        while len(running) < _AHEAD * (processes - 1):
            taken = split.take(position)
            if taken is None:
                return
            future = None
            with contextlib.suppress(BrokenProcessPool):  # a worker died: this chunk is worked on here when reached
                future = executor.submit(run_chunk, chunk_items(*taken))
                running.append(future)
            chunks[taken[0]] = (taken[1], future)
            if future is None:
                return

    try:
        outcomes: dict[int, Any] = {}
        for index, item in enumerate(items):
            position = position_of.get(index)
            if position is None:
                yield item, HERE
                continue
            mine = split.mine(position)
            top_up(position)
            if mine:
                yield item, HERE
                continue
            if position in chunks:  # the first item of a worker's chunk: its results, all at once
                end, future = chunks.pop(position)
                outcomes.update(zip(range(position, end), _result(future, chunk_items(position, end), run_chunk),
                                    strict=True))
                if not chunks and split.done():
                    executor.shutdown(wait=True)  # every result is in: the workers exit now
            yield item, outcomes.pop(position)
        executor.shutdown(wait=True)
    except BaseException:  # Ctrl-C, or the caller stopped early (GeneratorExit)
        _stop(executor, [future for _end, future in chunks.values() if future is not None])
        raise


class _Split:
    """Which items (positions among those a worker may take) this process works on and which the workers do.

    The positions are cut into windows of `window` per process. In each, this process takes positions from the
    front, one by one as the caller reaches them (`mine`); the workers take chunks from the back (`take`), large
    first and smaller as what is left shrinks (guided scheduling: where the two meet, what this process may
    wait for is small). Every position is taken exactly once, this process's in each window are a prefix of it,
    and workers take chunks only from the window this process is in, so what it holds ahead of the caller
    (results not yet reached, chunks in flight) is at most a window, however many items."""

    def __init__(self, count: int, processes: int, window: int, smallest: int = 1) -> None:
        self.size = window * processes
        self.processes = processes
        self.smallest = smallest
        self.front = list(range(0, count, self.size))  # per window: the first position nobody has taken
        self.back = [min(start + self.size, count) for start in self.front]  # per window: the workers' from here

    def mine(self, position: int) -> bool:
        """Whether this process works on `position` (the next one it reaches, in order): yes unless a worker
        took it."""
        window = position // self.size
        if position < self.back[window]:
            self.front[window] = position + 1
            return True
        return False

    def take(self, position: int) -> tuple[int, int] | None:
        """The next chunk for a worker (start, end), while this process is at `position`; None when nothing
        is left in its window."""
        window = position // self.size
        left = self.back[window] - self.front[window]
        if left <= 0:
            return None
        size = min(_MAX_CHUNK, left, max(self.smallest, -(-left // (_GUIDED * self.processes))))
        self.back[window] -= size
        return self.back[window], self.back[window] + size

    def done(self) -> bool:
        """Whether every position is taken."""
        return all(front == back for front, back in zip(self.front, self.back, strict=True))


def _result(future: Future | None, chunk: list, run_chunk: Callable[[list], list]) -> list:
    """A chunk's results; when its worker died (or had died before it was sent), worked out here (what a crash
    did not lose)."""
    from concurrent.futures.process import BrokenProcessPool

    if future is None:
        return run_chunk(chunk)
    try:
        return future.result()
    except BrokenProcessPool:
        return run_chunk(chunk)


def _stop(executor: ProcessPoolExecutor, futures: list[Future]) -> None:
    """Stop at once (Ctrl-C, an error in the caller): cancel what has not started, end the workers."""
    for future in futures:
        future.cancel()
    processes = list((getattr(executor, "_processes", None) or {}).values())
    manager = getattr(executor, "_executor_manager_thread", None)
    executor.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        if process.is_alive():
            process.terminate()
    # The executor's own thread joins the workers too; whichever thread reaps one first, the other's wait
    # sees no child and, for a moment, the worker still counts as running: let that thread finish first.
    if manager is not None:
        manager.join(timeout=5)
    for process in processes:
        process.join(timeout=5)


def _context() -> Any:
    import multiprocessing

    methods = multiprocessing.get_all_start_methods()
    if "fork" in methods and threading.active_count() == 1:
        return multiprocessing.get_context("fork")
    if "forkserver" in methods:
        return multiprocessing.get_context("forkserver")
    return multiprocessing.get_context("spawn")


def _start_worker() -> None:
    """A worker leaves Ctrl-C to the main process (which stops it) and runs the cyclic collector only
    between chunks, over what the last chunk allocated (`_read_chunk`): parsed values hold no cycles, but
    each file's YAML loader does, and a worker of a long scan must not keep them all."""
    import gc
    import signal

    from assertree.documents.nesting import make_room_for_nesting

    make_room_for_nesting()

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    gc.disable()


def _read_chunk(paths: list[str], members: Members | None = None) -> list[Outcome]:
    import gc

    gc.collect(0)  # the YAML loaders' cycles left by the previous chunk (a worker's collector is off): cheap
    outcomes: list[Outcome] = []
    for path in paths:
        try:
            outcomes.append(read_payload(path, members=members))
        except AssertreeError as error:
            outcomes.append(error.problem)
    return outcomes
