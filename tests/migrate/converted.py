"""What every converted document must pass: ``assertree lint`` (errors and warnings, as ``lint --strict``).

For the ``policies.kyverno.io`` kinds lint checks assertree's own JSON Schema of them
(``assertree/schemas/policies.kyverno.io.json``, closed where Kyverno's CRDs are) and then compiles every expression.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from assertree.errors import Severity
from assertree.languages.load import lint_files


def converted_documents(out: Path) -> list[tuple[Path, dict]]:
    """Every document of DIR `out` that a migration converted to (Kyverno's CEL kinds, VAP and bindings)."""
    found = []
    for path in sorted(out.rglob("*.yaml")):
        for document in yaml.safe_load_all(path.read_text()):
            if isinstance(document, dict) and str(document.get("apiVersion", "")).startswith(
                    ("policies.kyverno.io/", "admissionregistration.k8s.io/")):
                found.append((path, document))
    return found


def problems_of(out: Path) -> list[str]:
    """What ``assertree lint`` says against the converted documents under `out`: its errors and warnings
    (`lint --strict` fails on both)."""
    found = []
    files = sorted({path for path, _ in converted_documents(out)})
    if files:
        problems, _checked = lint_files(files)
        found.extend(problem.text(severity=True) for problem in problems if problem.severity != Severity.NOTE)
    return found
