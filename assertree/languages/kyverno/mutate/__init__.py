"""Kyverno ``mutate`` on resources that already matched, with patches already substituted.

- `apply_mutation`: a rule's ``mutate`` block (picks the patcher as Kyverno does)
- `apply_strategic_merge`: ``patchStrategicMerge`` (anchors, then kyaml's strategic merge)
- `apply_json6902`: ``patchesJson6902`` (evanphx/json-patch with Kyverno's options)
- `apply_foreach`: ``mutate.foreach`` with callables for variables, lists and preconditions
- `patched_resource_matches` / `tidy`: how ``kyverno test`` compares a patched resource

Each returns a `MutateResult` (status, resource, Kyverno's message); the policy engine adds rule
matching, rule-level preconditions and ``{{ }}`` substitution around them.
"""

from __future__ import annotations

from assertree.languages.kubernetes.jsonpatch import apply_patch, decode_patch
from assertree.languages.kyverno.mutate.compare import json_equal, patched_resource_matches, tidy
from assertree.languages.kyverno.mutate.foreach import ForEachHooks, apply_foreach
from assertree.languages.kyverno.mutate.json6902 import apply_json6902
from assertree.languages.kyverno.mutate.result import MutateResult
from assertree.languages.kyverno.mutate.rule import apply_mutation
from assertree.languages.kyverno.mutate.strategic import apply_strategic_merge, prepare_patch

__all__ = [
    "ForEachHooks",
    "MutateResult",
    "apply_foreach",
    "apply_json6902",
    "apply_mutation",
    "apply_patch",
    "apply_strategic_merge",
    "decode_patch",
    "json_equal",
    "patched_resource_matches",
    "prepare_patch",
    "tidy",
]
