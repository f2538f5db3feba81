"""The CEL environments of Kubernetes admission expressions and Kyverno's CEL policies, offline.

Kubernetes (k8s.io/apiserver/pkg/cel/environment, base.go) and Kyverno
(pkg/cel/compiler) declare their variables (``object``, ``oldObject``,
``request``, ``params``, ``variables``, ``namespaceObject`` ...) over cel-go
with optional types, cross-type numeric comparisons and their own libraries.
Kubernetes' base environment adds the strings (version 2), sets and
two-variable-comprehension extensions; Kyverno's also lists, math and
encoders. `kubernetes_environment` and `environment` give the same over the
CEL library: its extensions for what cel-go's are, and
`functions.KUBERNETES` / `functions.KYVERNO` for the rest;
`functions.MISSING` lists what is not there. A policy kind names its
variables; the rest is shared.
"""

from __future__ import annotations

from functools import lru_cache

from assertree.languages.cel.engine import Environment
from assertree.languages.cel.functions import KUBERNETES, KYVERNO

__all__ = ["EXTENSIONS", "KUBERNETES_EXTENSIONS", "environment", "kubernetes_environment"]

KUBERNETES_EXTENSIONS = ("optional", "strings", "sets", "two-var-comprehensions")
EXTENSIONS = (*KUBERNETES_EXTENSIONS, "lists", "math", "encoders")


@lru_cache(maxsize=64)
def environment(name: str, variables: tuple[str, ...]) -> Environment:
    """The shared environment with `variables` (each dyn) declared; one per (name, variables)."""
    return Environment(name=name, variables=variables, extensions=EXTENSIONS, functions=KYVERNO,
                       cross_type_numeric_comparisons=True)


@lru_cache(maxsize=64)
def kubernetes_environment(name: str, variables: tuple[str, ...]) -> Environment:
    """The apiserver's environment (no Kyverno helpers, no lists/math/encoders extensions) with `variables`.

    An expression past assertree's cost limits on any input compiles, and each evaluation of it is an error:
    the apiserver has no estimated limit for admission policies; it stores them and cancels an evaluation past
    its ``PerCallLimit``, leaving the verdict to the policy's ``failurePolicy``.
    """
    return Environment(name=name, variables=variables, extensions=KUBERNETES_EXTENSIONS, functions=KUBERNETES,
                       cross_type_numeric_comparisons=True, refuse_past_limits=False)
