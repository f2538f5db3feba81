"""How reports word what went wrong, in assertree's voice or, on request, in kyverno-json's.

kyverno-json calls every evaluation problem an ``Internal error`` ("invalid actual
value, must be a map, found null"), which people read as a crash. assertree keeps
that text in the result (`RuleError.message`, compared with kyverno-json's own by
the conformance tests) and words it here, for people, unless the report was asked
for kyverno-json's wording (`ReportOptions.kyverno_json`):

========================================================  ==========================================
kyverno-json                                              assertree
========================================================  ==========================================
``Internal error: invalid actual value, must be a map,``  ``the value is null, but the policy expects
``found null``                                            a map here``
``Internal error: types are not comparable, string -``    ``cannot compare a string with a number``
``int64``
``Internal error: projection not recognized``             ``cannot look up a field: the value is not
                                                          a map``
``Internal error: <expression error>``                    ``<expression error>``
========================================================  ==========================================

A field error inside a ``~`` loop also names the item it was about (shortened
JSON), not only its index: `item_note`.
"""

from __future__ import annotations

import re
from typing import Any

from assertree.errors import shorten
from assertree.jp.values import to_display
from assertree.results import FieldError, Resource, RuleError
from assertree.tree import fieldpath

_INTERNAL = "Internal error: "
_NAME_KEYS = ("name", "id", "address", "key", "type")
_NOT_A_MAP = re.compile(r"invalid actual value, must be a map, found (\w+)")
_NOT_COMPARABLE = re.compile(r"types are not comparable, (\S+) - (\S+)")
_GO_KINDS = {"int64": "a number", "float64": "a number", "int": "a number", "string": "a string", "bool": "a boolean",
             "map": "a map", "slice": "a list", "null": "null", "invalid": "null", "number": "a number",
             "boolean": "a boolean", "array": "a list", "object": "a map"}


def _kind(go_name: str) -> str:
    return _GO_KINDS.get(go_name, go_name)


def _plain(detail: str) -> str:
    """One kyverno-json ``Internal error`` detail in plain words."""
    found = _NOT_A_MAP.fullmatch(detail)
    if found:
        return f"the value is {_kind(found.group(1))}, but the policy expects a map here"
    found = _NOT_COMPARABLE.fullmatch(detail)
    if found:
        return f"cannot compare {_kind(found.group(1))} with {_kind(found.group(2))}"
    if detail == "projection not recognized":
        return "cannot look up a field: the value is not a map"
    return detail


def rule_error(error: RuleError | None, *, kyverno_json: bool = False) -> str:
    """The text of a rule's evaluation error for a report."""
    if error is None:
        return "error"
    text = error.message
    if kyverno_json or _INTERNAL not in text:
        return text
    pieces = text.split(_INTERNAL)
    # "a: Internal error: b: Internal error: detail": every piece but the last is a location prefix
    return "".join(pieces[:-1]) + _plain(pieces[-1])


def item_note(resource: Resource, error: FieldError, limit: int = 80) -> str | None:
    """``item [7] = {"name":"sidecar",...}`` for a field error inside a ``~`` loop over the payload's
    own lists or maps (the innermost loop), or None when the item cannot be found."""
    chain = []
    path = error.path
    while path is not None:
        chain.append(path)
        path = path[0]
    chain.reverse()
    value: Any = resource.value
    item: tuple[str, Any] | None = None
    for _, text, bracket, step in chain:
        if step is fieldpath.NOT_IN_PAYLOAD:
            break
        try:
            value = value[step]
        except (KeyError, IndexError, TypeError):
            break
        if bracket:
            item = (text, value)
    if item is None:
        return None
    position, value = item
    if isinstance(value, dict):
        key = next((key for key in _NAME_KEYS if isinstance(value.get(key), (str, int, float))), None)
        if key is not None and len(value) > 1:  # what names the item, rather than its first fields
            return f"item [{position}] = {{{to_display(key)}:{shorten(to_display(value[key]), limit)},...}}"
    return f"item [{position}] = {shorten(to_display(value), limit)}"
