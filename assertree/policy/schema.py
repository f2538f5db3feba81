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
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from assertree.errors import field_path_text

SCHEMA_FILE = "validatingpolicy.v1alpha1.json"


@dataclass(frozen=True)
class SchemaProblem:
    path: tuple[str | int, ...]
    message: str

    @property
    def field(self) -> str:
        """The kyverno-json field-path text: ``spec.rules[0].matches``."""
        return field_path_text(self.path)

    def __str__(self) -> str:
        return f"{self.field}: {self.message}" if self.path else self.message


@cache
def schema() -> dict:
    """The packaged ValidatingPolicy schema."""
    return json.loads(resources.files("assertree.schemas").joinpath(SCHEMA_FILE).read_text("utf-8"))


@cache
def _validator():
    from jsonschema import Draft202012Validator

    return Draft202012Validator(schema())


def problems(document: Any) -> list[SchemaProblem]:
    """Every schema problem of `document`, most useful first within a field, in document order."""
    found: dict[tuple, SchemaProblem] = {}
    for error in _validator().iter_errors(document):
        for problem in _explain(error):
            found.setdefault((problem.path, problem.message), problem)
    return sorted(found.values(), key=lambda p: _document_order(document, p.path))


def _explain(error) -> list[SchemaProblem]:
    path = tuple(error.absolute_path)
    kind = error.validator
    if kind == "additionalProperties":
        allowed = set(error.schema.get("properties", {}))
        return [
            SchemaProblem(path + (key,), f"unknown field {key!r}" + _suggestion(key, allowed))
            for key in error.instance
            if key not in allowed
        ]
    if kind == "required":
        return [
            SchemaProblem(path + (key,), "required field is missing")
            for key in error.validator_value
            if isinstance(error.instance, dict) and key not in error.instance
        ]
    if kind == "enum":
        return [SchemaProblem(path, f"must be one of: {', '.join(map(str, error.validator_value))}, "
                                    f"not {json.dumps(error.instance)}")]
    if kind == "const":
        return [SchemaProblem(path, f"must be {json.dumps(error.validator_value)}, not {json.dumps(error.instance)}")]
    if kind == "type":
        expected = error.validator_value
        expected = " or ".join(expected) if isinstance(expected, list) else expected
        return [SchemaProblem(path, f"must be {_article(expected)} {expected}, not {_json_type(error.instance)}")]
    if kind == "maxLength":
        return [SchemaProblem(path, f"must be at most {error.validator_value} characters long")]
    if kind == "minLength":
        return [SchemaProblem(path, "must not be empty")]
    return [SchemaProblem(path, error.message)]


def _suggestion(key: str, allowed: set[str]) -> str:
    import difflib

    close = difflib.get_close_matches(key, sorted(allowed), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _article(word: str) -> str:
    return "an" if word[:1] in "aeiou" else "a"


def _json_type(value: Any) -> str:
    from assertree.jp.values import type_name

    return _article(type_name(value)) + " " + type_name(value)


def _document_order(document: Any, path: tuple) -> tuple:
    """Position of `path` in the document, so problems read top to bottom."""
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
