"""How deep an input may nest, and how deep Python must be allowed to recurse to process one that does.

The readers refuse documents nested more than `MAX_NESTING` levels
(`assertree.documents.limits`). What they accept must also be processed: a
kyverno-json check tree or a Kyverno pattern 1,024 levels deep, and the payload
it walks, take about four Python frames a level to compile, evaluate, word and
report: four times Python's default recursion limit of 1,000. The command line,
the server and the reading workers raise the limit (`make_room_for_nesting`);
a program that embeds assertree keeps its own, and what recurses past it is a
located error (the policy's file and line, or the rule on that resource).
Python 3.12 also counts recursion that passes through C (a generator inside
``any()``, for one) against a fixed limit of its own that no setting raises:
there, some Kyverno paths and `apply` stop with that located error from about
250 levels.
Python 3.11 and 3.13 process the full 1,024 levels. Kept
apart from `limits`, which imports PyYAML, so that the command line can call it
before it knows whether anything will be read.
"""

from __future__ import annotations

import sys

MAX_NESTING = 1024  # how deep any JSON or YAML input may nest (orjson refuses deeper JSON at the same depth)

# Python frames a command may stack: about four a level were measured on documents MAX_NESTING deep; four times
# that, for what was not measured. Python 3.11+ runs Python-to-Python calls without growing the C stack, so the
# thread's stack does not need to grow with it (tests/hostile/test_nesting.py runs such documents end to end).
RECURSION_LIMIT = 16 * MAX_NESTING

TOO_DEEP = "nested too deeply to process: deeper than this process's recursion limit allows"
"""What a RecursionError that remains is called, wherever it is caught (with the file, or the rule, it came from)."""


def make_room_for_nesting() -> None:
    """Let this process recurse deep enough for anything the readers accept (never lowers the limit)."""
    if sys.getrecursionlimit() < RECURSION_LIMIT:
        sys.setrecursionlimit(RECURSION_LIMIT)
