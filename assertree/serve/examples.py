"""The playground's examples: `samples/` and the other languages' examples, as one JSON file.

The page offers each sample set twice, with the payload that fails and the one that
passes (a Terraform plan only with the failing one: a plan is 200 KB), and the
policies of the set as one YAML stream. The file is generated, not read at run time,
so an installed assertree (which has no `samples/`) serves the same examples:

    python -m assertree.serve.examples          # rewrites assertree/serve/static/examples.json

`tests/serve/test_serve_page.py` fails when the file is out of date.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
REPOSITORY = HERE.parents[1]
SAMPLES = REPOSITORY / "samples"
EXTRA = HERE / "examples"
OUTPUT = HERE / "static" / "examples.json"
SUFFIXES = (".yaml", ".yml", ".json")

# sample set -> (category shown, read the payload as a Terraform plan, leave out the passing payload)
_SETS = {"terraform-aws": ("Terraform", True, True), "kubernetes": ("Kubernetes", False, False),
         "dockerfile": ("Dockerfile", False, False), "kyverno-clusterpolicy": ("Kyverno ClusterPolicy", False, False),
         "kyverno-cel": ("Kyverno CEL ValidatingPolicy", False, False),
         "kubernetes-admission": ("Kubernetes ValidatingAdmissionPolicy", False, False)}


def _policy_text(files: list[Path]) -> str:
    texts = [file.read_text().strip() + "\n" for file in files]
    return "---\n".join(texts)


def _payloads(folder: Path) -> list[tuple[str, Path]]:
    found = []
    for verdict in ("bad", "good"):
        matches = sorted(p for p in folder.glob(f"*{verdict}*") if p.suffix in SUFFIXES and "expected" not in p.name)
        found += [(verdict, match) for match in matches[:1]]
    return found


def build_examples(samples: Path = SAMPLES, extra: Path = EXTRA) -> list[dict[str, Any]]:
    """Every example: category, name, policy and payload text, whether it should fail, how to read it."""
    examples = []
    # a sample set with parameter resources (params/) needs --params, which the playground has not; a
    # migration sample (migrated/) holds a kyverno test beside its policies: docs/migrate.md shows it
    folders = [p for p in sorted(samples.iterdir()) if (p / "policies").is_dir() and not (p / "params").is_dir()
               and not (p / "migrated").is_dir()] if samples.is_dir() else []
    folders += [p for p in sorted(extra.iterdir()) if (p / "policy.yaml").is_file()]
    for folder in folders:
        category, terraform, only_bad = _SETS.get(folder.name, (folder.name, False, False))
        if (folder / "policies").is_dir():
            policy_files = sorted(p for p in (folder / "policies").rglob("*") if p.suffix in SUFFIXES)
        else:
            policy_files = [folder / "policy.yaml"]
        for verdict, payload in _payloads(folder):
            if verdict == "good" and only_bad:
                continue
            examples.append({
                "category": category,
                "name": f"{folder.name}: {payload.name}",
                "policy": _policy_text(policy_files),
                "payload": payload.read_text(),
                "preprocessors": [],
                "terraform": terraform,
                "fails": verdict == "bad",
            })
    return examples


def render_examples(examples: list[dict[str, Any]]) -> str:
    return json.dumps({"examples": examples}, indent=1, ensure_ascii=False) + "\n"


def main() -> int:
    from assertree.writes import write_file

    write_file(OUTPUT, render_examples(build_examples()), "the examples")
    print(f"wrote {OUTPUT.relative_to(REPOSITORY)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
