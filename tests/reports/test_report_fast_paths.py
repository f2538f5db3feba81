"""The reports' short cuts give exactly what their general paths give.

* `to_display` quotes a short string in one call instead of walking it as a value (assertree/jp/values.py);
  its quoting is ``json.dumps(text, ensure_ascii=False)``'s;
* `fieldpath.render` writes a field path in one walk from its last step back;
* the text report writes a plain pass's line itself rather than through `rule_lines` (assertree/report/text.py);
* `Tally.of` counts what each rule applied to per result when no result repeats a (rule, resource) pair
  (`totals._counted_once`, assertree/report/totals.py);
* the JUnit report spells its test cases itself rather than through ElementTree (`junit._case_text`,
  assertree/report/junit.py).
"""

from __future__ import annotations

import io
import json
from types import SimpleNamespace

from hypothesis import given, settings
from hypothesis import strategies as st

from assertree.explanation import Explanation
from assertree.jp import values
from assertree.jp.values import to_display
from assertree.report import junit, totals
from assertree.report.options import ReportOptions
from assertree.report.text import Writer, rule_lines
from assertree.results import Resource, RuleError, RuleResult, Violation
from assertree.tree import fieldpath
from assertree.tree.errors import INVALID, FieldError

_TEXT = st.text(st.characters(codec="utf-8") | st.sampled_from('"\\\x00\x1f\x7f\u2028<>&'))


@settings(max_examples=300, deadline=None)
@given(text=_TEXT | st.builds(lambda text, size: (text or "x") * size, _TEXT, st.integers(1, 1200)))
def test_a_string_is_displayed_as_the_general_path_displays_it(text):
    assert to_display(text) == values._display(text)
    assert values._display_quote(text) == json.dumps(text, ensure_ascii=False)


def test_null_and_the_booleans_are_displayed_as_the_general_path_displays_them():
    for value in (None, True, False):
        assert to_display(value) == values._display(value)


def test_a_short_string_cannot_reach_the_limit_that_the_short_cut_skips():
    assert len(json.dumps("\x00" * values._SHORT_STRING)) <= values.MAX_JSON_LENGTH


_STEP_TEXT = st.sampled_from(["a", "spec", "(name)", "~.containers", "0", "x.y", ""])
_PATHS = st.recursive(st.none(), lambda parent: st.builds(lambda p, text, bracket: (p, text, bracket, text),
                                                          parent, _STEP_TEXT, st.booleans()), max_leaves=8)


def _render_reference(path):
    """A field path's text by its definition: a bracketed step as ``[text]``, a key after another step as
    ``.key``, the first key as it is."""
    steps = []
    while path is not None:
        steps.insert(0, path)
        path = path[0]
    return "".join(f"[{text}]" if bracket else text if position == 0 else f".{text}"
                   for position, (_, text, bracket, _) in enumerate(steps))


@settings(max_examples=300, deadline=None)
@given(path=_PATHS)
def test_a_field_path_is_rendered_as_defined(path):
    assert fieldpath.render(path) == _render_reference(path)


_POLICIES = [SimpleNamespace(name=name, rules=[SimpleNamespace(name=rule, index=0) for rule in ("r", "autogen-r")])
             for name in ("p", "q")]
_RESOURCES = [Resource({"a": 1}), Resource({"a": [1]}, source="plan.json", document=2)]


@st.composite
def _results(draw) -> RuleResult:
    policy = draw(st.sampled_from(_POLICIES))
    status = draw(st.sampled_from(["pass", "pass", "pass", "fail", "error", "skip", "warn"]))
    violations = draw(st.lists(st.builds(
        lambda message: Violation("spec.rules[0].assert.all[0]", message,
                                  [FieldError(INVALID, (None, "a", False, "a"), value=1, expected=2)]),
        st.none() | st.just("m")), max_size=2))
    explained = draw(st.booleans())
    return RuleResult(
        draw(st.sampled_from(_RESOURCES)), policy, draw(st.sampled_from(policy.rules)), status,
        identifier=draw(st.sampled_from([None, "", "aws_s3_bucket.b[0]", "ns/name"])),
        violations=violations,
        error=RuleError("boom") if status == "error" else None,
        message=draw(st.none() | st.just("why")),
        action=draw(st.none() | st.just("generate")),
        baselined=draw(st.booleans()) and draw(st.booleans()),
        gate=draw(st.none() | st.just("below --fail-on")),
        explanation=Explanation([], False) if explained and draw(st.booleans()) else None,
    )


@settings(max_examples=300, deadline=None)
@given(results=st.lists(_results(), max_size=6), quiet=st.booleans(), color=st.booleans(),
       with_source=st.booleans(), kyverno_json=st.booleans())
def test_the_text_report_writes_each_result_as_rule_lines_does(results, quiet, color, with_source, kyverno_json):
    out = io.StringIO()
    writer = Writer(_POLICIES, ReportOptions(quiet=quiet, color=color, multiple_sources=with_source,
                                             kyverno_json=kyverno_json), out)
    writer.add(None, results)
    writer.body.copy_to(out)
    expected = [line for result in results if not (quiet and not result.failed)
                for line in rule_lines(result, color=color, with_source=with_source, kyverno_json=kyverno_json)]
    assert out.getvalue() == ("\n".join(expected) + "\n" if expected else "")


# Rules as a scan has them, one of them an autogen rule (counted under the rule it was made from), and one rule
# object listed under two policies; resources whose results come side by side, apart, or repeat a rule.
_RULE_POOL = [SimpleNamespace(name="a"), SimpleNamespace(name="b"), SimpleNamespace(name="autogen-a", autogen_of="a")]
_POLICY_POOL = [SimpleNamespace(name="p", rules=_RULE_POOL), SimpleNamespace(name="q", rules=_RULE_POOL[:1])]
_RESOURCE_POOL = [Resource({"n": number}) for number in range(4)]


@st.composite
def _counted_results(draw) -> list[RuleResult]:
    results = []
    for _ in range(draw(st.integers(0, 12))):
        policy = draw(st.sampled_from(_POLICY_POOL))
        results.append(RuleResult(draw(st.sampled_from(_RESOURCE_POOL)), policy, draw(st.sampled_from(policy.rules)),
                                  "pass"))
    if draw(st.booleans()):  # as a scan gives them: each resource's results together, each rule once
        results.sort(key=lambda result: _RESOURCE_POOL.index(result.resource))
        seen: set[tuple[int, int]] = set()
        results = [result for result in results
                   if (key := (id(result.resource), id(result.rule))) not in seen and not seen.add(key)]
    return results


@settings(max_examples=400, deadline=None)
@given(results=_counted_results())
def test_counting_each_result_once_gives_the_counts_of_distinct_pairs(results):
    fast = totals._counted_once(results)
    if fast is not None:
        assert fast == totals._counted(results)


def test_a_scans_results_are_counted_the_short_way():
    rules = _RULE_POOL[:2]
    results = [RuleResult(resource, _POLICY_POOL[0], rule, "pass") for resource in _RESOURCE_POOL for rule in rules]
    assert totals._counted_once(results) == totals._counted(results)
    assert totals._counted_once([*results, results[0]]) is None  # a pair twice: the general way


# Text that needs no escaping, and text that ElementTree escapes or `_clean` drops.
_XML_TEXT = st.sampled_from(["", "p", "a b", "é", "x/y[0]"]) | st.text(
    st.sampled_from(["a", "&", "<", ">", '"', "'", "\n", "\t", "\r", "\x01", "\ud800", "\ufffe", "é", "]"]),
    max_size=6)


def _elementtree_case(classname: str, name: str, tag: str | None, message: str, kind: str | None, text: str):
    """The test case as ElementTree serialises it: the element built as the report built it before it spelled
    its test cases itself."""
    import xml.etree.ElementTree as ET

    case = ET.Element("testcase", classname=junit._clean(classname), name=junit._clean(name))
    if tag is not None:
        child = ET.SubElement(case, tag, message=junit._clean(message), **({"type": kind} if kind else {}))
        child.text = junit._clean(text) if text else None
    return junit._element_text(case, 2)


@settings(max_examples=400, deadline=None)
@given(classname=_XML_TEXT, rule=_XML_TEXT, resource=_XML_TEXT | st.none(),
       tag=st.sampled_from([None, "failure", "error", "skipped"]), message=_XML_TEXT,
       kind=st.sampled_from([None, "violation", "error"]), text=_XML_TEXT)
def test_a_junit_case_is_spelled_as_elementtree_spells_it(classname, rule, resource, tag, message, kind, text):
    """`junit._case_text` spells a test case itself rather than through ElementTree, from a start escaped
    once per policy and rule (`_case_head`; `resource` None: a rule's own test case): the same text."""
    head = junit._case_head(classname, rule, resource=resource is not None)
    name = rule if resource is None else f"{rule}: {resource}"
    assert junit._case_text(head, resource or "", tag, message, kind, text) == _elementtree_case(
        classname, name, tag, message, kind, text)
