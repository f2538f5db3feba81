#!/usr/bin/env python3
"""Write an NDJSON inventory of Terraform resources (one ``planned_values`` resource per line) of any size.

Why: issue 15's scale-out case checks a 1,000,000-resource NDJSON file in
bounded memory. Such an export is a flat stream of the resource objects a plan
holds (``address``, ``mode``, ``type``, ``name``, ``values``, ...), which is
exactly what the policies in ``bench/reference/policies`` look at, so the
lines are taken from a plan written by ``bench/reference/gen_tfplan.py``: its
``planned_values`` resources, from every module, repeated as often as needed.
Copy 0 keeps the plan's addresses; copy k > 0 is prefixed ``module.shard[k].``,
so every line has its own address.

What it promises: the same plan and ``--lines`` give the same bytes; the file
is written as a stream (memory does not grow with ``--lines``); and
``--expected FILE`` writes, from the plan's own ``gen_tfplan --expected``
file, the addresses that violate each check, in gen_tfplan's format
(``{"checks": {name: {"violations", "addresses"}}}``). Data sources are copied
too and, as in the plan, must not be reported. Standard library only.

    python bench/gen_ndjson.py --plan plan-10000.json --plan-expected plan-10000.expected.json \\
        --lines 1000000 --out resources.ndjson --expected resources.expected.json
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

_ADDRESS = "\x00address\x00"  # stands for the address in a line's template


def planned_resources(module: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Every resource of a planned_values module and, recursively, of its child modules."""
    yield from module.get("resources", ())
    for child in module.get("child_modules", ()):
        yield from planned_resources(child)


def address(copy: int, original: str) -> str:
    return original if copy == 0 else f"module.shard[{copy}].{original}"


def generate(plan: dict[str, Any], expected: dict[str, Any], lines: int, out: Path) -> dict[str, Any]:
    """Write `lines` resource lines to `out`; return the expected findings."""
    resources = list(planned_resources(plan["planned_values"]["root_module"]))
    # each line is its resource's JSON with the address swapped in: json.dumps runs once per resource
    templates = []
    for resource in resources:
        text = json.dumps({**resource, "address": _ADDRESS}, separators=(",", ":"))
        before, after = text.split(json.dumps(_ADDRESS), 1)
        templates.append((before, after))
    violating = {name: set(check["addresses"]) for name, check in expected["checks"].items()}
    fails = [[name for name, addresses in violating.items() if r["address"] in addresses] for r in resources]
    found: dict[str, list[str]] = {name: [] for name in violating}
    with open(out, "w", encoding="utf-8") as f:
        for line in range(lines):
            copy, index = divmod(line, len(resources))
            name = address(copy, resources[index]["address"])
            before, after = templates[index]
            f.write(f"{before}{json.dumps(name)}{after}\n")
            for check in fails[index]:
                found[check].append(name)
    return {"lines": lines, "checks": {name: {"violations": len(a), "addresses": a} for name, a in found.items()}}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--plan", required=True, help="a plan written by gen_tfplan.py")
    parser.add_argument("--plan-expected", required=True, help="its gen_tfplan --expected file")
    parser.add_argument("--lines", type=int, default=1_000_000, help="resources (lines) to write")
    parser.add_argument("--out", required=True, help="NDJSON file to write")
    parser.add_argument("--expected", help="also write the expected findings (JSON) to this file")
    args = parser.parse_args(argv)
    plan = json.loads(Path(args.plan).read_text(encoding="utf-8"))
    expected_plan = json.loads(Path(args.plan_expected).read_text(encoding="utf-8"))
    expected = generate(plan, expected_plan, args.lines, Path(args.out))
    if args.expected:
        Path(args.expected).write_text(json.dumps(expected) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
