"""The expression languages of a policy: kyverno-json's ``compiler`` fields.

A ``(statement)`` uses the nearest ``compiler`` set on the assertion, the
assert/match block, the rule or the policy (``jp`` when none is set); a key can
force one with ``(jp;statement)``. An unknown compiler name is not an error: the
key falls back to a plain lookup, as in kyverno-json. Every expression is
compiled here, at load time, so a typo fails before any payload is read.

Compiling either stops at the first problem (loading) or, with a `problems`
list, records each one and carries on with a stand-in expression (``lint``:
the compiler's collect-everything mode, so lint reads the same compiled nodes
a scan runs).
"""

from __future__ import annotations

from typing import Any

from assertree import jp
from assertree.errors import PolicyError, Problem, shorten
from assertree.jp.errors import quoted
from assertree.tree.keys import DEFAULT_COMPILER

JP = "jp"
CEL = "cel"
KNOWN = (JP, CEL)


def compile_jp_expression(statement: str, at: tuple = ()) -> jp.Expression:
    """A JMESPath statement, compiled; PolicyError (pointing at `at`) if it is invalid."""
    try:
        expression = jp.compile(statement)
    except jp.ParseError as error:
        raise PolicyError(f"invalid expression {quoted(statement, error)}: {error.located()}", path=at) from None
    if expression.problems:
        raise PolicyError(f"invalid expression {quoted(statement)}: {'; '.join(expression.problems)}", path=at)
    return expression


class CelExpression:
    """A kyverno-json CEL statement behind the interface the tree evaluates: ``search(value, scope)``,
    with the node's value as ``object`` and the rule's bindings behind ``bindings.resolve('name')``."""

    __slots__ = ("compiled", "text")
    variables: frozenset[str] = frozenset()  # bindings.resolve names are not checked by lint
    tree = None

    def __init__(self, compiled: Any) -> None:
        self.compiled = compiled
        self.text = compiled.text

    def search(self, value: Any, scope: Any = None) -> Any:
        return self.compiled.evaluate(value, scope or {})

    def explain(self, value: Any, scope: Any, trace: Any) -> None:
        """Its top-level ``&&``/``||`` clauses and their values, into an explanation's trace (--explain)."""
        self.compiled.explain(value, scope or {}, trace)


def compile_cel_expression(statement: str, at: tuple = ()) -> CelExpression:
    """A kyverno-json CEL statement, compiled (the CEL library is imported on first use)."""
    from assertree.languages.cel.engine import CelCompileError, CelUnavailableError
    from assertree.languages.cel.kyverno_json import compile_kyverno_json

    try:
        return CelExpression(compile_kyverno_json(statement))
    except CelUnavailableError as error:
        raise PolicyError(str(error), path=at) from None
    except CelCompileError as error:
        raise PolicyError(f"invalid CEL expression {shorten(repr(statement))}: {error}", path=at) from None


class Unusable:
    """What stands for an expression that did not compile, in collect-everything mode (never evaluated)."""

    variables: frozenset[str] = frozenset()
    tree = None

    def search(self, value: Any, scope: Any = None) -> Any:  # pragma: no cover - lint never evaluates
        raise RuntimeError("an expression that did not compile was evaluated")


class Compilers:
    """Which language a bare ``(statement)`` means at one place in a policy, and where problems go."""

    __slots__ = ("default", "problems")

    def __init__(self, default: str = JP, problems: list[Problem] | None = None) -> None:
        self.default = default
        self.problems = problems  # None: raise at the first problem

    def with_default(self, compiler: str | None) -> Compilers:
        """The compilers below a node that sets ``compiler:`` (unknown names change nothing)."""
        if compiler in KNOWN and compiler != self.default:
            return Compilers(compiler, self.problems)
        return self

    def report(self, error: PolicyError) -> None:
        """Raise `error`, or record it and carry on in collect-everything mode."""
        if self.problems is None:
            raise error
        self.problems.append(error.problem)

    def attempt(self, build, *args: Any) -> Any:
        """`build(*args)`, or an `Unusable` stand-in after recording its PolicyError (collect mode)."""
        try:
            return build(*args)
        except PolicyError as error:
            self.report(error)
            return Unusable()

    def compile(self, compiler: str, statement: str, at: tuple = ()) -> Any:
        """The compiled `statement` (an object with ``search(value, scope)``), or None when
        `compiler` names no known language."""
        name = self.default if compiler == DEFAULT_COMPILER else compiler
        if name == JP:
            return self.attempt(compile_jp_expression, statement, at)
        if name == CEL:
            return self.attempt(compile_cel_expression, statement, at)
        return None

    def jp(self, statement: str, at: tuple = ()) -> Any:
        """A JMESPath statement whatever the default (identifiers and message placeholders are always jp)."""
        return self.attempt(compile_jp_expression, statement, at)
