"""kyverno-json's policy catalog cases and documentation examples, run straight from ../shared.

`catalog/cases.json` runs the catalog's Dockerfile and ECS policies on one
payload each; `docs-examples.json` holds every complete example of the docs
and the playground. Both give per-rule statuses and, where listed, the
violations (check, message, field paths and error texts). Doc policies written
for an older schema must fail to load as documented; their adapted form runs.
"""

from __future__ import annotations

import json

import pytest
import yaml
from conftest import CONFORMANCE
from support import go_body

from assertree.engine.scan import scan
from assertree.errors import PolicyError
from assertree.inputs.payload import Payload, compile_preprocessors, read_payload, resources_from
from assertree.languages.load import load_policies, policy_from_mapping

KYVERNO_JSON = CONFORMANCE / "kyverno-json"
CATALOG = KYVERNO_JSON / "catalog"
CASES = json.loads((CATALOG / "cases.json").read_text())
EXAMPLES = json.loads((KYVERNO_JSON / "docs-examples.json").read_text())["examples"]
STATUSES = {"pass": "PASSED", "fail": "FAILED", "error": "ERROR"}


def outcome(result):
    rules = [(r.rule.name, STATUSES[r.status]) for r in result.results]
    violations = [
        (v.check, v.message, sorted((e.field, go_body(e)) for e in v.errors))
        for r in result.results for v in r.violations
    ]
    return rules, violations


def expected_violations(listed):
    return [(v["check"], v["message"], sorted((e["path"], e["body"]) for e in v["errors"])) for v in listed]


@pytest.mark.parametrize("case", CASES, ids=[f"{c['policy_name']}:{c['name']}" for c in CASES])
def test_catalog_case(case):
    rules, violations = outcome(scan([case["payload"]], load_policies(CATALOG / case["policy"])))
    assert rules == [(r["rule"], r["status"]) for r in case["expected"]]
    if "expected_violations" in case:
        assert violations == expected_violations(case["expected_violations"])


def example_policies(example):
    if "policy_ref" in example:
        return load_policies(KYVERNO_JSON / example["policy_ref"])
    text = example["policy_yaml"] if example["policy_loads_as_documented"] else example["policy_yaml_adapted"]
    return [policy_from_mapping(document) for document in yaml.safe_load_all(text)]


def example_resources(example):
    if "payload_ref" in example:
        loaded = read_payload(str(KYVERNO_JSON / example["payload_ref"]))
    else:
        loaded = Payload("<example>", example["payload"])
    return resources_from(loaded, compile_preprocessors(example["preprocessors"]))


@pytest.mark.parametrize("example", EXAMPLES, ids=[e["id"] for e in EXAMPLES])
def test_documentation_example(example):
    result = scan(example_resources(example), example_policies(example))
    rules, violations = outcome(result)
    assert [(r.policy.name, r.rule.name, r.identifier) for r in result.results] == [
        (r["policy"], r["rule"], r["id"]) for r in example["expected_rules"]]
    assert rules == [(r["rule"], r["status"]) for r in example["expected_rules"]]
    assert violations == expected_violations(example["expected_violations"])


@pytest.mark.parametrize("example", [e for e in EXAMPLES if not e["policy_loads_as_documented"]],
                         ids=lambda e: e["id"])
def test_old_schema_example_fails_to_load_as_documented(example):
    with pytest.raises(PolicyError, match=r"unknown field|required field is missing|must be an array"):
        for document in yaml.safe_load_all(example["policy_yaml"]):
            policy_from_mapping(document)
