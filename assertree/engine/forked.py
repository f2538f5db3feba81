"""A large payload's resources checked by forked worker processes as well as this one (``scan --jobs N``).

Why: a 10,000-resource Terraform plan is parsed in one process (one JSON
document), and checking its resources is then a tenth of a second of Python
on one CPU while the others wait. Once the plan is parsed and the policies
compiled, this process forks: each worker inherits both (copy-on-write, nothing
is sent to it) and checks a contiguous share of the resources, while this
process checks the first share.

What comes back is compact, and never a resource: for each resource of its
share a worker sends, per result, the positions of its policy and rule, its
status, identifier and message, when that is all the result holds (a pass,
usually). A resource with any result that holds more (violations, an error,
feedback, a patch, an explanation), or whose check raised, is marked, and this
process checks it again itself. So every result the reports see is one this
process made, pointing at its own resources, policies and payload bytes (the
reports place findings from those): the reports are byte for byte those of one
process, for every ``--jobs``.

What it promises:

* `check_forked` yields the units `assertree.engine.stream.check_stream` yields
  for the same scanner and resources: each resource with its results, in order;
* a worker that dies (killed, out of memory), sends back nothing readable, or
  could not be forked loses nothing: its whole share is checked here;
* Ctrl-C never hangs: workers ignore SIGINT (and leave SIGTERM to the
  system's default), and this process kills and reaps
  them when it stops early for any reason (an exception, the caller closing
  the iterator);
* memory: a worker writes to the pages of the objects it touches (reference
  counts), which the kernel then copies for it alone; its peak stays below this
  process's, since it holds only what was here when it forked and its share's
  results.

Forking happens only where it is safe and pays: on a platform with `os.fork`,
in a process running one thread (forking a process with threads can deadlock
the child), for a scanner without mutating policies (their results hold the
patched resource: every resource would be checked again here), and from
`MIN_PAIRS` (resource, rule) pairs, when another CPU is idle.
"""

from __future__ import annotations

import contextlib
import marshal
import os
import signal
import threading
from collections.abc import Callable, Iterator, Sequence
from operator import attrgetter
from typing import Any, Protocol

from assertree.results import ERROR, FAIL, PASS, SKIP, WARN, Resource, RuleResult

__all__ = ["MIN_PAIRS", "check_forked", "forks"]

MIN_PAIRS = 150_000
"""Fewer (resource, rule) pairs than this are checked in this process alone. A worker is not free: forking a
process that holds a parsed 10,000-resource plan takes ~6 ms, and each page of it that a process then writes
(every object it reads gains a reference) is copied, ~1.3 pages a resource in each process, a few microseconds;
a resource a worker found failing is checked again here. Measured on that plan (bench/run.py's 10k case), with
its 8 policies (80,000 pairs) two processes were no faster than one; with 32 (320,000 pairs) 30% faster."""

_STATUSES = (PASS, FAIL, ERROR, SKIP, WARN)
_STATUS_CODE: dict[str, int] = {status: code for code, status in enumerate(_STATUSES)}
# Every field of a result but these must hold its default for the result to travel as a verdict
_SENT = ("resource", "policy", "rule", "status", "identifier", "message")
_REST = tuple(name for name in RuleResult.__slots__ if name not in _SENT)
_rest_of = attrgetter(*_REST)
_DEFAULTS = _rest_of(RuleResult(None, None, None, PASS))  # type: ignore[arg-type]

Verdict = tuple[tuple[int, int, str | None, str | None], ...]
"""A resource's results as a worker sends them: (policy-and-rule position, status position, identifier, message)
each; None instead of a verdict means "check this resource again here"."""


class Scanner(Protocol):
    """What this module needs of `assertree.engine.scan.Scanner` (which imports this module)."""

    @property
    def policies(self) -> Sequence[Any]: ...
    @property
    def mutates(self) -> bool: ...
    @property
    def check(self) -> Callable[[Resource], tuple[Resource, list[RuleResult]]]: ...


def forks(scanner: Scanner, resources: Sequence[Any], jobs: int) -> bool:
    """Whether `check_forked` would use workers for these resources (else it checks them all here): enough
    work (`MIN_PAIRS`), a CPU left idle by other processes (a worker that waits for one only adds its
    costs), and a safe fork."""
    return (jobs > 1 and len(resources) * sum(len(policy.rules) for policy in scanner.policies) >= MIN_PAIRS
            and not scanner.mutates and hasattr(os, "fork") and threading.active_count() == 1 and _idle_cpu())


def _idle_cpu() -> bool:
    """Whether the machine has a CPU for a worker: the last minute's load average (the processes running or
    waiting to run, this one included) is at least half a CPU below the CPUs this process may use. The
    measure `make -l` uses; where it cannot be read, yes."""
    from assertree.inputs.parallel import available_cpus

    try:
        load = os.getloadavg()[0]
    except OSError:
        return True
    return load <= available_cpus() - 0.5


def check_forked(scanner: Scanner, resources: Sequence[Resource], jobs: int) -> Iterator[tuple[Resource, list]]:
    """Each resource with its results, in order (as `Scanner.check` gives them), checked by `jobs` processes:
    this one and `jobs` - 1 forked workers (see the module docstring). The caller asks `forks` first: where
    forking does not pay, it loops over `Scanner.check` itself (no generator in between)."""
    check = scanner.check
    bounds = _shares(len(resources), jobs)
    pairs = [(policy, rule) for policy in scanner.policies for rule in policy.rules]
    shares: list[tuple[int, int, _Worker | None]] = []  # None: no process could be forked, checked here
    try:
        for start, stop in bounds[1:]:
            shares.append((start, stop, _Worker.fork(scanner, resources, start, stop, pairs)))
        for position in range(bounds[0][1]):
            yield check(resources[position])
        for start, stop, worker in shares:
            verdicts = worker.collect() if worker is not None else None
            for position in range(start, stop):
                resource = resources[position]
                verdict = verdicts[position - start] if verdicts is not None else None
                if verdict is None:
                    yield check(resource)
                else:
                    yield resource, [RuleResult(resource, *pairs[pair], _STATUSES[status], identifier, message=message)
                                     for pair, status, identifier, message in verdict]
    finally:
        for _, _, worker in shares:
            if worker is not None:
                worker.stop_now()


def _shares(count: int, jobs: int) -> list[tuple[int, int]]:
    """Contiguous (start, stop) shares of `count` resources, in order, this process's first. Equal shares: this
    process checks its own while the workers start (a fork costs a few milliseconds) and check theirs, a little
    slower than here (they copy each page they write to); what it then does with their verdicts (the resources
    it checks again) comes after."""
    return [(count * number // jobs, count * (number + 1) // jobs) for number in range(jobs)]


class _Worker:
    """A forked process checking resources[start:stop]; `collect` reads its verdicts."""

    def __init__(self, pid: int, reader: int, start: int, stop: int) -> None:
        self.pid, self.reader, self.start, self.stop = pid, reader, start, stop
        self.reaped = False

    @classmethod
    def fork(cls, scanner: Scanner, resources: Sequence[Resource], start: int, stop: int,
             pairs: list[tuple[Any, Any]]) -> _Worker | None:
        """The worker, started; None when no process could be forked (its share is then checked here)."""
        reader, writer = os.pipe()
        try:
            pid = os.fork()
        except OSError:
            os.close(reader)
            os.close(writer)
            return None
        if pid == 0:  # the worker: never returns into the caller's code
            status = 1
            try:
                os.close(reader)
                _work(scanner, resources[start:stop], pairs, writer)
                status = 0
            finally:
                os._exit(status)
        os.close(writer)
        return cls(pid, reader, start, stop)

    def collect(self) -> list[Verdict | None] | None:
        """The worker's verdicts, one per resource of its share; None when it died or sent nothing usable."""
        try:
            with os.fdopen(self.reader, "rb") as pipe:
                self.reader = -1
                data = pipe.read()
            _, status = os.waitpid(self.pid, 0)
            self.reaped = True
            if status != 0:
                return None
            verdicts = marshal.loads(data)
        except (OSError, EOFError, ValueError, TypeError):
            return None
        if not isinstance(verdicts, list) or len(verdicts) != self.stop - self.start:
            return None
        return verdicts

    def stop_now(self) -> None:
        """Kill and reap the worker unless it was collected (this process stopped early)."""
        if self.reader != -1:
            with contextlib.suppress(OSError):
                os.close(self.reader)
            self.reader = -1
        if not self.reaped:
            with contextlib.suppress(OSError):
                os.kill(self.pid, signal.SIGKILL)
            with contextlib.suppress(OSError):
                os.waitpid(self.pid, 0)
            self.reaped = True


def _work(scanner: Scanner, share: Sequence[Resource], pairs: list[tuple[Any, Any]], writer: int) -> None:
    """In the worker: check `share` and write its verdicts to `writer`."""
    import gc

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the main process's: it kills this one
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # not the command's handler, which raises into the checks
    gc.freeze()  # what the parent holds stays out of the collector's sight: a pass would touch (copy) every page
    pair_of = {(id(policy), id(rule)): number for number, (policy, rule) in enumerate(pairs)}
    check = scanner.check
    verdicts: list[Verdict | None] = []
    for resource in share:
        try:
            checked, results = check(resource)
        except BaseException:  # noqa: BLE001 - checked again by the main process, which raises it there
            verdicts.append(None)
            continue
        verdicts.append(_verdict(resource, checked, results, pair_of))
    data = marshal.dumps(verdicts)
    with open(writer, "wb") as pipe:
        pipe.write(data)


def _verdict(resource: Resource, checked: Resource, results: list[RuleResult],
             pair_of: dict[tuple[int, int], int]) -> Verdict | None:
    """The compact form of a resource's results, or None when one of them holds more than a verdict."""
    if checked is not resource:
        return None
    verdict = []
    for result in results:
        pair = pair_of.get((id(result.policy), id(result.rule)))
        status = _STATUS_CODE.get(result.status)
        identifier, message = result.identifier, result.message
        if (pair is None or status is None or result.status is not _STATUSES[status] or result.resource is not resource
                or not (identifier is None or type(identifier) is str)
                or not (message is None or type(message) is str) or _rest_of(result) != _DEFAULTS):
            return None
        verdict.append((pair, status, identifier, message))
    return tuple(verdict)
