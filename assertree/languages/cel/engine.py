"""The one door to the CEL library: compile once, evaluate many times, errors as data.

assertree writes none of CEL itself. It runs Google's C++ implementation
through `cel-expr-python` (PyPI, Apache-2.0), chosen on evidence: on the
vendored google/cel-spec sample (tests/conformance/data/cel-spec) it passes
99.7% of the core-language tests against 93.6% for `common-expression-language`
(cel-rust) and 84.4% for `cel-python`, and it evaluates a typical Kubernetes
check about 4.6x faster than the next (the lead's report has the numbers).
It ships as compiled wheels only (no sdist, no musllinux wheel) and weighs
~50 MB, so it is the optional extra ``assertree[cel]``: this module imports it
on the first compile, never at import time, and a missing library is one clear
message (`CEL_EXTRA_MESSAGE`), not a traceback.

Everything else in the package declares *what* an environment holds
(`Environment`: variables, the library's named extensions, `Function`s written
in Python) and this module turns it into the library's objects. Three things
the library (0.1.x) cannot do are handled here, each in one place:

* cel-go's cross-type numeric comparisons (``size(x) < 2.5``) do not type-check
  in cel-cpp although its runtime compares mixed numbers; an expression whose
  *only* check errors are such comparisons is compiled unchecked (`_compile`).
* a result of optional type (``object.?spec``) cannot be converted to Python;
  it is unwrapped the way cel-go's ``Optional.Value()`` does (none -> null) by
  compiling ``dyn(<text>).orValue(null)`` instead (`_compile`).
* Python values cannot travel through CEL as opaque objects, so a function
  needing per-evaluation state (kyverno-json's ``bindings.resolve``) reads it
  from `evaluation_context()`, which `Program.evaluate` sets.

Compiling is memoised, in two layers (`Environment.compile`): within a
process, a text compiled again in the same environment gives the same
`Program` (or raises the same error) without the library; and a text that
compiled before, in an environment declared the same way, by the same code and
library (`text_facts`: kept between runs), is compiled only when it is first
evaluated, since most compiled expressions never are.

Every evaluation is bounded (`limits`: an estimated cost and memory, at
compile time and before running; `backstop`: an address-space cap where the
estimate cannot vouch): `_compile` builds each program's `limits.Bounds`,
`Program.evaluate_value` checks them, and a `MemoryError` the library raises
(``std::bad_alloc``) is the expression's error, never an exception.

Results come back as plain JSON-like Python (dict/list/str/int/float/bool/None)
by the protobuf JSON mapping of CEL values: bytes as base64 text, timestamps as
RFC 3339 text, durations as ``"<seconds>s"``, types as their names. CEL maps
keep no key order (the library's is a hash's, different in every process), so a
map result's keys come back sorted, as Go's encoding/json writes them.

Known defect of cel-expr-python 0.1.3: a Python string is cut at its first NUL
character on the way in (``"a\\x00b"`` reaches CEL as ``"a"``).
"""

from __future__ import annotations

import base64
import contextvars
import datetime
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

from assertree.languages.cel import text_facts
from assertree.languages.cel.backstop import OUT_OF_MEMORY, backstop
from assertree.languages.cel.limits import Bounds, BudgetError, LimitError, check_function_result
from assertree.languages.cel.text_facts import TextFacts, digest

__all__ = [
    "CEL_EXTRA_MESSAGE",
    "CelBudgetError",
    "CelCompileError",
    "CelError",
    "CelEvaluationError",
    "CelUnavailableError",
    "Environment",
    "Function",
    "FunctionError",
    "Overload",
    "Program",
    "available",
    "evaluation_context",
]

CEL_EXTRA_MESSAGE = "CEL expressions need the cel extra: pip install 'assertree[cel]'"


class CelError(Exception):
    """Every failure of a CEL expression: the expression text and a one-line message."""

    def __init__(self, message: str, expression: str = "") -> None:
        self.message = message
        self.expression = expression
        super().__init__(message)


class CelUnavailableError(CelError):
    """The CEL library is not installed: the message says which extra to install."""


class CelCompileError(CelError):
    """The expression does not parse or type-check (a load-time error).

    `line`/`column` (1-based, within the expression text, as the library counts) locate the first
    problem when the library says where; `details` keeps the library's full
    text with its caret lines for a verbose report.
    """

    def __init__(self, message: str, expression: str = "", line: int | None = None, column: int | None = None,
                 details: str = "") -> None:
        super().__init__(message, expression)
        self.line = line
        self.column = column
        self.details = details


class CelEvaluationError(CelError):
    """The expression failed on this data (no such key, no matching overload, a function's error)."""


class CelBudgetError(CelEvaluationError):
    """The expressions of one evaluation spent their shared budget (`limits.evaluation_budget`): this one
    did not run, and no later one of the same evaluation should."""


class FunctionError(ValueError):
    """Raised by a Python function implementation; CEL sees it as an error value with this text.

    An error value, not an exception: ``f(x) || true`` is still true, as CEL's
    commutative logic operators require.
    """


@cache
def _library() -> ModuleType:
    try:
        from cel_expr_python import cel
    except ImportError:
        raise CelUnavailableError(CEL_EXTRA_MESSAGE) from None
    return cel


def available() -> bool:
    """Whether the CEL library can be imported (imports it)."""
    try:
        _library()
    except CelUnavailableError:
        return False
    return True


@dataclass(frozen=True, slots=True)
class Overload:
    """One signature of a function written in Python.

    `params` and `result` are CEL type names: ``string``, ``int``, ``uint``,
    ``double``, ``bool``, ``bytes``, ``null``, ``timestamp``, ``duration``,
    ``list`` (of dyn), ``map`` (dyn to dyn), ``dyn``. The library matches
    arguments by kind at run time and a ``dyn`` parameter matches no kind, so
    a function that accepts several kinds declares one overload per kind.
    For a member function (``'x'.f()``) the first parameter is the receiver.
    """

    id: str
    params: tuple[str, ...]
    result: str
    impl: Callable[..., Any]
    member: bool = False


@dataclass(frozen=True, slots=True)
class Function:
    """A function (``quantity``) or namespaced function (``sets.contains``) and its overloads."""

    name: str
    overloads: tuple[Overload, ...]


@dataclass(frozen=True)
class Environment:
    """What expressions of one kind may use; the library's environment is built on first compile.

    `variables` are declared ``dyn`` (assertree's data is JSON); `typed_variables`
    declares others with a CEL type name (``int``, ``list(string)``,
    ``map(string, int)``), and `container` is the namespace names resolve in
    (both mostly for the cel-spec conformance tests). `extensions`
    are the library's named extensions (``optional``, ``strings``, ``sets``,
    ``lists``, ``math``, ``regex``, ``encoders``, ``bindings``,
    ``two-var-comprehensions``); `functions` are written in Python.
    `cross_type_numeric_comparisons` accepts ``1 < 2.5`` as cel-go's option of
    that name does. `refuse_past_limits`: an expression past a cost or memory
    limit on any input (`limits`) is a compile error; when false, each of its
    evaluations is an error instead (the apiserver stores such a policy and
    cancels each evaluation at its per-call limit).
    """

    name: str
    variables: tuple[str, ...] = ()
    extensions: tuple[str, ...] = ()
    functions: tuple[Function, ...] = ()
    cross_type_numeric_comparisons: bool = False
    refuse_past_limits: bool = True
    typed_variables: tuple[tuple[str, str], ...] = ()
    container: str = ""
    # built on first use; not copied by `dataclasses.replace` (init=False): another declaration starts afresh
    _built: list[Any] = field(default_factory=list, compare=False, repr=False, init=False)
    _python: dict[str, frozenset[str]] = field(default_factory=dict, compare=False, repr=False, init=False)
    _programs: dict[tuple[str, bool], Program | CelCompileError] = field(default_factory=dict, compare=False,
                                                                          repr=False, init=False)
    _declared: list[str] = field(default_factory=list, compare=False, repr=False, init=False)

    def compile(self, text: str, checked: bool = True) -> Program:
        """Parse and type-check `text` once; raises CelCompileError or CelUnavailableError.

        With `checked` false only parsing happens now and type errors surface
        when evaluating (the library's ``disable_check``).

        Memo: the same (text, checked) gives the same `Program`, or raises an
        error equal to the first one, as compiling afresh would (the library's
        compile is a function of the environment's declaration and the text).
        A text `text_facts` knows to have compiled in this declaration gives a
        `Program` that compiles on its first evaluation: compiling it now
        would find no problem to report. `tests/cel/test_compile_memo.py`
        holds both to compiling afresh.
        """
        key = (text, checked)
        known = self._programs.get(key)
        if known is None:
            try:
                known = _compile_or_defer(self, text, checked)
            except CelCompileError as error:
                known = error
            if len(self._programs) >= _PROGRAMS_KEPT:
                self._programs.pop(next(iter(self._programs)), None)
            self._programs[key] = known
        if isinstance(known, CelCompileError):
            raise CelCompileError(known.message, known.expression, known.line, known.column, known.details)
        return known

    def declaration(self) -> str:
        """Everything of this environment that decides whether a text compiles, and to what, as text."""
        if not self._declared:
            functions = [f"{function.name}:" + ",".join(
                f"{o.id}({'|'.join(o.params)})->{o.result}{'.' if o.member else ''}" for o in function.overloads)
                for function in self.functions]
            self._declared.append(repr((self.name, self.variables, self.extensions, functions,
                                        self.cross_type_numeric_comparisons, self.refuse_past_limits,
                                        self.typed_variables, self.container)))
            self._declared.append(digest(self._declared[0]).hex())
        return self._declared[0]

    def declaration_digest(self) -> str:
        """A digest of `declaration`: environments declared the same way have the same one."""
        self.declaration()
        return self._declared[1]

    def python_functions(self) -> dict[str, frozenset[str]]:
        """Each function written in Python, with the result types its overloads declare (for `limits`)."""
        if not self._python:
            self._python.update((function.name, frozenset(overload.result for overload in function.overloads))
                                for function in self.functions)
        return self._python

    def library_env(self) -> Any:
        """The library's environment for this declaration (built once)."""
        if not self._built:
            self._built.append(_build(self))
        return self._built[0]


_TYPE_NAMES = {
    "string": "STRING", "int": "INT", "uint": "UINT", "double": "DOUBLE", "bool": "BOOL", "bytes": "BYTES",
    "null": "NULL", "timestamp": "TIMESTAMP", "duration": "DURATION", "dyn": "DYN",
}


def _type(name: str) -> Any:
    cel = _library()
    if name == "list":
        return cel.Type.List(cel.Type.DYN)
    if name == "map":
        return cel.Type.Map(cel.Type.DYN, cel.Type.DYN)
    if name.startswith("list(") and name.endswith(")"):
        return cel.Type.List(_type(name[5:-1].strip()))
    if name.startswith("map(") and name.endswith(")"):
        key, _, item = name[4:-1].partition(",")
        return cel.Type.Map(_type(key.strip()), _type(item.strip()))
    return getattr(cel.Type, _TYPE_NAMES["null" if name == "null_type" else name])


def _build(environment: Environment) -> Any:
    cel = _library()
    config = None
    if environment.extensions:
        lines = "".join(f"  - name: {name}\n" for name in environment.extensions)
        config = cel.NewEnvConfigFromYaml(f"extensions:\n{lines}")
    declarations = [
        cel.FunctionDecl(function.name, [
            cel.Overload(overload.id, _type(overload.result), [_type(p) for p in overload.params],
                         is_member=overload.member, impl=_guarded(overload.impl, function.name, overload.result))
            for overload in function.overloads
        ])
        for function in environment.functions
    ]
    variables = {name: cel.Type.DYN for name in environment.variables}
    variables.update((name, _type(type_name)) for name, type_name in environment.typed_variables)
    return cel.NewEnv(config=config, variables=variables, functions=declarations,
                      container=environment.container or None)


def _guarded(impl: Callable[..., Any], name: str, result_type: str) -> Callable[..., Any]:
    """`impl` with Python's own failures turned into `FunctionError` with a plain message, and its
    result held to what the cost estimate assumes of it (`limits.check_function_result`).

    The library already makes any exception raised by an implementation a CEL
    error value; this only keeps the text clean (a KeyError's str is quoted).
    """

    result_types = frozenset((result_type,))

    def call(*args: Any) -> Any:
        try:
            result = impl(*args)
            check_function_result(name, result_types, args, result, _CONTEXT.get())
            return result
        except FunctionError:
            raise
        except MemoryError:
            raise FunctionError(f"{name}: out of memory") from None
        except (ValueError, TypeError, KeyError, IndexError, OverflowError, ArithmeticError) as error:
            raise FunctionError(str(error) or type(error).__name__) from error

    call.__name__ = getattr(impl, "__name__", "function")
    return call


# ---------------------------------------------------------------- compiling

_STATUS = re.compile(r"^[A-Z_]+: ")
_STATUS_TAIL = re.compile(r"\s*\[[A-Z_]+\]\s*$")
_CHECK_ERROR = re.compile(r"ERROR: <input>:(\d+):(\d+): (.*)")
_CROSS_NUMERIC = re.compile(r"found no matching overload for '_(?:<|<=|>|>=)_' applied to "
                            r"'\((?:int|uint|double), (?:int|uint|double)\)'")


def _clean(message: str) -> str:
    """The library's status text without its status code wrapping (``INVALID_ARGUMENT: ... [INVALID_ARGUMENT]``)."""
    return _STATUS_TAIL.sub("", _STATUS.sub("", message.strip()))


def _compile_error(text: str, raw: str) -> CelCompileError:
    problems = _CHECK_ERROR.findall(raw)
    if not problems:
        return CelCompileError(_clean(raw).splitlines()[0] if raw.strip() else "invalid expression", text,
                               details=raw)
    line, column, first = problems[0]
    message = "; ".join(f"{msg}" if len(problems) == 1 else f"{ln}:{col}: {msg}" for ln, col, msg in problems)
    return CelCompileError(first if len(problems) == 1 else message, text, int(line), int(column),
                           details=_clean(raw))


_PROGRAMS_KEPT = 16_384  # compiled texts kept per environment (a policy library has a few thousand)


@cache
def _compiled_before() -> TextFacts:
    """The texts known to compile, by environment declaration: decided by this package's code (the rewrites,
    the checks, the cost model) and the CEL library's files."""
    return TextFacts("cel-compiled", lambda: (str(Path(__file__).parent), str(_library().__file__)))


def _fact(environment: Environment, text: str, checked: bool) -> str:
    return f"{environment.declaration_digest()}\0{'checked' if checked else 'unchecked'}\0{text}"


MAX_SERIALIZED = 64 * 1024
"""Bytes of the largest compiled expression kept between runs (`_compiled_before`; most take one or two KB)."""


def _compile_or_defer(environment: Environment, text: str, checked: bool) -> Program:
    """`text` compiled now, or deferred to its first evaluation when it compiled before (`text_facts`)."""
    _library()  # CelUnavailableError now, as compiling would
    known = _compiled_before()
    fact = _fact(environment, text, checked)
    found = known.get(fact)
    if found is not None:
        return Program(environment, text, None, None, checked, (fact, found))
    program = _compile(environment, text, checked)
    known.put(fact, True)  # its serialized form and bounds are kept once it is evaluated (`_remember_bounds`)
    program._fact = (fact, None)
    program._remember_bounds()
    return program


def _compile(environment: Environment, text: str, checked: bool = True) -> Program:
    env = environment.library_env()
    try:
        expression = env.compile(text, disable_check=not checked)
    except RuntimeError as error:
        raw = str(error)
        problems = _CHECK_ERROR.findall(raw)
        only_cross_numeric = bool(problems) and all(_CROSS_NUMERIC.fullmatch(p[2]) for p in problems)
        if not (environment.cross_type_numeric_comparisons and only_cross_numeric):
            raise _compile_error(text, raw) from None
        expression = env.compile(text, disable_check=True)  # the runtime compares mixed numbers
        return _program(environment, text, expression, checked)
    if checked and expression.return_type().name().startswith("optional_type"):
        expression = env.compile(f"dyn(\n{text}\n).orValue(null)")
    return _program(environment, text, expression, checked)


def _program(environment: Environment, text: str, expression: Any, checked: bool) -> Program:
    serialized = expression.serialize()
    program = Program(environment, text, expression, _bounds(environment, text, serialized), checked)
    program._serialized = serialized
    return program


def _bounds(environment: Environment, text: str, serialized: bytes) -> Bounds:
    """The expression's cost model (`limits`); CelCompileError when no input could keep it within the limits."""
    try:
        return Bounds.compile(serialized, environment.python_functions())
    except LimitError as error:
        if not environment.refuse_past_limits:
            return Bounds.refusing(str(error))
        raise CelCompileError(str(error), text) from None


def _from_facts(environment: Environment, text: str, checked: bool, found: Any) -> Program:
    """The program a text compiled to in an earlier run (`_compiled_before`: its serialized form and what its
    bounds worked out), read back rather than compiled: the library reads a serialized expression about
    twenty times faster than it compiles the text. Compiled afresh when the facts hold less (a long
    expression, a refused one) or the library cannot read them."""
    if isinstance(found, tuple) and len(found) == 2 and isinstance(found[0], bytes) and found[1] is not None:
        serialized, bounds_facts = found
        bounds = Bounds.known(serialized, environment.python_functions(), bounds_facts)
        if bounds is not None:
            try:
                expression = environment.library_env().deserialize(serialized)
            except (RuntimeError, ValueError, TypeError):
                pass
            else:
                program = Program(environment, text, expression, bounds, checked)
                program._serialized = serialized
                return program
    return _compile(environment, text, checked)


# ---------------------------------------------------------------- evaluating

_CONTEXT: contextvars.ContextVar[Any] = contextvars.ContextVar("assertree_cel_context", default=None)


def evaluation_context() -> Any:
    """The `context` passed to the `Program.evaluate` call now running (for Python function implementations)."""
    return _CONTEXT.get()


_ACTIVATIONS_KEPT = 64


class Program:
    """A compiled expression; `evaluate` many times with different variables.

    Fast path: converting a large document into CEL values costs time in
    proportion to its size, so the activation built for a container value is
    kept (the last `_ACTIVATIONS_KEPT`, keyed by the identity of the values,
    which it keeps alive) and reused by every program of the environment;
    only from its second use on (the last one made waits for it), so that the
    many activations used once (a Kyverno variable's, each holding all the
    variables before it, converted) do not stay in memory. It
    must never change a result, which holds while values are not mutated after
    they are first evaluated: a scan only reads its payloads. Scans go resource
    by resource, so the kept activations are those of one ``object``: a new one
    lets the others go (a long process kept its last 64 resources and their CEL
    copies: 180 MB over a fuzz run's large payloads).
    """

    __slots__ = ("_bounds", "_checked", "_expression", "_fact", "_serialized", "environment", "text")

    def __init__(self, environment: Environment, text: str, expression: Any, bounds: Bounds | None,
                 checked: bool = True, fact: tuple[str, Any] | None = None) -> None:
        self.environment = environment
        self.text = text
        self._expression = expression
        self._bounds = bounds  # None: deferred, compiled on the first evaluation (`Environment.compile`)
        self._checked = checked
        self._fact = fact  # (its fact's text, what the facts held of it when deferred) in `_compiled_before`
        self._serialized: bytes | None = None

    def _compiled(self) -> Bounds:
        """Compile a deferred program now, from the facts of an earlier run where they suffice (it compiled
        before: a failure now means the library changed under the same files, and is this evaluation's error)."""
        found = self._fact[1] if self._fact is not None else None
        try:
            compiled = _from_facts(self.environment, self.text, self._checked, found)
        except CelCompileError as error:
            raise CelEvaluationError(error.message, self.text) from None
        self._expression = compiled._expression
        self._bounds = compiled._bounds
        self._serialized = compiled._serialized
        self._remember_bounds()
        return compiled._bounds  # type: ignore[return-value]

    def _fact_value(self) -> Any:
        """What `_compiled_before` keeps of an evaluated program: its serialized form and its bounds' facts (True,
        "it compiles", when they cannot be kept: a long expression, one refused when evaluated). Only evaluated
        programs: most compiled expressions never are, and would take room for nothing."""
        bounds_facts = self._bounds.facts() if self._bounds is not None else None
        if self._serialized is None or len(self._serialized) > MAX_SERIALIZED or bounds_facts is None:
            return True
        return self._serialized, bounds_facts

    def _remember_bounds(self) -> None:
        """Keep what the bounds work out from now on (a trace, verdicts) with the program's fact, written when the
        batch of work ends (`text_facts.later`)."""
        bounds = self._bounds
        if self._fact is None or bounds is None or bounds.learned is not None or self._fact_value() is True:
            return
        fact = self._fact[0]
        bounds.learned = lambda: _compiled_before().put(fact, self._fact_value(), replace=True)

    def evaluate(self, variables: Mapping[str, Any], context: Any = None) -> Any:
        """The result as plain JSON-like Python; raises CelEvaluationError (never another exception)."""
        return _plain_result(self.evaluate_value(variables, context), self.text)

    def evaluate_value(self, variables: Mapping[str, Any], context: Any = None) -> Any:
        """The library's own result object (typed; an error is a value of type ERROR), for typed comparisons.

        Raises CelEvaluationError when the library raises instead of returning, and before running
        when the evaluation could pass a limit (`limits`); a native allocation failure is one too.
        """
        if text_facts.waiting:  # the first evaluation after new compiles: keep what they found
            text_facts.flush_all()
        bounds = self._bounds if self._bounds is not None else self._compiled()
        try:
            uncertain = bounds.check(variables, context)
        except BudgetError as error:
            raise CelBudgetError(str(error), self.text) from None
        except LimitError as error:
            raise CelEvaluationError(str(error), self.text) from None
        token = _CONTEXT.set(context)
        try:
            with backstop(uncertain):
                return self._expression.eval(_activation(self.environment, variables))
        except (RuntimeError, TypeError, SystemError, ValueError, IndexError, OverflowError) as error:
            # the library's C++ exceptions, as pybind11 raises them (std::length_error is a ValueError)
            raise CelEvaluationError(_clean(str(error)).splitlines()[0] or type(error).__name__, self.text) from None
        except MemoryError:
            raise CelEvaluationError(OUT_OF_MEMORY, self.text) from None
        finally:
            _CONTEXT.reset(token)

    def __repr__(self) -> str:
        return f"Program({self.text!r})"


_local = threading.local()  # activations belong to the thread that made them (cel-cpp arenas are per thread)


def _activation(environment: Environment, variables: Mapping[str, Any]) -> Any:
    _activations: dict[tuple[Any, ...], tuple[Any, Any]] = _local.__dict__.setdefault("activations", {})
    key = (id(environment), *map(id, variables.values()))
    kept = _activations.get(key)
    if kept is not None:
        return kept[1]
    recent = _local.__dict__.get("recent")
    if recent is not None and recent[0] == key:  # its second use: kept from now on
        activation = recent[2]
    else:
        activation = environment.library_env().Activation(dict(variables))
        if any(type(value) in (dict, list) for value in variables.values()):  # scalars convert in no time
            _local.recent = (key, tuple(variables.values()), activation)  # the values pin their ids
        return activation
    _local.recent = None
    subject = id(variables.get("object"))
    if subject != _local.__dict__.get("subject"):
        _activations.clear()
        _local.subject = subject
    if len(_activations) >= _ACTIVATIONS_KEPT:
        del _activations[next(iter(_activations))]
    _activations[key] = (tuple(variables.values()), activation)  # the values pin their ids
    return activation


def _plain_result(result: Any, text: str) -> Any:
    try:
        plain = result.plain_value()
    except MemoryError:
        raise CelEvaluationError(OUT_OF_MEMORY, text) from None
    except (TypeError, SystemError, RuntimeError, ValueError):
        raise CelEvaluationError("the result holds optional values; unwrap them with .orValue() or .value()",
                                 text) from None
    if isinstance(plain, str) and result.type() == _library().Type.ERROR:  # an error's plain value is its text
        raise CelEvaluationError(_clean(plain), text)
    return _json_like(plain)


def _json_like(value: Any) -> Any:
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, dict):
        return _sorted_map({key if isinstance(key, str) else _json_like(key): _json_like(item)
                            for key, item in value.items()})
    if isinstance(value, list):
        return [_json_like(item) for item in value]
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(bytes(value)).decode()
    if isinstance(value, datetime.datetime):
        return _rfc3339(value)
    if isinstance(value, datetime.timedelta):
        return _duration_text(value)
    if isinstance(value, Sequence):
        return [_json_like(item) for item in value]
    name = getattr(value, "name", None)
    return name().lower() if callable(name) else str(value)  # a CEL type value: its name


def _sorted_map(value: dict) -> dict:
    """`value` with its keys in Go's order (encoding/json sorts map keys): the library's order is a hash's,
    different in every process, and a map written out (``assertree apply``) must not change from run to run."""
    try:
        return dict(sorted(value.items()))
    except TypeError:  # keys of mixed types
        return dict(sorted(value.items(), key=lambda item: (type(item[0]).__name__, str(item[0]))))


def _rfc3339(moment: datetime.datetime) -> str:
    moment = moment.astimezone(datetime.UTC)
    text = moment.strftime("%Y-%m-%dT%H:%M:%S")
    if moment.microsecond:
        text += f".{moment.microsecond:06d}".rstrip("0")
    return text + "Z"


def _duration_text(delta: datetime.timedelta) -> str:
    micros = (delta.days * 86400 + delta.seconds) * 1_000_000 + delta.microseconds
    sign, micros = ("-", -micros) if micros < 0 else ("", micros)
    seconds, fraction = divmod(micros, 1_000_000)
    return f"{sign}{seconds}" + (f".{fraction:06d}".rstrip("0") if fraction else "") + "s"
