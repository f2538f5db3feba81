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
from assertree.results import ERROR, FAIL, SKIP, PolicyInfo, Resource, RuleResult, ScanResult

# what XML 1.0 cannot hold: every character but tab, line feed, carriage return, 0x20-0xD7FF, 0xE000-0xFFFD and
# 0x10000 on (written as what is left out rather than what is allowed: the regular expression of the whole
# allowed range took 7 ms to compile, at every run that writes the report)
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
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
    tree: the suites are serialised by ElementTree, the test cases spelled as it spells them (`_case_text`)."""

    by_resource = False

    def __init__(self, policies: Sequence[PolicyInfo], options: ReportOptions, out: Writable,
                 spill_dir: str | None = None) -> None:
        self.policies, self.options, self.out = policies, options, out
        self.locator = Locator()
        budget = max(1, spooling.SPILL_BYTES // _SPOOLS_PER_BUDGET)
        self.spools = {id(policy): Spool(spill_dir, budget) for policy in policies}
        self.counts = {id(policy): dict.fromkeys(_COUNTS, 0) for policy in policies}

        self.pending: dict[int, list[str]] = {id(policy): [] for policy in policies}
        self.heads: dict[tuple[int, int], str] = {}  # (policy, rule) -> the start of their test cases

    def add(self, resource: Resource | None, results: Sequence[RuleResult]) -> None:
        detailed = [(item, item.violations[0] if item.violations else None) for item in results if _detailed(item)]
        locations = iter(self.locator.results(detailed))
        heads, kyverno_json = self.heads, self.options.kyverno_json
        for rule_result in results:
            policy, rule = rule_result.policy, rule_result.rule
            key = id(policy)
            head = heads.get((key, id(rule)))
            if head is None:
                head = heads[key, id(rule)] = _case_head(policy.name, rule.name)
            pending = self.pending[key]
            location = next(locations) if _detailed(rule_result) else None
            pending.append(_case(rule_result, self.counts[key], location, kyverno_json, head))
            if len(pending) >= _BATCH:
                self._flush(key)

    def _flush(self, key: int) -> None:
        """Move a policy's pending test cases into its spool, in one write."""
        pending = self.pending[key]
        if pending:
            self.spools[key].write("".join(pending))
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
                pending.append(_case_text(_case_head(policy.name, rule.name, resource=False), "", "skipped",
                                          "the rule applied to no resource"))
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


def _detailed(rule_result: RuleResult) -> bool:
    """Whether the test case of `rule_result` says where the resource is (`_details`)."""
    return rule_result.baselined or rule_result.status in (FAIL, ERROR)


def _case(rule_result: RuleResult, counts: dict[str, int], location: Location | None, kyverno_json: bool,
          head: str) -> str:
    """The test case of one rule result (counted in `counts`, its policy's), as `_case_text` spells it from
    `head` (`_case_head` of its policy and rule)."""
    counts["tests"] += 1
    resource = rule_result.identifier or rule_result.resource.label
    if rule_result.baselined:  # a known finding: visible, not failing
        counts["skipped"] += 1
        details = _details(rule_result, location, rule_error(rule_result.error, kyverno_json=kyverno_json)
                           if rule_result.error is not None else None)
        return _case_text(head, resource, "skipped", "baselined: in the --baseline file", text=details)
    if rule_result.status == FAIL:
        counts["failures"] += 1
        message = "; ".join(violation.headline() for violation in rule_result.violations)
        return _case_text(head, resource, "failure", message, "violation", _details(rule_result, location))
    if rule_result.status == ERROR:
        counts["errors"] += 1
        message = rule_error(rule_result.error, kyverno_json=kyverno_json)
        return _case_text(head, resource, "error", message, "error", _details(rule_result, location, message))
    if rule_result.status == SKIP:
        counts["skipped"] += 1
        return _case_text(head, resource, "skipped", rule_result.message or "skipped")
    return _case_text(head, resource)


def _case_head(classname: str, rule: str, *, resource: bool = True) -> str:
    """The start of `_case_text`'s test cases of one policy (`classname`) and rule, up to the resource's
    part of the name (``RULE: RESOURCE``; the name is the rule's alone without a `resource`): escaping is
    character by character, so this part is escaped once for all of them."""
    name = f"{rule}: " if resource else rule
    return f'\n    <testcase classname="{_attribute(classname)}" name="{_attribute(name)}'


def _case_text(head: str, resource: str, tag: str | None = None, message: str = "", kind: str | None = None,
               text: str = "") -> str:
    """``<testcase classname= name=>`` holding ``<TAG message= type=KIND>TEXT</TAG>`` (no child without
    `tag`, no type without `kind`), with the line break and indentation before it (`head`, then the
    `resource`'s part of the name): what `_element_text` gives for that element at level 2. Spelled here
    rather than built and serialised by ElementTree, which was a third of the report's time at 10,000
    resources; `_attribute` and `_cdata` escape as ElementTree does.

    Invariant: the text is ElementTree's for the same element (`tests/reports/test_report_fast_paths.py`)."""
    start = f'{head}{_attribute(resource)}"'
    if tag is None:
        return start + " />"
    attributes = f' message="{_attribute(message)}"' + (f' type="{_attribute(kind)}"' if kind is not None else "")
    text = _clean(text)
    child = f"<{tag}{attributes}>{_cdata(text)}</{tag}>" if text else f"<{tag}{attributes} />"
    return f"{start}>\n      {child}\n    </testcase>"


def _attribute(text: str) -> str:
    """An attribute's value as ElementTree writes it (``xml.etree.ElementTree._escape_attrib``), after
    `_clean`."""
    if _ATTRIBUTE_AS_IS.fullmatch(text):
        return text
    text = _clean(text)
    return (text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
            .replace("\r", "&#13;").replace("\n", "&#10;").replace("\t", "&#09;"))


def _cdata(text: str) -> str:
    """Element text as ElementTree writes it (``_escape_cdata``)."""
    if "&" in text or "<" in text or ">" in text:
        return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return text


_ATTRIBUTE_AS_IS = re.compile('[^&<>"\x00-\x1f\ud800-\udfff\ufffe\uffff]*')
"""Attribute text that is written as it is: nothing ElementTree escapes, nothing `_clean` drops."""


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
