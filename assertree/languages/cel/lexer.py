"""CEL source text as tokens, for the source rewrites that stand in for cel-go options the CEL library lacks.

Kyverno configures cel-go with things the CEL library assertree runs cannot
take: a parse-time macro (``x.orValue(y)``, `compat`), lazily evaluated
``variables``. Both are done by rewriting the expression text before it is
compiled, and both need to know where identifiers, strings and brackets are.
This lexer gives that and nothing more: it does not check the grammar (the
library's parser does, on the rewritten text, and reports errors against it).

Written by hand because no Python CEL library exposes its lexer; it follows
the cel-spec lexical grammar (langdef.md): identifiers, numbers with
``u``/hex/exponent forms, string and bytes literals with ``r``/``b`` prefixes
and triple quotes, ``//`` comments, and the punctuation.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

__all__ = [
    "CLOSING",
    "OPENING",
    "Piece",
    "Splice",
    "Token",
    "arguments",
    "closing_quote",
    "ends_operand",
    "join",
    "matching",
    "pieces",
    "receiver_start",
    "rename_calls",
    "rewrite_each",
    "string_end",
    "synthetic",
    "tokens",
]

IDENT, NUMBER, STRING, PUNCT = "ident", "number", "string", "punct"
OPENING = {"(": ")", "[": "]", "{": "}"}
CLOSING = {value: key for key, value in OPENING.items()}

_SPACE = re.compile(r"(?:\s+|//[^\n]*)+")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NUMBER = re.compile(r"0[xX][0-9a-fA-F]+[uU]?|(?:[0-9]+\.[0-9]*|\.[0-9]+|[0-9]+)(?:[eE][-+]?[0-9]+)?[uU]?")
_STRING_START = re.compile(r"""(?:[rR][bB]?|[bB][rR]?)?('''|\"\"\"|'|")""")
_PUNCT = re.compile(r"==|!=|<=|>=|&&|\|\||[-+*/%!<>?:.,()\[\]{}]")


@dataclass(frozen=True, slots=True)
class Token:
    """One token: its kind (ident, number, string, punct), text and place in the source."""

    kind: str
    text: str
    start: int
    end: int


def string_end(text: str, start: int) -> int | None:
    """The index after the string or bytes literal starting at `start` (prefix included), or None when none
    starts there. An unterminated literal runs to the end (the parser reports it)."""
    if _STRING_START.match(text, start) is None:
        return None
    end = closing_quote(text, start)
    return len(text) if end is None else end


def closing_quote(text: str, start: int) -> int | None:
    """The index after the closing quote of the literal that starts at `start`, None when it never closes."""
    found = _STRING_START.match(text, start)
    assert found is not None
    quote = found.group(1)
    raw = "r" in found.group(0)[: found.start(1) - start].lower()
    position = found.end()
    while position < len(text):
        if not raw and text[position] == "\\":
            position += 2
            continue
        if text.startswith(quote, position):
            return position + len(quote)
        position += 1
    return None


def tokens(text: str) -> list[Token]:
    """The tokens of `text`; a character no rule accepts becomes a one-character punct token."""
    out: list[Token] = []
    position = 0
    while position < len(text):
        space = _SPACE.match(text, position)
        if space is not None:
            position = space.end()
            continue
        end = string_end(text, position)
        if end is not None:
            out.append(Token(STRING, text[position:end], position, end))
            position = end
            continue
        for kind, pattern in ((IDENT, _IDENT), (NUMBER, _NUMBER), (PUNCT, _PUNCT)):
            found = pattern.match(text, position)
            if found is not None:
                out.append(Token(kind, found.group(0), position, found.end()))
                position = found.end()
                break
        else:
            out.append(Token(PUNCT, text[position], position, position + 1))
            position += 1
    return out


def matching(items: list[Token], index: int) -> int | None:
    """The index of the bracket closing (or opening) the one at `index`; None when unbalanced."""
    text = items[index].text
    if text in OPENING:
        step, same, other = 1, text, OPENING[text]
    elif text in CLOSING:
        step, same, other = -1, text, CLOSING[text]
    else:
        return None
    depth = 0
    position = index
    while 0 <= position < len(items):
        current = items[position]
        if current.kind == PUNCT and current.text == same:
            depth += 1
        elif current.kind == PUNCT and current.text == other:
            depth -= 1
            if depth == 0:
                return position
        position += step
    return None


Piece = tuple[Token, str]
"""A token and the text that follows it (spaces, comments), so that a rewrite keeps the rest as written."""


def pieces(text: str) -> tuple[str, list[Piece]]:
    """The text before the first token, and every token with what follows it."""
    found = tokens(text)
    if not found:
        return text, []
    ends = [token.start for token in found[1:]] + [len(text)]
    return text[:found[0].start], [(token, text[token.end:end]) for token, end in zip(found, ends, strict=True)]


def synthetic(text: str) -> list[Piece]:
    """The pieces of text a rewrite inserts; their tokens have no place in the source (start -1)."""
    return list(_synthetic(text))


@lru_cache(maxsize=512)
def _synthetic(text: str) -> tuple[Piece, ...]:
    # The rewrites insert a few fragments over and over (their names numbered per expression): lexed once
    # each. The same pieces as lexing anew, since tokens are frozen and the result is a fresh list each time.
    return tuple((Token(token.kind, token.text, -1, -1), "") for token in tokens(text))


def join(head: str, items: list[Piece]) -> str:
    """The text of `pieces` (after `head`)."""
    return head + "".join(token.text + after for token, after in items)


class Splice:
    """A text's pieces, changed in place by the rewrites; `tokens` stays in step with `items`."""

    def __init__(self, text: str) -> None:
        self.head, self.items = pieces(text)
        self.tokens = [token for token, _ in self.items]

    def replace(self, start: int, end: int, replacement: list[Piece]) -> None:
        """Put `replacement` in place of the pieces ``start:end``."""
        self.items[start:end] = replacement
        self.tokens[start:end] = [token for token, _ in replacement]

    def text(self) -> str:
        return join(self.head, self.items)


Finder = Callable[[list[Token], int], Any]
"""What a rewrite looks for: given the tokens and an index, a match starting there (anything but None)."""
Rewriter = Callable[[Splice, Any, int], int]
"""Rewrite one match in place (the int numbers the rewrite's names); return the index to look on from."""


def rewrite_each(text: str, find: Finder, rewrite: Rewriter) -> str:
    """`text` with every place `find` recognises rewritten by `rewrite`, left to right, each once (what a
    rewrite inserts is found again only where the rewrite says to look on from)."""
    source = Splice(text)
    index = counter = 0
    while True:
        found = next((match for i in range(index, len(source.tokens)) if (match := find(source.tokens, i))
                      is not None), None)
        if found is None:
            return source.text()
        index = rewrite(source, found, counter)
        counter += 1


def arguments(items: list[Token], opening: int, closing: int) -> int:
    """How many arguments the call whose parentheses are at `opening` and `closing` has."""
    if closing == opening + 1:
        return 0
    depth = 0
    count = 1
    for token in items[opening + 1:closing]:
        if token.kind != PUNCT:
            continue
        if token.text in OPENING:
            depth += 1
        elif token.text in CLOSING:
            depth -= 1
        elif token.text == "," and depth == 0:
            count += 1
    return count


def rename_calls(text: str, name: str, template: str, arity: int) -> str:
    """`text` with calls of the (dotted) function `name` that have `arity` arguments written as `template`, in
    which ``{args}`` stands for the arguments as written (``"other({args})"`` renames the call)."""
    if name.rsplit(".", 1)[-1] not in text:
        return text
    wanted = [token.text for token in tokens(name)]  # ["math", ".", "round"]
    width = len(wanted)
    before, _, after = template.partition("{args}")
    source = Splice(text)
    found = source.tokens
    index = 0
    while index + width < len(found):
        if ([token.text for token in found[index:index + width]] == wanted and found[index + width].text == "("
                and found[index].start >= 0 and not (index > 0 and found[index - 1].text == ".")):
            closing = matching(found, index + width)
            if closing is not None and arguments(found, index + width, closing) == arity:
                replacement = [*synthetic(before), *source.items[index + width + 1:closing], *synthetic(after)]
                replacement[-1] = (replacement[-1][0], source.items[closing][1])
                source.replace(index, closing + 1, replacement)
        index += 1
    return source.text()


_KEYWORDS = frozenset({"in", "true", "false", "null"})  # identifiers that never name a callee


def ends_operand(token: Token) -> bool:
    if token.kind in (NUMBER, STRING):
        return True
    if token.kind == IDENT:
        return token.text != "in"
    return token.kind == PUNCT and token.text in CLOSING


def receiver_start(items: list[Token], dot: int) -> int | None:
    """The index of the first token of the member chain that ends just before `dot`, or None."""
    index = dot - 1
    while index >= 0:
        token = items[index]
        if token.kind == PUNCT and token.text in CLOSING:
            opening = matching(items, index)
            if opening is None:
                return None
            before = items[opening - 1] if opening > 0 else None
            if token.text == ")" and before is not None and before.kind == IDENT and before.text not in _KEYWORDS:
                index = opening - 1  # a call: continue from its function name
            elif token.text == "]" and before is not None and ends_operand(before):
                index = opening - 1  # an index into what precedes it
            elif token.text == "}" and before is not None and before.kind == IDENT and before.text not in _KEYWORDS:
                index = opening - 1  # a message construction: Name{...}
            else:
                return opening  # a parenthesised expression, a list or a map literal
            continue
        if token.kind not in (IDENT, NUMBER, STRING):
            return None
        previous = index - 1
        if previous >= 0 and items[previous].text == "?" and previous > 0 and items[previous - 1].text == ".":
            previous -= 1  # an optional selection: a.?b
        if previous >= 0 and items[previous].kind == PUNCT and items[previous].text == ".":
            if previous > 0 and ends_operand(items[previous - 1]):
                index = previous - 1
                continue
            return previous  # a leading dot: .name (the root namespace)
        return index
    return None
