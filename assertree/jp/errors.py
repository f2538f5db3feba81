"""Exceptions raised by the JMESPath dialect.

Every failure of `assertree.jp` is a `JMESPathError`, so callers (the engine,
the CLI) catch one type and never see a bare Python exception. Each subclass
carries a `kind` matching the error names of the JMESPath compliance suites
(`syntax`, `invalid-type`, ...), which the conformance tests check.
"""

from __future__ import annotations


class JMESPathError(Exception):
    """Base class of every error raised while parsing or evaluating an expression."""

    kind = "error"


class ParseError(JMESPathError):
    """The expression text is not valid in the dialect.

    `str()` gives a one-line reason; `pretty()` adds the expression with a caret
    under the offending column, as the CLI prints it.
    """

    kind = "syntax"

    def __init__(self, message: str, expression: str = "", position: int = 0) -> None:
        self.message = message
        self.expression = expression
        self.position = position
        super().__init__(message)

    def __str__(self) -> str:
        if not self.expression:
            return self.message
        return f"{self.message} at column {self.position + 1} in {self.expression!r}"

    def located(self) -> str:
        """The reason and the column, for messages that already quote the expression."""
        return f"{self.message} at column {self.position + 1}"

    def pretty(self) -> str:
        return f"{self.message}\n{self.expression}\n{' ' * self.position}^"


class EvaluationError(JMESPathError):
    """An expression failed while being evaluated against a document."""

    kind = "evaluation"


class UndefinedVariableError(EvaluationError):
    """A `$name` reference with no binding in scope."""

    kind = "undefined-variable"

    def __init__(self, name: str) -> None:
        self.name = name
        super().__init__(f"variable not defined: ${name}")


class UnknownFunctionError(EvaluationError):
    """A call to a function that is not registered."""

    kind = "unknown-function"

    def __init__(self, name: str) -> None:
        self.name = name
        super().__init__(f"unknown function: {name}()")


class ArityError(EvaluationError):
    """A function called with the wrong number of arguments."""

    kind = "invalid-arity"


class InvalidTypeError(EvaluationError):
    """A value of the wrong JMESPath type: a function argument, or an operand."""

    kind = "invalid-type"


class InvalidValueError(EvaluationError):
    """A value of the right type but outside what the operation accepts."""

    kind = "invalid-value"


class FunctionError(EvaluationError):
    """A function rejected its input (the text is the function's own message).

    Kyverno's library words these as ``JMESPath function 'NAME': reason``; use
    `FunctionError.kyverno(name, reason)` for that form so users see the same
    text kyverno-json prints.
    """

    kind = "invalid-value"

    @classmethod
    def kyverno(cls, name: str, reason: str) -> FunctionError:
        return cls(f"JMESPath function '{name}': {reason}")
