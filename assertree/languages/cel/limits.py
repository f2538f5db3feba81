"""How much one CEL evaluation may cost, and the checks that hold every compiled expression to it.

Kubernetes bounds CEL in three ways (k8s.io/apiserver/pkg/apis/cel/config.go
and apiextensions-apiserver's validation): a CustomResourceDefinition rule
whose *estimated* cost, with the sizes the schema allows, passes
``StaticEstimatedCostLimit`` (10,000,000) is refused when the CRD is written;
a running expression is stopped when its *actual* cost passes
``PerCallLimit`` (1,000,000, "roughly 0.1 second"); and all the expressions
of one policy evaluation share ``RuntimeCELCostBudget`` (10,000,000).
Kyverno's CEL policies inherit Kubernetes' environment and so its per-call
limit; ValidatingAdmissionPolicy has no estimated limit, since its ``object``
is untyped and any estimate would be unbounded.

The CEL library assertree runs cannot count cost as it goes, so assertree
bounds it *before* running, with an estimate (`cost`) that is an upper bound:

- at compile time, with every input as small as it can be: an expression
  that would pass a limit on any input at all (``size(lists.range(2000000000))``)
  is refused where it is written, like Kubernetes' CRD check;
- before each evaluation, with the sizes of the data it is about to read
  (`sizes`): past `COST_LIMIT` or `MEMORY_LIMIT` the evaluation is an error
  of that expression, before anything runs. Since the estimate can only be
  larger than the actual cost, its limit is Kubernetes' estimated limit
  (10,000,000), not its actual per-call limit: an expression well inside
  Kubernetes' budget on the same data stays inside assertree's;
- across the expressions of one policy evaluation: the variables computed
  before an expression (`HELD`, Kubernetes' ``variables``) still hold their
  memory, so they count against its memory limit; and where the policy
  language opens `evaluation_budget` (Kyverno's CEL policies and
  ``validate.cel`` do), all of them share `EVALUATION_BUDGET`, as a policy
  evaluation shares ``RuntimeCELCostBudget`` in Kubernetes.

Fast path: an expression within the limits whatever its input is never
estimated again (`Bounds.fixed`); for the others, the verdict for inputs of
one *size class* (the measures the estimate reads, rounded up to powers of
two: `probes`) is worked out once per expression, with the largest inputs of
that class, and kept, so that an evaluation on inputs of a class already
judged within the limits only reads those few measures. This must never
change a result: only a class whose largest inputs are within the limits
skips the estimate, and the estimate is monotone in the sizes;
tests/cel/test_cel_limits.py holds the fast path to the general one.

What the estimate cannot see (a library defect, a function that allocates
more than its rule says) is caught by `backstop`, and a `MemoryError` from
the library (``std::bad_alloc``) is an evaluation error either way.
"""

from __future__ import annotations

import contextvars
import math
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from assertree.jp.compiler import Lazy
from assertree.languages.cel import cost, probes
from assertree.languages.cel.checked import DecodeError, Expr, decode
from assertree.languages.cel.sizes import EMPTY, INFINITE, Size, anything, measure, scalar

__all__ = ["COST_LIMIT", "EVALUATION_BUDGET", "FUNCTION_RESULT_BYTES", "FUNCTION_RESULT_LENGTH", "MEMORY_LIMIT",
           "Bounds", "LimitError", "check_function_result", "evaluation_budget"]

COST_LIMIT = 10_000_000
"""Estimated cost units of one evaluation (cel-go's units: about 50 ns each)."""
MEMORY_LIMIT = 256 * 1024 * 1024
"""Estimated bytes one evaluation may build (the library frees nothing until the evaluation ends)."""
EVALUATION_BUDGET = 100_000_000
"""Estimated cost units all the expressions of one policy evaluation may spend together, when the
policy language opens `evaluation_budget` around them (ten times `COST_LIMIT`: estimates are upper
bounds, and a policy may hold dozens of expressions)."""
FUNCTION_RESULT_LENGTH = 100_000
"""Items or characters at any level of what a CEL function written in Python may return, when nothing
else bounds it (a lookup in a context file, a binding) ..."""
FUNCTION_RESULT_BYTES = 16 * 1024 * 1024
"""... and its bytes."""

_COMPILE_TIME = cost.World(number=0, absent=EMPTY, unknown=lambda: EMPTY)
_UNKNOWN = anything(FUNCTION_RESULT_LENGTH, FUNCTION_RESULT_BYTES)
_SLACK = 4096  # what a lookup may add to the parts of its context it returns (a list around them)


def _run_time(context: Any) -> cost.World:
    """The run-time assumptions, for an evaluation with this `context` (`Program.evaluate`'s)."""
    found: list[Size] = []

    def unknown() -> Size:
        if not found:
            found.append(_context_bound(context))
        return found[0]

    return cost.World(number=INFINITE, absent=scalar(0), unknown=unknown)


def _context_bound(context: Any) -> Size:
    """What a function reading `context` can return: parts of it, when all of it can be measured
    (a context file's lookups, bindings already computed); else the limit on any function's result."""
    if context is None:
        return _UNKNOWN
    values = list(context.values()) if isinstance(context, Mapping) else [context]
    measured = []
    for value in values:
        if isinstance(value, Lazy):
            if not value.done:
                return _UNKNOWN
            value = value.resolve()
        size = measure(value)
        if not size.measurable():
            return _UNKNOWN
        measured.append(size)
    bytes_ = sum(size.bytes() for size in measured) + _SLACK
    longest = max((size.longest() for size in measured), default=0)
    most_chars = max((size.most_chars() for size in measured), default=0)
    if bytes_ > FUNCTION_RESULT_BYTES or max(longest, most_chars) > FUNCTION_RESULT_LENGTH:
        return _UNKNOWN
    return anything(longest, bytes_, most_chars)


class LimitError(Exception):
    """An expression or an evaluation past a limit; the message says which and by how much."""


_budget: contextvars.ContextVar[list[int] | None] = contextvars.ContextVar("assertree_cel_budget", default=None)


@contextmanager
def evaluation_budget() -> Iterator[None]:
    """Every CEL evaluation inside shares `EVALUATION_BUDGET` (Kubernetes gives each policy evaluation
    ``RuntimeCELCostBudget``): past it, the next evaluation is an error before it runs."""
    token = _budget.set([EVALUATION_BUDGET])
    try:
        yield
    finally:
        _budget.reset(token)


def _charge(amount: int) -> None:
    left = _budget.get()
    if left is None:
        return
    if amount > left[0]:
        raise LimitError(f"CEL cost budget: the expressions of this evaluation could cost more than "
                         f"{EVALUATION_BUDGET:,} units together, assertree's budget")
    left[0] -= amount


def _amount(amount: int, unit: str) -> str:
    if amount >= INFINITE:
        return "without bound"
    if unit == "bytes":
        return f"{amount / 1024 / 1024:,.0f} MB" if amount >= 1024 * 1024 else f"{amount / 1024:,.0f} KB"
    return f"{amount:,} {unit}"


def _refusal(estimate: cost.Estimate, compile_time: bool) -> str | None:
    """The message refusing `estimate`, or None when it is within the limits."""
    if estimate.cost > COST_LIMIT:
        amount = _amount(estimate.cost, "units")
        what = f"the expression costs at least {amount} on any input" if compile_time else \
            f"this evaluation could cost {amount}"
        return f"CEL cost limit: {what}, more than assertree's limit of {COST_LIMIT:,} units"
    if estimate.memory > MEMORY_LIMIT:
        amount = _amount(estimate.memory, "bytes")
        what = f"the expression builds at least {amount} on any input" if compile_time else \
            f"this evaluation could build {amount}"
        return f"CEL memory limit: {what}, more than assertree's limit of {_amount(MEMORY_LIMIT, 'bytes')}"
    return None


class Bounds:
    """The cost model of one compiled expression: checked once at compile time, then before each evaluation.

    `fixed`: no input can take an evaluation past the limits; it costs at most `_fixed` (cost, memory).
    Otherwise `_probes` are the measures of its inputs the estimate depends on (`probes`), and
    `_verdicts` hold, for each size class seen, the (cost, memory) of an evaluation of that class (None:
    past a limit, or not known without the data).
    """

    __slots__ = ("_fixed", "_probes", "_python", "_reads_held", "_tree", "_verdicts", "fixed", "uncertain")

    def __init__(self, tree: Expr | None, python_functions: Mapping[str, frozenset[str]]) -> None:
        self._tree = tree
        self._python = python_functions
        self._probes = probes.Probes({})
        self._verdicts: dict[tuple[int, ...], tuple[int, int] | None] = {}
        self._fixed = (0, 0)
        self._reads_held = False  # whether it reads the results of earlier expressions (`HELD`)
        self.fixed = tree is None  # no input can take an evaluation past the limits (or none is estimated)
        self.uncertain = tree is None  # the estimate trusts what it cannot see: evaluate under the backstop

    @classmethod
    def compile(cls, serialized: bytes, python_functions: Mapping[str, frozenset[str]]) -> Bounds:
        """The bounds of a compiled expression; LimitError when every evaluation would pass a limit.

        `python_functions` maps each function written in Python to its declared result types. An
        expression the library serializes in a form this version does not read is left to the
        backstop (`fixed`): an unreadable tree must not make CEL unusable. The bounds of the last
        `_KEPT` expressions are kept (a policy is often compiled again: by each test, each worker).
        """
        key = (id(python_functions), serialized)
        kept = _kept.get(key)
        if kept is not None and kept[0] is python_functions:
            return kept[1]
        bounds = cls._compile(serialized, python_functions)
        with _lock:
            if len(_kept) >= _KEPT:
                _kept.pop(next(iter(_kept)), None)
            _kept[key] = (python_functions, bounds)
        return bounds

    @classmethod
    def _compile(cls, serialized: bytes, python_functions: Mapping[str, frozenset[str]]) -> Bounds:
        try:
            tree = decode(serialized)
        except DecodeError:
            return cls(None, python_functions)
        bounds = cls(tree, python_functions)
        try:
            least = cost.estimate(tree, {}, _COMPILE_TIME, python_functions)
        except cost.Unbounded as reason:
            raise LimitError(f"CEL cost limit: {reason}") from None
        refusal = _refusal(least, compile_time=True)
        if refusal is not None:
            raise LimitError(refusal)
        trace = probes.Trace()
        most = bounds._most(trace.inputs())
        bounds.fixed = most is not None
        bounds._fixed = most or (0, 0)
        bounds.uncertain = least.uncertain
        bounds._probes = trace.probes()
        bounds._reads_held = any(path[0] in HELD for path in trace.read)
        return bounds

    def _most(self, inputs: Mapping[str, Size]) -> tuple[int, int] | None:
        """(cost, memory) of an evaluation on inputs of these sizes, whatever the context (a lookup returns
        no more than `FUNCTION_RESULT_LENGTH` and `FUNCTION_RESULT_BYTES` allow); None past a limit."""
        assert self._tree is not None
        try:
            most = cost.estimate(self._tree, inputs, _ANY_CONTEXT, self._python)
        except cost.Unbounded:
            return None
        return (most.cost, most.memory) if _refusal(most, compile_time=False) is None else None

    def check(self, variables: Mapping[str, Any], context: Any = None) -> bool:
        """LimitError when evaluating on `variables` could pass a limit; else whether the evaluation should
        run under the backstop (`uncertain`).

        What earlier expressions of the same evaluation computed (`HELD`) is still in memory: it counts
        against the memory limit of each later one, and when it reads them, twice, and against its cost
        (the library copies an input it reads, a tenth of a unit a byte like any walk).
        """
        if self._tree is None:
            return self.uncertain
        held = _held(variables)
        held_cost = math.ceil(cost.TRAVERSAL * held) if self._reads_held else 0
        if self._reads_held:
            held *= 2
        if self.fixed:
            if held and not _within(self._fixed, held_cost, held):
                raise LimitError(_held_refusal(self._fixed, held_cost, held))
            _charge(self._fixed[0] + held_cost)
            return self.uncertain
        size_class = self._probes.size_class(variables)
        verdict = self._verdicts.get(size_class, _UNJUDGED)
        if verdict is _UNJUDGED:
            verdict = self._most(probes.class_inputs(self._probes, size_class, tuple(variables)))
            if len(self._verdicts) < _VERDICTS_KEPT:
                self._verdicts[size_class] = verdict
        if isinstance(verdict, tuple) and _within(verdict, held_cost, held):
            _charge(verdict[0] + held_cost)
            return self.uncertain
        inputs = {name: measure(value) for name, value in variables.items()}
        try:
            estimate = cost.estimate(self._tree, inputs, _run_time(context), self._python)
        except cost.Unbounded as reason:
            raise LimitError(f"CEL cost limit: {reason}") from None
        refusal = _refusal(estimate, compile_time=False)
        if refusal is not None:
            raise LimitError(refusal)
        if held and not _within((estimate.cost, estimate.memory), held_cost, held):
            raise LimitError(_held_refusal((estimate.cost, estimate.memory), held_cost, held))
        _charge(estimate.cost + held_cost)
        return self.uncertain


HELD = ("variables",)
"""Inputs holding the results of earlier expressions of the same evaluation (Kubernetes' and Kyverno's
composited ``variables``): every later expression is given them all, so they are counted in its memory."""
_UNJUDGED = object()


def _held(variables: Mapping[str, Any]) -> int:
    total = 0
    for name in HELD:
        value = variables.get(name)
        if value:
            total += measure(value).bytes()
    return total


def _within(estimate: tuple[int, int], held_cost: int, held: int) -> bool:
    return estimate[0] + held_cost <= COST_LIMIT and estimate[1] + held <= MEMORY_LIMIT


def _held_refusal(estimate: tuple[int, int], held_cost: int, held: int) -> str:
    if estimate[0] + held_cost > COST_LIMIT:
        return (f"CEL cost limit: this evaluation could cost {_amount(estimate[0] + held_cost, 'units')} with "
                f"reading the variables computed before it, more than assertree's limit of {COST_LIMIT:,} units")
    return (f"CEL memory limit: this evaluation could build {_amount(estimate[1], 'bytes')} while the variables "
            f"computed before it hold {_amount(held, 'bytes')}, more than assertree's limit of "
            f"{_amount(MEMORY_LIMIT, 'bytes')} together")


_VERDICTS_KEPT = 256  # size classes judged per expression (more only cost an estimate each time)
_ANY_CONTEXT = cost.World(number=INFINITE, absent=scalar(0), unknown=lambda: _UNKNOWN)
_KEPT = 1024
_kept: dict[tuple[int, bytes], tuple[Mapping[str, frozenset[str]], Bounds]] = {}
_lock = threading.Lock()


def check_function_result(name: str, result_types: frozenset[str], args: tuple, result: Any, context: Any) -> None:
    """ValueError when a function written in Python returns more than the estimate assumed of it
    (`cost.python_result`): what cannot be proven of a function is measured when it returns."""
    if cost.proven(name, result_types):
        return
    bound = cost.python_result(name, result_types, [measure(arg) for arg in args], _run_time(context))
    size = measure(result)
    if size.bytes() > bound.bytes():
        raise ValueError(f"{name}: the result takes more than {_amount(bound.bytes(), 'bytes')}, "
                         "assertree's limit for it")
    if size.longest() > bound.length or size.most_chars() > bound.chars:
        raise ValueError(f"{name}: the result has more than {max(bound.length, bound.chars):,} items or "
                         "characters, assertree's limit for it")
