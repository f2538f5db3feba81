"""jsonschema's errors as assertree `Problem`s: one short message per problem, at the offending field.

Every language that checks its policy documents against a packaged JSON Schema
(kyverno-json's ValidatingPolicy, Kyverno's ClusterPolicy) reports the same
kinds of mistakes the same way: an unknown field names itself and suggests the
closest known one, a missing field points at where it should be, and problems
are listed once each, top to bottom in the document. This module is that one
translation; a language only says which schema file it uses and how it names a
wrong type (``TypeWording``), the one message the two languages word apart.

Every policy document of every scan is checked, so the check is fast:
jsonschema-rs (a compiled validator: ~20 ms to import and ~1 ms to build
against python-jsonschema's ~60 ms and ~30 ms) answers whether a document is
valid, and python-jsonschema, imported only then, explains a document that is
not, so the messages stay the same. The fast answer is used only for plain JSON
values (dict with string keys, list, str, int, float, bool, None; YAML's integer
keys, a tuple or a NaN go the slow way), where the two validators agree
(``tests/test_schema_agreement.py`` checks every policy document of the tests).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from functools import cache
from typing import Any

from assertree.errors import Problem

TypeWording = Callable[[str, Any], str]
"""The message for a `type` error: (expected type names joined with "or", the offending value) -> text."""


def type_only(expected: str, instance: Any) -> str:
    """``must be of type object``: names the expected type only."""
    return f"must be of type {expected}"


def type_and_actual(expected: str, instance: Any) -> str:
    """``must be an object, not a string``: names the expected type and the one found."""
    from assertree.jp.values import type_name

    actual = type_name(instance)
    return f"must be {_article(expected)} {expected}, not {_article(actual)} {actual}"


@cache
def packaged_schema(file_name: str) -> dict:
    """A JSON Schema shipped in ``assertree/schemas`` (read once)."""
    # pkgutil rather than importlib.resources, which imports tempfile, shutil and zipfile (~5 ms) for this; both
    # imported here: a scan of policies from the cache of checked files reads no schema
    import json
    import pkgutil

    data = pkgutil.get_data("assertree.schemas", file_name)
    assert data is not None, file_name  # the package's own loader always reads its files
    return json.loads(data)


@cache
def _validator(file_name: str) -> Any:
    from jsonschema import Draft202012Validator  # only to explain a document the fast check refused

    return Draft202012Validator(packaged_schema(file_name))


@cache
def _fast_validator(file_name: str) -> Any:
    """jsonschema-rs's validator for `file_name`, or None without jsonschema-rs (python-jsonschema decides)."""
    try:
        import jsonschema_rs
    except ImportError:  # a platform without its wheel: every document goes the slow way
        return None
    return jsonschema_rs.Draft202012Validator(packaged_schema(file_name))


_CHECKED: dict[int, Any] = {}  # id -> document: documents read from the cache of checked files (`checked`)


@contextmanager
def checked(documents: Iterable[Any]) -> Iterator[None]:
    """While open, `schema_problems` finds nothing in these very objects, without validating them: documents
    the loader took from its cache (`assertree.documents.cache`), stored there only after every check passed
    on the same bytes. By identity, and holding them, so no other object can share an id meanwhile."""
    added = {id(document): document for document in documents if id(document) not in _CHECKED}
    _CHECKED.update(added)
    try:
        yield
    finally:
        for identity in added:
            _CHECKED.pop(identity, None)


def schema_problems(file_name: str, document: Any, *, type_wording: TypeWording) -> list[Problem]:
    """Every problem the packaged schema `file_name` finds in `document`, once each, in document order.

    Must never change a result: jsonschema-rs answers only "valid", and only for plain JSON values, where it
    agrees with python-jsonschema; anything else is decided (and explained) by python-jsonschema. A document
    marked `checked` was found valid before, from the same bytes.
    """
    if id(document) in _CHECKED:
        return []
    fast = _fast_validator(file_name)
    if fast is not None and _plain_json(document) and fast.is_valid(document):
        return []
    found = (problem for error in _validator(file_name).iter_errors(document)
             for problem in explain(error, type_wording=type_wording))
    return in_document_order(document, found)


_SCALARS = frozenset({str, bool, type(None)})
_INT64 = range(-(2**63), 2**64)  # jsonschema-rs compares integers outside 64 bits as big numbers: leave them
_MAX_VALUES = 200_000  # a policy has hundreds; past this (or a cycle a Python caller built) the slow way decides


def _plain_json(document: Any) -> bool:
    """Whether `document` holds only the values a JSON parser makes: dicts with string keys, lists, strings,
    64-bit integers, finite floats, booleans and null (exact types: no subclasses, tuples or sets)."""
    pending = [document]
    budget = _MAX_VALUES
    while pending:
        budget -= 1
        if budget < 0:
            return False
        value = pending.pop()
        kind = type(value)
        if kind is dict:
            if not all(type(key) is str for key in value):
                return False
            pending.extend(value.values())
        elif kind is list:
            pending.extend(value)
        elif kind is int:
            if value not in _INT64:
                return False
        elif kind is float:
            if not math.isfinite(value):
                return False
        elif kind not in _SCALARS:
            return False
    return True


def in_document_order(document: Any, problems: Iterable[Problem]) -> list[Problem]:
    """`problems` without repeats of the same (field, message), sorted top to bottom in `document`."""
    unique: dict[tuple, Problem] = {}
    for problem in problems:
        unique.setdefault((problem.path, problem.message), problem)
    return sorted(unique.values(), key=lambda problem: document_order(document, problem.path))


def explain(error: Any, *, type_wording: TypeWording) -> list[Problem]:
    """One short message per jsonschema `error`, pointing at the offending field itself."""
    import json  # here: only a document that is not valid is explained

    path = tuple(error.absolute_path)
    kind = error.validator
    if kind == "additionalProperties":
        allowed = sorted(error.schema.get("properties", {}))
        return [Problem(f"unknown field {key!r}{_suggestion(key, allowed)}", path=path + (key,))
                for key in error.instance if key not in allowed]
    if kind == "required":
        return [Problem("required field is missing", path=path + (key,))
                for key in error.validator_value if isinstance(error.instance, dict) and key not in error.instance]
    if kind == "enum":
        choices = ", ".join(map(str, error.validator_value))
        return [Problem(f"must be one of: {choices}, not {json.dumps(error.instance)}", path=path)]
    if kind == "const":
        return [Problem(f"must be {json.dumps(error.validator_value)}, not {json.dumps(error.instance)}", path=path)]
    if kind == "type":
        expected = error.validator_value
        expected = " or ".join(expected) if isinstance(expected, list) else expected
        return [Problem(type_wording(expected, error.instance), path=path)]
    if kind in ("minItems", "minLength"):
        return [Problem("must not be empty", path=path)]
    if kind == "maxLength":
        return [Problem(f"must be at most {error.validator_value} characters long", path=path)]
    if kind == "oneOf" and error.context:
        deepest = max(error.context, key=lambda sub: len(sub.absolute_path))
        return explain(deepest, type_wording=type_wording)
    return [Problem(error.message, path=path)]


def _suggestion(key: Any, allowed: list[str]) -> str:
    if not isinstance(key, str):  # YAML's `1:` or `true:` keys: nothing to compare them with
        return ""
    import difflib  # only for a document with an unknown field

    close = difflib.get_close_matches(key, allowed, n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _article(word: str) -> str:
    return "an" if word[:1] in "aeiou" else "a"


def document_order(document: Any, path: tuple) -> tuple:
    """Position of `path` in the document, so problems read top to bottom (lint sorts by it too)."""
    order = []
    current = document
    for step in path:
        if isinstance(current, dict):
            keys = list(current)
            order.append(keys.index(step) if step in current else len(keys))
            current = current.get(step)
        elif isinstance(current, list) and isinstance(step, int):
            order.append(step)
            current = current[step] if step < len(current) else None
        else:
            order.append(0)
    return tuple(order)
