"""The CEL-bearing fields admissionregistration.k8s.io defines, as plain data with the field path they are at.

A ``matchConditions`` or ``variables`` entry (`Expression`), a ``validations``
entry (`Validation`) and a ``mutations`` entry (`Mutation`) have the same
shape in Kubernetes' admission policies and in Kyverno's CEL policies, which
reuse those types; each language reads its documents into these. The field
path of every expression is kept, so a compile error names the field.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Expression", "FieldPath", "Mutation", "Validation"]

FieldPath = tuple[str | int, ...]


@dataclass(frozen=True, slots=True)
class Expression:
    """A named CEL expression (``variables``, ``matchConditions``) and where it is written."""

    name: str
    text: str
    path: FieldPath


@dataclass(frozen=True, slots=True)
class Validation:
    """One ``validations`` entry: the check, and what a failure says."""

    expression: str
    path: FieldPath  # of the expression
    message: str = ""
    message_expression: str | None = None
    reason: str | None = None


@dataclass(frozen=True, slots=True)
class Mutation:
    """One ``mutations`` entry: ``ApplyConfiguration`` (a partial object merged in) or ``JSONPatch``."""

    patch_type: str
    expression: str
    path: FieldPath  # of the expression
