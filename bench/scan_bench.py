#!/usr/bin/env python3
"""Benchmark: ``assertree scan`` on generated Terraform plans, against the hand-written baseline.

Kept for the command lines that name it: it runs the plan cases of
``bench/run.py`` (which holds the code), e.g. ``--sizes 1000 10000`` is
``run.py --cases 1k 10k``. See bench/README.md.

    python bench/scan_bench.py                    # 1,000 and 10,000 resources, 5 runs each
    python bench/scan_bench.py --sizes 10000 --repeat 9
"""

from __future__ import annotations

import argparse
import sys

import run


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    names = {size: name for name, size in run.PLAN_CASES.items()}
    cases = [names.get(size, f"plan-{size}") for size in args.sizes]
    return run.main(["--cases", *cases, "--repeat", str(args.repeat)])


if __name__ == "__main__":
    sys.exit(main())
