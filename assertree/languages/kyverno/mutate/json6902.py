"""``patchesJson6902``: a rule's JSON patch, applied with Kyverno's evanphx options and Kyverno's statuses.

The patch engine is shared with the apiserver's MutatingAdmissionPolicy (`assertree.languages.kubernetes.jsonpatch`);
what is Kyverno's here is the outcome: an unchanged resource is a SKIP ("no patches applied"), a patch that
does not apply an ERROR with Kyverno's wording.
"""

from __future__ import annotations

from assertree.languages.kubernetes.jsonpatch import PatchError, apply_patch, decode_patch, json_equal
from assertree.languages.kyverno.mutate.result import MutateResult, error, success_message
from assertree.results import Status

__all__ = ["apply_json6902"]


def apply_json6902(resource: dict, patch: str | list) -> MutateResult:
    """Apply one substituted ``patchesJson6902`` to `resource` (not changed), with Kyverno's statuses."""
    try:
        patched = apply_patch(resource, decode_patch(patch))
    except PatchError as failure:
        return error(f"failed to patch resource: {failure}", resource)
    if json_equal(patched, resource):
        return MutateResult(Status.SKIP, resource, "no patches applied")
    return MutateResult(Status.PASS, patched, success_message(patched))
