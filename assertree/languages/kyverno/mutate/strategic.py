"""``patchStrategicMerge``: Kyverno's anchor preprocessing, then kyaml's strategic merge.

pkg/engine/mutate/patch/strategicMergePatch.go and pkg/engine/mutate/mutation.go: the patch (with
``{{ }}`` already substituted) is rewritten against the resource (`preprocess.preprocess`); a failed
``()`` or ``<()`` condition turns it into an empty patch; the result is merged by kyaml
(`merge.strategic_merge`). A resource that comes out unchanged is a SKIP with "no patches applied"
(so an unmet condition is a skip too); a changed one is a PASS; any error is an ERROR worded
``failed to patch resource: ...`` as Kyverno words it.
"""

from __future__ import annotations

from typing import Any

from assertree.languages.kyverno.manifests import copy_json
from assertree.languages.kyverno.mutate.compare import json_equal
from assertree.languages.kyverno.mutate.merge import MergeError, strategic_merge
from assertree.languages.kyverno.mutate.preprocess import (
    ConditionFailed,
    GlobalConditionFailed,
    PatternMatcher,
    PreprocessError,
    preprocess,
    validate_matcher,
)
from assertree.languages.kyverno.mutate.result import MutateResult, error, success_message
from assertree.results import Status

NO_PATCHES = "no patches applied"


def prepare_patch(resource: dict, patch: Any, match_pattern: PatternMatcher = validate_matcher) -> dict:
    """The patch kyaml will merge: anchors resolved against `resource`, ``{}`` when a condition fails.

    Raises PreprocessError for a patch Kyverno cannot preprocess. Neither argument is changed.
    """
    if not isinstance(patch, dict):
        raise PreprocessError(f"wrong node kind: expected MappingNode for the patch, got {type(patch).__name__}")
    pattern = copy_json(patch)
    try:
        preprocess(pattern, resource, match_pattern)
    except (ConditionFailed, GlobalConditionFailed):
        return {}
    return pattern


def apply_strategic_merge(
    resource: dict, patch: Any, match_pattern: PatternMatcher = validate_matcher
) -> MutateResult:
    """Apply one substituted ``patchStrategicMerge`` to `resource` (which is not changed).

    `match_pattern` checks anchor conditions; the default is Kyverno's validate.MatchPattern.
    """
    try:
        pattern = prepare_patch(resource, patch, match_pattern)
    except PreprocessError as failure:
        return error(f"failed to patch resource: failed to preProcess rule: {failure}", resource)
    try:
        patched = strategic_merge(copy_json(resource), pattern)
    except MergeError as failure:
        return error(f"failed to patch resource: {failure}", resource)
    except (RecursionError, MemoryError):
        return error("failed to patch resource: the resource or the patch is too large or too deeply nested to merge",
                     resource)
    if json_equal(patched, resource):
        return MutateResult(Status.SKIP, resource, NO_PATCHES)
    return MutateResult(Status.PASS, patched, success_message(patched))
