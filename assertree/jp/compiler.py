"""Turns a syntax tree into nested Python closures.

Each node becomes a function ``f(value, scope)``: `value` is the current node
(``@``) and `scope` a dict of variable bindings, names without the ``$``. The
key ``"$"`` holds the root document. Evaluation is then only function calls
and dict lookups: no tree walking, no dispatch on node type at run time, which
is what makes `assertree.jp` several times faster than jmespath.py's visitor.

Semantics are go-jmespath's (DIALECT.md): arithmetic on anything but numbers
is null and division by zero gives infinities; ``<`` and friends compare
numbers only; ``==`` is deep JSON equality with booleans apart from numbers; a
null on the left of ``|`` still runs the right side; errors on the left of a
filter, flatten or ``.*`` are swallowed (null). Unknown functions and wrong
arities are errors when the call is evaluated, as in go-jmespath, and are also
recorded as `problems` so that policy loading and ``assertree lint`` can
reject them before any payload is read.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from assertree.jp import registry
from assertree.jp.ast import Node
from assertree.jp.errors import (
    ArityError,
    EvaluationError,
    InvalidValueError,
    JMESPathError,
    LimitError,
    UndefinedVariableError,
    UnknownFunctionError,
)
from assertree.jp.limits import charge, check_array_length, check_result
from assertree.jp.values import equal, is_false

Compiled = Callable[[Any, dict], Any]

_NUMBER = (int, float)


class Lazy:
    """A binding computed on first use and then remembered (kyverno-json context entries).

    Put one in a scope dict; variable references resolve it transparently.
    """

    __slots__ = ("_compute", "_done", "_value")

    def __init__(self, compute: Callable[[], Any]) -> None:
        self._compute: Callable[[], Any] | None = compute  # dropped once the value is known
        self._done = False
        self._value = None

    @property
    def known(self) -> bool:
        """Whether the value has been computed (explanations show the context entries a rule used; CEL's
        memory bound counts the values already held)."""
        return self._done

    def resolve(self) -> Any:
        if not self._done:
            assert self._compute is not None  # set until _done
            self._value = self._compute()
            self._done = True
            self._compute = None
        return self._value


class Expref:
    """An ``&expr`` argument: call it with a value to evaluate the expression against it."""

    __slots__ = ("_code", "_scope")

    def __init__(self, code: Compiled, scope: dict) -> None:
        self._code = code
        self._scope = scope

    def __call__(self, value: Any) -> Any:
        return self._code(value, self._scope)


class Compiler:
    """Compiles one tree; collects what can be known wrong without data (`problems`)."""

    def __init__(self, dialect: str = "kyverno") -> None:
        self.dialect = dialect
        self.problems: list[str] = []
        self.uses_root = False
        self.calls = False  # whether a function is called: only calls build against `limits.MAX_BUILT`
        self.variables: set[str] = set()  # free variables: referenced and not bound by an enclosing let
        self._let_bound: list[frozenset[str]] = []

    def compile(self, tree: Node) -> Compiled:
        method = getattr(self, "_" + tree.type)
        return method(tree)

    # -- leaves --------------------------------------------------------------------

    def _identity(self, tree: Node) -> Compiled:
        return _identity

    _current = _identity

    def _literal(self, tree: Node) -> Compiled:
        constant = tree.value
        if isinstance(constant, (list, dict)):
            # Hand out the same object every time; callers must not mutate results.
            pass
        return lambda value, scope: constant

    def _field(self, tree: Node) -> Compiled:
        key = tree.value

        def field(value, scope):
            if type(value) is dict:
                return value.get(key)
            if isinstance(value, dict):
                return value.get(key)
            return None

        return field

    def _root(self, tree: Node) -> Compiled:
        self.uses_root = True
        return lambda value, scope: scope.get("$")

    def _variable_ref(self, tree: Node) -> Compiled:
        name = tree.value
        if not any(name in bound for bound in self._let_bound):
            self.variables.add(name)

        def variable(value, scope):
            try:
                bound = scope[name]
            except KeyError:
                raise UndefinedVariableError(name) from None
            if type(bound) is Lazy:
                return bound.resolve()
            return bound

        return variable

    # -- paths ---------------------------------------------------------------------

    def _subexpression(self, tree: Node) -> Compiled:
        left, right = (self.compile(child) for child in tree.children)
        if tree.children[1].type == "field":
            key = tree.children[1].value

            def sub_field(value, scope):
                found = left(value, scope)
                if type(found) is dict:
                    return found.get(key)
                return None

            return sub_field

        def subexpression(value, scope):
            found = left(value, scope)
            if found is None:
                return None
            return right(found, scope)

        return subexpression

    def _index_expression(self, tree: Node) -> Compiled:
        steps = [self.compile(child) for child in tree.children]
        first, rest = steps[0], steps[1:]

        def index_expression(value, scope):
            result = first(value, scope)
            for step in rest:
                result = step(result, scope)
            return result

        if len(steps) == 2:
            second = steps[1]
            return lambda value, scope: second(first(value, scope), scope)
        return index_expression

    def _index(self, tree: Node) -> Compiled:
        position = tree.value

        def index(value, scope):
            if type(value) is list or isinstance(value, list):
                try:
                    return value[position]
                except IndexError:
                    return None
            return None

        return index

    def _slice(self, tree: Node) -> Compiled:
        start, stop, step = tree.value
        if step == 0:
            def zero_step(value, scope):
                if isinstance(value, list):
                    raise InvalidValueError("slice step cannot be 0")

            return zero_step
        bounds = slice(start, stop, step)

        def slice_(value, scope):
            if isinstance(value, (list, str)):
                return value[bounds]
            return None

        return slice_

    def _projection(self, tree: Node) -> Compiled:
        left, right = (self.compile(child) for child in tree.children)
        from_slice = tree.children[0].type == "index_expression" and tree.children[0].children[-1].type == "slice"
        identity_rhs = tree.children[1].type == "identity"

        def projection(value, scope):
            base = left(value, scope)
            if type(base) is not list:
                if isinstance(base, list):
                    base = list(base)
                elif from_slice and isinstance(base, str):
                    return right(base, scope)
                else:
                    return None
            if identity_rhs:
                return [item for item in base if item is not None]
            out = []
            for item in base:
                result = right(item, scope)
                if result is not None:
                    out.append(result)
            return out

        return projection

    def _value_projection(self, tree: Node) -> Compiled:
        left, right = (self.compile(child) for child in tree.children)

        def value_projection(value, scope):
            try:
                base = left(value, scope)
            except LimitError:
                raise
            except JMESPathError:
                return None
            if not isinstance(base, dict):
                return None
            out = []
            for item in base.values():
                result = right(item, scope)
                if result is not None:
                    out.append(result)
            return out

        return value_projection

    def _filter_projection(self, tree: Node) -> Compiled:
        left, right, condition = (self.compile(child) for child in tree.children)
        identity_rhs = tree.children[1].type == "identity"

        def filter_projection(value, scope):
            try:
                base = left(value, scope)
            except LimitError:
                raise
            except JMESPathError:
                return None
            if not isinstance(base, list):
                return None
            out = []
            for item in base:
                if not is_false(condition(item, scope)):
                    result = item if identity_rhs else right(item, scope)
                    if result is not None:
                        out.append(result)
            return out

        return filter_projection

    def _flatten(self, tree: Node) -> Compiled:
        (left,) = (self.compile(child) for child in tree.children)

        def flatten(value, scope):
            try:
                base = left(value, scope)
            except LimitError:
                raise
            except JMESPathError:
                return None
            if not isinstance(base, list):
                return None
            out = []
            for item in base:
                if isinstance(item, list):
                    out.extend(item)
                else:
                    out.append(item)
            if len(out) > len(base):  # only lists shared many times over ([$a, $a][]) can grow past the limit
                check_array_length("flatten ([])", len(out))
            return out

        return flatten

    def _pipe(self, tree: Node) -> Compiled:
        left, right = (self.compile(child) for child in tree.children)
        return lambda value, scope: right(left(value, scope), scope)

    def _multi_select_list(self, tree: Node) -> Compiled:
        items = [self.compile(child) for child in tree.children]
        return lambda value, scope: [item(value, scope) for item in items]

    def _multi_select_dict(self, tree: Node) -> Compiled:
        pairs = [(pair.value, self.compile(pair.children[0])) for pair in tree.children]
        return lambda value, scope: {key: item(value, scope) for key, item in pairs}

    # -- logic and comparison --------------------------------------------------------

    def _or_expression(self, tree: Node) -> Compiled:
        left, right = (self.compile(child) for child in tree.children)

        def or_expression(value, scope):
            result = left(value, scope)
            if is_false(result):
                return right(value, scope)
            return result

        return or_expression

    def _and_expression(self, tree: Node) -> Compiled:
        left, right = (self.compile(child) for child in tree.children)

        def and_expression(value, scope):
            result = left(value, scope)
            if is_false(result):
                return result
            return right(value, scope)

        return and_expression

    def _not_expression(self, tree: Node) -> Compiled:
        (operand,) = (self.compile(child) for child in tree.children)
        return lambda value, scope: is_false(operand(value, scope))

    def _comparator(self, tree: Node) -> Compiled:
        left, right = (self.compile(child) for child in tree.children)
        operator = tree.value
        if operator == "==":
            return lambda value, scope: equal(left(value, scope), right(value, scope))
        if operator == "!=":
            return lambda value, scope: not equal(left(value, scope), right(value, scope))
        compare = _ORDERINGS[operator]

        def ordering(value, scope):
            a = left(value, scope)
            b = right(value, scope)
            if type(a) in _NUMBER and type(b) in _NUMBER:
                return compare(a, b)
            return None

        return ordering

    # -- arithmetic ------------------------------------------------------------------

    def _arithmetic(self, tree: Node) -> Compiled:
        left, right = (self.compile(child) for child in tree.children)
        operate = _ARITHMETIC[tree.value]

        def arithmetic(value, scope):
            a = left(value, scope)
            b = right(value, scope)
            if type(a) in _NUMBER and type(b) in _NUMBER:
                return operate(_float(a), _float(b))
            return None

        return arithmetic

    def _arithmetic_unary(self, tree: Node) -> Compiled:
        (operand,) = (self.compile(child) for child in tree.children)
        negate = tree.value == "-"

        def unary(value, scope):
            a = operand(value, scope)
            if type(a) in _NUMBER:
                return -_float(a) if negate else _float(a)
            return None

        return unary

    # -- functions and scope ---------------------------------------------------------

    def _expref(self, tree: Node) -> Compiled:
        (code,) = (self.compile(child) for child in tree.children)
        return lambda value, scope: Expref(code, scope)

    def _function_expression(self, tree: Node) -> Compiled:
        name = tree.value
        self.calls = True
        arguments = [self.compile(child) for child in tree.children]
        function = registry.lookup(name, self.dialect)
        if function is None:
            self.problems.append(f"unknown function: {name}()")

            def unknown(value, scope):
                raise UnknownFunctionError(name)

            return unknown
        problem = function.arity_problem(len(arguments))
        if problem is not None:
            self.problems.append(problem)

            def wrong_arity(value, scope):
                raise ArityError(problem)

            return wrong_arity
        checks = [  # an argument of one of the `exact` types passes its check: the check runs for the others
            (position, registry.exact_types(param.types), param.check)
            for position, param in enumerate(_params_for(function, len(arguments)))
            if param.types != ("any",)
        ]
        check_arguments = function.check_arguments
        impl = function.impl
        label = f"{name}()"

        first = arguments[0] if arguments else None
        second = arguments[1] if len(arguments) > 1 else None
        count = len(arguments)

        def call(value, scope):
            if count == 1:  # the usual arities without a list comprehension's frame
                args = [first(value, scope)]
            elif count == 2:
                args = [first(value, scope), second(value, scope)]
            else:
                args = [argument(value, scope) for argument in arguments]
            for position, exact, check in checks:
                argument = args[position]
                if type(argument) not in exact and not check(argument):
                    check_arguments(args)  # raises with the full explanation
            try:
                result = impl(*args)
            except JMESPathError:
                raise
            except RecursionError:
                raise EvaluationError(f"{name}(): value nested too deeply") from None
            except OverflowError:  # an integer past float64's range (a payload's 400-digit number)
                raise InvalidValueError(f"{name}(): number out of range") from None
            except MemoryError:  # a request the limits did not foresee: one rule's error, not a lost report
                raise EvaluationError(f"{name}(): out of memory") from None
            except Exception as error:  # a bug in a function must still surface as our error
                raise EvaluationError(f"{name}(): {type(error).__name__}: {error}") from error
            kind = type(result)
            if kind is str or kind is list:  # the backstop for limits.MAX_STRING_LENGTH and MAX_ARRAY_LENGTH
                check_result(label, result)
                charge(label, len(result))  # and for limits.MAX_BUILT
            elif kind is dict:
                charge(label, len(result))
            return result

        return call

    def _let_expression(self, tree: Node) -> Compiled:
        *bindings, body_tree = tree.children
        names = [binding.value for binding in bindings]
        values = [self.compile(binding.children[0]) for binding in bindings]
        self._let_bound.append(frozenset(names))
        try:
            body = self.compile(body_tree)
        finally:
            self._let_bound.pop()

        def let_expression(value, scope):
            computed = [compute(value, scope) for compute in values]
            inner = dict(scope)
            inner.update(zip(names, computed))
            return body(value, inner)

        return let_expression


def _params_for(function: registry.Function, count: int) -> list[registry.Param]:
    params = list(function.params)
    if params and params[-1].variadic:
        params = params[:-1] + [params[-1]] * max(0, count - len(params) + 1)
    return params[:count]


def _identity(value: Any, scope: dict) -> Any:
    return value


def _float(number: float) -> float:
    if type(number) is float:
        return number
    try:
        return float(number)
    except OverflowError:
        return math.inf if number > 0 else -math.inf


def _divide(a: float, b: float) -> float:
    if b == 0:
        if a == 0 or math.isnan(a):
            return math.nan
        return math.copysign(math.inf, a) * math.copysign(1.0, b)
    return a / b


def _modulo(a: float, b: float) -> float:
    if b == 0 or math.isinf(a) or math.isnan(a) or math.isnan(b):
        return math.nan
    if math.isinf(b):
        return a
    return math.fmod(a, b)


def _floor_divide(a: float, b: float) -> float:
    quotient = _divide(a, b)
    if math.isinf(quotient) or math.isnan(quotient):
        return quotient
    return float(math.floor(quotient))


def _multiply(a: float, b: float) -> float:
    return a * b


_ARITHMETIC: dict[str, Callable[[float, float], float]] = {
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": _multiply,
    "/": _divide,
    "//": _floor_divide,
    "%": _modulo,
}

_ORDERINGS: dict[str, Callable[[Any, Any], bool]] = {
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
}
