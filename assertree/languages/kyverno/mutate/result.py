"""What a mutate rule gives back: Kyverno's status, the resource after it, and Kyverno's message."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from assertree.results import Status


@dataclass(frozen=True, slots=True)
class MutateResult:
    """One mutation's outcome (pkg/engine/mutate.Response).

    `status` is PASS when the resource changed, SKIP when nothing changed (Kyverno's "no patches
    applied", also what a failed conditional or global anchor ends in), ERROR when the patch could
    not be applied. Mutation never FAILs. `resource` is the patched resource for PASS and the input
    otherwise.
    """

    status: Status
    resource: Any
    message: str


def success_message(resource: Any) -> str:
    """buildSuccessMessage: the rule message Kyverno reports for a resource it mutated."""
    if not isinstance(resource, dict):
        return "mutated resource"
    raw_metadata = resource.get("metadata")
    metadata = raw_metadata if isinstance(raw_metadata, dict) else {}
    kind, name, namespace = resource.get("kind", ""), metadata.get("name", ""), metadata.get("namespace", "")
    if not namespace:
        return f"mutated {kind}/{name}"
    return f"mutated {kind}/{name} in namespace {namespace}"


def error(message: str, resource: Any = None) -> MutateResult:
    """A rule error, with Kyverno's wording (``failed to patch resource: <cause>``)."""
    return MutateResult(Status.ERROR, resource, message)
