"""Target files: the existing resources ``mutate.targets`` rules patch, written back like resource files.

``assertree apply --target FILE`` names resources that already exist (in the
cluster a trigger would be admitted to). They are the fake cluster the rules
look targets up in (`ScanContext.cluster`), next to the resources being
applied; each one a rule patched is written back where it was read, changing
only what differs (`rewrite`), as a fixed resource file is.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from assertree.apply.files import FileChange, read_text_file
from assertree.apply.rewrite import rewrite_json, rewrite_stream

__all__ = ["TargetFile", "patched_target_files", "read_target_files"]


class TargetFile:
    """One ``--target`` file: its text and the resources it holds (as the Kyverno CLI reads them)."""

    def __init__(self, path: str, text: str) -> None:
        from assertree.languages.kyverno.manifests import parse_manifests, to_float64

        self.path, self.text = path, text
        self.manifests = parse_manifests(text, path)
        self.values = [to_float64(manifest.value) for manifest in self.manifests]


def read_target_files(paths: list[str]) -> list[TargetFile]:
    """The ``--target`` files at `paths`; a PayloadError names one that cannot be read."""
    return [TargetFile(str(path), read_text_file(path)) for path in paths]


def patched_target_files(targets: list[TargetFile], cluster: Any) -> list[FileChange]:
    """Each target file with every resource the rules patched (its final state in `cluster`) written in."""
    from assertree.languages.kubernetes.resources import identity
    from assertree.languages.kyverno.mutate.compare import json_equal

    changes = []
    for target in targets:
        changed: dict[int, tuple[Any, Any]] = {}
        for manifest, value in zip(target.manifests, target.values, strict=True):
            now = cluster.find(*identity(value)) if cluster is not None else None
            if now is not None and manifest.document is not None and not json_equal(value, now):
                changed[manifest.document] = (value, now)
        changes.append(FileChange(target.path, target.text, _rewritten(target, changed)))
    return changes


def _rewritten(target: TargetFile, changed: Mapping[int, tuple[Any, Any]]) -> str:
    if not changed:
        return target.text
    if Path(target.path).suffix.lower() == ".json" and list(changed) == [0] and len(target.manifests) == 1:
        return rewrite_json(target.text, *changed[0])
    return rewrite_stream(target.text, changed, source=target.path)
