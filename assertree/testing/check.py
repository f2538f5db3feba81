"""Comparing a Test's expected results with the responses, row by row, as ``kyverno test`` does.

For each expected entry (policy, rule, result, resources):

- resources: each ``name`` selects every loaded resource of that name (the
  entry's ``kind`` is not used), ``namespace/name`` also the namespace; when
  nothing is selected, every loaded resource is checked;
- for each selected resource, each response of the entry's policy: the rule
  results named ``rule``, ``autogen-<rule>`` or ``autogen-cronjob-<rule>`` (all
  of them without ``rule``) are compared: first the patched resource when the
  entry names ``patchedResources`` (the policy's resource after its mutate
  phase, tidied, against the same resource in that file; absent from the
  file, the row is dropped unless ``failOnMissingResources``), then the status;
- a policy response with no such rule result is a pass, ``Excluded``;
- no response of the policy at all is a failure, ``Not found``;
- a policy that could not be loaded makes each selected row an error
  ("Invalid policy"), while the other policies' rows are compared;
- a result with an ``operation`` is compared with that operation's run.

The outcome is one `RowCheck` per compared (entry, resource, rule), with
``actual`` the status, ``excluded`` or ``not-found``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assertree.errors import AssertreeError
from assertree.results import ERROR
from assertree.testing.responses import MUTATE, PolicyResponse, ResourceResponses
from assertree.testing.testfile import ExpectedResult, KyvernoTest

EXCLUDED = "excluded"
NOT_FOUND = "not-found"
RULELESS_KINDS = frozenset({
    "ValidatingPolicy", "NamespacedValidatingPolicy", "ValidatingAdmissionPolicy", "MutatingPolicy",
    "NamespacedMutatingPolicy", "MutatingAdmissionPolicy", "ImageValidatingPolicy",
    "NamespacedImageValidatingPolicy", "GeneratingPolicy", "NamespacedGeneratingPolicy", "DeletingPolicy",
    "NamespacedDeletingPolicy",
})


@dataclass
class RowCheck:
    """One compared row: the expected entry, the resource, the rule and what happened."""

    expected: ExpectedResult
    resource: tuple[str, str, str, str]  # apiVersion, kind, namespace, name
    rule: str | None  # the rule response's name (autogen names included); None for ruleless policy kinds
    actual: str  # pass/fail/skip/error/warn, EXCLUDED or NOT_FOUND
    ok: bool
    reason: str  # "Ok", "Want pass, got fail", "Excluded", "Not found", "Resource diff", ...
    message: str = ""
    selected: bool = True  # False when the rule selected nothing (Excluded): --strict fails such rows
    result: Any = None  # the rule result compared (`RuleResult`; None for Excluded and Not found rows)
    policy_info: Any = None  # the policy whose response was compared (`PolicyInfo`; None for Not found rows)

    @property
    def policy(self) -> str:
        return self.expected.policy

    def as_dict(self) -> dict[str, Any]:
        _api_version, kind, namespace, name = self.resource
        return {
            "policy": self.policy,
            "rule": self.rule,
            "resource": {"kind": kind, "namespace": namespace, "name": name},
            "expected": self.expected.result,
            "actual": self.actual,
            "ok": self.ok,
            "reason": self.reason,
        }


PatchedLookup = Callable[[Path, Any], "tuple[bool | None, str]"]
"""(file, actual resource) -> (equal, diff text); equal is None when the file lacks the resource.
Raises FileNotFoundError (or an AssertreeError for a file that is not YAML): the row fails."""


def check_test(test: KyvernoTest, responses: list[ResourceResponses], patched: PatchedLookup,
               *, strict: bool = False, by_operation: Mapping[str, list[ResourceResponses]] | None = None,
               invalid: Mapping[str, str] | None = None) -> list[RowCheck]:
    """Every row of `test` compared with `responses` (one entry per loaded resource and payload).

    A result with an ``operation`` is compared with `by_operation` (the run for that operation); a result
    naming a policy that could not be used (`invalid`: name -> why) gives error rows.
    """
    checks: list[RowCheck] = []
    for expected in test.results:
        chosen = (by_operation or {}).get(expected.operation, responses) if expected.operation else responses
        if invalid and expected.policy_name in invalid:
            checks.extend(RowCheck(expected, item.key, expected.rule, ERROR, False, "Invalid policy",
                                   invalid[expected.policy_name])
                          for item in select_resources(expected, chosen))
            continue
        checks.extend(check_expected(test, expected, chosen, patched, strict=strict))
    return checks


def check_expected(test: KyvernoTest, expected: ExpectedResult, responses: list[ResourceResponses],
                   patched: PatchedLookup, *, strict: bool = False) -> list[RowCheck]:
    """The rows one expected entry gives."""
    selected = select_resources(expected, responses)
    out: list[RowCheck] = []
    for item in selected:
        rows: list[RowCheck] = []
        dropped = False
        for response in item.responses:
            if response.policy.name != expected.policy_name:
                continue
            for result in _rule_results(expected, response):
                row = _compare(test, expected, item, response, result, patched)
                if row is None:
                    dropped = True
                    continue
                rows.append(row)
            if not rows and not dropped:
                rows.append(RowCheck(expected, item.key, expected.rule, EXCLUDED, not strict, "Excluded",
                                     "no rule response: the rule did not select the resource", selected=False,
                                     policy_info=response.policy))
        if not rows and not dropped:
            rows.append(RowCheck(expected, item.key, expected.rule, NOT_FOUND, False, "Not found",
                                 f"policy {expected.policy!r} gave no response for this resource"))
        out.extend(rows)
    return out


def select_resources(expected: ExpectedResult, responses: list[ResourceResponses]) -> list[ResourceResponses]:
    """The loaded resources an entry names (all of them when it names none that was loaded).

    ``resourceSpecs`` (group, version, namespace, name) select too, but only beside a ``resources`` list
    (even an empty one), as the CLI reads them (commands/test/output.go)."""
    chosen: list[ResourceResponses] = []
    for wanted in expected.resources:
        namespace, _, name = wanted.rpartition("/")
        for item in responses:
            if item.name == name and (not wanted.count("/") or item.namespace == namespace):
                chosen.append(item)
    if "resources" in expected.document:
        for spec in expected.resource_specs:
            group, version = str(spec.get("group") or ""), str(spec.get("version") or "")
            api_version = f"{group}/{version}" if group else version
            chosen.extend(item for item in responses
                          if item.key[0] == api_version and item.namespace == str(spec.get("namespace") or "")
                          and item.name == str(spec.get("name") or ""))
    return chosen or list(responses)


def ruleless(policy: Any) -> bool:
    """Kyverno's CEL kinds have no rule names; kyverno-json's ValidatingPolicy (same kind name) has."""
    api_version = str((policy.document or {}).get("apiVersion", ""))
    return policy.kind in RULELESS_KINDS and not api_version.startswith("json.kyverno.io/")


def _rule_results(expected: ExpectedResult, response: PolicyResponse) -> list:
    if not expected.rule or ruleless(response.policy):
        return list(response.results)
    names = {expected.rule, f"autogen-{expected.rule}", f"autogen-cronjob-{expected.rule}"}
    return [result for result in response.results if result.rule.name in names]


def _compare(test: KyvernoTest, expected: ExpectedResult, item: ResourceResponses, response: PolicyResponse,
             result: Any, patched: PatchedLookup) -> RowCheck | None:
    row = _compared(test, expected, item, response, result, patched)
    if row is not None:
        row.result, row.policy_info = result, response.policy
    return row


def _compared(test: KyvernoTest, expected: ExpectedResult, item: ResourceResponses, response: PolicyResponse,
              result: Any, patched: PatchedLookup) -> RowCheck | None:
    rule_name = None if ruleless(response.policy) else result.rule.name
    actual = str(result.status)
    if expected.patched_resources:
        resource = response.patched if response.phase == MUTATE else response.resource
        try:
            equal, diff = patched(test.path(expected.patched_resources), resource)
        except (FileNotFoundError, AssertreeError) as error:
            return RowCheck(expected, item.key, rule_name, actual, False, "Resource error", str(error))
        if equal is None:
            if not expected.fail_on_missing_resources:
                return None
            return RowCheck(expected, item.key, rule_name, actual, False, "Resource error",
                            f"{expected.patched_resources}: resource not found in manifest")
        if not equal:
            return RowCheck(expected, item.key, rule_name, actual, False, "Resource diff",
                            f"patched resource didn't match the patched resource in the test result\n{diff}")
    message = result.message or ""
    if actual != expected.result:
        return RowCheck(expected, item.key, rule_name, actual, False, f"Want {expected.result}, got {actual}",
                        message)
    return RowCheck(expected, item.key, rule_name, actual, True, "Ok", message)
