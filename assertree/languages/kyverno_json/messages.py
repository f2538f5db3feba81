"""Assertion messages with ``{{ expression }}`` placeholders.

As in kyverno-json, each placeholder is JMESPath (whatever the compiler), is
evaluated against the **whole resource** with the rule's bindings, and only
strings are inserted: null gives ``ERR (<expr> not found)``, other types
``ERR (<expr> not a string)``, an evaluation error ``ERR (<expr> - <error>)``.
Unlike kyverno-json, a placeholder that is not a valid expression is a policy
error at load time.
"""

from __future__ import annotations

import re
from typing import Any

from assertree.jp.errors import JMESPathError
from assertree.languages.kyverno_json.expressions import Compilers

_PLACEHOLDER = re.compile(r"{{(.*?)}}")


class Message:
    __slots__ = ("_expressions", "_pieces", "text")

    def __init__(self, text: str, at: tuple = (), compilers: Compilers | None = None) -> None:
        self.text = text
        self._expressions: dict[str, Any] = {}
        compilers = compilers or Compilers()
        # the text around the placeholders and their statements, in turn: [text, statement, text, ..., text]
        self._pieces = [piece.strip() if position % 2 else piece
                        for position, piece in enumerate(_PLACEHOLDER.split(text))]
        for statement in self._pieces[1::2]:
            if statement not in self._expressions:
                self._expressions[statement] = compilers.jp(statement, at)

    @property
    def expressions(self) -> list:
        """The compiled placeholder expressions (for lint)."""
        return list(self._expressions.values())

    def render(self, resource: Any, scope: dict) -> str:
        """The text with each placeholder replaced (what ``re.sub`` over the text would give, without a
        scan of the text and a callback per placeholder: a message is rendered for every failure)."""
        if not self._expressions:
            return self.text
        pieces = self._pieces
        out = [pieces[0]]
        for position in range(1, len(pieces), 2):
            out.append(self._substitute(pieces[position], resource, scope))
            out.append(pieces[position + 1])
        return "".join(out)

    def _substitute(self, statement: str, resource: Any, scope: dict) -> str:
        try:
            result = self._expressions[statement].search(resource, scope)
        except JMESPathError as error:
            return f"ERR ({statement} - {error})"
        if result is None:
            return f"ERR ({statement} not found)"
        if not isinstance(result, str):
            return f"ERR ({statement} not a string)"
        return result
