"""One mutate rule on one resource, after matching and rule preconditions: which patcher runs.

pkg/engine/handlers/mutation/mutate_resource.go and mutate.Mutate / NewPatcher: a rule with
``foreach`` runs the loop; otherwise its ``patchStrategicMerge`` wins over its ``patchesJson6902``
when both are written, and a rule with neither is an ERROR ("empty mutate rule").
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from assertree.languages.kyverno.mutate.foreach import Bindings, ForEachHooks, apply_foreach
from assertree.languages.kyverno.mutate.json6902 import apply_json6902
from assertree.languages.kyverno.mutate.preprocess import PatternMatcher, validate_matcher
from assertree.languages.kyverno.mutate.result import MutateResult, error
from assertree.languages.kyverno.mutate.strategic import apply_strategic_merge


def apply_mutation(
    mutation: Mapping[str, Any],
    resource: dict,
    *,
    match_pattern: PatternMatcher = validate_matcher,
    foreach_hooks: ForEachHooks | None = None,
    bindings: Bindings | None = None,
) -> MutateResult:
    """Run a rule's ``mutate`` block (patches already substituted, except inside ``foreach``).

    `foreach_hooks` is required for rules with ``foreach``: their patches are substituted per element.
    """
    if mutation.get("foreach"):
        if foreach_hooks is None:
            return error("failed to mutate elements: foreach needs expression hooks", resource)
        return apply_foreach(list(mutation["foreach"]), resource, foreach_hooks, bindings)
    if mutation.get("patchStrategicMerge") is not None:
        return apply_strategic_merge(resource, mutation["patchStrategicMerge"], match_pattern)
    patches = mutation.get("patchesJson6902")
    if isinstance(patches, (str, list)) and patches:
        return apply_json6902(resource, patches)
    return error("empty mutate rule", resource)
