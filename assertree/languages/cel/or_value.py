"""Kyverno's ``orValue`` compatibility macro: ``x.orValue(y)`` is ``x`` itself when ``x`` is not an optional.

cel-go 0.28 made ``orValue`` on a value that is not an optional an error (no
such overload); earlier versions returned the value. Kyverno keeps the old
behaviour for every policy kind it compiles, ValidatingAdmissionPolicies
included (kyverno/kyverno pkg/cel/compiler/env.go, ``OrValueCompatEnvOptions``):
a receiver macro rewrites each ``x.orValue(y)`` at parse time into
``__orValueCompat__(x, y)``, which gives ``x``'s value when ``x`` is an
optional that has one, ``y`` when it is an empty optional, and ``x`` itself
otherwise. Policies rely on it: ``container.volumeMounts.orValue([])`` and
``resource.List(...).items.orValue([])`` are common in kyverno/policies.

The CEL library has no macros and cannot pass an optional to a function
written in Python, so `or_value_compat` makes the same rewrite in the source,
into standard CEL (the ``optional`` extension)::

    [dyn(x)].map(__or_value_0__, type(__or_value_0__) == optional_type
                 ? (__or_value_0__.hasValue() ? __or_value_0__.value() : (y))
                 : __or_value_0__)[0]

which has the macro's meaning and, like ``__orValueCompat__``, the type
``dyn``. Like the macro's function, an error in ``x`` is the result. One
difference: cel-go evaluates ``y`` even when ``x`` has a value, so an error in
``y`` is the result there; here ``y`` is only evaluated when it is used.
``x`` is bound by a one-element ``map`` rather than ``cel.bind``: in the CEL
library (cel-expr-python 0.1.3) a ``cel.bind`` inside a comprehension's body
keeps a stale value across iterations when another comprehension in that body
stops early (``[1, 2].map(c, [cel.bind(v, c, v), [7, 8].exists(t, t == 7)])``
gives ``[[1, true], [8, true]]``), and ``orValue`` is mostly used inside
``all``/``exists``.

The receiver is found by walking back over the member chain before
``.orValue`` (identifiers, ``.``/``.?`` selections, calls, indexes, and
bracketed or literal primaries), as CEL's grammar binds it: ``!a.b.orValue(c)``
is ``!(a.b.orValue(c))``. Calls with other than one argument are left alone,
as the macro leaves them (the library then reports them).
"""

from __future__ import annotations

from assertree.languages.cel.lexer import (
    IDENT,
    PUNCT,
    Piece,
    Splice,
    Token,
    arguments,
    matching,
    receiver_start,
    rewrite_each,
    synthetic,
)

__all__ = ["or_value_compat"]

def _find(found: list[Token], dot: int) -> tuple[int, int, int] | None:
    """(receiver start, dot, closing parenthesis) of a one-argument ``.orValue(...)`` call at `dot`."""
    if not (dot + 2 < len(found) and found[dot].text == "." and found[dot].kind == PUNCT
            and found[dot + 1].text == "orValue" and found[dot + 1].kind == IDENT and found[dot + 2].text == "("):
        return None
    start = receiver_start(found, dot)
    closing = matching(found, dot + 2)
    if start is None or closing is None or arguments(found, dot + 2, closing) != 1:
        return None
    return start, dot, closing


def _rewrite(source: Splice, match: tuple[int, int, int], counter: int) -> int:
    start, dot, closing = match
    items, name = source.items, f"__or_value_{counter}__"
    replacement: list[Piece] = [
        *synthetic("[dyn("), *items[start:dot],
        *synthetic(f")].map({name}, type({name}) == optional_type ? ({name}.hasValue() ? {name}.value() : ("),
    ]
    argument_at = start + len(replacement)
    replacement += [*items[dot + 3:closing], *synthetic(f")) : {name})[0"), (Token(PUNCT, "]", -1, -1),
                                                                           items[closing][1])]
    source.replace(start, closing + 1, replacement)
    return argument_at  # the argument and what follows may hold more calls; the receiver holds none


def or_value_compat(text: str) -> str:
    """`text` with every one-argument ``.orValue(...)`` call rewritten as Kyverno's macro reads it."""
    return rewrite_each(text, _find, _rewrite) if "orValue" in text else text
