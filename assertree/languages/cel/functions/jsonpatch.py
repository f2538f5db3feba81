"""Kubernetes' JSON Patch library (k8s.io/apiserver/pkg/cel/library/jsonpatch.go): ``jsonpatch.escapeKey``.

A mutating policy builds JSON Patch paths from keys that may hold ``~`` or
``/`` (``example.com/owner``); ``jsonpatch.escapeKey(key)`` writes them as
RFC 6901 tokens (``~`` as ``~0``, then ``/`` as ``~1``). Kyverno's CEL
policies offer the same function.
"""

from __future__ import annotations

from assertree.languages.cel.functions.declare import Declaration

__all__ = ["DECLARATIONS"]


def _escape_key(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


DECLARATIONS = (
    Declaration("jsonpatch.escapeKey", ("string",), "string", _escape_key),
)
