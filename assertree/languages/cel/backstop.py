"""The last line under the cost estimate: an address-space cap around an evaluation it cannot vouch for.

The estimate (`limits`) is an upper bound by construction, except where it
has to trust what it cannot see: a library function its rules do not know
(assumed to build no more than its arguments hold), a tree it could not
read. Around such an evaluation, on Linux, in a process with one thread,
`backstop` lowers the soft ``RLIMIT_AS`` to the process's current size plus
`HEADROOM` for the duration of the library call: an allocation past it
fails in the library as ``std::bad_alloc``, which cel-expr-python raises as
`MemoryError`, which the engine reports as the expression's error
(`OUT_OF_MEMORY`). The limit is put back as it was, whatever happens.

Why so narrow: the limit is the whole process's, so with other threads
running (``serve``, Dask's threads) it could fail their allocations
instead; reading the process's size and setting the limit costs about
ten microseconds, which every evaluation would pay; and elsewhere (macOS,
Windows) ``RLIMIT_AS`` is not enforced or not there. Everywhere, the
engine turns a `MemoryError` from the library into the expression's error.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["HEADROOM", "OUT_OF_MEMORY", "backstop"]

OUT_OF_MEMORY = "out of memory (the evaluation needed more than assertree lets one CEL evaluation take)"
HEADROOM = 1024 * 1024 * 1024
"""How much an evaluation under the backstop may grow the process (four times `limits.MEMORY_LIMIT`)."""

_lock = threading.Lock()
_active = False


def _process_size() -> int | None:
    """The process's virtual size in bytes (Linux), or None."""
    try:
        with open("/proc/self/statm", "rb") as statm:
            pages = int(statm.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None
    import resource

    return pages * resource.getpagesize()


@contextmanager
def backstop(armed: bool = True) -> Iterator[None]:
    """Cap the process's address space at its size plus `HEADROOM` while the body runs, when `armed`
    and where that is safe (see the module docstring); otherwise do nothing."""
    global _active
    if not armed or _active or threading.active_count() > 1:
        yield
        return
    try:
        import resource
    except ImportError:  # not a Unix
        yield
        return
    size = _process_size()
    if size is None:
        yield
        return
    with _lock:
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        limit = size + HEADROOM
        if hard != resource.RLIM_INFINITY:
            limit = min(limit, hard)
        if soft != resource.RLIM_INFINITY:
            limit = min(limit, soft)
        try:
            resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
        except (ValueError, OSError):
            limit = -1
        _active = limit >= 0
    try:
        yield
    finally:
        if _active:
            with _lock:
                resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
                _active = False
