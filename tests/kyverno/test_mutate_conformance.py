"""Kyverno's policy library, as ``kyverno test`` runs it: mutate rules whose patch needs nothing but the patcher.

Rows of tests/conformance/data/kyverno-policies/manifest.json (core tier) whose rule has a
``patchStrategicMerge`` or ``patchesJson6902`` and a ``patchedResources`` file, with no ``{{ }}``
in the patch, no autogen, no preconditions, no foreach, and a match that is a plain kinds list. The
rule's patch is applied to the row's resource and compared with the expected patched resource the
way ``kyverno test`` compares (tidy, then JSON equality); the rule status must agree with the row.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from assertree.languages.kyverno.mutate import apply_mutation, patched_resource_matches
from assertree.results import Status

DATA = Path(__file__).resolve().parents[1] / "conformance" / "data" / "kyverno-policies"
PATCHES = ("patchStrategicMerge", "patchesJson6902")


def _documents(path: Path) -> list[dict]:
    with path.open() as handle:
        return [document for document in yaml.safe_load_all(handle) if isinstance(document, dict)]


def _plain_kinds(match: dict) -> bool:
    blocks = [*match.get("any", []), *match.get("all", [])] or [match]
    return all(set(block) == {"resources"} and set(block["resources"]) == {"kinds"} for block in blocks)


def _rule(test_dir: Path, test: dict, policy_name: str, rule_name: str) -> dict | None:
    for policy_file in test.get("policies", []):
        for policy in _documents(test_dir / policy_file):
            if policy.get("metadata", {}).get("name") != policy_name:
                continue
            for rule in policy.get("spec", {}).get("rules", []):
                if rule.get("name") == rule_name:
                    return rule
    return None


def _cases(*, passed_rows_too: bool = False) -> list:
    """The brief's selection; with `passed_rows_too`, also ``pass`` rows that need matching or
    preconditions (Kyverno matched the resource and met the preconditions, so only the patch is left).
    """
    manifest = json.loads((DATA / "manifest.json").read_text())
    cases = []
    for entry in manifest["tests"]:
        test_dir = DATA / entry["path"]
        test = _documents(DATA / entry["test"])[0]
        for row in entry["rows"]:
            if row["tier"] != "core" or not row.get("patchedResources"):
                continue
            rule = _rule(test_dir, test, row["policy"], row["rule"])
            if rule is None:
                continue
            plain = not row.get("needs") and "preconditions" not in rule and _plain_kinds(rule.get("match", {}))
            if plain == passed_rows_too or (passed_rows_too and row["result"] != "pass"):
                continue
            mutate = rule.get("mutate", {})
            if "foreach" in mutate or not any(key in mutate for key in PATCHES):
                continue
            if "{{" in json.dumps(mutate):
                continue
            case_id = f"{entry['path']}:{row['rule']}:{row['resource']['name']}"
            cases.append(pytest.param(test_dir, test, rule, row, id=case_id))
    return cases


CASES = _cases()
PASSED_ROWS = _cases(passed_rows_too=True)


def _find(documents: list[dict], kind: str, name: str) -> dict:
    return next(d for d in documents if d.get("kind") == kind and d.get("metadata", {}).get("name") == name)


def _default_namespace(resource: dict, row: dict) -> None:
    """The CLI's loader puts namespaced resources without a namespace in "default" (the row says which)."""
    if row["resource"]["namespace"] and not resource["metadata"].get("namespace"):
        resource["metadata"]["namespace"] = row["resource"]["namespace"]


def test_the_selection_is_not_empty() -> None:
    assert len(CASES) >= 15
    assert len(PASSED_ROWS) >= 10


@pytest.mark.parametrize(("test_dir", "test", "rule", "row"), CASES + PASSED_ROWS)
def test_patched_resource_as_kyverno_test_compares(test_dir: Path, test: dict, rule: dict, row: dict) -> None:
    resources = [document for file in test["resources"] for document in _documents(test_dir / file)]
    resource = _find(resources, row["resource"]["kind"], row["resource"]["name"])
    _default_namespace(resource, row)
    result = apply_mutation(rule["mutate"], resource)
    assert result.status is not Status.ERROR, result.message
    expected_documents = _documents(test_dir / row["patchedResources"])
    expected = next(
        (
            d
            for d in expected_documents
            if d.get("kind") == resource["kind"]
            and d.get("apiVersion") == resource["apiVersion"]
            and d.get("metadata", {}).get("name") == resource["metadata"]["name"]
        ),
        None,
    )
    if expected is None:
        # "not found in manifest": kyverno test drops the row silently (psa/add-psa-labels' test-fail row)
        assert row["result"] == "fail"
        return
    _default_namespace(expected, row)
    assert patched_resource_matches(result.resource, expected)
    if row["result"] in ("pass", "skip"):
        assert result.status == row["result"]
