"""Applying what a mutation expression returns: a JSON patch, or an apply configuration merged in.

Kubernetes' MutatingAdmissionPolicy and Kyverno's MutatingPolicy mutate the
same two ways (k8s.io/apiserver .../mutating/patch: json_patch.go, smd.go).

``JSONPatch`` mutations give a list of RFC 6902 operations, applied with
`assertree.languages.kubernetes.jsonpatch`: by default with the options Kyverno
gives evanphx/json-patch, and with evanphx v4's defaults for the apiserver
(`apply_json_patch`'s ``strict``); a failed ``test`` leaves the object as it
was. ``ApplyConfiguration`` mutations give a partial object that Kubernetes
merges in as a server-side apply would (structured-merge-diff): maps merge key
by key, lists of the kinds Kubernetes declares as keyed (containers by
``name`` ...) merge element by element on their keys, lists declared as sets
of scalars (``finalizers``) take the union, other lists are replaced. The
keyed lists are read from the Kubernetes schema table
(`assertree.languages.kubernetes.merge_schema`); for kinds it does not know
(CRDs) every list is replaced, as structured-merge-diff does for atomic lists.

Bounded: a JSON patch is held to the apiserver's patch limits
(`jsonpatch.MAX_OPERATIONS`, `jsonpatch.MAX_GROWTH`); a keyed list merges
through an index of its elements' keys, in time growing with the list (a scan
per element was quadratic: 5,000 containers); a merge too deep or too large to
build is a `MutationError`. The index finds what the scan found (the first
element with those keys) whenever the keys can be hashed; others are scanned.
"""

from __future__ import annotations

import copy
from typing import Any

__all__ = ["MutationError", "apply_configuration", "apply_json_patch"]


class MutationError(ValueError):
    """A patch that does not apply; the text says why."""


def apply_json_patch(resource: Any, operations: Any, *, strict: bool = False) -> Any:
    """`resource` after the JSON patch `operations` (a new value).

    `strict`: evanphx v4's defaults, as the apiserver applies a MutatingAdmissionPolicy's patch (no
    parents made for ``add``, an error for a missing ``remove`` target); else Kyverno's options.
    """
    from assertree.languages.kubernetes.jsonpatch import PatchError, PatchTestFailed, apply_patch, decode_patch

    if not isinstance(operations, list):
        operations = [operations]
    try:
        return apply_patch(resource, decode_patch(operations), ensure_path=not strict, allow_missing=not strict)
    except PatchTestFailed:
        return resource
    except PatchError as error:
        raise MutationError(str(error)) from None


def _keyed(target: list, patch: list, keys: tuple, items: Any) -> list:
    """`patch`'s elements merged into `target`'s by their `keys`: an element with the keys of an existing one
    (the first) is merged into it, any other is appended."""
    merged = list(target)
    first: dict[tuple, int] = {}
    for place, existing in enumerate(merged):
        identity = tuple(existing.get(key) for key in keys)
        try:
            first.setdefault(identity, place)
        except TypeError:  # a key holding a map or a list: this list is merged by scanning
            return _keyed_by_scan(merged, patch, keys, items)
    for position, element in enumerate(patch):
        identity = tuple(element.get(key) for key in keys)
        try:
            found = first.get(identity)
        except TypeError:
            return _keyed_by_scan(merged, patch[position:], keys, items)
        if found is None:
            first[identity] = len(merged)
            merged.append(copy.deepcopy(element))
        else:
            merged[found] = _merge(merged[found], element, items)
    return merged


def _keyed_by_scan(merged: list, patch: list, keys: tuple, items: Any) -> list:
    """`_keyed` for keys that cannot be hashed: each element looked for from the start."""
    for element in patch:
        identity = tuple(element.get(key) for key in keys)
        for index, existing in enumerate(merged):
            if tuple(existing.get(key) for key in keys) == identity:
                merged[index] = _merge(existing, element, items)
                break
        else:
            merged.append(copy.deepcopy(element))
    return merged


def _merge(target: Any, patch: Any, schema: Any) -> Any:
    from assertree.languages.kubernetes.merge_schema import element_schema, field_schema, merge_strategy

    if isinstance(patch, dict) and isinstance(target, dict):
        out = dict(target)
        for key, value in patch.items():
            child = field_schema(schema, key) if schema is not None else None
            out[key] = _merge(target.get(key), value, child) if key in target else copy.deepcopy(value)
        return out
    if isinstance(patch, list) and isinstance(target, list):
        strategy, keys = merge_strategy(schema)
        if not keys and "merge" in strategy and not any(isinstance(item, (dict, list)) for item in (*patch, *target)):
            return [*target, *(item for item in patch if item not in target)]  # a set: the union
        if not keys or not all(isinstance(item, dict) for item in (*patch, *target)):
            return copy.deepcopy(patch)
        return _keyed(target, patch, tuple(keys), element_schema(schema))
    return copy.deepcopy(patch)


def apply_configuration(resource: Any, configuration: Any) -> Any:
    """`resource` with the partial object `configuration` merged in (a new value)."""
    from assertree.languages.kubernetes.merge_schema import resource_schema

    if not isinstance(configuration, dict):
        raise MutationError(f"an apply configuration must be an object, found {type(configuration).__name__}")
    if not isinstance(resource, dict):
        raise MutationError("an apply configuration needs an object to merge into")
    schema = resource_schema(resource.get("apiVersion"), resource.get("kind"))
    try:
        return _merge(resource, configuration, schema)
    except (RecursionError, MemoryError):
        raise MutationError("the merged object is too large or too deeply nested to build") from None
