"""Comparing a Test's expected results with the responses, row by row, as ``kyverno test`` does.

For each expected entry (policy, rule, result, resources):

- resources: each ``name`` selects every loaded resource of that name (the
  entry's ``kind`` is not used), ``namespace/name`` also the namespace; an
  entry without resources checks every loaded resource; a name no loaded
  resource has is a failed row, ``Resource not found`` (``kyverno test``
  checks every resource instead);
- for each selected resource, each response of the entry's policy: the rule
  results named ``rule``, ``autogen-<rule>`` or ``autogen-cronjob-<rule>`` (all
  of them without ``rule``) are compared: first the patched resource when the
  entry names ``patchedResources`` (the policy's resource after its mutate
  phase, tidied, against the same resource in that file; absent from the
  file, the row is dropped unless ``failOnMissingResources``), then the status;
- a policy response with no such rule result is a pass, ``Excluded``, unless
  the policy has no rule of that name at all: ``Rule not found``, a failure
  (``kyverno test`` passes it, Excluded);
- no response of the policy at all is a failure, ``Not found``;
- a rule assertree does not run (`results.RefusedRule`) is a failure, ``Not run``,
  with the reason: a test never passes for checking less than it says;
- a policy that could not be loaded makes each selected row an error
  ("Invalid policy"), while the other policies' rows are compared;
- a result with an ``operation`` is compared with that operation's run.

Generate rules (``output.go``: rule type ``Generation``): each resource the rule
generated is one compared row, looked up in ``generatedResource`` (or the first
of ``generatedResources`` that holds an equal one) by its own apiVersion, kind,
namespace and name, both sides' labels normalised (``generate.kyverno.io/*``
dropped, ``app.kubernetes.io/managed-by: kyverno`` set); a rule that generated
nothing is compared on its status alone. Target resources (``targetResources``)
are compared through the result that patched them: its patched target against
``patchedResources``.

A test none of whose rows compared a result fails as a whole (`nothing_compared`).

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


PatchedLookup = Callable[[Path, Any, bool], "tuple[bool | None, str]"]
"""(file, actual resource, generated) -> (equal, diff text); equal is None when the file lacks the resource;
`generated` normalises both sides' labels as for generated resources. Raises FileNotFoundError (or an
AssertreeError for a file that is not YAML): the row fails."""
NOT_RUN = "not-run"
GENERATING_KINDS = frozenset({"GeneratingPolicy", "NamespacedGeneratingPolicy"})


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
                          for item in select_resources(expected, chosen)[0])
            continue
        checks.extend(check_expected(test, expected, chosen, patched, strict=strict))
    return checks


def check_expected(test: KyvernoTest, expected: ExpectedResult, responses: list[ResourceResponses],
                   patched: PatchedLookup, *, strict: bool = False) -> list[RowCheck]:
    """The rows one expected entry gives."""
    selected, unloaded = select_resources(expected, responses)
    out: list[RowCheck] = [RowCheck(expected, ("", expected.kind or "", *_namespace_and_name(name)), expected.rule,
                                    NOT_FOUND, False, "Resource not found",
                                    f"no resource named {name!r} was loaded from {', '.join(test.resources)}")
                           for name in unloaded]
    for item in selected:
        rows: list[RowCheck] = []
        dropped = False
        policies = [response.policy for response in item.responses if response.policy.name == expected.policy_name]
        if policies:
            rows.extend(_not_run(expected, item, policies[0]))  # once, however many phases the policy ran
        for response in item.responses:
            if response.policy.name != expected.policy_name:
                continue
            if _unknown_rule(expected, response.policy):
                rows.append(RowCheck(expected, item.key, expected.rule, NOT_FOUND, False, "Rule not found",
                                     f"policy {expected.policy!r} has no rule {expected.rule!r}"))
                continue
            if item.target:
                rows.extend(_about(_compare_target(test, expected, item, response, patched), response.results[0],
                                   response.policy))
                continue
            for result in _rule_results(expected, response):
                if _generates(response.policy, result):
                    rows.extend(_about(_compare_generated(test, expected, item, response, result, patched), result,
                                       response.policy))
                    continue
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


def _not_run(expected: ExpectedResult, item: ResourceResponses, policy: Any) -> list[RowCheck]:
    """A failed row for each refused rule the entry names (all of the policy's when it names none)."""
    from assertree.results import refused_rules

    rule_free = ruleless(policy)
    names = {expected.rule, f"autogen-{expected.rule}", f"autogen-cronjob-{expected.rule}"} if expected.rule \
        and not rule_free else None
    return [RowCheck(expected, item.key, None if rule_free else refused.rule, NOT_RUN, False, "Not run",
                     refused.problem.message)
            for refused in refused_rules(policy) if names is None or refused.rule in names]


def _about(rows: list[RowCheck], result: Any, policy: Any) -> list[RowCheck]:
    """`rows`, each knowing the result and policy it compared (what --coverage and --explain read)."""
    for row in rows:
        row.result, row.policy_info = result, policy
    return rows


def _generates(policy: Any, result: Any) -> bool:
    """Whether `result` comes from a generate rule (ClusterPolicy) or a GeneratingPolicy."""
    return bool(getattr(result.rule, "generates", False)) or policy.kind in GENERATING_KINDS


def _compare_generated(test: KyvernoTest, expected: ExpectedResult, item: ResourceResponses,
                       response: PolicyResponse, result: Any, patched: PatchedLookup) -> list[RowCheck]:
    """One row per generated resource, compared with the expected files; the status alone when none."""
    rule_name = None if ruleless(response.policy) else result.rule.name
    files = expected.generated_resources
    if not result.generated or not files:
        return [_status_row(expected, item, rule_name, result)]
    rows = []
    for resource in result.generated:
        diffs: list[str] = []
        errors: list[str] = []
        found = False
        for name in files:
            try:
                equal, diff = patched(test.path(name), resource, True)
            except (FileNotFoundError, AssertreeError) as error:
                errors.append(str(error))
                continue
            if equal is None:
                errors.append(f"{name}: resource not found in manifest")
            elif equal:
                found = True
                break
            else:
                diffs.append(diff)
        if found:
            rows.append(_status_row(expected, item, rule_name, result))
        elif diffs:
            rows.append(RowCheck(expected, item.key, rule_name, str(result.status), False, "Resource diff",
                                 "generated resource didn't match the generated resource in the test result\n"
                                 + diffs[-1]))
        else:
            rows.append(RowCheck(expected, item.key, rule_name, str(result.status), False, "Resource error",
                                 "; ".join(errors)))
    return rows


def _compare_target(test: KyvernoTest, expected: ExpectedResult, item: ResourceResponses, response: PolicyResponse,
                    patched: PatchedLookup) -> list[RowCheck]:
    """A target resource's row: the target as the rule patched it, then the rule's status."""
    result = response.results[0]
    rule_name = None if ruleless(response.policy) else result.rule.name
    if expected.patched_resources:
        try:
            equal, diff = patched(test.path(expected.patched_resources), result.target, False)
        except (FileNotFoundError, AssertreeError) as error:
            return [RowCheck(expected, item.key, rule_name, str(result.status), False, "Resource error", str(error))]
        if equal is None:
            return [RowCheck(expected, item.key, rule_name, str(result.status), False, "Resource error",
                             f"{expected.patched_resources}: resource not found in manifest")]
        if not equal:
            return [RowCheck(expected, item.key, rule_name, str(result.status), False, "Resource diff",
                             f"patched resource didn't match the patched resource in the test result\n{diff}")]
    return [_status_row(expected, item, rule_name, result)]


DELETING_KINDS = frozenset({"DeletingPolicy", "NamespacedDeletingPolicy", "CleanupPolicy", "ClusterCleanupPolicy"})


def kyverno_status(policy: Any, result: Any) -> str:
    """The status ``kyverno test`` reports for `result`: a resource a deleting policy selects but keeps is
    ``fail`` there ("resource did not match"), where assertree says skip (nothing to check)."""
    status = str(result.status)
    return "fail" if status == "skip" and policy.kind in DELETING_KINDS and not result.exception else status


def _status_row(expected: ExpectedResult, item: ResourceResponses, rule_name: str | None, result: Any) -> RowCheck:
    actual = kyverno_status(result.policy, result)
    message = result.message or ""
    if actual != expected.result:
        return RowCheck(expected, item.key, rule_name, actual, False, f"Want {expected.result}, got {actual}",
                        message)
    return RowCheck(expected, item.key, rule_name, actual, True, "Ok", message)


def _namespace_and_name(wanted: str) -> tuple[str, str]:
    namespace, _, name = wanted.rpartition("/")
    return namespace, name


def nothing_compared(test: KyvernoTest, rows: list[RowCheck], responses: list[ResourceResponses]) -> str | None:
    """Why `test` compared nothing (no row compared a rule's result with its expectation), or None when it
    compared something. ``kyverno test`` passes such a test; assertree fails it: a test that checks nothing
    must not look like one that checks and passes."""
    if any(row.selected for row in rows):
        return None
    if not test.results:
        return "nothing was compared: the test lists no expected results"
    if not responses:
        return "nothing was compared: no resource was loaded from " + (", ".join(test.resources) or "'resources'")
    if not rows:
        return ("nothing was compared: every expected result was left out (its patchedResources file does not "
                "hold the resource; failOnMissingResources makes that a failure)")
    return (f"nothing was compared: the rules of the {len(test.results)} expected "
            f"result{'s' if len(test.results) != 1 else ''} selected none of the "
            f"{len(responses)} resource{'s' if len(responses) != 1 else ''} (kyverno test counts such rows as "
            "passed: Excluded)")


def select_resources(expected: ExpectedResult, responses: list[ResourceResponses]
                     ) -> tuple[list[ResourceResponses], list[str]]:
    """(the loaded resources an entry names, or all of them when it names none; the names it gives that no
    loaded resource has). ``kyverno test`` checks every resource when none of the names is found, so a
    misspelt name passes on other resources; here it fails as ``Resource not found`` (its CI means
    ``test/cli/test-fail/missing-resource`` to fail).

    ``resourceSpecs`` (group, version, namespace, name) select too, but only beside a ``resources`` list
    (even an empty one), as the CLI reads them (commands/test/output.go)."""
    chosen: list[ResourceResponses] = []
    unloaded: list[str] = []
    for wanted in expected.resources:
        namespace, name = _namespace_and_name(wanted)
        found = [item for item in responses
                 if item.name == name and (not wanted.count("/") or item.namespace == namespace)]
        chosen.extend(found)
        if not found:
            unloaded.append(wanted)
    specs = expected.resource_specs if "resources" in expected.document else []
    for spec in specs:
        group, version = str(spec.get("group") or ""), str(spec.get("version") or "")
        api_version = f"{group}/{version}" if group else version
        namespace, name = str(spec.get("namespace") or ""), str(spec.get("name") or "")
        found = [item for item in responses
                 if item.key[0] == api_version and item.namespace == namespace and item.name == name]
        chosen.extend(found)
        if not found:
            unloaded.append(f"{namespace}/{name}" if namespace else name)
    if not expected.resources and not specs:
        return list(responses), []
    return chosen, unloaded


def _unknown_rule(expected: ExpectedResult, policy: Any) -> bool:
    """The entry names a rule the policy does not have (nor its ``autogen-`` copies): ``kyverno test`` calls
    that a pass (Excluded); its CI means ``test/cli/test-fail/missing-rule`` to fail, and so it does here.
    Only for policies that list named rules (``spec.rules``)."""
    if not expected.rule or ruleless(policy):
        return False
    spec = (policy.document or {}).get("spec")
    rules = spec.get("rules") if isinstance(spec, dict) else None
    if not isinstance(rules, list) or not rules:
        return False
    names = {rule.get("name") for rule in rules if isinstance(rule, dict)}
    bare = expected.rule.removeprefix("autogen-cronjob-").removeprefix("autogen-")
    return not names & {expected.rule, bare}


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
    actual = kyverno_status(response.policy, result)
    if expected.patched_resources:
        resource = response.patched if response.phase == MUTATE else response.resource
        try:
            equal, diff = patched(test.path(expected.patched_resources), resource, False)
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
    return _status_row(expected, item, rule_name, result)
