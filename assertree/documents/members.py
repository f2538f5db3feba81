"""Some members of a large JSON object, without building the others.

Why: a Terraform plan is 35 MB at 10,000 resources; ``--pre-process
'planned_values.root_module.resources'`` reads a third of it. Building the rest
(``resource_changes``, ``prior_state``, ``configuration``) as Python objects
is most of a scan's time and memory. msgspec (a JSON library made for decoding
to a declared shape) reads an object declared with only the wanted members,
each kept as its raw bytes (``msgspec.Raw``), and skips every other member
without building it, checking its syntax all the same; orjson then parses the
wanted members' bytes exactly as `assertree.documents.reader.parse_json` parses a
whole file, so their values are the same objects a whole parse gives.

A member can also be *checked* without being kept: decoded to a declared shape (a msgspec type,
named by a function that builds it, so that msgspec is imported only when a large file is read), which
checks what a reader would check of it without building its values (a plan's ``resource_changes`` when
no policy reads ``change``, `assertree.inputs.plan_reading`); a member that does not fit makes the answer
None, and the whole parse then words the error.

It answers only when it is sure, and None otherwise (the caller then parses the
whole file, which gives the located error): not an object, any syntax error,
bytes that are not UTF-8 (msgspec does not check the bytes of strings it skips;
Python's decoder does, as orjson), or a wanted member orjson refuses. What a
member not read is not checked for, because it is never built (docs/performance.md
says so to users): assertree's nesting limit (msgspec skips nested values without
building anything, and stops at the interpreter's recursion limit) and numbers too
large for a double (JSON's grammar allows them; orjson refuses them as infinite).
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from functools import cache
from typing import Any

from assertree.documents.reader import JSONError, parse_json
from assertree.records import ValueRecord

__all__ = ["Members", "parse_members"]

Shape = Callable[[], Any]
"""A function giving the msgspec type a checked member must fit (one that accepts null, if null is fine)."""


class Members(ValueRecord):
    """What a reader asks of a large JSON object: the members it reads (`names`), and those it only checks
    (`checked`: name and `Shape`). Passed to worker processes, so its shapes are module-level functions."""

    names: frozenset[str]
    checked: tuple[tuple[str, Shape], ...]

    __slots__ = ("checked", "names")

    def __init__(self, names: Collection[str], checked: tuple[tuple[str, Shape], ...] = ()) -> None:
        self.names = frozenset(names)
        self.checked = checked


def parse_members(data: bytes, names: Collection[str], checked: tuple[tuple[str, Shape], ...] = ()
                  ) -> dict[str, Any] | None:
    """The members `names` of the JSON object `data` holds (those it has; the last of a repeated key, as
    orjson), or None when `data` must be parsed whole (see the module docstring); each member of `checked`
    must fit its shape, and is not in the answer."""
    wanted = tuple(sorted(names))
    if not _utf8(data):
        return None
    import msgspec

    decoder = _decoder(wanted, tuple((name, shape()) for name, shape in checked))
    try:
        raw = msgspec.structs.astuple(decoder.decode(data))
    except (msgspec.DecodeError, RecursionError):  # ValidationError (not an object, a shape) is a DecodeError
        return None
    try:
        return {name: parse_json(bytes(value)) for name, value in zip(wanted, raw, strict=False) if value is not None}
    except JSONError:
        return None


@cache
def _decoder(names: tuple[str, ...], checked: tuple[tuple[str, Any], ...]) -> Any:
    """msgspec's decoder of an object with the members `names`, each optional and kept as raw bytes, then
    those `checked`, each optional and decoded to its type."""
    import msgspec

    fields = [f"m{index}" for index in range(len(names) + len(checked))]  # JSON keys need not be identifiers
    types = [msgspec.Raw] * len(names) + [shape for _, shape in checked]
    keys = [*names, *(name for name, _ in checked)]
    shape = msgspec.defstruct("Members", [(field, kind, None) for field, kind in zip(fields, types, strict=True)],
                              rename=dict(zip(fields, keys, strict=True)))
    return msgspec.json.Decoder(shape)


def _utf8(data: bytes) -> bool:
    if data.isascii():
        return True
    try:
        data.decode()
    except UnicodeDecodeError:
        return False
    return True
