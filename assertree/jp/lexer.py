"""Turns expression text into tokens.

The token set is official JMESPath plus the community dialect's additions as
go-jmespath lexes them (DIALECT.md a.2): arithmetic operators in ASCII and
Unicode (``+ - * / // % − × ÷``), ``$name`` variables and the bare root ``$``,
``=`` for ``let`` bindings, raw strings where both ``\\'`` and ``\\\\`` are
escapes, and JSON literals without the legacy string fallback. A ``-``
followed by a digit is a negative number, as in official JMESPath, so ``a-1``
is a syntax error while ``a - `1``` subtracts.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from assertree.jp.errors import ParseError
from assertree.records import ValueRecord

_IDENT_START = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_")
_IDENT_CHARS = _IDENT_START | frozenset("0123456789")
_DIGITS = frozenset("0123456789")
_WHITESPACE = frozenset(" \t\n\r")

# Characters that always form a token on their own.
_SIMPLE = {
    ".": "dot",
    "*": "star",
    "]": "rbracket",
    ",": "comma",
    ":": "colon",
    "@": "current",
    "(": "lparen",
    ")": "rparen",
    "{": "lbrace",
    "}": "rbrace",
    "+": "plus",
    "%": "modulo",
    "\u2212": "minus",  # − MINUS SIGN
    "\u00d7": "multiply",  # × MULTIPLICATION SIGN
    "\u00f7": "divide",  # ÷ DIVISION SIGN
}


class Token(ValueRecord):
    """One lexeme: its kind, its value (a literal's, a number's, a name's), and where it is in the text."""

    type: str
    value: Any
    start: int
    end: int

    __slots__ = ("end", "start", "type", "value")

    def __init__(self, type: str, value: Any, start: int, end: int) -> None:
        self.type = type
        self.value = value
        self.start = start
        self.end = end


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def tokenize(expression: str) -> list[Token]:
    """All tokens of `expression`, ending with an `eof` token; raises ParseError on bad text."""
    return list(iter_tokens(expression))


def iter_tokens(expression: str) -> Iterator[Token]:
    """The tokens of `expression` one at a time, ending with an `eof` token.

    The parser reads them as it goes, so an expression it rejects early (nested
    too deeply) costs no time for the text after the error.
    """
    tokens: list[Token] = []  # the tokens of the current step, handed out before the next
    append = tokens.append
    position = 0
    length = len(expression)
    while position < length:
        if tokens:
            yield from tokens
            tokens.clear()
        char = expression[position]
        start = position
        if char in _WHITESPACE:
            position += 1
            continue
        simple = _SIMPLE.get(char)
        if simple is not None:
            append(Token(simple, char, start, start + 1))
            position += 1
        elif char in _IDENT_START:
            position += 1
            while position < length and expression[position] in _IDENT_CHARS:
                position += 1
            append(Token("unquoted_identifier", expression[start:position], start, position))
        elif char == "[":
            following = expression[position + 1 : position + 2]
            if following == "]":
                append(Token("flatten", "[]", start, start + 2))
                position += 2
            elif following == "?":
                append(Token("filter", "[?", start, start + 2))
                position += 2
            else:
                append(Token("lbracket", "[", start, start + 1))
                position += 1
        elif char == "'":
            position = _raw_string(expression, position, append)
        elif char == '"':
            position = _quoted_identifier(expression, position, append)
        elif char == "`":
            position = _json_literal(expression, position, append)
        elif char in _DIGITS or (char == "-" and expression[position + 1 : position + 2] in _DIGITS):
            position += 1
            while position < length and expression[position] in _DIGITS:
                position += 1
            append(Token("number", int(expression[start:position]), start, position))
        elif char == "-":
            append(Token("minus", char, start, start + 1))
            position += 1
        elif char == "/":
            if expression[position + 1 : position + 2] == "/":
                append(Token("div", "//", start, start + 2))
                position += 2
            else:
                append(Token("divide", "/", start, start + 1))
                position += 1
        elif char == "$":
            position += 1
            while position < length and expression[position] in _IDENT_CHARS:
                position += 1
            if position == start + 1:
                append(Token("root", "$", start, position))
            else:
                append(Token("variable", expression[start + 1 : position], start, position))
        elif char == "|":
            position = _one_or_two(expression, position, "|", "pipe", "or", append)
        elif char == "&":
            position = _one_or_two(expression, position, "&", "expref", "and", append)
        elif char == "=":
            position = _one_or_two(expression, position, "=", "assign", "eq", append)
        elif char == "<":
            position = _one_or_two(expression, position, "=", "lt", "lte", append)
        elif char == ">":
            position = _one_or_two(expression, position, "=", "gt", "gte", append)
        elif char == "!":
            position = _one_or_two(expression, position, "=", "not", "ne", append)
        else:
            raise ParseError(f"unexpected character {char!r}", expression, start)
    yield from tokens
    yield Token("eof", "", length, length)


def _one_or_two(expression: str, position: int, second: str, single: str, double: str, append) -> int:
    """A one-character token, or a two-character one when `second` follows (`|` / `||`)."""
    char = expression[position]
    if expression[position + 1 : position + 2] == second:
        append(Token(double, char + second, position, position + 2))
        return position + 2
    append(Token(single, char, position, position + 1))
    return position + 1


def _closing(expression: str, position: int, quote: str) -> int:
    """Index of the quote that closes the one at `position`, skipping backslash escapes."""
    index = position + 1
    length = len(expression)
    while index < length:
        char = expression[index]
        if char == "\\":
            index += 2
            continue
        if char == quote:
            return index
        index += 1
    raise ParseError(f"unterminated {quote} quote", expression, position)


def _raw_string(expression: str, position: int, append) -> int:
    end = _closing(expression, position, "'")
    body = expression[position + 1 : end]
    # Community JMESPath (and go-jmespath): only \' and \\ are escapes in raw strings.
    out = []
    index = 0
    while index < len(body):
        char = body[index]
        if char == "\\" and index + 1 < len(body) and body[index + 1] in "'\\":
            out.append(body[index + 1])
            index += 2
        else:
            out.append(char)
            index += 1
    append(Token("literal", "".join(out), position, end + 1))
    return end + 1


def _quoted_identifier(expression: str, position: int, append) -> int:
    end = _closing(expression, position, '"')
    text = expression[position : end + 1]
    try:
        value = json.loads(text)
    except ValueError as error:
        raise ParseError(f"invalid quoted identifier {text}: {error}", expression, position) from None
    append(Token("quoted_identifier", value, position, end + 1))
    return end + 1


def _json_literal(expression: str, position: int, append) -> int:
    end = _closing(expression, position, "`")
    text = expression[position + 1 : end].replace("\\`", "`")
    try:
        value = json.loads(text, parse_constant=_reject_constant)
    except (ValueError, RecursionError):
        shown = text if len(text) <= 60 else text[:57] + "..."
        raise ParseError(
            f"invalid JSON literal `{shown}` (strings inside backticks must be quoted: `\"text\"`)",
            expression,
            position,
        ) from None
    append(Token("literal", value, position, end + 1))
    return end + 1
