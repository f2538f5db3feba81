#!/usr/bin/env python3
"""Hand-written plain-Python version of the many-files checks: the loop a user would write with PyYAML.

Why: issue 15 asks that a scan of thousands of small YAML files be at least
1.5x faster than "the plain PyYAML loop". This is that loop, written the way
a user would: walk the directory, ``yaml.safe_load_all`` each file (or, with
``--loader csafe``, ``yaml.load_all(f, Loader=yaml.CSafeLoader)``, PyYAML's
libyaml binding), and check each document with plain dict lookups. The checks
are those of ``bench/manifests-policies/`` (see ``gen_manifests.py``), with the
same policy names, so the findings compare id by id with the generator's
``--expected`` file and with assertree's report.

    python bench/manifests_baseline.py DIR [--loader safe|csafe] > FINDINGS.json

Writes ``{"tool": ..., "findings": {policy: ["<file>#<index>", ...]}}`` (file
relative to DIR, index 0-based in the file's YAML stream) to standard output.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import yaml

CONTROLLERS = {"Deployment", "StatefulSet", "DaemonSet", "Job"}


def containers(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """The containers of a Pod, or of a Pod controller's template."""
    spec = doc.get("spec") or {}
    if doc.get("kind") != "Pod":
        spec = (spec.get("template") or {}).get("spec") or {}
    return spec.get("containers") or []


def require_labels(doc: dict[str, Any]) -> bool:
    labels = (doc.get("metadata") or {}).get("labels") or {}
    return labels.get("app.kubernetes.io/name") is not None and labels.get("team") is not None


def no_privileged_containers(doc: dict[str, Any]) -> bool:
    return not any((c.get("securityContext") or {}).get("privileged") is True for c in containers(doc))


def image_tag_pinned(doc: dict[str, Any]) -> bool:
    return all(":" in c.get("image", "") and not c["image"].endswith(":latest") for c in containers(doc))


def resource_limits(doc: dict[str, Any]) -> bool:
    for c in containers(doc):
        limits = (c.get("resources") or {}).get("limits") or {}
        if limits.get("cpu") is None or limits.get("memory") is None:
            return False
    return True


WORKLOADS = {"Pod", *CONTROLLERS}
# policy name -> (kinds it applies to, check: True when the document passes)
CHECKS: dict[str, tuple[set[str], Callable[[dict[str, Any]], bool]]] = {
    "require-labels": ({*WORKLOADS, "Service", "ConfigMap"}, require_labels),
    "no-privileged-containers": (WORKLOADS, no_privileged_containers),
    "image-tag-pinned": (WORKLOADS, image_tag_pinned),
    "resource-limits": (WORKLOADS, resource_limits),
}


def yaml_files(root: Path) -> list[Path]:
    """Every .yaml/.yml file under `root`, in a stable order."""
    return sorted(Path(d) / f for d, _, files in os.walk(root) for f in files if f.endswith((".yaml", ".yml")))


def check_documents(name: str, documents: Iterable[Any], findings: dict[str, list[str]]) -> None:
    """Run every check that applies to each document of the file `name`, adding failures to `findings`."""
    for index, doc in enumerate(documents):
        if not isinstance(doc, dict):
            continue
        for policy, (kinds, check) in CHECKS.items():
            if doc.get("kind") in kinds and not check(doc):
                findings[policy].append(f"{name}#{index}")


def scan(root: Path, loader: str = "safe") -> dict[str, list[str]]:
    """Policy name -> ids of the documents under `root` that fail it."""
    findings: dict[str, list[str]] = {policy: [] for policy in CHECKS}
    for path in yaml_files(root):
        with open(path, encoding="utf-8") as f:
            if loader == "csafe":
                documents = yaml.load_all(f, Loader=yaml.CSafeLoader)
            else:
                documents = yaml.safe_load_all(f)
            check_documents(path.relative_to(root).as_posix(), documents, findings)
    return findings


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("root", help="directory of YAML manifests")
    parser.add_argument("--loader", choices=["safe", "csafe"], default="safe",
                        help="safe: yaml.safe_load_all (pure Python); csafe: yaml.CSafeLoader (libyaml)")
    args = parser.parse_args(argv)
    print(json.dumps({"tool": f"pyyaml-{args.loader}", "findings": scan(Path(args.root), args.loader)}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
