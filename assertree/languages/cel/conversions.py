"""``string(ip)`` and ``string(cidr)``: Kubernetes' overloads of the standard ``string`` conversion.

Kubernetes' IP and CIDR libraries add overloads to ``string`` (the address or
prefix in canonical form). The CEL library takes one declaration per function
name and the standard library owns ``string``, so the overloads cannot be
declared. `opaque_string_conversions` rewrites each ``string(x)`` call
instead into standard CEL that chooses at run time, as overload resolution
would (``x`` bound by a one-element ``map``, as `or_value` binds, for the
same reason)::

    [dyn(x)].map(__string_0__, type(__string_0__) == map
                 ? __string_of_opaque__(__string_0__) : string(__string_0__))[0]

``__string_of_opaque__`` (`functions.declare`) gives the text of an opaque
stand-in (``ip``, ``cidr``: the canonical text they were built with) and fails
with "no such overload" for any other map, as ``string`` does. The result
type stays ``string``. Only expressions that can make such values (they call
``ip``, ``cidr``, ``.ip()`` or ``.masked()``) are rewritten.
"""

from __future__ import annotations

import re

from assertree.languages.cel.lexer import (
    IDENT,
    PUNCT,
    Piece,
    Splice,
    Token,
    arguments,
    matching,
    rewrite_each,
    synthetic,
)

__all__ = ["OPAQUE_STRING", "opaque_string_conversions"]

OPAQUE_STRING = "__string_of_opaque__"
_MAKES_OPAQUE = re.compile(r"\b(?:ip|cidr)\s*\(|\.\s*(?:ip|masked)\s*\(")  # only these make ip/cidr values


def _find(found: list[Token], call: int) -> tuple[int, int] | None:
    """(``string``, closing parenthesis) of a one-argument ``string(...)`` call written in the source."""
    if not (call + 1 < len(found) and found[call].kind == IDENT and found[call].text == "string"
            and found[call].start >= 0 and found[call + 1].text == "("
            and not (call > 0 and found[call - 1].text == ".")):
        return None
    closing = matching(found, call + 1)
    return None if closing is None or arguments(found, call + 1, closing) != 1 else (call, closing)


def _rewrite(source: Splice, match: tuple[int, int], counter: int) -> int:
    call, closing = match
    items, name = source.items, f"__string_{counter}__"
    replacement: list[Piece] = [*synthetic("[dyn(")]
    argument_at = call + len(replacement)
    replacement += [*items[call + 2:closing],
                    *synthetic(f")].map({name}, type({name}) == map ? {OPAQUE_STRING}({name}) : string({name}))[0")]
    replacement.append((Token(PUNCT, "]", -1, -1), items[closing][1]))
    source.replace(call, closing + 1, replacement)
    return argument_at


def opaque_string_conversions(text: str) -> str:
    """`text` with every one-argument ``string(...)`` call able to convert opaque values."""
    if "string" not in text or not _MAKES_OPAQUE.search(text):
        return text
    return rewrite_each(text, _find, _rewrite)
