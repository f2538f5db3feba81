"""The CEL environment of Kubernetes admission expressions and Kyverno's CEL policies, offline.

Kubernetes (k8s.io/apiserver/pkg/cel/environment) and Kyverno (pkg/cel/compiler)
declare their variables (``object``, ``oldObject``, ``request``, ``params``,
``variables``, ``namespaceObject`` ...) over cel-go with optional types, the
strings, sets, lists and two-variable-comprehension extensions, cross-type
numeric comparisons and their own libraries. `environment` gives the same
over the CEL library: its extensions for what cel-go's are, and
`functions.KYVERNO` (Kubernetes' libraries plus Kyverno's offline helpers)
for the rest; `functions.MISSING` lists what is not there. A policy kind
names its variables; the rest is shared.
"""

from __future__ import annotations

from functools import lru_cache

from assertree.languages.cel.engine import Environment
from assertree.languages.cel.functions import KYVERNO

__all__ = ["EXTENSIONS", "environment"]

EXTENSIONS = ("optional", "strings", "sets", "lists", "two-var-comprehensions", "math", "encoders")


@lru_cache(maxsize=64)
def environment(name: str, variables: tuple[str, ...]) -> Environment:
    """The shared environment with `variables` (each dyn) declared; one per (name, variables)."""
    return Environment(name=name, variables=variables, extensions=EXTENSIONS, functions=KYVERNO,
                       cross_type_numeric_comparisons=True)
