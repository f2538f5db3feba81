"""Kinds to API resources (``Pod`` -> ``pods``), as the Kyverno CLI names them without a cluster.

Admission requests, and so ``matchConstraints.resourceRules``, name resources
by their plural (``deployments``), while manifests name their kind. The CLI
asks its built-in discovery data first and otherwise guesses the way
apimachinery's ``UnsafeGuessKindToResource`` does (lower case; ``-s`` ->
``-ses``, ``-y`` -> ``-ies``, else ``-s``), which gives the discovery answer
for every built-in kind except the irregular ones listed here.
"""

from __future__ import annotations

__all__ = ["plural_of"]

_IRREGULAR = {"endpoints": "endpoints", "podsecuritypolicy": "podsecuritypolicies"}


def plural_of(kind: str) -> str:
    """The resource name of `kind` (lower-case plural)."""
    singular = kind.lower()
    if not singular:
        return ""
    if singular in _IRREGULAR:
        return _IRREGULAR[singular]
    if singular.endswith("s"):
        return singular + "es"
    if singular.endswith("y"):
        return singular[:-1] + "ies"
    return singular + "s"
