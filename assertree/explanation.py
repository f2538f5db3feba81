"""How a verdict was reached, as data: the steps of an evaluation, bounded, for reporters to format.

``--explain`` asks, for each failing or erroring result, how the rule got
there. Each language answers with `Step`s (`Trace` collects them): a node of an
assertion tree with the value it projected and what it expected, a Kyverno
condition with its key and value after substitution, a pattern's failing path
with the value and the pattern there, a CEL clause with its value. A step
says *what* was evaluated (as written in the policy), its *outcome*, and
where it is (``policy_path``, and ``resource_path`` when the step is a field of
the resource); ``depth`` nests it under the step before it at a smaller
depth, so a flat list reads as a tree.

An explanation must stay readable, and small, however large the resource:
values are cut down as they are recorded (`bounded`: long strings shortened,
containers limited in items and depth, one budget of nodes per value) and a
trace keeps at most `MAX_STEPS` steps and says when it left some out.

Explaining is a second evaluation of a result the scan already has
(`assertree.engine.explain`), never part of the scan itself. The few places in
a language that cannot be observed from outside record into the `Trace` that
`recording` makes `active` for that second evaluation; during a scan nothing is
active and a hook costs one context-variable read.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator
from typing import Any

from assertree.records import ValueRecord

__all__ = ["ABSENT", "MAX_STEPS", "Explanation", "Step", "Trace", "active", "bounded", "recording"]

MAX_STEPS = 200
"""Steps one explanation keeps; past that it is `Explanation.truncated` (and a tracer may stop walking)."""

MAX_STRING = 200  # characters of a string value
MAX_ITEMS = 20  # items of a list or map value
MAX_DEPTH = 8  # levels of nested lists and maps
MAX_NODES = 120  # values (at every level) one bounded value holds in all


class _Absent:
    """No value: a step that projected nothing (a missing field), or has nothing to expect."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "ABSENT"

    def __bool__(self) -> bool:
        return False

    def __reduce__(self) -> str:
        return "ABSENT"  # unpickled as this module's ABSENT: explanations a worker sends back compare with `is`


ABSENT: Any = _Absent()


class Step(ValueRecord):
    """One evaluated node on the way to a verdict (see the module docstring)."""

    what: str  # as written in the policy: a key, ``(expression)``, a condition, a CEL clause, ``element [2]``
    outcome: str  # "pass", "fail", "error", "skip", "true", "false", "not evaluated"; "" for plain context
    value: Any  # the value it projected or evaluated to (bounded)
    expected: Any  # what it had to be (bounded)
    detail: str  # why, in words: an error, Kyverno's text
    depth: int
    policy_path: str  # where it is in the policy: ``spec.rules[0].assert.all[1].check.spec``
    resource_path: tuple | None  # keys and indexes of the field in the resource, when it is one
    operator: str  # a comparison (a Kyverno condition): `value` and `expected` are its two sides

    __slots__ = ("depth", "detail", "expected", "operator", "outcome", "policy_path", "resource_path", "value", "what")

    def __init__(
            self, what: str, outcome: str = "", value: Any = ABSENT, expected: Any = ABSENT, detail: str = "",
            depth: int = 0, policy_path: str = "", resource_path: tuple | None = None, operator: str = "",
    ) -> None:
        self.what = what
        self.outcome = outcome
        self.value = value
        self.expected = expected
        self.detail = detail
        self.depth = depth
        self.policy_path = policy_path
        self.resource_path = resource_path
        self.operator = operator

    def as_dict(self) -> dict[str, Any]:
        """JSON: absent parts left out; ``resourcePath`` as a list."""
        out: dict[str, Any] = {"what": self.what, "depth": self.depth}
        if self.outcome:
            out["outcome"] = self.outcome
        if self.value is not ABSENT:
            out["value"] = self.value
        if self.operator:
            out["operator"] = self.operator
        if self.expected is not ABSENT:
            out["expected"] = self.expected
        if self.detail:
            out["detail"] = self.detail
        if self.policy_path:
            out["policyPath"] = self.policy_path
        if self.resource_path is not None:
            out["resourcePath"] = list(self.resource_path)
        return out


class Explanation(ValueRecord):
    """The steps that explain one result, in evaluation order; `truncated` when there were more than `MAX_STEPS`."""

    steps: list[Step]
    truncated: bool

    __slots__ = ("steps", "truncated")

    def __init__(self, steps: list[Step] | None = None, truncated: bool = False) -> None:
        self.steps = [] if steps is None else steps
        self.truncated = truncated

    def groups(self) -> list[list[Step]]:
        """The steps split at each step of depth 0 (an assertion, a condition block, a pattern)."""
        out: list[list[Step]] = []
        for step in self.steps:
            if step.depth == 0 or not out:
                out.append([])
            out[-1].append(step)
        return out

    def for_check(self, check: str) -> list[Step]:
        """The steps of the groups that explain the violation at `check` (a field path in the policy), or
        every step when no group is headed there (a language with one violation per result)."""
        chosen = [step for group in self.groups() if group[0].policy_path == check for step in group]
        return chosen or list(self.steps)

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"steps": [step.as_dict() for step in self.steps]}
        if self.truncated:
            out["truncated"] = True
        return out


class Trace:
    """Collects the steps of one explanation, bounded (see the module docstring).

    `depth` is where the next step goes: `nested` indents what is recorded inside it. `notes` is for the
    explaining language's hooks (what to call a block they see, where they are in a loop).
    """

    __slots__ = ("depth", "explanation", "notes")

    def __init__(self) -> None:
        self.depth = 0
        self.explanation = Explanation()
        self.notes: dict[str, Any] = {}

    def add(self, what: str, outcome: str = "", *, value: Any = ABSENT, expected: Any = ABSENT, detail: str = "",
            policy_path: str = "", resource_path: tuple | None = None, operator: str = "",
            depth: int | None = None) -> Step | None:
        """Record one step (at the current depth unless `depth` says), its values bounded; the step, or None
        when the trace is full."""
        explanation = self.explanation
        if len(explanation.steps) >= MAX_STEPS:
            explanation.truncated = True
            return None
        step = Step(what, outcome, bounded(value), bounded(expected), detail, self.depth if depth is None else depth,
                    policy_path, resource_path, operator)
        explanation.steps.append(step)
        return step

    @contextlib.contextmanager
    def nested(self) -> Iterator[Trace]:
        """Steps recorded inside go one level deeper."""
        self.depth += 1
        try:
            yield self
        finally:
            self.depth -= 1

    @property
    def full(self) -> bool:
        """No more steps will be kept (a tracer may stop walking)."""
        return len(self.explanation.steps) >= MAX_STEPS


_ACTIVE: contextvars.ContextVar[Trace | None] = contextvars.ContextVar("assertree_trace", default=None)


def active() -> Trace | None:
    """The trace of the explanation being made now, or None (always None during a scan)."""
    return _ACTIVE.get()


@contextlib.contextmanager
def recording(trace: Trace) -> Iterator[Trace]:
    """Make `trace` the `active` one while the block runs (a language's hooks record into it)."""
    token = _ACTIVE.set(trace)
    try:
        yield trace
    finally:
        _ACTIVE.reset(token)


def bounded(value: Any) -> Any:
    """`value` (JSON-like) cut down to a readable size: strings past `MAX_STRING` characters shortened, lists
    and maps past `MAX_ITEMS` items or `MAX_DEPTH` levels summarised, at most `MAX_NODES` values in all. Small
    values come back as they are; a value that is not JSON comes back as its text."""
    if value is ABSENT or value is None or isinstance(value, (bool, int, float)):
        return value
    return _bounded(value, MAX_DEPTH, [MAX_NODES])


def _bounded(value: Any, depth: int, budget: list[int]) -> Any:
    budget[0] -= 1
    if value is None or isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, str):
        if len(value) <= MAX_STRING:
            return value
        return f"{value[:MAX_STRING]}... ({len(value) - MAX_STRING} more characters)"
    if isinstance(value, dict):
        if depth == 0 or budget[0] <= 0:
            return f"{{... {len(value)} keys}}" if value else {}
        out: dict[str, Any] = {}
        for position, (key, item) in enumerate(value.items()):
            if position == MAX_ITEMS or budget[0] <= 0:
                out["..."] = f"{len(value) - position} more keys"
                break
            out[str(key)] = _bounded(item, depth - 1, budget)
        return out
    if isinstance(value, (list, tuple)):
        if depth == 0 or budget[0] <= 0:
            return f"[... {len(value)} items]" if value else []
        items: list[Any] = []
        for position, item in enumerate(value):
            if position == MAX_ITEMS or budget[0] <= 0:
                items.append(f"... {len(value) - position} more items")
                break
            items.append(_bounded(item, depth - 1, budget))
        return items
    return _bounded(str(value), depth, budget)
