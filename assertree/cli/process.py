"""Whether this process ends with the command (the console script) or goes on (``main()`` called in-process).

A one-shot run may move what it parsed out of the garbage collector's sight
(`gc.freeze`) and skip the interpreter's teardown; a process that goes on (tests,
a program that calls ``assertree.cli.main`` repeatedly) must not, or every run's
objects would stay frozen for the life of the process.

A one-shot run also never frees what it read and found (`keep`): a 10,000-resource
plan is millions of objects, and freeing them one by one when the command's frame
unwinds costs about a tenth of a second, for a process that `os._exit`s next.
"""

one_shot = False
_kept: list[object] = []


def keep(*values: object) -> None:
    """Hold `values` until the process ends, when it is one-shot (they are never freed); otherwise do nothing."""
    if one_shot:
        _kept.extend(values)
