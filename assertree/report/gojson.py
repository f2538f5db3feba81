"""JSON as Go's ``encoding/json`` writes it with ``MarshalIndent(value, "", "  ")``, for reports that must
match a Go tool byte for byte (kyverno-json's ``scan --output json``, the Kyverno CLI's policy report).

Go writes a struct's fields in declaration order and a map's keys sorted; here a `Struct` (a dict) keeps
its order and any other dict is a map. Strings are escaped as Go escapes them (``<``, ``>`` and ``&`` as
``\\u003c``..., `assertree.jp.values`), numbers as Go prints float64 and integers (``3``, ``1e+21``), an
empty list or map as ``[]``/``{}``, None as ``null``. Written by hand because orjson and the standard
library's ``json`` cannot be told to order some objects and sort others, nor to escape as Go does.
"""

from __future__ import annotations

from typing import Any

from assertree.jp.values import format_number, to_json

__all__ = ["Struct", "marshal", "marshal_indent"]


class Struct(dict):
    """A Go struct: its fields are written in the order they were set (a plain dict is a sorted Go map)."""


def marshal(value: Any) -> str:
    """``json.Marshal``: compact."""
    out: list[str] = []
    _write(value, out, None, "")
    return "".join(out)


def marshal_indent(value: Any, prefix: str = "") -> str:
    """``json.MarshalIndent(value, "", "  ")``, every line after the first starting with `prefix` (the
    nested value's text inside a document indented that far)."""
    out: list[str] = []
    _write(value, out, "  ", prefix)
    return "".join(out)


def _write(value: Any, out: list[str], indent: str | None, at: str) -> None:
    if isinstance(value, dict):
        keys = list(value) if isinstance(value, Struct) else sorted(value, key=str)
        _container("{}", [(to_json(str(key)), value[key]) for key in keys], out, indent, at)
    elif isinstance(value, (list, tuple)):
        _container("[]", [(None, item) for item in value], out, indent, at)
    elif value is None or isinstance(value, (bool, str)):
        out.append(to_json(value))
    else:
        out.append(format_number(value))


def _container(brackets: str, items: list[tuple[str | None, Any]], out: list[str], indent: str | None,
               at: str) -> None:
    """An object's (key, value) or an array's (None, item) pairs between `brackets`, one per line when
    indenting; ``{}``/``[]`` when there are none."""
    if not items:
        out.append(brackets)
        return
    inner = at + indent if indent is not None else ""
    out.append(brackets[0])
    for position, (key, item) in enumerate(items):
        if position:
            out.append(",")
        if indent is not None:
            out.append("\n" + inner)
        if key is not None:
            out.append(key + (": " if indent is not None else ":"))
        _write(item, out, indent, inner)
    if indent is not None:
        out.append("\n" + at)
    out.append(brackets[1])
