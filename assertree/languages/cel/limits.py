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
is untyped and any estimate would be unbounded: the apiserver stores any
such policy and cancels each evaluation past its per-call limit (an
environment with ``refuse_past_limits`` false does the same: `Bounds.refusing`).

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
import functools
import math
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, ParamSpec, TypeVar

from assertree.jp.compiler import Lazy
from assertree.languages.cel import cost, probes
from assertree.languages.cel.checked import DecodeError, Expr, decode
from assertree.languages.cel.sizes import EMPTY, INFINITE, Size, anything, measure, scalar

__all__ = ["COST_LIMIT", "EVALUATION_BUDGET", "FUNCTION_RESULT_BYTES", "FUNCTION_RESULT_LENGTH", "MEMORY_LIMIT",
           "Bounds", "BudgetError", "LimitError", "budgeted", "check_function_result", "evaluation_budget"]

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
            if not value.known:
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


class BudgetError(LimitError):
    """The expressions of one evaluation past their shared budget (`evaluation_budget`)."""


_budget: contextvars.ContextVar[list[int] | None] = contextvars.ContextVar("assertree_cel_budget", default=None)


@contextmanager
def evaluation_budget(units: int = EVALUATION_BUDGET) -> Iterator[None]:
    """Every CEL evaluation inside shares `units` (Kubernetes gives each policy evaluation
    ``RuntimeCELCostBudget``): past it, the next evaluation is an error (`BudgetError`) before it runs.
    Opened inside another, it stands apart from it (an admission policy's match conditions have their own)."""
    token = _budget.set([units, units])
    try:
        yield
    finally:
        _budget.reset(token)


_P = ParamSpec("_P")
_R = TypeVar("_R")


def budgeted(function: Callable[_P, _R]) -> Callable[_P, _R]:
    """`function` (one policy evaluation) with all its CEL evaluations sharing one `evaluation_budget`."""

    @functools.wraps(function)
    def run(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        with evaluation_budget():
            return function(*args, **kwargs)

    return run


def _charge(amount: int) -> None:
    left = _budget.get()
    if left is None:
        return
    if amount > left[0]:
        raise BudgetError(f"CEL cost budget: the expressions of this evaluation could cost more than "
                          f"{left[1]:,} units together, assertree's budget")
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

    __slots__ = ("_fixed", "_probes", "_python", "_reads_held", "_refused", "_serialized", "_tree", "_verdicts",
                 "fixed", "learned", "uncertain")

    def __init__(self, tree: Expr | None, python_functions: Mapping[str, frozenset[str]]) -> None:
        self._tree = tree
        self._serialized: bytes | None = None  # the tree, still to decode (`known`: decoded when first needed)
        self.learned: Callable[[], None] | None = None  # told when `facts` grows (a trace, a verdict)
        self._python = python_functions
        self._probes: probes.Probes | None = probes.Probes({})
        self._verdicts: dict[tuple[int, ...], tuple[int, int] | None] = {}
        self._fixed = (0, 0)
        self._reads_held = False  # whether it reads the results of earlier expressions (`HELD`)
        self._refused: str | None = None  # past a limit on any input, refused at each evaluation (`refusing`)
        self.fixed = tree is None  # no input can take an evaluation past the limits (or none is estimated)
        self.uncertain = tree is None  # the estimate trusts what it cannot see: evaluate under the backstop

    @classmethod
    def refusing(cls, message: str) -> Bounds:
        """The bounds of an expression past a limit on any input, where the language refuses it when it is
        evaluated rather than when it is compiled (the apiserver stores such a policy; each evaluation is
        then cancelled): `check` raises LimitError(`message`)."""
        bounds = cls(None, {})
        bounds._refused = message
        return bounds

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
    def known(cls, serialized: bytes, python_functions: Mapping[str, frozenset[str]], facts: Any) -> Bounds | None:
        """The bounds `facts` describe (what `facts` gave for this serialized expression and these functions, in
        an earlier run: `text_facts`), without estimating again; None when `facts` has another shape. The
        tree is decoded only when an estimate is still needed (a size class not judged yet)."""
        if type(facts) is not tuple or len(facts) != 3:
            return None
        uncertain, trace, verdicts = facts
        if type(uncertain) is not bool or type(verdicts) is not dict or not all(
                _ints(size_class) and (verdict is None or (_ints(verdict) and len(verdict) == 2))
                for size_class, verdict in verdicts.items()):
            return None
        bounds = cls(None, python_functions)
        bounds._serialized = serialized
        bounds.uncertain, bounds.fixed, bounds._probes, bounds._verdicts = uncertain, False, None, dict(verdicts)
        if trace is not None:
            if type(trace) is not tuple or len(trace) != 4:
                return None
            fixed, most, reads_held, layout = trace
            if type(fixed) is not bool or type(reads_held) is not bool or not _ints(most) or len(most) != 2:
                return None
            try:
                bounds._probes = probes.Probes.of_layout(layout)
            except (TypeError, ValueError):
                return None
            if any(len(size_class) != len(bounds._probes.layout) for size_class in verdicts):
                return None
            bounds.fixed, bounds._fixed, bounds._reads_held = fixed, most, reads_held
        elif verdicts:
            return None
        return bounds

    def facts(self) -> tuple | None:
        """What was worked out of the expression so far, as plain values (`known` takes them back): whether it
        is uncertain, its trace and the verdict of each size class judged. None when nothing is to be kept
        (an expression refused when evaluated, or one the estimate cannot read)."""
        if self._refused is not None or (self._tree is None and self._serialized is None):
            return None
        trace = None if self._probes is None else (self.fixed, self._fixed, self._reads_held, self._probes.layout)
        return self.uncertain, trace, dict(self._verdicts)

    def _learn(self) -> None:
        if self.learned is not None:
            self.learned()

    def _decoded(self) -> Expr:
        """The expression's tree (decoded now when the bounds came from `known`)."""
        if self._tree is None:
            assert self._serialized is not None
            self._tree = decode(self._serialized)  # it decoded when the facts were found, by the same code
        return self._tree

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
        bounds.uncertain = least.uncertain
        bounds._probes = None  # traced on the first evaluation: many compiled expressions never run
        return bounds

    def _trace(self) -> probes.Probes:
        """Find what the estimate reads of the inputs, and whether it is within the limits whatever they are."""
        trace = probes.Trace()
        most = self._most(trace.inputs())
        self.fixed = most is not None
        self._fixed = most or (0, 0)
        self._reads_held = any(path[0] in HELD for path in trace.read)
        self._probes = trace.probes()
        self._learn()
        return self._probes

    def _most(self, inputs: Mapping[str, Size]) -> tuple[int, int] | None:
        """(cost, memory) of an evaluation on inputs of these sizes, whatever the context (a lookup returns
        no more than `FUNCTION_RESULT_LENGTH` and `FUNCTION_RESULT_BYTES` allow); None past a limit."""
        try:
            most = cost.estimate(self._decoded(), inputs, _ANY_CONTEXT, self._python)
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
        if self._tree is None and self._serialized is None:
            if self._refused is not None:
                raise LimitError(self._refused)
            return self.uncertain
        found = self._probes if self._probes is not None else self._trace()
        held = _Held(variables, self._reads_held) if any(variables.get(name) for name in HELD) else _NOTHING_HELD
        if self.fixed:
            if not held.allows(self._fixed):
                raise LimitError(held.refusal(self._fixed))
            held.charge(self._fixed[0])
            return self.uncertain
        size_class = found.size_class(variables)
        verdict = self._verdicts.get(size_class, _UNJUDGED)
        if verdict is _UNJUDGED:
            verdict = self._most(probes.class_inputs(found, size_class, tuple(variables)))
            if len(self._verdicts) < _VERDICTS_KEPT:
                self._verdicts[size_class] = verdict
                self._learn()
        if isinstance(verdict, tuple) and held.allows(verdict):
            held.charge(verdict[0])
            return self.uncertain
        inputs = {name: measure(value) for name, value in variables.items()}
        try:
            estimate = cost.estimate(self._decoded(), inputs, _run_time(context), self._python)
        except cost.Unbounded as reason:
            raise LimitError(f"CEL cost limit: {reason}") from None
        refusal = _refusal(estimate, compile_time=False)
        if refusal is not None:
            raise LimitError(refusal)
        if not held.allows((estimate.cost, estimate.memory)):
            raise LimitError(held.refusal((estimate.cost, estimate.memory)))
        held.charge(estimate.cost)
        return self.uncertain


def _ints(value: Any) -> bool:
    return type(value) is tuple and all(type(item) is int for item in value)


class _Held:
    """What the inputs holding earlier results (`HELD`) add to an evaluation: their bytes to its memory
    (twice when it reads them: the library copies what it reads) and, when it reads them, a walk over
    them to its cost. Measured quickly first (`Size.bound_bytes`), exactly when that bound is not enough."""

    __slots__ = ("_exact", "_reads", "_variables", "cost", "memory")

    def __init__(self, variables: Mapping[str, Any], reads: bool) -> None:
        self._variables, self._reads = variables, reads
        self._exact = False
        self._measure()

    def _measure(self) -> None:
        total = 0
        for name in HELD:
            value = self._variables.get(name)
            if value:
                size = measure(value)
                total += size.bytes() if self._exact else size.bound_bytes()
        self.cost = math.ceil(cost.TRAVERSAL * total) if self._reads else 0
        self.memory = 2 * total if self._reads else total

    def allows(self, estimate: tuple[int, int]) -> bool:
        """Whether an evaluation of this (cost, memory) is within the limits with what is held."""
        if estimate[0] + self.cost <= COST_LIMIT and estimate[1] + self.memory <= MEMORY_LIMIT:
            return True
        if self._exact:
            return False
        self._exact = True
        self._measure()
        return self.allows(estimate)

    def charge(self, amount: int) -> None:
        """Charge `amount` and the walk over what is held to the open budget (`evaluation_budget`)."""
        left = _budget.get()
        if left is not None and not self._exact and amount + self.cost > left[0]:
            self._exact = True
            self._measure()
        _charge(amount + self.cost)

    def refusal(self, estimate: tuple[int, int]) -> str:
        if estimate[0] + self.cost > COST_LIMIT:
            return (f"CEL cost limit: this evaluation could cost {_amount(estimate[0] + self.cost, 'units')} "
                    f"with reading the variables computed before it, more than assertree's limit of "
                    f"{COST_LIMIT:,} units")
        return (f"CEL memory limit: this evaluation could build {_amount(estimate[1], 'bytes')} while the "
                f"variables computed before it hold {_amount(self.memory, 'bytes')}, more than assertree's "
                f"limit of {_amount(MEMORY_LIMIT, 'bytes')} together")


HELD = ("variables",)
"""Inputs holding the results of earlier expressions of the same evaluation (Kubernetes' and Kyverno's
composited ``variables``): every later expression is given them all, so they are counted in its memory."""
_UNJUDGED = object()


_NOTHING_HELD = _Held({}, False)
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
