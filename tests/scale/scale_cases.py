"""Policy sets and payloads of every language for the scale tests, and scan results as comparable fields.

Each case is a real policy set on payloads it finds something in: kyverno-json on a Terraform plan (and a
``compiler: cel`` policy), Kyverno ClusterPolicies with mutate rules on Kubernetes manifests, Kyverno's CEL
ValidatingPolicy and MutatingPolicy kinds on the manifests of their own tests.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import assertree
from assertree.results import Resource, RuleError, RuleResult, ScanResult, Violation

REPO = Path(__file__).resolve().parents[2]
POLICIES = REPO / "tests" / "conformance" / "data" / "kyverno-policies"
KYVERNO_JSON = REPO / "tests" / "conformance" / "data" / "kyverno-json" / "scan" / "cel"
TERRAFORM = REPO / "samples" / "terraform-aws"


@dataclass(frozen=True)
class Case:
    policies: tuple[str, ...]
    payloads: tuple[str, ...]
    terraform_payloads: tuple[str, ...] = ()


def _under(folder: Path, pattern: str) -> tuple[str, ...]:
    return tuple(str(path) for path in sorted(folder.glob(pattern)))


BEST_PRACTICES = ("disallow-latest-tag", "require-drop-all", "require-probes", "restrict-node-port",
                  "disallow-empty-ingress-host")

CASES = {
    "kyverno-json": Case(
        policies=(str(TERRAFORM / "policies"), str(KYVERNO_JSON / "policy.yaml")),
        payloads=(str(KYVERNO_JSON / "payload.yaml"),),
        terraform_payloads=(str(TERRAFORM / "plan-bad.json"), str(TERRAFORM / "plan-good.json")),
    ),
    "kyverno": Case(
        policies=(*(str(POLICIES / "best-practices" / name) for name in BEST_PRACTICES),
                  str(REPO / "samples" / "kubernetes" / "mutate")),
        payloads=(*(path for name in BEST_PRACTICES
                    for path in _under(POLICIES / "best-practices" / name, ".kyverno-test/resource*.yaml")),
                  *_under(REPO / "samples" / "kubernetes", "deployment-*.yaml")),
    ),
    "kyverno-cel": Case(
        policies=(*_under(POLICIES / "pod-security-vpol" / "baseline", "disallow-[chp]*/*.yaml"),
                  str(POLICIES / "other-mpol" / "add-labels"), str(POLICIES / "other-mpol" / "always-pull-images")),
        payloads=(*_under(POLICIES / "pod-security-vpol" / "baseline" / "disallow-capabilities",
                          ".kyverno-test/resource*.yaml"),
                  *_under(POLICIES / "other-mpol" / "add-labels", ".kyverno-test/resource*.yaml")),
    ),
}


@cache
def policies(name: str) -> list[Any]:
    return assertree.load_policies(*CASES[name].policies)


@cache
def resources(name: str) -> list[Resource]:
    case = CASES[name]
    found = []
    for paths, terraform in ((case.terraform_payloads, True), (case.payloads, False)):
        if paths:
            loaded = assertree.load_resources(list(paths), terraform=terraform)
            assert loaded.problems == []
            found.extend(loaded.resources)
    return found


@cache
def single_scan(name: str) -> ScanResult:
    """The single-process scan of a case (`assertree.scan`): what every other way must give (read only)."""
    return assertree.scan(resources(name), policies(name))


def scan_fields(result: ScanResult) -> dict[str, Any]:
    """Everything a report reads of a scan, as plain values: equal scans give equal fields."""
    return {
        "resources": [resource_fields(resource) for resource in result.resources],
        "policies": [(policy.name, policy.kind, policy.source, policy.document_index, [rule.name for rule in
                                                                                        policy.rules])
                     for policy in result.policies],
        "results": [result_fields(item) for item in result.results],
        "summary": result.summary().as_dict(),
        "by_resource": [(resource_fields(resource), len(found)) for resource, found in result.by_resource()],
        "skipped": sum(1 for _ in result.skipped()),
        "unmatched": [(policy.name, rule.name) for policy, rule in result.unmatched_rules()],
    }


def resource_fields(resource: Resource) -> tuple:
    return resource.source, resource.document, resource.default_identifier, resource.label, resource.value


def result_fields(result: RuleResult) -> dict[str, Any]:
    return {
        "resource": resource_fields(result.resource),
        "policy": result.policy.name,
        "rule": (result.rule.name, result.rule.index),
        "status": str(result.status),
        "identifier": result.identifier,
        "message": result.message,
        "exception": result.exception,
        "patched": result.patched,
        "violations": [violation_fields(violation) for violation in result.violations],
        "error": error_fields(result.error),
        "identifier_error": error_fields(result.identifier_error),
        "feedback": result.feedback_json(),
    }


def violation_fields(violation: Violation) -> tuple:
    return (violation.check, violation.message, violation.steps, violation.headline(),
            [(error.type, error.field, error.payload_steps, error.reason, error.value, error.has_expected,
              error.detail, str(error)) for error in violation.errors])


def error_fields(error: RuleError | None) -> tuple | None:
    return None if error is None else (error.message, error.path, error.kind, error.value)
