"""How ``kyverno test`` decides that a patched resource is the expected one.

cmd/cli/kubectl-kyverno/commands/test/compare.go and resource/{tidy,compare,labels}.go: both
resources get their ``generate.kyverno.io/*`` labels dropped and ``app.kubernetes.io/managed-by:
kyverno`` added when missing, then are *tidied* (nulls, empty maps and empty lists removed,
recursively, also from lists), and are equal when the JSON merge patch between them is ``{}``,
which is deep equality of JSON values: numbers by value (``1`` equals ``1.0``), booleans apart from
numbers.
"""

from __future__ import annotations

import copy
from typing import Any

_MANAGED_BY = "app.kubernetes.io/managed-by"


def tidy(value: Any) -> Any:
    """Kyverno's Tidy: the value without nulls, empty maps and empty lists (None if nothing is left)."""
    if isinstance(value, dict):
        kept = {key: tidied for key, item in value.items() if (tidied := tidy(item)) is not None}
        return kept or None
    if isinstance(value, list):
        items = [tidied for item in value if (tidied := tidy(item)) is not None]
        return items or None
    return value


def json_equal(first: Any, second: Any, memo: dict[tuple[int, int], tuple[Any, Any, bool]] | None = None) -> bool:
    """Equality of JSON values as Go's encoding/json sees them after a round trip.

    With `memo`, the answer for every pair of maps and of lists compared is kept (with the pair, so that
    their ids stay theirs), and a caller that asks again about parts of values it has compared, level by
    level (`assertree.apply.rewrite.merge`), gets it at once instead of walking each subtree again."""
    if isinstance(first, bool) or isinstance(second, bool):
        return isinstance(first, bool) and isinstance(second, bool) and first == second
    if isinstance(first, (int, float)) and isinstance(second, (int, float)):
        return float(first) == float(second)
    both_maps = isinstance(first, dict) and isinstance(second, dict)
    if both_maps or (isinstance(first, list) and isinstance(second, list)):
        known = memo.get((id(first), id(second))) if memo is not None else None
        if known is not None:
            return known[2]
        if both_maps:
            equal = first.keys() == second.keys() and all(json_equal(first[key], second[key], memo) for key in first)
        else:
            equal = len(first) == len(second) and all(json_equal(a, b, memo) for a, b in zip(first, second))
        if memo is not None:
            memo[(id(first), id(second))] = (first, second, equal)
        return equal
    if type(first) is not type(second):
        return False
    return first == second


def _fixup_generate_labels(resource: dict) -> dict:
    resource = copy.deepcopy(resource)
    metadata = resource.get("metadata")
    labels = metadata.get("labels") if isinstance(metadata, dict) else None
    fixed = {_MANAGED_BY: "kyverno"}
    if isinstance(labels, dict):
        fixed.update({key: value for key, value in labels.items() if not key.startswith("generate.kyverno.io/")})
    if not isinstance(metadata, dict):
        metadata = resource["metadata"] = {}
    metadata["labels"] = fixed
    return resource


def patched_resource_matches(actual: dict, expected: dict) -> bool:
    """Whether ``kyverno test`` accepts `actual` as the ``patchedResources`` entry `expected`."""
    return json_equal(tidy(_fixup_generate_labels(actual)), tidy(_fixup_generate_labels(expected)))
