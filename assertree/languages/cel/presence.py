"""Optional selections and ``has()`` on null, as cel-go resolves them: absent, not an error.

cel-go qualifies attributes by presence: ``x.?f``, ``x[?k]`` and ``has(x.f)``
ask whether ``x`` has ``f``, and a value that is neither a map, a list nor a
message (null, a number) has nothing, so they give ``optional.none()`` and
``false`` (interpreter/attributes.go, ``refQualify``: its default case under a
presence test). The CEL library instead fails with "no matching overloads
found: _?._(null_type, string)". Kubernetes manifests hold nulls wherever a
key is written without a value (``metadata:``, ``securityContext:``), and
Kyverno's policies guard with exactly these forms, so `null_safe_presence`
rewrites them before compiling:

- ``x.?f`` becomes ``[dyn(x)].map(v, <x.?f, with none for null>)[0]``, where a
  receiver that is itself an optional (``a.?b.?c``) is unwrapped first, as
  optional chaining does;
- ``x[?k]`` likewise;
- ``has(x.f)`` becomes ``[dyn(x)].map(v, v != null && has(v.f))[0]``.

The receiver is bound by a one-element ``map`` for the reason `or_value`
gives. A plain selection on null (``x.f``) stays an error, as in cel-go.
"""

from __future__ import annotations

from assertree.languages.cel.lexer import (
    IDENT,
    PUNCT,
    Piece,
    Splice,
    Token,
    ends_operand,
    matching,
    receiver_start,
    rewrite_each,
    synthetic,
)

__all__ = ["null_safe_presence"]


def null_safe_presence(text: str) -> str:
    """`text` with ``.?f``, ``[?k]`` and ``has(x.f)`` giving none/false on a null receiver."""
    if "?" not in text and "has" not in text:
        return text
    return rewrite_each(text, _step, _rewrite)


def _rewrite(source: Splice, step: tuple[str, int, int], counter: int) -> int:
    kind, start, end = step
    found, items, name = source.tokens, source.items, f"__present_{counter}__"
    if kind == "has":  # has( R . f ): start is `has`, end the closing parenthesis, the field just before it
        field = found[end - 1].text
        source.replace(start, end + 1, [
            *synthetic("[dyn("), *items[start + 2:end - 2],
            *synthetic(f")].map({name}, {name} != null && has({name}.{field}))[0"),
            (Token(PUNCT, "]", -1, -1), items[end][1])])
    else:  # R.?f or R[?k]: R is items[start:at], the step items[at:end + 1]
        at = next(i for i in range(end, start - 1, -1) if found[i].text in ".[" and found[i + 1].text == "?")
        source.replace(start, end + 1, _wrapped(name, items[start:at], items[at:end + 1]))
    return start  # the replacement starts with inserted text; what it wraps holds no earlier step


def _wrapped(name: str, receiver: list[Piece], step: list[Piece]) -> list[Piece]:
    """``[dyn(R)].map(name, <name + step, none for null, an optional receiver unwrapped>)[0]``."""
    copy = [(Token(token.kind, token.text, -1, -1), after) for token, after in step[:-1]]
    copy.append((Token(step[-1][0].kind, step[-1][0].text, -1, -1), ""))
    return [*synthetic("[dyn("), *receiver,
            *synthetic(f")].map({name}, type({name}) == optional_type ? ({name}.hasValue() && {name}.value() != null"
                       f" ? {name}.value()"), *copy,
            *synthetic(f" : optional.none()) : ({name} == null ? optional.none() : {name}"), *copy,
            *synthetic("))[0"), (Token(PUNCT, "]", -1, -1), step[-1][1])]


def _step(found: list[Token], i: int) -> tuple[str, int, int] | None:
    """(kind, receiver start or `has`, last token) of a presence step at `i`; only steps written in the
    source count (inserted text is never rewritten again)."""
    token = found[i]
    if token.start < 0 or i + 2 >= len(found):
        return None
    if token.kind == PUNCT and token.text == "." and found[i + 1].text == "?" and found[i + 2].kind == IDENT:
        if i == 0 or not ends_operand(found[i - 1]):
            return None
        start = receiver_start(found, i)
        return None if start is None else ("select", start, i + 2)
    if token.kind == PUNCT and token.text == "[" and found[i + 1].text == "?" and i > 0 and ends_operand(found[i - 1]):
        closing = matching(found, i)
        start = receiver_start(found, i)
        return None if closing is None or start is None else ("index", start, closing)
    if token.kind == IDENT and token.text == "has" and found[i + 1].text == "(" and not (
            i > 0 and found[i - 1].text == "."):
        closing = matching(found, i + 1)
        if (closing is None or closing - i < 5 or found[closing - 1].kind != IDENT
                or found[closing - 2].text != "." or not ends_operand(found[closing - 3])):
            return None
        if receiver_start(found, closing - 2) != i + 2:
            return None  # not one member chain: the parser reports it
        return "has", i, closing
    return None
