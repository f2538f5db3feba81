"""Whether this process ends with the command (the console script) or goes on (``main()`` called in-process).

A one-shot run may move what it parsed out of the garbage collector's sight
(`gc.freeze`) and skip the interpreter's teardown; a process that goes on (tests,
a program that calls ``assertree.cli.main`` repeatedly) must not, or every run's
objects would stay frozen for the life of the process.
"""

one_shot = False
