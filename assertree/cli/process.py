"""Whether this process ends with the command (the console script) or goes on (``main()`` called in-process).

A one-shot run may move what it parsed out of the garbage collector's sight
(`gc.freeze`) and skip the interpreter's teardown; a process that goes on (tests,
a program that calls ``assertree.cli.main`` repeatedly) must not, or every run's
objects would stay frozen for the life of the process.

A one-shot run also never frees what it read and found (`keep`): a 10,000-resource
plan is millions of objects, and freeing them one by one when the command's frame
unwinds costs about a tenth of a second, for a process that `os._exit`s next.

And a command pauses the cyclic garbage collector while it starts (`starting`).
"""

import gc
from contextlib import contextmanager

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing: `assertree --version` imports this module
if TYPE_CHECKING:
    from collections.abc import Iterator

one_shot = False
_kept: list[object] = []


def keep(*values: object) -> None:
    """Hold `values` until the process ends, when it is one-shot (they are never freed); otherwise do nothing."""
    if one_shot:
        _kept.extend(values)


@contextmanager
def starting() -> "Iterator[None]":
    """Pause the cyclic garbage collector while a command builds what it keeps until it ends: typer's
    application, the modules it imports, the policies it compiles. They are no garbage, yet every few hundred
    new objects start a pass over the youngest ones (about 40 while a 1,000-resource scan starts, ~3-5 ms)
    that finds nothing to free. In a one-shot run they then leave the collector's sight for good (`gc.freeze`,
    as the payloads read do), so no later pass walks them either; a process that goes on resumes as it was."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if one_shot:
            gc.freeze()
        if enabled:
            gc.enable()
