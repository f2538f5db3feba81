#!/usr/bin/env python3
"""The library-scale case's inputs: a policy library and a cluster dump made from its own test resources.

Policies: every ClusterPolicy, Policy and CEL policy kind (policies.kyverno.io) named by the kyverno test
files of the conformance copy of kyverno/policies (``manifest.json``'s core and CEL tiers), one copy of each
file. A file that ``assertree`` cannot load on its own (a feature it refuses) is left out, and counted, so
that one file does not stop the whole scan (``--check`` runs that test; without it every file is kept).

Resources: the test resources of those tests, cycled until there are ``--resources`` of them, each copy with
a new name, a namespace among ``--namespaces`` (cluster-scoped kinds keep none) and a few varied labels, so
that no two resources are the same object. Written one file per namespace (``ns-NNN.yaml``, plus
``cluster.yaml`` for cluster-scoped ones), as ``kubectl get -A -o yaml`` per namespace would give them, so
that ``--jobs`` has files to share out.

    python bench/gen_library.py --out bench-data/library-5000 --resources 5000 --seed 1 --check

Writes ``OUT/policies/``, ``OUT/cluster/`` and ``OUT/summary.json`` (counts: policy files kept and left
out with why, rules, resources by kind). Deterministic for a seed.
"""

from __future__ import annotations

import argparse
import copy
import json
import random
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "tests" / "conformance" / "data" / "kyverno-policies"
POLICY_GROUPS = ("kyverno.io/", "policies.kyverno.io/")
POLICY_KINDS = {"ClusterPolicy", "Policy", "ValidatingPolicy", "NamespacedValidatingPolicy", "MutatingPolicy",
                "NamespacedMutatingPolicy", "ImageValidatingPolicy", "NamespacedImageValidatingPolicy",
                "GeneratingPolicy", "NamespacedGeneratingPolicy", "DeletingPolicy", "NamespacedDeletingPolicy"}
CLUSTER_SCOPED = {"Namespace", "Node", "ClusterRole", "ClusterRoleBinding", "PersistentVolume", "StorageClass",
                  "CustomResourceDefinition", "ValidatingWebhookConfiguration", "MutatingWebhookConfiguration",
                  "PriorityClass", "IngressClass", "RuntimeClass", "APIService", "ClusterIssuer"}
TEAMS = ("payments", "search", "platform", "data", "web", "ml")
TIERS = ("frontend", "backend", "batch", "cache")


def read_yaml(path: Path) -> list:
    try:
        return [doc for doc in yaml.safe_load_all(path.read_text(encoding="utf-8")) if doc is not None]
    except (OSError, yaml.YAMLError, UnicodeDecodeError):
        return []


def is_policy(document: object) -> bool:
    return (isinstance(document, dict) and str(document.get("apiVersion", "")).startswith(POLICY_GROUPS)
            and document.get("kind") in POLICY_KINDS)


def test_files() -> list[Path]:
    manifest = json.loads((DATA / "manifest.json").read_text(encoding="utf-8"))
    return [DATA / test["test"] for test in (*manifest["tests"], *manifest["celTests"])]


def inputs() -> tuple[list[Path], list[dict]]:
    """Every policy file and every test resource the tests name, each file once, in the tests' order."""
    policies: dict[Path, None] = {}
    resources: list[dict] = []
    seen_resources: set[Path] = set()
    for test in test_files():
        spec = (read_yaml(test) or [{}])[0]
        for name in spec.get("policies") or []:
            path = (test.parent / name).resolve()
            if path.is_file() and any(is_policy(doc) for doc in read_yaml(path)):
                policies.setdefault(path)
        for name in spec.get("resources") or []:
            path = (test.parent / name).resolve()
            if path.is_file() and path not in seen_resources:
                seen_resources.add(path)
                resources.extend(doc for doc in read_yaml(path)
                                 if isinstance(doc, dict) and doc.get("kind") and isinstance(doc.get("metadata"), dict)
                                 and not is_policy(doc))
    return list(policies), resources


def loads_alone(path: Path) -> str | None:
    """None when assertree loads this one file (every document compiles), else the last line of why not."""
    code = "import sys; from assertree.languages.load import load_policies; load_policies(sys.argv[1])"
    done = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, cwd=REPO)
    if done.returncode == 0:
        return None
    return (done.stderr.strip().splitlines() or ["?"])[-1][:200]


def varied(resource: dict, number: int, namespaces: int, rng: random.Random) -> dict:
    """A copy of `resource` as another object of the cluster: its own name, namespace and labels."""
    item = copy.deepcopy(resource)
    metadata = item["metadata"]
    base = str(metadata.get("name") or item["kind"].lower())
    metadata["name"] = f"{base[:40]}-{number:05d}"
    if item["kind"] in CLUSTER_SCOPED:
        metadata.pop("namespace", None)
    else:
        metadata["namespace"] = f"ns-{rng.randrange(namespaces):03d}"
    labels = metadata.get("labels") if isinstance(metadata.get("labels"), dict) else {}
    labels = dict(labels)
    labels["app.kubernetes.io/instance"] = metadata["name"]
    if rng.random() < 0.7:
        labels["team"] = rng.choice(TEAMS)
    if rng.random() < 0.5:
        labels["tier"] = rng.choice(TIERS)
    metadata["labels"] = labels
    return item


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--resources", type=int, default=5000)
    parser.add_argument("--namespaces", type=int, default=40)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--check", action="store_true", help="leave out policy files assertree cannot load alone")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    policy_files, resources = inputs()
    if not resources:
        sys.exit("no test resources found")
    if args.out.exists():
        shutil.rmtree(args.out)
    (args.out / "policies").mkdir(parents=True)
    (args.out / "cluster").mkdir()
    kept, left_out, rules = [], {}, 0
    for path in policy_files:
        problem = loads_alone(path) if args.check else None
        if problem is not None:
            left_out[str(path.relative_to(DATA))] = problem
            continue
        target = args.out / "policies" / "__".join(path.relative_to(DATA).parts)
        shutil.copyfile(path, target)
        kept.append(target)
        for doc in read_yaml(path):
            if is_policy(doc):
                spec = doc.get("spec") or {}
                rules += len(spec.get("rules") or []) if doc["kind"] in ("ClusterPolicy", "Policy") else 1
    files: dict[str, list[dict]] = {}
    kinds: dict[str, int] = {}
    for number in range(args.resources):
        item = varied(resources[number % len(resources)], number, args.namespaces, rng)
        namespace = item["metadata"].get("namespace")
        files.setdefault(namespace or "cluster", []).append(item)
        kinds[item["kind"]] = kinds.get(item["kind"], 0) + 1
    for name, items in sorted(files.items()):
        text = yaml.safe_dump_all(items, sort_keys=False, default_flow_style=False)
        (args.out / "cluster" / f"{name}.yaml").write_text(text, encoding="utf-8")
    summary = {"policy_files": len(kept), "policy_files_left_out": left_out, "rules": rules,
               "resources": args.resources, "distinct_test_resources": len(resources), "files": len(files),
               "kinds": dict(sorted(kinds.items(), key=lambda item: -item[1]))}
    (args.out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
    print(f"gen_library: {len(kept)} policy files ({len(left_out)} left out), {rules} rules, {args.resources} "
          f"resources in {len(files)} files", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
