#!/usr/bin/env python3
"""Benchmark: assertree.jp against the official `jmespath` package, on compiled expressions.

Not a test. Two sets of expressions:

* every case of the official compliance suite (``../shared/conformance/jmespath/official``)
  that both libraries evaluate without error;
* typical policy expressions, on a Terraform-like document of 1,000 resources and on
  single resources (what assertion-tree keys evaluate).

For each expression both libraries compile once, then ``search`` is timed
(``timeit``, best of 5 batches of ~10 ms); the ratio is official time / assertree time
(higher is better for assertree). Prints the median ratio of each set.

    python bench/jp_bench.py
"""

from __future__ import annotations

import json
import os
import random
import statistics
import sys
import timeit
from pathlib import Path

import jmespath

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from assertree import jp  # noqa: E402

SHARED = Path(os.environ.get("ASSERTREE_SHARED", REPO.parent / "shared"))


def best_time(function) -> float:
    """Seconds per call: the best of 5 batches, each batch long enough (~10 ms) to time reliably."""
    timer = timeit.Timer(function)
    number = 1
    while timer.timeit(number) < 0.01:
        number *= 4
    return min(timer.repeat(repeat=5, number=number)) / number


def ratio(expression: str, document) -> float | None:
    try:
        official = jmespath.compile(expression)
        ours = jp.compile(expression, "community")
        expected = official.search(document)
        if ours.search(document) != expected:
            return None
    except Exception:  # noqa: BLE001  (only expressions both evaluate are timed)
        return None
    return best_time(lambda: official.search(document)) / best_time(lambda: ours.search(document))


def compliance_cases():
    for path in sorted((SHARED / "conformance" / "jmespath" / "official").glob("*.json")):
        if path.name == "benchmarks.json":
            continue
        for suite in json.loads(path.read_text()):
            for case in suite["cases"]:
                if "result" in case:
                    yield case["expression"], suite["given"]


def plan_document(size: int = 1000) -> dict:
    rng = random.Random(1)
    types = ["aws_s3_bucket", "aws_instance", "aws_security_group", "aws_db_instance"]
    resources = []
    for i in range(size):
        kind = rng.choice(types)
        resources.append({
            "address": f"{kind}.r{i}", "mode": "managed", "type": kind, "name": f"r{i}",
            "values": {
                "size": rng.randint(0, 1000), "acl": rng.choice(["private", "public-read"]),
                "tags": {"Team": "a"} if rng.random() < 0.8 else {"Name": "x"},
                "ingress": [{"cidr_blocks": [rng.choice(["0.0.0.0/0", "10.0.0.0/8"])],
                             "from_port": 22, "to_port": rng.choice([22, 443]), "protocol": "tcp"}],
            },
        })
    return {"resources": resources}


POLICY_EXPRESSIONS_ON_PLAN = [
    "resources[?type == 'aws_s3_bucket'].values.tags.Team",
    "resources[*].values.size | length(@)",
    "resources[?values.size > `500` && values.acl == 'private'] | length(@)",
    "resources[?values.tags.Team == null].address",
    "max_by(resources, &values.size).address",
    "sort_by(resources[?type == 'aws_instance'], &name)[0].address",
]

POLICY_EXPRESSIONS_ON_RESOURCE = [
    "values.tags.Team",
    "contains(['HTTPS', 'TLS'], values.acl)",
    "values.ingress[?contains(cidr_blocks, '0.0.0.0/0')] || `[]`",
    "protocol == '-1' || (from_port <= `22` && to_port >= `22`)",
    "keys(values.tags)",
    "length(values.ingress) > `0`",
]


def report(title: str, ratios: list[float]) -> None:
    print(f"{title}: {len(ratios)} expressions, median {statistics.median(ratios):.2f}x faster "
          f"(min {min(ratios):.2f}x, max {max(ratios):.2f}x)")


def main() -> int:
    compliance = [r for e, g in compliance_cases() if (r := ratio(e, g)) is not None]
    report("official compliance expressions", compliance)
    plan = plan_document()
    on_plan = [r for e in POLICY_EXPRESSIONS_ON_PLAN if (r := ratio(e, plan)) is not None]
    report("policy expressions on a 1,000-resource document", on_plan)
    resource = plan["resources"][7]
    ingress_rule = resource["values"]["ingress"][0]
    on_resource = [
        r for e in POLICY_EXPRESSIONS_ON_RESOURCE
        if (r := ratio(e, ingress_rule if e.startswith("protocol") else resource)) is not None
    ]
    report("policy expressions on one resource", on_resource)
    return 0


if __name__ == "__main__":
    sys.exit(main())
