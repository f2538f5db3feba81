"""A policy's mutate rules as one MutatingPolicy, applied in turn as Kyverno applies them.

Kyverno runs a policy's mutate rules one after the other, each on the
resource the previous one made, and ``kyverno test`` compares a row's
``patchedResources`` with what the whole policy made, whichever rule the row
names. One MutatingPolicy per rule sees the resource as it came; so rules
converted one by one are merged here when they can be: the same match
constraints, autogen and failure policy. Each rule's own match conditions
become a guard on its mutations (an apply configuration gives empty objects,
a JSON patch no operations, when the guard is false), and the policy applies
when some rule's guard holds. Variables keep their expressions under a
per-rule name. A MutatingPolicy's mutations each see the object the one
before made, which is Kyverno's order; its variables and match conditions
read the object as it came, so the migration proves the merged policy
against the whole source policy before writing it.
"""

from __future__ import annotations

import copy
import re
from typing import Any

from assertree.migrate.convert import cel

__all__ = ["guarded", "merge_mutating"]

_SHARED = ("matchConstraints", "autogen", "failurePolicy", "evaluation", "webhookConfiguration", "reinvocationPolicy")


def merge_mutating(name: str, documents: list[dict]) -> dict | None:
    """One MutatingPolicy named `name` doing what the MutatingPolicies `documents` (one per rule, in rule order)
    do in turn, or None when they cannot share one policy."""
    if len(documents) < 2 or len({document["kind"] for document in documents}) != 1 or \
            documents[0]["kind"] not in ("MutatingPolicy", "NamespacedMutatingPolicy"):
        return None
    first = documents[0]["spec"]
    if any(document["spec"].get(key) != first.get(key) for document in documents for key in _SHARED):
        return None
    if len({(document.get("metadata") or {}).get("namespace") for document in documents}) != 1:
        return None
    shared = [condition for condition in first.get("matchConditions") or []
              if all(condition in (document["spec"].get("matchConditions") or []) for document in documents)]
    variables: list[dict] = []
    mutations: list[dict] = []
    guards: list[str] = []
    for number, document in enumerate(documents, start=1):
        spec = document["spec"]
        renamed = {variable["name"]: f"rule{number}_{variable['name']}" for variable in spec.get("variables") or []}

        def rename(text: str, renamed: dict[str, str] = renamed) -> str:
            return re.sub(r"\bvariables\.([A-Za-z_][A-Za-z0-9_]*)",
                          lambda found: f"variables.{renamed.get(found.group(1), found.group(1))}", text)

        variables.extend({"name": renamed[variable["name"]], "expression": rename(variable["expression"])}
                         for variable in spec.get("variables") or [])
        own = [rename(condition["expression"]) for condition in spec.get("matchConditions") or []
               if condition not in shared]
        guard = cel.and_(own) if own else cel.TRUE
        guards.append(guard)
        for mutation in spec.get("mutations") or []:
            guarded_mutation = guarded(mutation, guard, rename)
            if guarded_mutation is None:
                return None
            mutations.append(guarded_mutation)
    merged = copy.deepcopy(documents[0])
    merged["metadata"]["name"] = name
    body: dict[str, Any] = {}
    for key, value in first.items():
        if key == "matchConditions":
            conditions = list(shared)
            applies = cel.or_(guards)
            if applies != cel.TRUE:
                conditions.append({"name": "some-rule-applies", "expression": applies})
            if conditions:
                body[key] = conditions
        elif key == "variables":
            continue
        elif key == "mutations":
            if variables:
                body["variables"] = variables
            body[key] = mutations
        else:
            body[key] = copy.deepcopy(value)
    if "matchConditions" not in first and cel.or_(guards) != cel.TRUE:
        body["matchConditions"] = [{"name": "some-rule-applies", "expression": cel.or_(guards)}]
    merged["spec"] = body
    return merged


def guarded(mutation: dict, guard: str, rename: Any) -> dict | None:
    """`mutation` doing nothing where `guard` is false (None when an apply configuration's shape does not allow
    it)."""
    if mutation.get("patchType") == "JSONPatch":
        text = rename(mutation["jsonPatch"]["expression"])
        expression = text if guard == cel.TRUE else f"{cel.paren(guard)} ? {cel.paren(text)} : []"
        return {"patchType": "JSONPatch", "jsonPatch": {"expression": expression}}
    text = rename(mutation["applyConfiguration"]["expression"])
    if guard == cel.TRUE:
        return {"patchType": "ApplyConfiguration", "applyConfiguration": {"expression": text}}
    fields = _object_fields(text)
    if fields is None:
        return None
    parts = []
    for key, value in fields:
        empty = f"Object.{key}{{}}" if value.startswith(f"Object.{key}{{") else "{}" if value.startswith("{") else None
        if empty is None:
            return None  # a list or value at the top: nothing empty to give when the rule does not apply
        parts.append(f"{key}: {cel.paren(guard)} ? {value} : {empty}")
    # each field guarded on its own, so that autogen still finds `Object{spec: Object.spec{...}}` shapes
    return {"patchType": "ApplyConfiguration", "applyConfiguration": {"expression": "Object{" + ", ".join(parts) + "}"}}


def _object_fields(text: str) -> list[tuple[str, str]] | None:
    """The top-level ``key: value`` fields of ``Object{...}``, or None for another shape."""
    text = text.strip()
    if not text.startswith("Object{") or not text.endswith("}"):
        return None
    body = text[len("Object{"):-1]
    pieces = _split_top(body)
    if pieces is None:
        return None
    out = []
    for piece in pieces:
        key, colon, value = piece.partition(":")
        if not colon or not re.fullmatch(r"\s*[A-Za-z_][A-Za-z0-9_]*\s*", key):
            return None
        out.append((key.strip(), value.strip()))
    return out


def _split_top(text: str) -> list[str] | None:
    """`text` cut at its top-level commas (outside brackets and quotes)."""
    pieces: list[str] = []
    depth = 0
    quote = ""
    start = 0
    index = 0
    while index < len(text):
        char = text[index]
        if quote:
            if char == "\\":
                index += 2
                continue
            if text.startswith(quote, index):
                index += len(quote)
                quote = ""
                continue
        elif char in "'\"":
            quote = text[index:index + 3] if text[index:index + 3] in ("'''", '"""') else char
            index += len(quote)
            continue
        elif char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
            if depth < 0:
                return None
        elif char == "," and depth == 0:
            pieces.append(text[start:index])
            start = index + 1
        index += 1
    if depth or quote:
        return None
    pieces.append(text[start:])
    return [piece for piece in pieces if piece.strip()]
