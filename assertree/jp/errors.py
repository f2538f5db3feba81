"""Exceptions raised by the JMESPath dialect.

Every failure of `assertree.jp` is a `JMESPathError`, so callers (the engine,
the CLI) catch one type and never see a bare Python exception. Each subclass
carries a `kind` matching the error names of the JMESPath compliance suites
(`syntax`, `invalid-type`, ...), which the conformance tests check.
"""

from __future__ import annotations

from assertree.errors import shorten


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
        self.message = shorten(message, 200)  # it may quote a token of the text, which may be as long as the text
        self.expression = expression
        self.position = position
        super().__init__(message)

    def __str__(self) -> str:
        if not self.expression:
            return self.message
        return f"{self.message} at column {self.position + 1} in {self.excerpt()!r}"

    def located(self) -> str:
        """The reason and the column, for messages that already quote the expression."""
        return f"{self.message} at column {self.position + 1}"

    def excerpt(self, width: int = 120) -> str:
        """The expression, or for a long one (a hostile policy's 100,000 terms) `width` characters around the
        offending column with ``...`` where text was left out, so that a message stays one readable line."""
        return self._window(width)[1]

    def pretty(self) -> str:
        caret, text = self._window(120)
        return f"{self.message}\n{text}\n{' ' * caret}^"

    def _window(self, width: int) -> tuple[int, str]:
        """(the caret's column in the excerpt, the excerpt)."""
        text = self.expression
        if len(text) <= width:
            return self.position, text
        start = max(0, min(self.position - width // 2, len(text) - width))
        head = "..." if start > 0 else ""
        tail = "..." if start + width < len(text) else ""
        return self.position - start + len(head), head + text[start : start + width] + tail


def quoted(text: str, error: BaseException | None = None) -> str:
    """`text` quoted for a one-line message: whole when short; for a long one (a hostile 100,000-term
    expression) the part around the error's column when `error` is a ParseError, else its two ends."""
    if isinstance(error, ParseError) and error.expression == text:
        return repr(error.excerpt(80))
    return shorten(repr(text), 160)


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


class LimitError(FunctionError):
    """A value or an expression beyond one of assertree's limits (`assertree.jp.limits`).

    Never swallowed where go-jmespath turns an error into null (the left of a
    filter, a flatten or ``.*``): a limit must stop the evaluation.
    """
