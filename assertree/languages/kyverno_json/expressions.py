"""The expression languages of a policy: kyverno-json's ``compiler`` fields.

A ``(statement)`` uses the nearest ``compiler`` set on the assertion, the
assert/match block, the rule or the policy (``jp`` when none is set); a key can
force one with ``(jp;statement)``. An unknown compiler name is not an error: the
key falls back to a plain lookup, as in kyverno-json. Every expression is
compiled here, at load time, so a typo fails before any payload is read.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from assertree import jp
from assertree.errors import PolicyError, shorten
from assertree.tree.keys import DEFAULT_COMPILER

JP = "jp"
CEL = "cel"
KNOWN = (JP, CEL)

Evaluate = Callable[[Any, dict], Any]


def compile_jp(statement: str, at: tuple = ()) -> Evaluate:
    """A JMESPath statement as an evaluator ``f(value, scope)``; PolicyError if it is invalid."""
    return compile_jp_expression(statement, at).search


def compile_jp_expression(statement: str, at: tuple = ()) -> jp.Expression:
    try:
        expression = jp.compile(statement)
    except jp.ParseError as error:
        raise PolicyError(f"invalid expression {shorten(repr(statement))}: {error.located()}", path=at) from None
    if expression.problems:
        raise PolicyError(f"invalid expression {shorten(repr(statement))}: {'; '.join(expression.problems)}", path=at)
    return expression


def compile_cel(statement: str, at: tuple = ()) -> Evaluate:
    raise PolicyError(
        f"the cel compiler is not supported yet (expression {statement!r}); use JMESPath (compiler: jp)",
        path=at,
    )


class Compilers:
    """Which language a bare ``(statement)`` means at one place in a policy."""

    __slots__ = ("default",)

    def __init__(self, default: str = JP) -> None:
        self.default = default

    def with_default(self, compiler: str | None) -> Compilers:
        """The compilers below a node that sets ``compiler:`` (unknown names change nothing)."""
        if compiler in KNOWN and compiler != self.default:
            return Compilers(compiler)
        return self

    def compile(self, compiler: str, statement: str, at: tuple = ()) -> Evaluate | None:
        """An evaluator for `statement`, or None when `compiler` names no known language."""
        name = self.default if compiler == DEFAULT_COMPILER else compiler
        if name == JP:
            return compile_jp(statement, at)
        if name == CEL:
            return compile_cel(statement, at)
        return None
