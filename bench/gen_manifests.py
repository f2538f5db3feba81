#!/usr/bin/env python3
"""Write a tree of small, realistic Kubernetes YAML manifests with a known set of violations.

Why: issue 15's many-files case (a repository-wide or pre-commit scan of
thousands of small YAML files) needs a corpus that every tool in the benchmark
reads byte for byte alike, and real repositories of that size are private.

What it promises:

* ``--files N`` files under ``--out DIR``, as ``<team>/<app>-<NNNN>.yaml``,
  each holding 1-3 documents separated by ``---``: a Deployment with its
  Service (and sometimes a ConfigMap), a StatefulSet with its headless Service,
  a DaemonSet, a Job, a bare Pod, or configuration only (ConfigMaps). Some
  files start with a comment. Block-style YAML as people write it.
* The same ``--files`` and ``--seed`` give the same bytes (standard library
  only, Python 3.11+; nothing depends on the machine or the time).
* Every scalar reads the same under YAML 1.1 (PyYAML) and YAML 1.2 core
  (assertree): strings that either version could take for a number, a
  boolean or null are quoted.
* Each of the checks in `CHECKS` is violated by about `--violation-rate` of
  the documents it applies to, chosen from the seed; ``--expected FILE``
  writes, per check, the documents that violate it as ``<file>#<index>``
  (file relative to DIR, index 0-based in the file's YAML stream), to compare
  a tool's findings with, id by id. The checks are the policies in
  ``bench/manifests-policies/``:

  - ``require-labels``: every object has the labels ``app.kubernetes.io/name``
    and ``team``;
  - ``no-privileged-containers``: no container of a Pod or a Pod controller
    (Deployment, StatefulSet, DaemonSet, Job) sets ``securityContext.privileged: true``;
  - ``image-tag-pinned``: every such container's image has a tag (``:``) other than ``latest``;
  - ``resource-limits``: every such container sets ``resources.limits.cpu`` and ``.memory``.

    python bench/gen_manifests.py --files 2000 --seed 1 --out manifests/ --expected manifests.expected.json
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from pathlib import Path
from typing import Any

WORKLOADS = ("Deployment", "StatefulSet", "DaemonSet", "Job", "Pod")
KINDS = (*WORKLOADS, "Service", "ConfigMap")
# check name -> kinds it applies to
CHECKS: dict[str, tuple[str, ...]] = {
    "require-labels": KINDS,
    "no-privileged-containers": WORKLOADS,
    "image-tag-pinned": WORKLOADS,
    "resource-limits": WORKLOADS,
}
TEAMS = ("payments", "search", "identity", "platform", "data", "growth", "ml", "edge")
WORDS = ("api", "worker", "gateway", "billing", "ledger", "indexer", "auth", "session", "feed", "notify",
         "export", "ingest", "report", "cache", "profile", "catalog", "checkout", "scheduler", "router", "audit")
PUBLIC_IMAGES = ("nginx", "redis", "postgres", "busybox", "envoyproxy/envoy", "prom/statsd-exporter",
                 "otel/opentelemetry-collector", "fluent/fluent-bit")
# (file layout, weight): each layout is the kinds of the documents of one file, in order
LAYOUTS: list[tuple[tuple[str, ...], float]] = [
    (("Deployment", "Service"), 0.25),
    (("Deployment", "Service", "ConfigMap"), 0.12),
    (("ConfigMap", "Deployment"), 0.05),
    (("Deployment",), 0.13),
    (("StatefulSet", "Service"), 0.08),
    (("DaemonSet",), 0.05),
    (("Job",), 0.08),
    (("Pod",), 0.09),
    (("ConfigMap",), 0.10),
    (("ConfigMap", "ConfigMap"), 0.05),
]


# --- YAML text ---------------------------------------------------------------------------------------
# Written by hand (the generator is standard library only): block style, two-space indents, and
# scalars quoted (as JSON strings, which are valid YAML double-quoted scalars) whenever YAML 1.1 or
# 1.2 could read them as anything but the string.

_PLAIN = re.compile(r"[A-Za-z/][A-Za-z0-9_.\-/@]*(?::[A-Za-z0-9_.\-/@]+)*|[0-9]+(?:\.[0-9]+)?(?:m|Ki|Mi|Gi)")
_RESERVED = {"y", "n", "yes", "no", "on", "off", "true", "false", "null", "nan", "inf"}


def _scalar(value: Any) -> str:
    if value is True or value is False:
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, int):
        return str(value)
    if _PLAIN.fullmatch(value) and value.lower() not in _RESERVED:
        return value
    return json.dumps(value)


def _block(value: Any, indent: int) -> list[str]:
    """Lines of a non-empty mapping or sequence at `indent` spaces."""
    pad, lines = " " * indent, []
    if isinstance(value, dict):
        for key, item in value.items():
            head = f"{pad}{_scalar(key)}:"
            if isinstance(item, str) and "\n" in item:
                lines.append(head + " |")
                lines.extend(f"{pad}  {line}" if line else "" for line in item.rstrip("\n").split("\n"))
            elif isinstance(item, dict | list) and item:
                lines.append(head)
                lines.extend(_block(item, indent + 2))
            else:
                lines.append(f"{head} {_inline(item)}")
        return lines
    for item in value:
        if isinstance(item, dict) and item:
            inner = _block(item, indent + 2)
            lines.append(f"{pad}- {inner[0][indent + 2:]}")
            lines.extend(inner[1:])
        else:
            lines.append(f"{pad}- {_inline(item)}")
    return lines


def _inline(value: Any) -> str:
    if isinstance(value, dict | list):
        return "{}" if isinstance(value, dict) else "[]"  # only empty ones are written inline
    return _scalar(value)


def to_yaml(document: dict[str, Any]) -> str:
    return "\n".join(_block(document, 0)) + "\n"


# --- objects -----------------------------------------------------------------------------------------

class App:
    """One application of one team: what its objects share (names, labels, image)."""

    def __init__(self, rng: random.Random, index: int):
        self.team = rng.choice(TEAMS)
        self.name = f"{rng.choice(WORDS)}-{rng.choice(WORDS)}-{index}"
        self.namespace = f"{self.team}-{rng.choice(('prod', 'staging', 'dev'))}"
        self.version = f"{rng.randint(1, 4)}.{rng.randint(0, 30)}.{rng.randint(0, 12)}"
        self.port = rng.choice((8080, 8000, 3000, 9000, 5000))

    def labels(self) -> dict[str, str]:
        return {"app.kubernetes.io/name": self.name, "app.kubernetes.io/version": self.version,
                "app.kubernetes.io/part-of": self.team, "team": self.team}


def _metadata(app: App, name: str, violate: set[str], rng: random.Random) -> dict[str, Any]:
    labels = app.labels()
    if "require-labels" in violate:  # drop one or both of the required labels
        for key in rng.choice((("team",), ("app.kubernetes.io/name",), ("team", "app.kubernetes.io/name"))):
            del labels[key]
    out: dict[str, Any] = {"name": name, "namespace": app.namespace, "labels": labels}
    if rng.random() < 0.4:
        out["annotations"] = {"owner": f"{app.team}@example.com",
                              "description": f"{app.name} ({app.team}), managed in git"}
    return out


def _container(app: App, rng: random.Random, name: str, image: str, violate: set[str]) -> dict[str, Any]:
    if "image-tag-pinned" in violate:
        image = image.rsplit(":", 1)[0] + rng.choice(("", ":latest"))
    env: list[dict[str, Any]] = [{"name": "LOG_LEVEL", "value": rng.choice(("info", "debug", "warn"))},
           {"name": "PORT", "value": str(app.port)},
           {"name": "TEAM", "value": app.team}]
    for i in range(rng.randint(0, 4)):
        env.append({"name": f"FEATURE_{i}_ENABLED", "value": rng.choice(("true", "false", "1", "0"))})
    if rng.random() < 0.5:
        env.append({"name": "DATABASE_PASSWORD",
                    "valueFrom": {"secretKeyRef": {"name": f"{app.name}-db", "key": "password"}}})
    requests = {"cpu": f"{rng.choice((50, 100, 250, 500))}m", "memory": f"{rng.choice((64, 128, 256, 512))}Mi"}
    limits = {"cpu": rng.choice(("500m", "1", "2", "1500m")), "memory": f"{rng.choice((256, 512, 1024))}Mi"}
    resources: dict[str, Any] = {"requests": requests, "limits": limits}
    if "resource-limits" in violate:
        missing = rng.choice(("cpu", "memory", "limits"))
        if missing == "limits":
            del resources["limits"]
        else:
            del limits[missing]
    security: dict[str, Any] = {"runAsNonRoot": True, "readOnlyRootFilesystem": True,
                                "allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}
    if "no-privileged-containers" in violate:
        security = {"privileged": True, "allowPrivilegeEscalation": True}
    elif rng.random() < 0.3:
        security["privileged"] = False
    out: dict[str, Any] = {"name": name, "image": image, "imagePullPolicy": "IfNotPresent",
                           "ports": [{"name": "http", "containerPort": app.port, "protocol": "TCP"}],
                           "env": env, "resources": resources, "securityContext": security}
    if rng.random() < 0.7:
        probe = {"httpGet": {"path": "/healthz", "port": "http"}, "periodSeconds": 10}
        out["readinessProbe"] = probe
        out["livenessProbe"] = {**probe, "initialDelaySeconds": 15}
    out["volumeMounts"] = [{"name": "config", "mountPath": "/etc/app", "readOnly": True},
                           {"name": "tmp", "mountPath": "/tmp"}]
    return out


def _pod_spec(app: App, rng: random.Random, violate: set[str]) -> dict[str, Any]:
    containers = [(app.name, f"registry.example.com/{app.team}/{app.name}:{app.version}")]
    if rng.random() < 0.3:
        sidecar = rng.choice(PUBLIC_IMAGES)
        containers.append((sidecar.rsplit("/", 1)[-1], f"{sidecar}:{rng.randint(1, 9)}.{rng.randint(0, 20)}"))
    # a container-level violation is carried by one container of the pod
    bad = rng.randrange(len(containers))
    spec: dict[str, Any] = {
        "serviceAccountName": app.name,
        "securityContext": {"runAsUser": 10001, "fsGroup": 10001},
        "containers": [_container(app, rng, name, image, violate if i == bad else set())
                       for i, (name, image) in enumerate(containers)],
        "volumes": [{"name": "config", "configMap": {"name": f"{app.name}-config"}},
                    {"name": "tmp", "emptyDir": {}}],
    }
    if rng.random() < 0.3:
        spec["nodeSelector"] = {"kubernetes.io/os": "linux"}
    return spec


def build(kind: str, app: App, rng: random.Random, violate: set[str]) -> dict[str, Any]:
    """One object of `kind` for `app`, violating the checks in `violate`."""
    head = {"apiVersion": "v1", "kind": kind}
    selector = {"app.kubernetes.io/name": app.name}
    if kind == "ConfigMap":
        config = (f"server:\n  port: {app.port}\n  shutdownTimeout: 30s\nlogging:\n  level: info\n"
                  f"features:\n  team: {app.team}\n")
        data = {"LOG_FORMAT": "json", "REGION": rng.choice(("eu-west-1", "us-east-1")), "application.yaml": config}
        return {**head, "metadata": _metadata(app, f"{app.name}-config", violate, rng), "data": data}
    if kind == "Service":
        spec: dict[str, Any] = {"selector": selector,
                                "ports": [{"name": "http", "port": 80, "targetPort": "http", "protocol": "TCP"}]}
        spec["type"] = rng.choice(("ClusterIP", "ClusterIP", "LoadBalancer"))
        return {**head, "metadata": _metadata(app, app.name, violate, rng), "spec": spec}
    metadata = _metadata(app, app.name, violate, rng)
    pod = _pod_spec(app, rng, violate)
    if kind == "Pod":
        return {**head, "metadata": metadata, "spec": pod}
    template = {"metadata": {"labels": app.labels()}, "spec": pod}
    if kind == "Job":
        pod["restartPolicy"] = "Never"
        return {"apiVersion": "batch/v1", "kind": kind, "metadata": metadata,
                "spec": {"backoffLimit": 2, "template": template}}
    spec = {"selector": {"matchLabels": selector}, "template": template}
    if kind == "Deployment":
        spec = {"replicas": rng.randint(1, 6), "revisionHistoryLimit": 5, **spec,
                "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 0}}}
    elif kind == "StatefulSet":
        spec = {"serviceName": app.name, "replicas": rng.randint(1, 3), **spec}
    return {"apiVersion": "apps/v1", "kind": kind, "metadata": metadata, "spec": spec}


def generate(out: Path, files: int, seed: int, rate: float) -> dict[str, Any]:
    """Write the files under `out`; return the expected findings (see the module docstring)."""
    rng = random.Random(seed)
    layouts, weights = zip(*LAYOUTS)
    checks: dict[str, dict[str, Any]] = {name: {"applicable": 0, "ids": []} for name in CHECKS}
    documents = 0
    for index in range(files):
        app = App(rng, index)
        relative = f"{app.team}/{app.name}.yaml"
        texts = []
        for position, kind in enumerate(rng.choices(layouts, weights)[0]):
            violate = {name for name, kinds in CHECKS.items() if kind in kinds and rng.random() < rate}
            for name, kinds in CHECKS.items():
                if kind in kinds:
                    checks[name]["applicable"] += 1
                    if name in violate:
                        checks[name]["ids"].append(f"{relative}#{position}")
            texts.append(to_yaml(build(kind, app, rng, violate)))
        documents += len(texts)
        header = f"# {app.name}: owned by {app.team}\n" if rng.random() < 0.3 else ""
        path = out / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(header + "---\n".join(texts), encoding="utf-8")
    for check in checks.values():
        check["violations"] = len(check["ids"])
    return {"files": files, "documents": documents, "seed": seed, "checks": checks}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=2000, help="number of files (each with 1-3 documents)")
    parser.add_argument("--seed", type=int, default=1, help="random seed (same seed and --files, same bytes)")
    parser.add_argument("--violation-rate", type=float, default=0.1,
                        help="share of the documents a check applies to that violate it")
    parser.add_argument("--out", required=True, help="directory to write (files already there are kept)")
    parser.add_argument("--expected", help="also write the expected findings (JSON) to this file")
    args = parser.parse_args(argv)
    expected = generate(Path(args.out), args.files, args.seed, args.violation_rate)
    if args.expected:
        Path(args.expected).write_text(json.dumps(expected, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
