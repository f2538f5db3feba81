"""What the decisive parts of a Kyverno rule saw, recorded while a result is explained (``--explain``).

`bridge` calls these when an `assertree.explanation.Trace` is active (only
while `explain` evaluates a rule again; never during a scan):

* `traced_conditions`, for a precondition or deny block of the rule: the block
  with its outcome, then each condition as written, its key and value after
  substitution, the operator, and whether it held (the conditions Kyverno did
  not need are "not evaluated");
* `trace_patterns`: a pattern's outcome and Kyverno's error, then the failing
  field: the path through the pattern with its anchors as written
  (``spec.containers[0].=(securityContext).runAsNonRoot``), the resource's value
  there and the pattern's; ``anyPattern`` gives each pattern tried;
* `trace_list`, `begin_elements`, `enter_element`, `end_elements`: a ``foreach``
  list and the element that decided (an element whose steps decided nothing,
  it passed or was skipped, is dropped when the next one starts, so a long list
  cannot crowd the failing element out of a bounded trace);
* `trace_pod_security`: a ``podSecurity`` rule's checks (Kyverno's message).

Blocks are known by identity (`BLOCKS` in `Trace.notes`, set by `explain`):
an exception's conditions, evaluated on the way, are not part of why a rule
failed and are not recorded.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from assertree.explanation import ABSENT, Step, Trace
from assertree.jp.values import to_display
from assertree.languages.kyverno.anchors import parse_anchor
from assertree.languages.kyverno.conditions import Condition, ConditionError, ConditionsResult, evaluate_conditions
from assertree.languages.kyverno.manifests import to_float64
from assertree.languages.kyverno.pattern import match_pattern
from assertree.results import ERROR, FAIL, PASS, SKIP

__all__ = ["BLOCKS", "begin_elements", "end_elements", "enter_element", "locate_in_pattern", "trace_list",
           "trace_patterns", "trace_pod_security", "traced_conditions"]

BLOCKS = "kyverno.blocks"  # Trace.notes: id(conditions) -> (name, policy path, is deny), set by `explain`
_LOOPS = "kyverno.loops"  # Trace.notes: a stack of [depth of the loop, index of the current element's step]
_DECIDING = (FAIL, ERROR)  # outcomes of a block or pattern that make an element's steps worth keeping


# -- conditions ------------------------------------------------------------------------------------------------


def traced_conditions(conditions: Any, resolve: Callable[[Any], Any], trace: Trace) -> ConditionsResult:
    """`conditions.evaluate_conditions`, recording the block and each condition when the block is one of the
    rule's (see the module docstring)."""
    label = trace.notes.get(BLOCKS, {}).get(id(conditions))
    if label is None:
        return evaluate_conditions(conditions, resolve)
    name, where, deny = label
    heading = trace.add(name, policy_path=where)
    sections = _sections(conditions)
    position = _Position(sections)
    resolved: list[Any] = []

    def capture(raw: Any) -> Any:
        value = resolve(raw)
        resolved.append(value)
        return value

    def observe(condition: Condition, holds: bool, error: ConditionError | None) -> None:
        section, index = position.current()
        key = resolved[0] if resolved else ABSENT
        value = resolved[1] if len(resolved) > 1 else ABSENT
        resolved.clear()
        with trace.nested():
            trace.add(_condition_text(condition), "error" if error is not None else "true" if holds else "false",
                      value=key, expected=value, operator=condition.operator,
                      detail=error.message if error is not None else condition.message,
                      policy_path=f"{where}{section}[{index}]")
        position.advance(holds)

    result = evaluate_conditions(conditions, capture, observe)
    with trace.nested():
        for section, index, raw in position.rest():
            trace.add(_raw_condition_text(raw), "not evaluated", policy_path=f"{where}{section}[{index}]")
    if heading is not None:
        if result.error is not None:
            heading.outcome, heading.detail = ERROR, result.error.message
        elif deny:
            heading.outcome = FAIL if result.passed else PASS
            heading.detail = "the conditions hold: the resource is denied" if result.passed else "not denied"
        else:
            heading.outcome = PASS if result.passed else SKIP
            heading.detail = "met" if result.passed else "not met: the rule is skipped"
    return result


def _sections(conditions: Any) -> list[tuple[str, list]]:
    """The lists of a block, as evaluated: ``any`` then ``all``, or the legacy list (its section is "")."""
    if isinstance(conditions, list):
        return [("", conditions)]
    if isinstance(conditions, dict):
        return [(f".{name}", conditions[name]) for name in ("any", "all") if isinstance(conditions.get(name), list)]
    return []


class _Position:
    """Which condition of a block the evaluation is at: through `any` until one holds, then through `all`
    until one does not (the legacy list as `all`); and which conditions it never reached."""

    def __init__(self, sections: list[tuple[str, list]]) -> None:
        self.sections = sections
        self.section = 0
        self.index = 0
        self.seen: set[tuple[int, int]] = set()

    def current(self) -> tuple[str, int]:
        while self.section < len(self.sections) and not self.sections[self.section][1]:
            self.section += 1  # an empty `any` is false without evaluating anything
        self.seen.add((self.section, self.index))
        name = self.sections[self.section][0] if self.section < len(self.sections) else ""
        return name, self.index

    def advance(self, holds: bool) -> None:
        """After a condition that did not stop the block (an error or a false `all` condition ends it)."""
        if self.section >= len(self.sections):
            return
        name, items = self.sections[self.section]
        self.index += 1
        if (name == ".any" and holds) or self.index >= len(items):
            self.section += 1
            self.index = 0

    def rest(self) -> list[tuple[str, int, Any]]:
        """(section, index, raw condition) of every condition the evaluation did not reach."""
        return [(name, index, items[index]) for number, (name, items) in enumerate(self.sections)
                for index in range(len(items)) if (number, index) not in self.seen]


def _text(value: Any) -> str:
    return value if isinstance(value, str) else to_display(value)


def _condition_text(condition: Condition) -> str:
    """A condition as written: ``<key> <operator> <value>``."""
    return f"{_text(condition.key)} {condition.operator} {_text(condition.value)}"


def _raw_condition_text(raw: Any) -> str:
    if not isinstance(raw, dict):
        return _text(raw)
    return f"{_text(raw.get('key'))} {raw.get('operator') or ''} {_text(raw.get('value'))}"


# -- patterns --------------------------------------------------------------------------------------------------


def trace_patterns(trace: Trace, target: Any, pattern: Any, any_pattern: Any) -> None:
    """Record a ``pattern`` (or each ``anyPattern`` tried, as `pattern.validate_rule` tries them) with its
    outcome, and for a failure the field where it failed."""
    if pattern is not None:
        found = match_pattern(target, pattern)
        _pattern_step(trace, "pattern", found, target, pattern)
        return
    if not isinstance(any_pattern, list):
        trace.add("anyPattern", ERROR, detail="failed to deserialize anyPattern, expected type array")
        return
    heading = trace.add("anyPattern")
    outcomes = []
    with trace.nested():
        for index, candidate in enumerate(to_float64(any_pattern)):
            found = match_pattern(target, candidate)
            _pattern_step(trace, f"anyPattern[{index}]", found, target, candidate)
            outcomes.append(str(found.status))
            if found.status == PASS:
                break
    if heading is not None:
        heading.outcome = PASS if PASS in outcomes else SKIP if set(outcomes) == {SKIP} else FAIL
        heading.detail = "" if heading.outcome != FAIL else "no pattern matched"


def _pattern_step(trace: Trace, what: str, found: Any, target: Any, pattern: Any) -> None:
    trace.add(what, str(found.status), detail=found.error)
    if found.status == FAIL and found.path:
        path, value, expected, steps = locate_in_pattern(target, pattern, found.path)
        if trace.notes.get(_LOOPS):  # a foreach element's pattern: its path starts at the element, not the resource
            steps = None
        with trace.nested():
            trace.add(path or "/", FAIL, value=value, expected=expected, resource_path=steps,
                      detail=f"at {found.path}")


def locate_in_pattern(resource: Any, pattern: Any, failed_path: str) -> tuple[str, Any, Any, tuple | None]:
    """Where Kyverno's failing path (``/spec/containers/0/image/``) is in `pattern` and `resource`: the pattern
    path with its anchors as written, the resource's value there, the pattern's value there, and the resource
    steps (None when the resource does not hold the path)."""
    segments = [part for part in failed_path.strip("/").split("/") if part]
    texts: list[str] = []
    steps: list[Any] = []
    value, expected = resource, pattern
    for segment in segments:
        if isinstance(value, list) and segment.isdigit():
            position = int(segment)
            steps.append(position)
            texts.append(f"[{position}]")
            value = value[position] if position < len(value) else ABSENT
            if isinstance(expected, list) and expected:
                first = expected[0]
                expected = first if isinstance(first, dict) or not isinstance(first, list) else (
                    expected[position] if position < len(expected) else ABSENT)
            continue
        key = _pattern_key(expected, segment)
        texts.append(("." if texts else "") + (key or segment))
        steps.append(segment)
        expected = expected.get(key, ABSENT) if isinstance(expected, dict) and key is not None else ABSENT
        value = value.get(segment, ABSENT) if isinstance(value, dict) else ABSENT
    resource_steps = tuple(steps) if value is not ABSENT else None
    return "".join(texts), value, expected, resource_steps


def _pattern_key(pattern: Any, name: str) -> str | None:
    """The key of `pattern` (a map) that applies to the field `name`: plainly, or inside an anchor."""
    if not isinstance(pattern, dict):
        return None
    if name in pattern:
        return name
    return next((key for key in pattern if isinstance(key, str) and parse_anchor(key).kind is not None
                 and parse_anchor(key).key == name), None)


# -- foreach -----------------------------------------------------------------------------------------------------


def trace_list(trace: Trace, expression: str, elements: list | None, problem: str = "") -> None:
    """A ``foreach`` list: its expression and the elements it gave (or why it gave none)."""
    if problem:
        trace.add(f"foreach {expression}", ERROR, detail=problem)
        return
    count = len(elements or [])
    trace.add(f"foreach {expression}", value=elements, detail=f"{count} element{'s' if count != 1 else ''}")


def begin_elements(trace: Trace) -> None:
    trace.notes.setdefault(_LOOPS, []).append([trace.depth, None])
    trace.depth += 1


def enter_element(trace: Trace, element: Any, index: int) -> None:
    """An element starts: the previous one's steps go unless they decided something; then the element."""
    loop = trace.notes[_LOOPS][-1]
    _drop_if_undecided(trace, loop)
    trace.depth = loop[0] + 1
    loop[1] = len(trace.explanation.steps)
    trace.add(f"element [{index}]", value=element)
    trace.depth = loop[0] + 2


def end_elements(trace: Trace) -> None:
    loop = trace.notes[_LOOPS].pop()
    _drop_if_undecided(trace, loop)
    trace.depth = loop[0]


def _drop_if_undecided(trace: Trace, loop: list) -> None:
    start = loop[1]
    if start is None:
        return
    steps: list[Step] = trace.explanation.steps
    if not any(step.outcome in _DECIDING for step in steps[start + 1:]):
        del steps[start:]
    loop[1] = None


# -- validate.cel, podSecurity -------------------------------------------------------------------------------------


def trace_pod_security(trace: Trace, level: str, version: str, outcome: Any) -> None:
    """A ``podSecurity`` rule: the standard's level and version, and the checks' verdict (Kyverno's message lists
    each failing check with its fields)."""
    trace.add(f"podSecurity {level}:{version}", str(outcome.status), detail=outcome.message,
              resource_path=outcome.steps)
