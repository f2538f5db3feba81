"""Writing CEL text: literals, field selection, wildcards as regular expressions, boolean algebra.

Every converter builds its expressions through these helpers, so quoting,
the forms Kubernetes' CEL accepts (Kyverno compiles with homogeneous aggregate
literals: ``['a', 1]`` is refused, ``[dyn('a'), dyn(1)]`` is not) and the
folding of constant ``true``/``false`` live in one place. Expressions are
plain strings; `and_`, `or_` and `not_` parenthesise what they combine.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Iterator
from typing import Any

from assertree.migrate.convert.refusal import NotConvertible

__all__ = [
    "FALSE",
    "TRUE",
    "and_",
    "has",
    "index",
    "is_number",
    "literal",
    "not_",
    "or_",
    "paren",
    "select",
    "string",
    "wildcard_regex",
    "wildcard_test",
]

TRUE = "true"
FALSE = "false"
IS_NUMBER = "type({0}) in [int, uint, double]"

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_RESERVED = frozenset({"in", "as", "break", "const", "continue", "else", "for", "function", "if", "import", "let",
                       "loop", "package", "namespace", "return", "var", "void", "while", "true", "false", "null"})
_SIMPLE = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*(\[[^\[\]]*\])*(\.[A-Za-z_][A-Za-z0-9_]*)*")


def string(text: str) -> str:
    """A CEL string literal holding `text` exactly."""
    out = ["'"]
    for char in text:
        if char == "\\":
            out.append("\\\\")
        elif char == "'":
            out.append("\\'")
        elif char == "\n":
            out.append("\\n")
        elif char == "\r":
            out.append("\\r")
        elif char == "\t":
            out.append("\\t")
        elif ord(char) < 0x20 or ord(char) == 0x7F:
            out.append(f"\\x{ord(char):02x}")
        else:
            out.append(char)
    out.append("'")
    return "".join(out)


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "double"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "list"
    return "map"


def _number(value: int | float) -> str:
    if isinstance(value, int):
        return str(value)
    if math.isnan(value) or math.isinf(value):
        raise NotConvertible(f"the number {value} has no CEL literal")
    text = repr(value)
    return text if any(c in text for c in ".en") else f"{text}.0"


def literal(value: Any) -> str:
    """The CEL literal of a JSON value; lists and maps mixing kinds wrap their items in ``dyn()``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return TRUE if value else FALSE
    if isinstance(value, int | float):
        return _number(value)
    if isinstance(value, str):
        return string(value)
    if isinstance(value, list):
        mixed = len({_kind(item) for item in value}) > 1 or any(isinstance(item, list | dict) for item in value)
        items = [literal(item) for item in value]
        return "[" + ", ".join(f"dyn({item})" if mixed else item for item in items) + "]"
    if isinstance(value, dict):
        mixed = len({_kind(item) for item in value.values()}) > 1 or any(
            isinstance(item, list | dict) for item in value.values())
        pairs = [f"{string(str(key))}: {f'dyn({literal(item)})' if mixed else literal(item)}"
                 for key, item in value.items()]
        return "{" + ", ".join(pairs) + "}"
    raise NotConvertible(f"a {type(value).__name__} has no CEL literal")


def select(base: str, key: str) -> str:
    """``base.key``, or ``base['key']`` when `key` is no CEL identifier."""
    if _IDENTIFIER.fullmatch(key) and key not in _RESERVED:
        return f"{base}.{key}"
    return f"{base}[{string(key)}]"


def or_empty(optional: str, empty: str) -> str:
    """The CEL optional `optional`'s value, or `empty` (``[]``, ``{}``) when it is missing or null (JMESPath reads
    a null field as a missing one, and manifests may write ``rules: null``)."""
    return f"{optional}.optFlatMap(value, optional.ofNonZeroValue(value)).orValue({empty})"


def not_null(optional: str) -> str:
    """The CEL optional `optional`, empty when it holds null (JMESPath reads a null field as a missing one)."""
    return f"{optional}.optFlatMap(value, value == null ? optional.none() : optional.of(value))"


def has(base: str, key: str) -> str:
    """Whether the map `base` holds `key` (a null value counts as held)."""
    return f"{string(key)} in {base}"


def index(base: str, position: int) -> str:
    return f"{base}[{position}]"


def is_number(value: str) -> str:
    return IS_NUMBER.format(value)


def paren(expression: str) -> str:
    """`expression`, parenthesised unless it is one term (no operator outside brackets and strings)."""
    text = expression.strip()
    if is_term(text):
        return text
    return f"({text})"


def is_term(text: str) -> bool:
    """Whether `text` is one operand: a name, literal, selection, call, or a negated one (the helpers write a
    space around every binary operator, so a term has no space outside brackets and strings)."""
    return (bool(text) and not _top_level(text, (" ", "?"))) or _balanced_group(text)


def _balanced_group(text: str) -> bool:
    """Whether `text` is one parenthesised group ``( ... )`` (strings inside skipped): its first bracket closes
    at its last character and nowhere before."""
    if not text.startswith("(") or not text.endswith(")"):
        return False
    return [position for position, _, depth in _unquoted(text) if depth == 0] == [len(text) - 1]


def _flatten(parts: Iterable[str], operator: str) -> list[str]:
    """`parts`, each split at its own top-level `operator` (a conjunction of conjunctions is one)."""
    out: list[str] = []
    for part in parts:
        text = part.strip()
        while _balanced_group(text) and not _top_level(text[1:-1], ("?",)) and (
                operator == " && " or not _top_level(text[1:-1], (" && ",))):
            text = text[1:-1].strip()
        out.extend(split_top_level(text, operator))
    return out


def split_top_level(text: str, operator: str) -> list[str]:
    """`text` cut at each `operator` outside brackets and strings (nothing cut inside a ternary)."""
    if _top_level(text, ("?",)) or (operator == " && " and _top_level(text, (" || ",))):
        return [text]
    pieces: list[str] = []
    start = 0
    for position in _top_level_positions(text):
        if position >= start and text.startswith(operator, position):
            pieces.append(text[start:position].strip())
            start = position + len(operator)
    pieces.append(text[start:].strip())
    return [piece for piece in pieces if piece]


def and_(parts: Iterable[str]) -> str:
    """The conjunction, with ``true`` parts left out, ``false`` absorbing and repeated parts once."""
    return _joined(parts, " && ", TRUE, FALSE, (" || ", "?"))


def or_(parts: Iterable[str]) -> str:
    """The disjunction, with ``false`` parts left out, ``true`` absorbing and repeated parts once."""
    return _joined(parts, " || ", FALSE, TRUE, ("?",))


def _joined(parts: Iterable[str], operator: str, unit: str, absorbing: str, bracketed: tuple[str, ...]) -> str:
    """`parts` (flattened) joined by `operator`: `unit` parts left out, `absorbing` taking the whole, repeated
    parts once, a part with one of `bracketed` at its top level in parentheses."""
    kept: list[str] = []
    for part in _flatten(parts, operator):
        if part == absorbing:
            return absorbing
        if part != unit and part not in kept:
            kept.append(part)
    if not kept:
        return unit
    if len(kept) == 1:
        return kept[0]
    return operator.join(paren(part) if _top_level(part, bracketed) else part for part in kept)


_FLIPPED = {" == ": " != ", " != ": " == ", " >= ": " < ", " < ": " >= ", " <= ": " > ", " > ": " <= "}
_OPERATORS = ("||", "&&", "?", "==", "!=", "<", ">", " in ")


def not_(expression: str) -> str:
    """The negation, pushed inside where that reads as well: ``!(a || b)`` is ``!a && !b`` when both
    negate plainly, ``!x.all(v, p)`` is ``x.exists(v, !p)``, ``!(a == b)`` is ``a != b``."""
    text = expression.strip()
    if text == TRUE:
        return FALSE
    if text == FALSE:
        return TRUE
    while _balanced_group(text) and not _top_level(text[1:-1], ("?",)):
        text = text[1:-1].strip()
    if text.startswith("!") and is_term(text[1:]):
        inner = text[1:]
        return inner[1:-1] if _balanced_group(inner) else inner
    for joiner, other in ((" || ", and_), (" && ", or_)):
        parts = split_top_level(text, joiner)
        if len(parts) > 1:
            negated = [not_(part) for part in parts]
            if all(not part.startswith("!(") for part in negated):
                return other(negated)
            return f"!({text})"
    if not _top_level(text, _OPERATORS):
        quantifier = re.fullmatch(r"(.+)\.(all|exists)\(([A-Za-z_][A-Za-z0-9_]*), (.*)\)", text, re.S)
        if quantifier and _balanced_group(text[len(quantifier.group(1)) + len(quantifier.group(2)) + 1:]):
            target, name, variable, body = quantifier.groups()
            flipped = "exists" if name == "all" else "all"
            return f"{target}.{flipped}({variable}, {not_(body)})"
    size = re.fullmatch(r"(size\(.*\)) > 0", text)
    if size and not _top_level(size.group(1), _OPERATORS):
        return f"{size.group(1)} == 0"
    for operator, flipped_operator in _FLIPPED.items():
        pieces = split_top_level(text, operator)
        if len(pieces) == 2 and not any(_top_level(piece, _OPERATORS) for piece in pieces):
            return f"{pieces[0]}{flipped_operator}{pieces[1]}"
    return f"!{paren(text)}"


def _top_level(text: str, tokens: tuple[str, ...]) -> bool:
    """Whether one of `tokens` occurs in `text` outside strings and brackets (``.?`` selections excepted)."""
    return any(text.startswith(token, position) and not (token == "?" and position and text[position - 1] in ".[")
               for position in _top_level_positions(text) for token in tokens)


def _top_level_positions(text: str) -> Iterator[int]:
    """The positions in `text` outside string literals and brackets, except those of the quotes and brackets."""
    return (position for position, char, depth in _unquoted(text) if depth == 0 and char not in ")]}")


def _unquoted(text: str) -> Iterator[tuple[int, str, int]]:
    """(position, character, bracket depth after it) of each character of `text` outside string literals,
    the quotes excluded. The text is CEL the helpers wrote, so its brackets of every kind nest."""
    depth = 0
    quote = ""
    escaped = False
    for position, char in enumerate(text):
        if quote:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == quote:
                quote = ""
            continue
        if char in "'\"":
            quote = char
            continue
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        yield position, char, depth


def ternary(condition: str, then: str, otherwise: str) -> str:
    """``condition ? then : otherwise``, folded when the condition is constant."""
    if condition == TRUE:
        return then
    if condition == FALSE:
        return otherwise
    if then == otherwise:
        return then
    if otherwise == FALSE:
        return and_([condition, then])
    if then == TRUE:
        return or_([condition, otherwise])
    if then == FALSE:
        return and_([not_(condition), otherwise])
    if otherwise == TRUE:
        return or_([not_(condition), then])
    return f"{paren(condition)} ? {paren(then)} : {paren(otherwise)}"


_REGEX_SPECIAL = set(r"\.+*?()|[]{}^$")


def reverse_wildcard(text: str, values: list[str]) -> str:
    """Whether the CEL string `text`, read as a wildcard pattern, matches one of the texts `values` (Kyverno's
    set operators match both ways: a key item ``*`` is in every list). The pattern becomes a regular
    expression at run time, quoted between ``\\Q`` and ``\\E`` but for its wildcards (a key holding ``\\E``
    itself is not read right)."""
    if not values:
        return FALSE
    regex = (f"{string('(?s)^' + chr(92) + 'Q')} + {text}.replace('*', {string(chr(92) + 'E.*' + chr(92) + 'Q')})"
             f".replace('?', {string(chr(92) + 'E.' + chr(92) + 'Q')}) + {string(chr(92) + 'E$')}")
    matches = or_(f"{string(value)}.matches(pattern)" for value in values)
    return f"({text}.contains('*') || {text}.contains('?')) && [{regex}].exists(pattern, {matches})"


def wildcard_regex(pattern: str) -> str:
    """Kyverno's wildcard `pattern` (``*`` any run, ``?`` one character, nothing escapes) as an RE2 regular
    expression matching the whole text, new lines included."""
    out = ["(?s)^"]
    for char in pattern:
        if char == "*":
            out.append(".*")
        elif char == "?":
            out.append(".")
        elif char in _REGEX_SPECIAL:
            out.append("\\" + char)
        else:
            out.append(char)
    out.append("$")
    return "".join(out)


def wildcard_test(pattern: str, text: str) -> str:
    """Whether the CEL string `text` matches the wildcard `pattern`, in the plainest form that says so:
    equality, ``size``, ``startsWith``/``endsWith``/``contains``, else a regular expression."""
    if "*" not in pattern and "?" not in pattern:
        return f"{text} == {string(pattern)}"
    if not pattern.strip("*?"):
        count = pattern.count("?")
        if "*" not in pattern:
            return f"size({text}) == {count}"
        return TRUE if count == 0 else f"{text} != ''" if count == 1 else f"size({text}) >= {count}"
    if "?" not in pattern:
        inner = pattern.strip("*")
        if "*" not in inner:
            starts, ends = pattern.startswith("*"), pattern.endswith("*")
            if starts and ends:
                return f"{text}.contains({string(inner)})"
            if ends:
                return f"{text}.startsWith({string(inner)})"
            if starts:
                return f"{text}.endsWith({string(inner)})"
    return f"{text}.matches({string(wildcard_regex(pattern))})"


def json_text(value: Any) -> str:
    """Compact JSON, for messages."""
    return json.dumps(value, separators=(",", ":"), sort_keys=True)
