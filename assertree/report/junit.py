"""The JUnit XML report, for CI systems that show test results (Jenkins, GitLab, Azure Pipelines).

    <testsuites name="assertree" tests= failures= errors= skipped=>
      <testsuite name="POLICY" ...>                          one per policy
        <testcase classname="POLICY" name="RULE: RESOURCE">  one per resource and rule that applied
          <failure message="..." type="violation">...</failure>   a failed rule: every violation
          <error message="..." type="error">...</error>           a rule that could not be evaluated
        <testcase classname="POLICY" name="RULE"><skipped/>  a rule that applied to no resource
        <testcase ... name="RULE: RESOURCE"><skipped/>         a result Kyverno marks skip
      <testsuite name="payload files">                       only when a payload file could not be read
        <testcase classname="payload files" name="FILE"><error .../>

RESOURCE is the rule's identifier, else the resource's source label. "skipped"
means what it means in every report (`assertree.report.totals`). The
failure text lists each violation and its field errors under the file, line
and column of the first failing field (see `assertree.report.locate`).
Characters XML 1.0 cannot hold (most control characters) are dropped from
messages, since payload values end up in them.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from assertree.errors import Location, Problem
from assertree.report.locate import Locator, relative_path
from assertree.report.options import ReportOptions
from assertree.report.wording import rule_error
from assertree.results import ERROR, FAIL, SKIP, PolicyInfo, RuleResult, ScanResult

_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
_COUNTS = ("tests", "failures", "errors", "skipped")


def junit_tree(result: ScanResult, options: ReportOptions | None = None) -> ET.Element:
    """The ``<testsuites>`` element of a scan."""
    options = options or ReportOptions()
    by_policy: dict[int, list[RuleResult]] = {}
    for rule_result in result.results:
        by_policy.setdefault(id(rule_result.policy), []).append(rule_result)
    unmatched: dict[int, list] = {}
    for policy, rule in result.unmatched_rules():
        unmatched.setdefault(id(policy), []).append(rule)
    locator = Locator()
    root = ET.Element("testsuites", name="assertree")
    totals = dict.fromkeys(_COUNTS, 0)
    for policy in result.policies:
        suite = _suite(policy, by_policy.get(id(policy), []), unmatched.get(id(policy), []), locator,
                       options.kyverno_json)
        root.append(suite)
        for name in _COUNTS:
            totals[name] += int(suite.attrib[name])
    if options.problems:
        suite = _files_suite(options.problems)
        root.append(suite)
        totals["tests"] += len(options.problems)
        totals["errors"] += len(options.problems)
    _set_counts(root, totals)
    return root


def render(result: ScanResult, options: ReportOptions | None = None) -> str:
    root = junit_tree(result, options)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _files_suite(problems: tuple[Problem, ...]) -> ET.Element:
    """One test case per payload file that could not be read, each an error."""
    suite = ET.Element("testsuite", name="payload files")
    for problem in problems:
        source = problem.location.source or "<input>"
        case = ET.SubElement(suite, "testcase", classname="payload files", name=_clean(relative_path(source)))
        error = ET.SubElement(case, "error", message=_clean(problem.message), type="unreadable-file")
        error.text = _clean(str(problem))
    _set_counts(suite, {"tests": len(problems), "failures": 0, "errors": len(problems), "skipped": 0})
    return suite


def _suite(policy: PolicyInfo, results: list[RuleResult], unmatched: list, locator: Locator,
           kyverno_json: bool = False) -> ET.Element:
    suite = ET.Element("testsuite", name=_clean(policy.name))
    counts = dict.fromkeys(_COUNTS, 0)
    properties = {"title": policy.title, "severity": policy.severity, "source": policy.source}
    if any(properties.values()):
        holder = ET.SubElement(suite, "properties")
        for name, value in properties.items():
            if value:
                ET.SubElement(holder, "property", name=name, value=_clean(value))
    for rule_result in results:
        counts["tests"] += 1
        resource = rule_result.identifier or rule_result.resource.label
        case = ET.SubElement(
            suite, "testcase", classname=_clean(policy.name), name=_clean(f"{rule_result.rule.name}: {resource}")
        )
        if rule_result.status == FAIL:
            counts["failures"] += 1
            message = "; ".join(violation.headline() for violation in rule_result.violations)
            failure = ET.SubElement(case, "failure", message=_clean(message), type="violation")
            failure.text = _clean(_details(rule_result, locator))
        elif rule_result.status == ERROR:
            counts["errors"] += 1
            text = rule_error(rule_result.error, kyverno_json=kyverno_json)
            error = ET.SubElement(case, "error", message=_clean(text), type="error")
            error.text = _clean(_details(rule_result, locator, text))
        elif rule_result.status == SKIP:
            counts["skipped"] += 1
            ET.SubElement(case, "skipped", message=_clean(rule_result.message or "skipped"))
    for rule in unmatched:
        counts["tests"] += 1
        counts["skipped"] += 1
        case = ET.SubElement(suite, "testcase", classname=_clean(policy.name), name=_clean(rule.name))
        ET.SubElement(case, "skipped", message="the rule applied to no resource")
    _set_counts(suite, counts)
    return suite


def _details(result: RuleResult, locator: Locator, error: str | None = None) -> str:
    """Where the result is, then each violation with its field errors (or the rule's error)."""
    violation = result.violations[0] if result.violations else None
    location = locator.result(result, violation)
    if location is None:
        lines = [f"resource: {result.resource.label}"]
    else:
        assert location.source is not None  # the Locator only places results in files
        where = str(Location(relative_path(location.source), location.line, location.column))
        lines = [f"resource: {where}"]
    if result.status == ERROR:
        lines.append(f"error: {error or result.error}")
    for item in result.violations:
        lines.append(item.headline())
        lines.extend(f"  {error}" for error in item.errors)
    return "\n".join(lines)


def _set_counts(element: ET.Element, counts: dict[str, int]) -> None:
    for name in _COUNTS:
        element.set(name, str(counts[name]))


def _clean(text: str) -> str:
    return _NOT_XML.sub("", text)
