"""The syntax tree of a compiled CEL expression, read from the library's serialized form.

The CEL library (cel-expr-python 0.1.x) has no cost API and no way to walk
an expression, but ``Expression.serialize()`` gives a ``google.protobuf.Any``
holding a ``cel.expr.CheckedExpr`` (or, for an expression compiled without
the type checker, a ``cel.expr.ParsedExpr``): the syntax tree after macro
expansion. That is what `cost` needs; the checker's types and overloads are
not read, since assertree's data is untyped (``dyn``) and `cost` tells
strings from lists by the data itself.

Decoded here by hand, from the field numbers of google/cel-spec's
``cel/expr/syntax.proto`` and ``checked.proto``: the `protobuf` package is not
a dependency of the CEL library (its wheel carries its own C++ copy), and
even with it installed the ``cel.expr`` message classes are not published on
PyPI; the wire format needs only varints and length-delimited fields, and
only the handful of messages below are read. Unknown fields are skipped, so
a newer library that adds fields still decodes. Each message is read in one
pass over offsets into the bytes (no copies, no intermediate lists): every
policy's expressions are decoded when they are compiled.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any

__all__ = ["Call", "Comprehension", "Const", "CreateList", "CreateStruct", "DecodeError", "Expr", "Ident", "Select",
           "decode"]


class DecodeError(ValueError):
    """The bytes are not a serialized CEL expression this module understands."""


@dataclass(slots=True)
class Const:
    value: Any  # None, bool, int, float, str or bytes (a duration or timestamp literal is kept as None)
    size: Any = None  # kept by `cost` (the literal's size), which reads the same tree many times


@dataclass(slots=True)
class Ident:
    name: str


@dataclass(slots=True)
class Select:
    operand: Expr
    field: str
    test_only: bool = False


@dataclass(slots=True)
class Call:
    function: str
    args: list[Expr]
    target: Expr | None = None


@dataclass(slots=True)
class CreateList:
    elements: list[Expr]


@dataclass(slots=True)
class CreateStruct:
    entries: list[tuple[Expr | None, Expr]]  # (key, value); the key is None for a message field
    message: str = ""


@dataclass(slots=True)
class Comprehension:
    iter_var: str
    iter_range: Expr
    accu_var: str
    accu_init: Expr
    condition: Expr
    step: Expr
    result: Expr
    iter_var2: str = ""


Expr = Const | Ident | Select | Call | CreateList | CreateStruct | Comprehension
"""A node of the tree (``cel.expr.Expr`` without its id, which nothing here needs)."""

_NOTHING = Const(None)  # an Expr message with no kind set (shared: its size is that of null)


# ---------------------------------------------------------------- the wire format


def _varint(data: bytes, at: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if at >= len(data):
            raise DecodeError("truncated varint")
        byte = data[at]
        at += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, at
        shift += 7
        if shift > 70:
            raise DecodeError("varint too long")


def _field(data: bytes, at: int, stop: int) -> tuple[int, int, int, int]:
    """The field starting at `at`: (number, value, end, next). For a length-delimited field `value` is where
    its bytes start and `end` where they end; for a varint `value` is the number and `end` is -1."""
    key = data[at]
    if key < 0x80:
        at += 1
    else:
        key, at = _varint(data, at)
    wire = key & 7
    if wire == 2:
        length = data[at] if at < stop else 0x80
        if length < 0x80:
            at += 1
        else:
            length, at = _varint(data, at)
        end = at + length
        if end > stop:
            raise DecodeError("truncated field")
        return key >> 3, at, end, end
    if wire == 0:
        value = data[at] if at < stop else 0x80
        if value < 0x80:
            return key >> 3, value, -1, at + 1
        value, at = _varint(data, at)
        return key >> 3, value, -1, at
    if wire == 1:
        return key >> 3, at, at + 8, at + 8
    if wire == 5:
        return key >> 3, at, at + 4, at + 4
    raise DecodeError(f"unsupported wire type {wire}")


def _signed(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


def _text(data: bytes, start: int, end: int) -> str:
    return data[start:end].decode("utf-8", "replace")


# ---------------------------------------------------------------- messages


def decode(serialized: bytes) -> Expr:
    """The expression tree of a serialized CheckedExpr or ParsedExpr; DecodeError for anything else."""
    try:
        return _decode(serialized)
    except (IndexError, struct.error):
        raise DecodeError("truncated message") from None
    except RecursionError:  # the library nests at most 32 levels today; a later one might allow more
        raise DecodeError("nested too deeply to read") from None


def _decode(data: bytes) -> Expr:
    type_url, payload = "", (0, 0)
    at, stop = 0, len(data)
    while at < stop:  # google.protobuf.Any: type_url = 1, value = 2
        number, value, end, at = _field(data, at, stop)
        if number == 1 and end >= 0:
            type_url = _text(data, value, end)
        elif number == 2 and end >= 0:
            payload = (value, end)
    if type_url.endswith(".CheckedExpr"):
        wanted = 4  # CheckedExpr.expr (2 and 3 are the reference and type maps, 5 the source: not needed)
    elif type_url.endswith(".ParsedExpr"):
        wanted = 2
    else:
        raise DecodeError(f"not a CEL expression: {type_url!r}")
    at, stop = payload
    while at < stop:
        number, value, end, at = _field(data, at, stop)
        if number == wanted and end >= 0:
            return _expr(data, value, end)
    raise DecodeError("no expression")


def _expr(data: bytes, at: int, stop: int) -> Expr:
    """An ``Expr`` message: its kind (fields 3 to 9; field 2, the id, is skipped)."""
    node: Expr = _NOTHING
    while at < stop:
        number, value, end, at = _field(data, at, stop)
        if end < 0:
            continue
        if number == 6:
            node = _call(data, value, end)
        elif number == 5:
            node = _select(data, value, end)
        elif number == 4:
            node = Ident(_string_field(data, value, end, 1))
        elif number == 3:
            node = _constant(data, value, end)
        elif number == 9:
            node = _comprehension(data, value, end)
        elif number == 7:
            node = CreateList(_expressions(data, value, end, 1))
        elif number == 8:
            node = _struct(data, value, end)
    return node


def _string_field(data: bytes, at: int, stop: int, wanted: int) -> str:
    while at < stop:
        number, value, end, at = _field(data, at, stop)
        if number == wanted and end >= 0:
            return _text(data, value, end)
    return ""


def _expressions(data: bytes, at: int, stop: int, wanted: int) -> list[Expr]:
    found = []
    while at < stop:
        number, value, end, at = _field(data, at, stop)
        if number == wanted and end >= 0:
            found.append(_expr(data, value, end))
    return found


def _constant(data: bytes, at: int, stop: int) -> Const:
    while at < stop:
        number, value, end, at = _field(data, at, stop)
        if number == 1:
            return Const(None)
        if number == 2:
            return Const(bool(value))
        if number == 3:
            return Const(_signed(value))
        if number == 4:
            return Const(value)
        if number == 5 and end >= 0:
            return Const(struct.unpack("<d", data[value:end])[0])
        if number == 6 and end >= 0:
            return Const(_text(data, value, end))
        if number == 7 and end >= 0:
            return Const(bytes(data[value:end]))
    return Const(None)


def _select(data: bytes, at: int, stop: int) -> Select:
    operand: Expr = _NOTHING
    name, test_only = "", False
    while at < stop:
        number, value, end, at = _field(data, at, stop)
        if number == 1 and end >= 0:
            operand = _expr(data, value, end)
        elif number == 2 and end >= 0:
            name = _text(data, value, end)
        elif number == 3:
            test_only = bool(value)
    return Select(operand, name, test_only)


def _call(data: bytes, at: int, stop: int) -> Call:
    target: Expr | None = None
    function, args = "", []
    while at < stop:
        number, value, end, at = _field(data, at, stop)
        if end < 0:
            continue
        if number == 3:
            args.append(_expr(data, value, end))
        elif number == 2:
            function = _text(data, value, end)
        elif number == 1:
            target = _expr(data, value, end)
    return Call(function, args, target)


def _struct(data: bytes, at: int, stop: int) -> CreateStruct:
    message, entries = "", []
    while at < stop:
        number, value, end, at = _field(data, at, stop)
        if number == 1 and end >= 0:
            message = _text(data, value, end)
        elif number == 2 and end >= 0:
            key: Expr | None = None
            item: Expr = _NOTHING
            inner = value
            while inner < end:  # CreateStruct.Entry: map_key = 3, value = 4
                entry_number, entry_value, entry_end, inner = _field(data, inner, end)
                if entry_number == 3 and entry_end >= 0:
                    key = _expr(data, entry_value, entry_end)
                elif entry_number == 4 and entry_end >= 0:
                    item = _expr(data, entry_value, entry_end)
            entries.append((key, item))
    return CreateStruct(entries, message)


def _comprehension(data: bytes, at: int, stop: int) -> Comprehension:
    names = {1: "", 3: "", 8: ""}
    parts: dict[int, Expr] = {}
    while at < stop:
        number, value, end, at = _field(data, at, stop)
        if end < 0:
            continue
        if number in names:
            names[number] = _text(data, value, end)
        else:
            parts[number] = _expr(data, value, end)
    return Comprehension(
        iter_var=names[1], iter_range=parts.get(2, _NOTHING), accu_var=names[3], accu_init=parts.get(4, _NOTHING),
        condition=parts.get(5, _NOTHING), step=parts.get(6, _NOTHING), result=parts.get(7, _NOTHING),
        iter_var2=names[8],
    )
