"""Applying a MutatingPolicy's patches: JSON patches, and apply configurations merged in.

``JSONPatch`` mutations give a list of RFC 6902 operations, applied with the
JSON Patch implementation the Kyverno ClusterPolicy language already has
(`assertree.languages.kyverno.mutate.jsonpatch`). ``ApplyConfiguration``
mutations give a partial object that Kubernetes merges in as a server-side
apply would (structured-merge-diff): maps merge key by key, lists of the
kinds Kubernetes declares as keyed (containers by ``name`` ...) merge element
by element on their keys, other lists are replaced. The keyed lists are read
from the Kubernetes schema the strategic-merge port carries
(`assertree.languages.kyverno.mutate.merge_schema`); for kinds it does not know
(CRDs) every list is replaced, as structured-merge-diff does for atomic lists.
"""

from __future__ import annotations

import copy
from typing import Any

__all__ = ["MutationError", "apply_configuration", "apply_json_patch"]


class MutationError(ValueError):
    """A patch that does not apply; the text says why."""


def apply_json_patch(resource: Any, operations: Any) -> Any:
    """`resource` after the JSON patch `operations` (a new value)."""
    from assertree.languages.kyverno.mutate.jsonpatch import PatchError, apply_patch, decode_patch

    if not isinstance(operations, list):
        operations = [operations]
    try:
        return apply_patch(resource, decode_patch(operations))
    except PatchError as error:
        raise MutationError(str(error)) from None


def _merge(target: Any, patch: Any, schema: Any) -> Any:
    from assertree.languages.kyverno.mutate.merge_schema import element_schema, field_schema, merge_strategy

    if isinstance(patch, dict) and isinstance(target, dict):
        out = dict(target)
        for key, value in patch.items():
            child = field_schema(schema, key) if schema is not None else None
            out[key] = _merge(target.get(key), value, child) if key in target else copy.deepcopy(value)
        return out
    if isinstance(patch, list) and isinstance(target, list):
        _strategy, keys = merge_strategy(schema)
        if not keys or not all(isinstance(item, dict) for item in (*patch, *target)):
            return copy.deepcopy(patch)
        items = element_schema(schema)
        merged = list(target)
        for element in patch:
            identity = tuple(element.get(key) for key in keys)
            for index, existing in enumerate(merged):
                if tuple(existing.get(key) for key in keys) == identity:
                    merged[index] = _merge(existing, element, items)
                    break
            else:
                merged.append(copy.deepcopy(element))
        return merged
    return copy.deepcopy(patch)


def apply_configuration(resource: Any, configuration: Any) -> Any:
    """`resource` with the partial object `configuration` merged in (a new value)."""
    from assertree.languages.kyverno.mutate.merge_schema import resource_schema

    if not isinstance(configuration, dict):
        raise MutationError(f"an apply configuration must be an object, found {type(configuration).__name__}")
    if not isinstance(resource, dict):
        raise MutationError("an apply configuration needs an object to merge into")
    schema = resource_schema(resource.get("apiVersion"), resource.get("kind"))
    return _merge(resource, configuration, schema)
