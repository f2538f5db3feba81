"""assertree's JMESPath dialect: the language kyverno-json evaluates.

    >>> from assertree import jp
    >>> jp.search("items[?price > `10`].name | sort(@)", data)
    >>> expression = jp.compile("length($payload.spec.containers)")
    >>> expression.search(data, {"payload": document})

Standard JMESPath plus arithmetic, ``$name`` variables, ``let``, the root
reference ``$`` and the Kyverno function library (DIALECT.md in the shared
conformance folder pins it down). Compiled expressions are cached by text.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from assertree.jp.errors import (
    ArityError,
    EvaluationError,
    FunctionError,
    InvalidTypeError,
    InvalidValueError,
    JMESPathError,
    LimitError,
    ParseError,
    UndefinedVariableError,
    UnknownFunctionError,
)
from assertree.jp.limits import close_budget, open_budget

__all__ = [
    "ArityError",
    "EvaluationError",
    "Expression",
    "FunctionError",
    "InvalidTypeError",
    "InvalidValueError",
    "JMESPathError",
    "LimitError",
    "ParseError",
    "UndefinedVariableError",
    "UnknownFunctionError",
    "compile",
    "search",
]


class Expression:
    """A compiled expression: parse once, `search` many times.

    `problems` lists what is wrong regardless of the data (unknown functions,
    wrong argument counts); such calls raise when evaluated, as in go-jmespath.
    """

    __slots__ = ("_code", "calls", "problems", "text", "tree", "uses_root", "variables")

    def __init__(self, text: str, dialect: str = "kyverno") -> None:
        from assertree.jp.compiler import Compiler
        from assertree.jp.parser import parse

        self.text = text
        self.tree = parse(text)
        compiler = Compiler(dialect)
        try:
            self._code = compiler.compile(self.tree)
        except RecursionError:  # e.g. 10,000 terms joined by `+`: parsed in a loop, but nested in the tree
            raise ParseError("expression is nested too deeply", text, 0) from None
        self.problems: tuple[str, ...] = tuple(compiler.problems)
        self.uses_root = compiler.uses_root
        self.calls = compiler.calls
        self.variables = frozenset(compiler.variables)

    def search(self, data: Any, bindings: dict[str, Any] | None = None) -> Any:
        """Evaluate against `data`; `bindings` maps variable names (without ``$``) to values.

        The function calls of one search build at most `limits.MAX_BUILT` together (or share the
        budget a caller opened with `limits.evaluation_budget`); a search without calls opens none (a context
        value it reads that has calls opens its own).
        """
        scope = {} if bindings is None else bindings
        if self.uses_root:
            scope = {**scope, "$": data}
        if not self.calls:  # nothing to count (most of a scan's searches: fields, filters, comparisons)
            try:
                return self._code(data, scope)
            except RecursionError:
                raise EvaluationError("expression or document nested too deeply") from None
        budget = open_budget()
        try:
            return self._code(data, scope)
        except RecursionError:
            raise EvaluationError("expression or document nested too deeply") from None
        finally:
            close_budget(budget)

    @property
    def field_name(self) -> str | None:
        """The key, when the expression is one plain field (``address``): its search of a dict is then
        ``value.get(key)``, which a caller on a hot path may do itself; None for any other expression."""
        return self.tree.value if self.tree.type == "field" else None

    def __repr__(self) -> str:
        return f"Expression({self.text!r})"


@lru_cache(maxsize=4096)
def compile(expression: str, dialect: str = "kyverno") -> Expression:
    """Parse and compile `expression` (cached); raises ParseError on invalid text.

    `dialect` picks the function table: ``kyverno`` (default; kyverno-json's,
    with the Kyverno library) or ``community`` (go-jmespath's builtins only
    meaning, as the JMESPath compliance suites expect).
    """
    return Expression(expression, dialect)


def search(expression: str, data: Any, bindings: dict[str, Any] | None = None) -> Any:
    """Compile (cached) and evaluate `expression` against `data` in one call."""
    return compile(expression).search(data, bindings)
