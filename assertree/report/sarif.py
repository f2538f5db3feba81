"""The SARIF 2.1.0 report, for code-scanning dashboards (GitHub code scanning, Azure DevOps, IDEs).

One run; one ``reportingDescriptor`` per policy rule (id ``policy/rule``),
worded from the policy's title and description annotations; one result per
violation and one per rule that errored, pointing at the failing field's line
in the payload file (see `assertree.report.locate`). Levels follow the
``policies.kyverno.io/severity`` annotation: critical and high are errors,
medium a warning, low and info a note; no severity is an error.

``partialFingerprints`` let a dashboard follow one finding across commits, so
they hash what identifies it, never where it is (`assertree.findings.fingerprint`,
which a baseline uses too): an edit above a finding, or a reordered file, must
not make it look new. Artifact URIs are relative to the working
directory under ``%SRCROOT%``, so the output holds no machine-specific path
(files outside the working directory are given as absolute ``file:`` URIs).

Each location also has a logical location, the resource's identifier (a
Terraform address, a Kubernetes name), which says more than ``line 1`` of a
one-line JSON plan; the region has the column too.

Rules that did not match some or all resources have no place among SARIF
results; they are counted per rule in ``run.properties.skippedRules``
(``notMatchedResources``, ``appliedToNoResource``), next to the totals
(`assertree.report.totals`). Payload files that could not be read are
``toolExecutionNotifications`` of the run's invocation (level ``error``, with the
file, line and column), and make ``executionSuccessful`` false.

With ``--explain``, a result's ``properties.explanation`` holds the steps that
explain it (as in the JSON report), and the steps that are fields of the
resource are also ``relatedLocations``, each with its line and the step's text.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any
from urllib.parse import quote

from assertree.errors import Location, Problem
from assertree.explanation import Step
from assertree.findings.fingerprint import SCHEME, fingerprint, rule_id
from assertree.inputs.paths import relative_path
from assertree.report.explain import step_text
from assertree.report.locate import Locator, Wanted
from assertree.report.options import ReportOptions, sarif_level
from assertree.report.spool import Spool, Writable
from assertree.report.stream import findings
from assertree.report.totals import Tally
from assertree.report.wording import rule_error
from assertree.results import PolicyInfo, Resource, RuleInfo, RuleResult, ScanResult, Violation

SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
SRCROOT = "%SRCROOT%"
MAX_RELATED = 20  # related locations of one result (an explanation's steps that are fields of the resource)
HELP_ANNOTATIONS = ("help.policy.kyverno.io", "policies.kyverno.io/help-url")
# pyproject.toml's Homepage (a test holds them equal): not read from the installed metadata, whose reader
# (importlib.metadata, with the email package) costs a SARIF run tens of milliseconds for one string
HOME_PAGE = "https://github.com/assertree/assertree"

def render(result: ScanResult, options: ReportOptions | None = None) -> str:
    from assertree.report.stream import render_whole

    return render_whole("sarif", result, options)


_RESULTS = "assertree: the results go here " + os.urandom(8).hex()  # a placeholder no policy text can hold
_RESULT_INDENT = " " * 8  # results are items of runs[0].results


class Writer:
    """The SARIF log as a scan goes: results wait in a spool, since the run's invocation before them
    lists the files that could not be read; the log around them is written whole at the end (as orjson
    writes it with two-space indentation), with the results' place kept by a placeholder."""

    by_resource = False

    def __init__(self, policies: Sequence[PolicyInfo], options: ReportOptions, out: Writable,
                 spill_dir: str | None = None) -> None:
        self.policies, self.options, self.out = policies, options, out
        self.indexes: dict[int, int] = {}
        self.descriptors: list[dict[str, Any]] = []
        for policy in policies:
            for rule in policy.rules:
                self.indexes[id(rule)] = len(self.descriptors)
                self.descriptors.append(_descriptor(policy, rule))
        self.locator = Locator()
        self.body = Spool(spill_dir)
        self.count = 0

    def add(self, resource: Resource | None, results: Sequence[RuleResult]) -> None:
        from assertree.report.json import _dumps

        pieces = []
        found = list(findings(results))
        explained = [_explanation(rule_result, violation) for rule_result, violation in found]
        located = zip(found, explained, self.locator.results(found), _related(found, explained, self.locator),
                      strict=True)
        for (rule_result, violation), steps, location, related in located:
            item = _result(rule_result, self.indexes[id(rule_result.rule)], violation, location, steps, related,
                           self.options.kyverno_json, self.options.baseline)
            pieces.append(("\n" if not self.count else ",\n") + _RESULT_INDENT + _dumps(item, _RESULT_INDENT))
            self.count += 1
        if pieces:
            self.body.write("".join(pieces))

    def finish(self, tally: Tally, problems: Sequence[Problem] = ()) -> None:
        from assertree.report.json import _dumps

        if self.options.baseline is not None:  # its entries no finding matched: absent, so fixed
            fixed = [("\n" if not self.count and not index else ",\n") + _RESULT_INDENT + _dumps(_fixed(item),
                                                                                           _RESULT_INDENT)
                     for index, item in enumerate(self.options.baseline.fixed())]
            if fixed:
                self.body.write("".join(fixed))
                self.count += len(fixed)
        run: dict[str, Any] = {
            "tool": {"driver": _driver(self.descriptors)},
            "invocations": [_invocation(tuple(problems))],
            "columnKind": "unicodeCodePoints",
            "results": _RESULTS,
            "properties": {"summary": tally.totals(problems).as_dict(), "skippedRules": _skipped(tally)},
        }
        text = _dumps({"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}, "")
        head, tail = text.split(f'"{_RESULTS}"')
        self.out.write(head + "[")
        self.body.copy_to(self.out)
        self.out.write(("\n      ]" if self.count else "]") + tail + "\n")

    def close(self) -> None:
        self.body.close()


def _driver(descriptors: list[dict[str, Any]]) -> dict[str, Any]:
    from assertree import __version__ as version

    return {"name": "assertree", "version": version, "semanticVersion": version, "informationUri": HOME_PAGE,
            "rules": descriptors}


def _descriptor(policy: PolicyInfo, rule: RuleInfo) -> dict[str, Any]:
    descriptor: dict[str, Any] = {"id": rule_id(policy, rule), "name": rule.name}
    title = policy.title or f"{policy.name}: {rule.name}"
    descriptor["shortDescription"] = {"text": title}
    if policy.description:
        descriptor["fullDescription"] = {"text": policy.description}
    help_uri = next((policy.annotations[key] for key in HELP_ANNOTATIONS if _is_uri(policy.annotations.get(key))), None)
    if help_uri:
        descriptor["helpUri"] = help_uri
    descriptor["defaultConfiguration"] = {"level": sarif_level(policy)}
    properties: dict[str, Any] = {"policy": policy.name}
    if policy.severity:
        properties["severity"] = policy.severity
    if policy.source:
        properties["policySource"] = relative_path(policy.source)
    descriptor["properties"] = properties
    return descriptor


def _is_uri(value: Any) -> bool:
    return isinstance(value, str) and "://" in value and " " not in value.strip()


def _invocation(problems: tuple[Problem, ...]) -> dict[str, Any]:
    invocation: dict[str, Any] = {"executionSuccessful": not problems}
    if problems:
        notifications = []
        for problem in problems:
            notification: dict[str, Any] = {"level": "error", "message": {"text": problem.message},
                                            "descriptor": {"id": "payload-file"}}
            if problem.location.source:
                notification["locations"] = [{"physicalLocation": _physical(problem.location)}]
            notifications.append(notification)
        invocation["toolExecutionNotifications"] = notifications
    return invocation


def _result(result: RuleResult, index: int, violation: Violation | None, location: Location | None,
            steps: list[Step], related: list[dict[str, Any]], kyverno_json: bool = False,
            baseline: Any = None) -> dict[str, Any]:
    """The SARIF result of a finding, placed at `location`, with its explanation's `steps` and their
    `related` locations."""
    level = "error" if violation is None else sarif_level(result.policy)
    if result.gate and level == "error":  # below --fail-on: a warning at most
        level = "warning"
    out: dict[str, Any] = {
        "ruleId": rule_id(result.policy, result.rule),
        "ruleIndex": index,
        "level": level,
        "message": {"text": _message(result, violation, kyverno_json)},
    }
    if baseline is not None:
        known = result.baselined if violation is None else violation.baselined
        out["baselineState"] = "unchanged" if known else "new"
        if known:  # shown, and closed as accepted by a dashboard that reads suppressions
            out["suppressions"] = [{"kind": "external", "status": "accepted",
                                    "justification": f"in the baseline {baseline.path}"}]
    where: dict[str, Any] = {}
    if location is not None:
        where["physicalLocation"] = _physical(location)
    name = result.identifier or result.resource.default_identifier
    if name:
        where["logicalLocations"] = [{"fullyQualifiedName": name, "kind": "resource"}]
    if where:
        out["locations"] = [where]
    if related:
        out["relatedLocations"] = related
    out["partialFingerprints"] = {SCHEME: fingerprint(result, violation)}
    properties: dict[str, Any] = {"resource": result.resource.label}
    if result.identifier:
        properties["identifier"] = result.identifier
    if violation is not None:
        properties["check"] = violation.check
        properties["fields"] = [error.field for error in violation.errors]
    if result.feedback:
        properties["feedback"] = result.feedback_json()
    if steps:
        properties["explanation"] = [step.as_dict() for step in steps]
    out["properties"] = properties
    return out


def _explanation(result: RuleResult, violation: Violation | None) -> list[Step]:
    """The explanation's steps for this finding: those headed at the violation's check when the result has
    several violations, else all of them (none without --explain)."""
    if result.explanation is None:
        return []
    if violation is None or len(result.violations) <= 1:
        return list(result.explanation.steps)
    return result.explanation.for_check(violation.check)


def _related(found: list[tuple[RuleResult, Violation | None]], explained: list[list[Step]],
             locator: Locator) -> list[list[dict[str, Any]]]:
    """For each finding, its explanation's steps that are fields of the resource (at most MAX_RELATED),
    where they are in the payload file: every finding's placed in one batch (`Locator.fields`)."""
    owners: list[tuple[int, Step]] = []
    asked: list[Wanted] = []
    for number, ((result, _), steps) in enumerate(zip(found, explained, strict=True)):
        for step in steps:
            if step.resource_path is not None:
                owners.append((number, step))
                asked.append((result.resource, None, step.resource_path))
    related: list[list[dict[str, Any]]] = [[] for _ in found]
    for (number, step), location in zip(owners, locator.fields(asked), strict=True):
        mine = related[number]
        if location is None or location.line is None or len(mine) == MAX_RELATED:
            continue
        mine.append({"id": len(mine), "physicalLocation": _physical(location), "message": {"text": step_text(step)}})
    return related


def _fixed(item: Any) -> dict[str, Any]:
    """A baseline entry no finding matched: a result whose baselineState is absent (the finding is gone)."""
    return {"ruleId": item.rule, "kind": "pass", "level": "none", "baselineState": "absent",
            "message": {"text": f"fixed since the baseline: {item.message or item.check}"},
            "partialFingerprints": {SCHEME: item.fingerprint},
            "properties": {"resource": item.resource, "file": item.file, "check": item.check}}


def _message(result: RuleResult, violation: Violation | None, kyverno_json: bool = False) -> str:
    if violation is None:
        return f"rule error: {rule_error(result.error, kyverno_json=kyverno_json)}"
    return "\n".join([violation.headline(), *(f"- {error}" for error in violation.errors)])


def _physical(location: Location) -> dict[str, Any]:
    assert location.source is not None  # the Locator only places results in files
    uri, base = _artifact(relative_path(location.source))
    physical: dict[str, Any] = {"artifactLocation": {"uri": uri, "uriBaseId": base} if base else {"uri": uri}}
    if location.line is not None:
        physical["region"] = {"startLine": location.line, "startColumn": location.column or 1}
    return physical


@lru_cache(maxsize=1024)
def _artifact(path: str) -> tuple[str, str | None]:
    """The URI of a file as `relative_path` gives it, and its base (%SRCROOT% for a relative one): cached,
    a report names the same few files once per finding."""
    if Path(path).is_absolute():
        return Path(path).as_uri(), None
    return quote(path), SRCROOT


def _skipped(tally: Tally) -> list[dict[str, Any]]:
    """Per rule, how many resources it did not match, and whether it applied to none."""
    unmatched = {id(rule) for _, rule in tally.unmatched_rules()}
    out = []
    for policy in tally.policies:
        for rule in policy.rules:
            count = tally.not_matched(rule)
            if count or id(rule) in unmatched:
                out.append(
                    {
                        "ruleId": rule_id(policy, rule),
                        "notMatchedResources": count,
                        "appliedToNoResource": id(rule) in unmatched,
                    }
                )
    return out
