"""Some members of a large JSON object, without building the others.

Why: a Terraform plan is 35 MB at 10,000 resources; ``--pre-process
'planned_values.root_module.resources'`` reads a third of it. Building the rest
(``resource_changes``, ``prior_state``, ``configuration``) as Python objects
is most of a scan's time and memory. msgspec (a JSON library made for decoding
to a declared shape) reads the object's members as raw bytes (``msgspec.Raw``,
a view of the file's bytes: nothing is built), checking their syntax all the
same; orjson then parses the wanted members' bytes exactly as
`assertree.documents.reader.parse_json` parses a whole file, so their values
are the same objects a whole parse gives.

The answer keeps the file's order, and also holds the small members the file has
before the last wanted one (a plan's ``format_version`` and ``variables`` before
``planned_values``): what lets a report's locator spell its way from the start of
the object to a wanted member as it does on a whole parse, rather than walking
the text of all 35 MB (`assertree.documents.reader`'s fast path).

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

import contextlib
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


_SMALL = 64 << 10
"""Bytes up to which a member before a wanted one is parsed too (see the module docstring)."""


def parse_members(data: bytes, names: Collection[str], checked: tuple[tuple[str, Shape], ...] = ()
                  ) -> dict[str, Any] | None:
    """The members `names` of the JSON object `data` holds (those it has; the last of a repeated key, as
    orjson), with the small ones before them that orjson reads, in the file's order; or None when `data` must
    be parsed whole (see the module docstring). Each member of `checked` must fit its shape, and is not in
    the answer."""
    if not _utf8(data):
        return None
    import msgspec

    try:
        members = _members_decoder().decode(data)
        for name, shape in checked:
            found = members.get(name)
            if found is not None:
                msgspec.json.decode(found, type=shape())
    except (msgspec.DecodeError, RecursionError):  # ValidationError (not an object, a shape) is a DecodeError
        return None
    last = max((position for position, name in enumerate(members) if name in names), default=-1)
    only_checked = {name for name, _ in checked}
    found = {}
    for position, (name, raw) in enumerate(members.items()):
        if name in names:
            try:
                found[name] = parse_json(bytes(raw))
            except JSONError:
                return None
        elif position < last and name not in only_checked and len(memoryview(raw)) <= _SMALL:
            with contextlib.suppress(JSONError):  # a help to the locator only: left out when orjson refuses it
                found[name] = parse_json(bytes(raw))
    return found


@cache
def _members_decoder() -> Any:
    """msgspec's decoder of an object's members, each kept as raw bytes."""
    import msgspec

    return msgspec.json.Decoder(dict[str, msgspec.Raw])


def _utf8(data: bytes) -> bool:
    if data.isascii():
        return True
    try:
        data.decode()
    except UnicodeDecodeError:
        return False
    return True
