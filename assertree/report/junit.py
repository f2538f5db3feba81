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
from collections.abc import Sequence

from assertree.errors import Location, Problem
from assertree.inputs.paths import relative_path
from assertree.report import spool as spooling
from assertree.report.locate import Locator
from assertree.report.options import ReportOptions
from assertree.report.spool import Spool, Writable
from assertree.report.totals import Tally
from assertree.report.wording import rule_error
from assertree.results import ERROR, FAIL, PASS, SKIP, PolicyInfo, Resource, RuleResult, ScanResult

_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
_COUNTS = ("tests", "failures", "errors", "skipped")


def render(result: ScanResult, options: ReportOptions | None = None) -> str:
    from assertree.report.stream import render_whole

    return render_whole("junit", result, options)


_CASES = "assertree-cases"  # a placeholder element: where a suite's spooled test cases go
_BATCH = 64  # test cases serialised at once
_SPOOLS_PER_BUDGET = 16  # one spool per policy, and a scan may have hundreds: each gets a share


class Writer:
    """The JUnit report as a scan goes: each policy's test cases wait in a spool of their own, since a
    suite is one policy's cases with its counts in its start tag; at the end the suites are written in
    policy order around them. The bytes are those of `ElementTree.indent` and `tostring` on the whole
    tree (each element is serialised by ElementTree, indented at its level)."""

    by_resource = False

    def __init__(self, policies: Sequence[PolicyInfo], options: ReportOptions, out: Writable,
                 spill_dir: str | None = None) -> None:
        self.policies, self.options, self.out = policies, options, out
        self.locator = Locator()
        budget = max(1, spooling.SPILL_BYTES // _SPOOLS_PER_BUDGET)
        self.spools = {id(policy): Spool(spill_dir, budget) for policy in policies}
        self.counts = {id(policy): dict.fromkeys(_COUNTS, 0) for policy in policies}

        self.pending: dict[int, list[ET.Element | str]] = {id(policy): [] for policy in policies}

    def add(self, resource: Resource | None, results: Sequence[RuleResult]) -> None:
        detailed = [(item, item.violations[0] if item.violations else None) for item in results if _detailed(item)]
        locations = iter(self.locator.results(detailed))
        for rule_result in results:
            key = id(rule_result.policy)
            pending = self.pending[key]
            passed = _passed_text(rule_result) if rule_result.status == PASS and not rule_result.baselined else None
            if passed is not None:
                self.counts[key]["tests"] += 1
                pending.append(passed)
            else:
                location = next(locations) if _detailed(rule_result) else None
                pending.append(_case(rule_result, self.counts[key], location, self.options.kyverno_json))
            if len(pending) >= _BATCH:
                self._flush(key)

    def _flush(self, key: int) -> None:
        """Serialise a policy's pending test cases into its spool: each run of elements in one ElementTree
        call, the passed cases already spelled (`_passed_text`) as they are."""
        pending = self.pending[key]
        if pending:
            pieces, run = [], []
            for case in pending:
                if isinstance(case, str):
                    if run:
                        pieces.append(_children_text(run, 2))
                        run = []
                    pieces.append(case)
                else:
                    run.append(case)
            if run:
                pieces.append(_children_text(run, 2))
            self.spools[key].write("".join(pieces))
            pending.clear()

    def finish(self, tally: Tally, problems: Sequence[Problem] = ()) -> None:
        unmatched: dict[int, list] = {}
        for policy, rule in tally.unmatched_rules():
            unmatched.setdefault(id(policy), []).append(rule)
        totals = dict.fromkeys(_COUNTS, 0)
        for policy in self.policies:
            counts, pending = self.counts[id(policy)], self.pending[id(policy)]
            for rule in unmatched.get(id(policy), []):
                counts["tests"] += 1
                counts["skipped"] += 1
                case = ET.Element("testcase", classname=_clean(policy.name), name=_clean(rule.name))
                ET.SubElement(case, "skipped", message="the rule applied to no resource")
                pending.append(case)
            self._flush(id(policy))
            for name in _COUNTS:
                totals[name] += counts[name]
        if problems:
            totals["tests"] += len(problems)
            totals["errors"] += len(problems)
        root = ET.Element("testsuites", name="assertree")
        _set_counts(root, totals)
        out = self.out
        out.write('<?xml version="1.0" encoding="UTF-8"?>\n')
        if not self.policies and not problems:
            out.write(ET.tostring(root, encoding="unicode") + "\n")
            return
        head, tail = _around(root, 0)
        out.write(head)
        for policy in self.policies:
            suite = ET.Element("testsuite", name=_clean(policy.name))
            properties = {"title": policy.title, "severity": policy.severity, "source": policy.source}
            if any(properties.values()):
                holder = ET.SubElement(suite, "properties")
                for name, value in properties.items():
                    if value:
                        ET.SubElement(holder, "property", name=name, value=_clean(value))
            _set_counts(suite, self.counts[id(policy)])
            spool = self.spools[id(policy)]
            if spool.empty:
                out.write(_element_text(suite, 1))
                continue
            suite_head, suite_tail = _around(suite, 1)
            out.write(suite_head)
            spool.copy_to(out)
            out.write(suite_tail)
        if problems:
            out.write(_element_text(_files_suite(tuple(problems)), 1))
        out.write(tail + "\n")

    def close(self) -> None:
        for spool in self.spools.values():
            spool.close()


def _children_text(elements: list[ET.Element], level: int) -> str:
    """`_element_text` of each of `elements`, siblings at `level`, made in one serialisation: under a
    parent of their own, indented, whose tags are then cut off."""
    parent = ET.Element("p")
    parent.extend(elements)
    text = _element_text(parent, level - 1)
    start = len("\n" + "  " * (level - 1) + "<p>")
    return text[start : len(text) - len("\n" + "  " * (level - 1) + "</p>")]


def _element_text(element: ET.Element, level: int) -> str:
    """`element` as it appears, indented, as a child at `level` - 1 of the whole tree (with the line break
    and indentation before it)."""
    ET.indent(element, level=level)
    return "\n" + "  " * level + ET.tostring(element, encoding="unicode")


def _around(element: ET.Element, level: int) -> tuple[str, str]:
    """The text of `element` at `level` before and after its children still to come (its start tag and
    any children it has, its end tag): what goes around children written by `_element_text`."""
    ET.SubElement(element, _CASES)
    text = _element_text(element, level) if level else ET.tostring(_indented(element), encoding="unicode")
    head, tail = text.split("\n" + "  " * (level + 1) + f"<{_CASES} />")
    return head, tail


def _indented(element: ET.Element) -> ET.Element:
    ET.indent(element)
    return element


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


_AS_IS = re.compile('[^&<>"\x00-\x1f\ud800-\udfff\ufffe\uffff]*')
"""Attribute text that ElementTree writes as it is: nothing it escapes, nothing `_clean` drops."""


def _passed_text(rule_result: RuleResult) -> str | None:
    """The test case of a passed rule result as `_children_text` spells it (``<testcase classname=... name=...
    />`` at level 2), when its names need no escaping; else None (ElementTree spells it). Most results pass,
    and an element built and serialised for each was a fifth of the report's time at 10,000 resources.

    Invariant: the text is ElementTree's (`tests/reports/test_junit_passed.py` holds the two together)."""
    policy_name = rule_result.policy.name
    name = f"{rule_result.rule.name}: {rule_result.identifier or rule_result.resource.label}"
    if _AS_IS.fullmatch(policy_name) is None or _AS_IS.fullmatch(name) is None:
        return None
    return f'\n    <testcase classname="{policy_name}" name="{name}" />'


def _detailed(rule_result: RuleResult) -> bool:
    """Whether the test case of `rule_result` says where the resource is (`_details`)."""
    return rule_result.baselined or rule_result.status in (FAIL, ERROR)


def _case(rule_result: RuleResult, counts: dict[str, int], location: Location | None,
          kyverno_json: bool) -> ET.Element:
    """The test case of one rule result (counted in `counts`, its policy's)."""
    counts["tests"] += 1
    policy = rule_result.policy
    resource = rule_result.identifier or rule_result.resource.label
    case = ET.Element("testcase", classname=_clean(policy.name), name=_clean(f"{rule_result.rule.name}: {resource}"))
    if rule_result.baselined:  # a known finding: visible, not failing
        counts["skipped"] += 1
        skipped = ET.SubElement(case, "skipped", message="baselined: in the --baseline file")
        skipped.text = _clean(_details(rule_result, location, rule_error(rule_result.error, kyverno_json=kyverno_json)
                                       if rule_result.error is not None else None))
    elif rule_result.status == FAIL:
        counts["failures"] += 1
        message = "; ".join(violation.headline() for violation in rule_result.violations)
        failure = ET.SubElement(case, "failure", message=_clean(message), type="violation")
        failure.text = _clean(_details(rule_result, location))
    elif rule_result.status == ERROR:
        counts["errors"] += 1
        text = rule_error(rule_result.error, kyverno_json=kyverno_json)
        error = ET.SubElement(case, "error", message=_clean(text), type="error")
        error.text = _clean(_details(rule_result, location, text))
    elif rule_result.status == SKIP:
        counts["skipped"] += 1
        ET.SubElement(case, "skipped", message=_clean(rule_result.message or "skipped"))
    return case


def _details(result: RuleResult, location: Location | None, error: str | None = None) -> str:
    """Where the result is (`location`: that of its first violation), then each violation with its field
    errors (or the rule's error)."""
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
