"""Checks every converted document must pass: ``assertree lint`` and the ``policies.kyverno.io`` schema.

The schema is Kyverno's own: the ``openAPIV3Schema`` of the ``v1`` ValidatingPolicy and MutatingPolicy CRDs
(kyverno/kyverno at 111e07bb, ``cmd/cli/kubectl-kyverno/data/crds/policies.kyverno.io_*.yaml``, Apache-2.0),
descriptions dropped, in ``data/policies.kyverno.io-v1.json``. The namespaced kinds share those specs. Objects
that list their properties and keep no unknown fields are closed here (``additionalProperties: false``), as
``kubectl apply``'s strict field validation refuses an unknown field that the API server would drop.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from assertree.errors import Severity
from assertree.languages.load import lint_files

SCHEMAS = Path(__file__).resolve().parent / "data" / "policies.kyverno.io-v1.json"
SCHEMA_OF = {"ValidatingPolicy": "ValidatingPolicy", "NamespacedValidatingPolicy": "ValidatingPolicy",
             "MutatingPolicy": "MutatingPolicy", "NamespacedMutatingPolicy": "MutatingPolicy"}


def _closed(schema: Any) -> Any:
    if isinstance(schema, list):
        return [_closed(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out = {key: _closed(value) for key, value in schema.items()}
    if ("properties" in out and "additionalProperties" not in out
            and not out.get("x-kubernetes-preserve-unknown-fields")):
        out["additionalProperties"] = False
    return out


@cache
def _validator(kind: str) -> Any:
    schema = _closed(json.loads(SCHEMAS.read_text())[kind])
    return jsonschema.Draft7Validator(schema)


def schema_errors(document: dict) -> list[str]:
    """Where a ``policies.kyverno.io`` document breaks its CRD's schema (field path: message)."""
    kind = SCHEMA_OF.get(str(document.get("kind")))
    if kind is None or document.get("apiVersion") != "policies.kyverno.io/v1":
        return []
    return [f"{'.'.join(str(part) for part in error.absolute_path)}: {error.message[:200]}"
            for error in _validator(kind).iter_errors(document)]


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
    """What ``assertree lint`` and the schema say against the converted documents under `out`: lint's errors
    and warnings (`lint --strict` fails on both), and each schema violation."""
    found = []
    files = sorted({path for path, _ in converted_documents(out)})
    if files:
        problems, _checked = lint_files(files)
        found.extend(problem.text(severity=True) for problem in problems if problem.severity != Severity.NOTE)
    for path, document in converted_documents(out):
        found.extend(f"{path.name}: {document['kind']} {document['metadata']['name']}: {error}"
                     for error in schema_errors(document))
    return found
