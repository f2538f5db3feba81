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

from assertree.languages.kubernetes.jsonpatch import json_equal

__all__ = ["json_equal", "patched_resource_matches", "tidy"]

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
