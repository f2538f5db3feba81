"""Structural checks of a ``kyverno.io`` ClusterPolicy/Policy, with a field path per problem.

The JSON Schema (``schemas/kyverno.clusterpolicy.json``) is assertree's own
description of the parts of a policy it reads, not Kyverno's CRD: unknown
fields are refused in rules, ``validate``, ``mutate``, ``foreach`` and
conditions (a misspelt ``preconditon`` would otherwise be ignored and the rule
would apply everywhere); patterns, match filters and context sources are
free-form here and checked where they are compiled. Two rules the schema
cannot say are checked by hand: a rule does exactly one thing (validate,
mutate, generate or verifyImages), and rule names are unique in a policy.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from assertree.errors import field_path_text

SCHEMA_FILE = "kyverno.clusterpolicy.json"
RULE_TYPES = ("validate", "mutate", "generate", "verifyImages")


@dataclass(frozen=True)
class SchemaProblem:
    path: tuple[str | int, ...]
    message: str

    @property
    def field(self) -> str:
        return field_path_text(self.path)

    def __str__(self) -> str:
        return f"{self.field}: {self.message}" if self.path else self.message


@cache
def schema() -> dict:
    """The packaged ClusterPolicy schema."""
    return json.loads(resources.files("assertree.schemas").joinpath(SCHEMA_FILE).read_text("utf-8"))


@cache
def _validator():
    from jsonschema import Draft202012Validator

    return Draft202012Validator(schema())


def problems(document: Any) -> list[SchemaProblem]:
    """Every structural problem of `document`, in document order (empty when it is well formed)."""
    found: dict[tuple, SchemaProblem] = {}
    for error in _validator().iter_errors(document):
        for problem in _explain(error):
            found.setdefault((problem.path, problem.message), problem)
    if not found:
        for problem in _rule_problems(document):
            found.setdefault((problem.path, problem.message), problem)
    return sorted(found.values(), key=lambda problem: _order(document, problem.path))


def _rule_problems(document: dict) -> list[SchemaProblem]:
    out = []
    seen: dict[str, int] = {}
    for index, rule in enumerate(document["spec"]["rules"]):
        path = ("spec", "rules", index)
        kinds = [kind for kind in RULE_TYPES if rule.get(kind) is not None]
        if not kinds:
            out.append(SchemaProblem(path, f"a rule needs one of: {', '.join(RULE_TYPES)}"))
        elif len(kinds) > 1:
            out.append(SchemaProblem(path + (kinds[1],), f"a rule does one thing; it already has {kinds[0]!r}"))
        if rule["name"] in seen:
            out.append(SchemaProblem(path + ("name",), f"duplicate rule name {rule['name']!r} "
                                                        f"(also spec.rules[{seen[rule['name']]}])"))
        seen.setdefault(rule["name"], index)
    return out


def _explain(error) -> list[SchemaProblem]:
    """One short message per jsonschema error, pointing at the offending field itself."""
    path = tuple(error.absolute_path)
    kind = error.validator
    if kind == "additionalProperties":
        allowed = sorted(error.schema.get("properties", {}))
        return [SchemaProblem(path + (key,), f"unknown field {key!r}{_suggestion(key, allowed)}")
                for key in error.instance if key not in allowed]
    if kind == "required":
        return [SchemaProblem(path + (key,), "required field is missing")
                for key in error.validator_value if isinstance(error.instance, dict) and key not in error.instance]
    if kind == "enum":
        choices = ", ".join(map(str, error.validator_value))
        return [SchemaProblem(path, f"must be one of: {choices}, not {json.dumps(error.instance)}")]
    if kind == "type":
        expected = error.validator_value
        expected = " or ".join(expected) if isinstance(expected, list) else expected
        return [SchemaProblem(path, f"must be of type {expected}")]
    if kind == "minItems":
        return [SchemaProblem(path, "must not be empty")]
    if kind == "minLength":
        return [SchemaProblem(path, "must not be empty")]
    if kind == "maxLength":
        return [SchemaProblem(path, f"must be at most {error.validator_value} characters long")]
    if kind == "oneOf" and error.context:
        deepest = max(error.context, key=lambda sub: len(sub.absolute_path))
        return _explain(deepest)
    return [SchemaProblem(path, error.message)]


def _suggestion(key: str, allowed: list[str]) -> str:
    import difflib

    close = difflib.get_close_matches(key, allowed, n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _order(document: Any, path: tuple) -> tuple:
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
