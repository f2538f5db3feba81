"""Checking a policy document against the ValidatingPolicy JSON Schema.

The schema (``schemas/validatingpolicy.v1alpha1.json``, shipped in the
package) is kyverno-json's CRD written as JSON Schema 2020-12: the same
fields, required fields and enums, unknown fields rejected everywhere except
inside the free-form parts (assertion trees, context variables, feedback
values). jsonschema's errors are turned into one short message per problem,
pointing at the offending field itself (``spec.rules[0].matches: unknown
field``), in document order.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

from assertree.errors import Problem

SCHEMA_FILE = "validatingpolicy.v1alpha1.json"


def _problem(path: tuple, message: str) -> Problem:
    return Problem(message, path=path)


@cache
def schema() -> dict:
    """The packaged ValidatingPolicy schema."""
    return json.loads(resources.files("assertree.schemas").joinpath(SCHEMA_FILE).read_text("utf-8"))


@cache
def _validator():
    from jsonschema import Draft202012Validator

    return Draft202012Validator(schema())


def problems(document: Any) -> list[Problem]:
    """Every schema problem of `document`, most useful first within a field, in document order."""
    found: dict[tuple, Problem] = {}
    for error in _validator().iter_errors(document):
        for problem in _explain(error):
            found.setdefault((problem.path, problem.message), problem)
    return sorted(found.values(), key=lambda p: document_order(document, p.path))


def _explain(error) -> list[Problem]:
    path = tuple(error.absolute_path)
    kind = error.validator
    if kind == "additionalProperties":
        allowed = set(error.schema.get("properties", {}))
        return [
            _problem(path + (key,), f"unknown field {key!r}" + _suggestion(key, allowed))
            for key in error.instance
            if key not in allowed
        ]
    if kind == "required":
        return [
            _problem(path + (key,), "required field is missing")
            for key in error.validator_value
            if isinstance(error.instance, dict) and key not in error.instance
        ]
    if kind == "enum":
        return [_problem(path, f"must be one of: {', '.join(map(str, error.validator_value))}, "
                                    f"not {json.dumps(error.instance)}")]
    if kind == "const":
        return [_problem(path, f"must be {json.dumps(error.validator_value)}, not {json.dumps(error.instance)}")]
    if kind == "type":
        expected = error.validator_value
        expected = " or ".join(expected) if isinstance(expected, list) else expected
        return [_problem(path, f"must be {_article(expected)} {expected}, not {_json_type(error.instance)}")]
    if kind == "maxLength":
        return [_problem(path, f"must be at most {error.validator_value} characters long")]
    if kind == "minLength":
        return [_problem(path, "must not be empty")]
    return [_problem(path, error.message)]


def _suggestion(key: str, allowed: set[str]) -> str:
    import difflib

    close = difflib.get_close_matches(key, sorted(allowed), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _article(word: str) -> str:
    return "an" if word[:1] in "aeiou" else "a"


def _json_type(value: Any) -> str:
    from assertree.jp.values import type_name

    return _article(type_name(value)) + " " + type_name(value)


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
