"""Comparing a mutated (or generated) resource with the one a Test's ``patchedResources`` (or
``generatedResource``) file expects.

``kyverno test`` finds the expected resource in the file by apiVersion, kind,
namespace and name (the file read like any resource file: a namespaced kind
without a namespace is in ``default``); the comparison itself (tidy, then
JSON equality) is `languages.kyverno.mutate.compare`. A file that lacks the
resource gives None, which drops the row unless it sets
``failOnMissingResources``; a file that does not exist raises FileNotFoundError
(a failed row, as in the CLI).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from assertree.testing.check import PatchedLookup


def patched_lookup() -> PatchedLookup:
    """A lookup that reads each patchedResources file once."""
    from assertree.languages.kyverno.manifests import read_manifests
    from assertree.languages.kyverno.mutate.compare import patched_resource_matches, tidy

    files: dict[Path, list] = {}

    def lookup(path: Path, actual: Any, generated: bool = False) -> tuple[bool | None, str]:
        if path not in files:
            if not path.is_file():
                what = "GeneratedResource" if generated else "PatchedResources"
                raise FileNotFoundError(f"failed to load {what} resource: file not found: {path}")
            files[path] = read_manifests(path)
        key = _key(actual)
        expected = next((manifest.value for manifest in files[path] if manifest.key == key), None)
        if expected is None:
            return None, ""
        if generated:
            actual, expected = fixup_generate_labels(actual), fixup_generate_labels(expected)
        if patched_resource_matches(actual, expected):
            return True, ""
        return False, diff_text(tidy(expected), tidy(actual))

    return lookup


def fixup_generate_labels(resource: Any) -> Any:
    """A generated resource as ``kyverno test`` compares it (``resource.FixupGenerateLabels``): every
    ``generate.kyverno.io/*`` label dropped, ``app.kubernetes.io/managed-by: kyverno`` set."""
    if not isinstance(resource, dict):
        return resource
    metadata = dict(resource.get("metadata") or {})
    labels = metadata.get("labels")
    labels = labels if isinstance(labels, dict) else {}
    metadata["labels"] = {"app.kubernetes.io/managed-by": "kyverno",
                          **{key: value for key, value in labels.items()
                             if not str(key).startswith("generate.kyverno.io/")}}
    return {**resource, "metadata": metadata}


def _key(value: Any) -> tuple[str, str, str, str]:
    metadata = value.get("metadata") or {} if isinstance(value, dict) else {}
    return (str(value.get("apiVersion") or ""), str(value.get("kind") or ""),
            str(metadata.get("namespace") or ""), str(metadata.get("name") or ""))


def diff_text(expected: Any, actual: Any) -> str:
    """A unified diff of the two resources as YAML (only in expected: ``-``, only in actual: ``+``)."""
    import difflib

    import yaml

    def lines(value: Any) -> list[str]:
        return yaml.safe_dump(value, sort_keys=True, default_flow_style=False).splitlines()

    return "\n".join(difflib.unified_diff(lines(expected), lines(actual), "expected", "actual", lineterm=""))
