"""Kyverno's ``$( )`` references: a rule pointing at another value of the same rule.

``$(./../key)`` in a pattern or message stands for the value at that relative
path of the same document (``pkg/engine/variables/vars.go``,
``substituteReferencesIfAny``); an operator may lead the path
(``$(<=./../max)``). They are resolved before ``{{ }}`` variables
(`variables.substitute_all`), and autogen moves them when it wraps a Pod
pattern in a controller's template (`shift_references`). A reference that does
not resolve to a string (or a number, with an operator) is a `VariableError`.
"""

from __future__ import annotations

import posixpath
import re
from typing import Any

from assertree.languages.kyverno.anchors import parse_anchor
from assertree.languages.kyverno.substitution import Path, VariableError, traverse

__all__ = ["shift_references", "substitute_references"]

_REFERENCE = re.compile(r"^\$\(.[^ ]*\)|[^\\]\$\(.[^ ]*\)")
_ESCAPED_REFERENCE = re.compile(r"\\\$\(.[^ )]*\)")
_OPERATORS = (">=", "<=", ">", "<", "!")
_IN_RANGE = re.compile(r"^([-|+]?\d+(?:\.\d+)?[A-Za-z]*)-([-|+]?\d+(?:\.\d+)?[A-Za-z]*)$")
_NOT_IN_RANGE = re.compile(r"^([-|+]?\d+(?:\.\d+)?[A-Za-z]*)!-([-|+]?\d+(?:\.\d+)?[A-Za-z]*)$")


def substitute_references(document: Any) -> Any:
    """`document` with its ``$(./../path)`` references replaced by the values they point at in `document`.

    A reference resolves against the leaf at that path of the same document
    (anchors in the path ignored); it must be a string, or a number when the
    reference carries an operator (``$(<=./../a)``). ``\\$( )`` is an escape.
    """

    def action(text: str, where: Path) -> Any:
        for old, lead, reference in _references(text):
            resolved = _resolve_reference(document, reference, where)
            if not isinstance(resolved, str):
                raise VariableError(f"NotResolvedReferenceErr,reference {reference} not resolved at path "
                                    f"{_slash_path(where)}", variable=reference, path=where)
            text = text.replace(old, lead + resolved, 1)
        for escaped in _ESCAPED_REFERENCE.findall(text):
            text = text.replace(escaped, escaped[1:])
        return text

    return traverse(document, (), action)


def _references(text: str) -> list[tuple[str, str, str]]:
    """(matched text, the character before ``$(`` it includes or "", the reference) for each ``$( )`` in `text`."""
    out = []
    for match in _REFERENCE.finditer(text):
        found = match.group(0)
        lead = "" if found.startswith("$(") else found[0]
        out.append((found, lead, found[len(lead):]))
    return out


def shift_references(value: str, shift: str, pivot: str) -> str:
    """`value` with ``$( )`` references moved under `shift` after `pivot` (``FindAndShiftReferences``).

    Autogen uses it on messages: ``$(./../../pattern/spec/x)`` with shift
    ``spec/template`` becomes ``$(./../../pattern/spec/template/spec/x)``;
    under ``anyPattern`` the pattern index stays before the shift.
    """
    for old, lead, reference in _references(value):
        index = reference.find(pivot)
        if pivot == "anyPattern":
            pivot = pivot + "/" + reference[index + len(pivot) + 1:].split("/")[0]
        shifted = reference.replace(pivot, pivot + "/" + shift)
        value = value.replace(old, lead + shifted, 1)
    return value


def _slash_path(where: Path) -> str:
    return "".join("/" + str(step).replace("/", "\\/") for step in where)


def _resolve_reference(document: Any, reference: str, where: Path) -> Any:
    text = reference.strip("$()")
    operator = _reference_operator(text)
    text = text[len(operator):]
    if not text:
        raise VariableError("expected path, found empty reference", variable=reference, path=where)
    target = text if text.startswith("/") else posixpath.normpath(_slash_path(where) + "/" + text)
    value = _leaf_at(document, target)
    if value is None:
        raise VariableError(f"got nil resolved variable {reference} at path {_slash_path(where)}",
                            variable=reference, path=where)
    if operator == "":
        return value
    if isinstance(value, str):
        return operator + value
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise VariableError(f"incorrect expression: operator {operator} does not match with value {value}",
                            variable=reference, path=where)
    return operator + f"{float(value):f}"


def _reference_operator(text: str) -> str:
    if len(text) < 2:
        return ""
    for operator in _OPERATORS:
        if text.startswith(operator):
            return operator
    if _NOT_IN_RANGE.match(text):
        return "!-"
    if _IN_RANGE.match(text):
        return "-"
    return ""


def _leaf_at(document: Any, target: str) -> Any:
    found: list[Any] = []

    def walk(value: Any, steps: tuple[str, ...]) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                walk(item, (*steps, parse_anchor(key).key if isinstance(key, str) else str(key)))
        elif isinstance(value, list):
            for index, item in enumerate(value):
                walk(item, (*steps, str(index)))
        elif "/" + "/".join(step.replace("/", "\\/") for step in steps) == target:
            found.append(value)

    walk(document, ())
    return found[-1] if found else None


