"""How much one expression may ask for: the dialect's resource limits, in one place.

assertree runs in CI on files from pull requests, so a policy or a payload
may be hostile: ``pad_left('', `1000000000`)`` asks for a gigabyte, a
thousand ``let`` bindings that each double a list build a value whose JSON
text would never end, and ``a.a.a...`` a hundred thousand times nests deeper
than Python's stack. Kyverno has no such limits (Go's stack grows and a pod
has a memory limit); assertree refuses instead, with an ordinary
`jp.LimitError` or `jp.ParseError` naming the limit, so a hostile input
costs a clean error on one rule, never a hung or killed CI job.

The numbers are far above what real policies use (a JMESPath expression in
a policy is a line or two; its strings are names, images and messages) and
low enough that one evaluation stays within a few hundred MB:

* `MAX_EXPRESSION_DEPTH`: nesting of one expression, checked while parsing,
  before any recursion could reach Python's limit.
* `MAX_STRING_LENGTH`: characters in one string a function builds.
* `MAX_ARRAY_LENGTH`: items in one array a function or a flatten builds.
* `MAX_REGEX_MATCHES`: matches one ``regex_replace_all`` call replaces (each
  is a step of a Python loop: this bounds the time as well as the text).
* `MAX_JSON_LENGTH`: characters of JSON text written for one value
  (``to_string``, messages); values that share parts (``[$a, $a]``) count
  every copy, as their text does.
* `MAX_YAML_ALIAS_*`: go-yaml's alias budget for ``parse_yaml``, the rule
  Kubernetes adopted after the "billion laughs" CVE-2019-11253; it lives in
  `assertree.documents.limits` (every YAML file is read with it), re-exported here.
* `MAX_BUILT`: characters and items that all the function calls of one
  evaluation may build together: each call is held to the limits above, but a
  projection calls a function once per item (``split(...)[*].pad_left(...)``
  over 1,000 items built 10 GB). One `Expression.search` is one evaluation,
  unless a caller opens `evaluation_budget` around several (a Kyverno rule
  does, around its context entries, conditions and patterns).
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterator
from contextlib import contextmanager

from assertree.documents.limits import (  # noqa: F401  (jp's limits, kept in one list)
    MAX_YAML_ALIAS_RATIO_HIGH,
    MAX_YAML_ALIAS_RATIO_LOW,
    yaml_alias_ratio,
)
from assertree.jp.errors import LimitError

MAX_EXPRESSION_DEPTH = 128
MAX_STRING_LENGTH = 10_000_000
MAX_ARRAY_LENGTH = 1_000_000
MAX_REGEX_MATCHES = 100_000
MAX_JSON_LENGTH = MAX_STRING_LENGTH
MAX_BUILT = 5 * MAX_STRING_LENGTH

_built: contextvars.ContextVar[list[int] | None] = contextvars.ContextVar("assertree_jp_built", default=None)


@contextmanager
def evaluation_budget() -> Iterator[None]:
    """Let the function calls inside build `MAX_BUILT` characters and items together (see the module
    docstring); inside another budget, the outer one goes on counting."""
    token = open_budget()
    try:
        yield
    finally:
        close_budget(token)


def open_budget() -> contextvars.Token | None:
    """`evaluation_budget` without a generator (`Expression.search` opens one per search): a token for
    `close_budget`, None when a budget is open already."""
    return None if _built.get() is not None else _built.set([MAX_BUILT])


def close_budget(token: contextvars.Token | None) -> None:
    if token is not None:
        _built.reset(token)


def charge(what: str, amount: int) -> None:
    """Count `amount` characters or items built by `what` (``"pad_left()"``) against the open budget."""
    left = _built.get()
    if left is None:
        return
    left[0] -= amount
    if left[0] < 0:
        raise LimitError(f"{what}: the function calls of this evaluation would build more than {MAX_BUILT:,} "
                         "characters and items together, assertree's limit")


def check_string_length(what: str, length: int) -> None:
    """Refuse, before building it, a string of `length` characters (or UTF-8 bytes) made by `what`
    (``"pad_left()"``)."""
    if length > MAX_STRING_LENGTH:
        raise LimitError(f"{what}: the result would be longer than {MAX_STRING_LENGTH:,} characters, "
                            "assertree's limit")


def check_array_length(what: str, length: int) -> None:
    """Refuse, before building it, an array of `length` items made by `what` (``"split()"``, ``"[]"``)."""
    if length > MAX_ARRAY_LENGTH:
        raise LimitError(f"{what}: the result would have more than {MAX_ARRAY_LENGTH:,} items, assertree's limit")


def check_replace(what: str, text: str, old: str, new: str, count: int = -1) -> None:
    """Refuse a replacement whose result would pass MAX_STRING_LENGTH (``replace_all(s, '', s)`` squares it).

    `count` < 0 means every occurrence; an empty `old` occurs before every character and at the end.
    """
    if len(new) <= len(old):
        return
    occurrences = len(text) + 1 if not old else text.count(old)
    if count >= 0:
        occurrences = min(occurrences, count)
    check_string_length(what, len(text) + occurrences * (len(new) - len(old)))


def check_split(what: str, text: str, separator: str) -> None:
    """Refuse a split into more than MAX_ARRAY_LENGTH pieces (an empty separator gives one per character)."""
    pieces = len(text) if not separator else text.count(separator) + 1
    check_array_length(what, pieces)


def check_result(what: str, value: object) -> None:
    """The backstop after every function call: a string or an array beyond the limits is an error.

    Functions whose result can outgrow their arguments many times over check
    before building it; this catches the rest (each call at most doubles what
    its arguments hold, so a chain of calls stops here within one step).
    """
    if type(value) is str:
        check_string_length(what, len(value))
    elif type(value) is list:
        check_array_length(what, len(value))
