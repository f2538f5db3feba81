"""Anchors in a strategic merge patch: Kyverno's preprocessing, before kyaml merges the patch.

A port of pkg/engine/mutate/patch/strategicPreprocessing.go. Kyverno walks the patch against the
resource and rewrites the patch:

- ``+(key)``: kept as ``key`` when the resource lacks it, dropped when the resource has it;
- ``(key)`` conditions and ``<(key)`` global conditions: checked with the validate pattern matcher
  (``validate.MatchPattern``, `validate_matcher`) against the resource's value; a failed condition
  on a map skips the whole patch (ConditionError), a failed global condition anywhere skips it too
  (GlobalConditionError); the anchors are then deleted from the patch;
- in a list of maps, an element carrying anchors is a *selector*: it is tried against every element
  of the resource's list, and for each one that satisfies its conditions a copy without anchors and
  with the resource element's ``name`` is appended to the patch (kyaml merges containers by name);
  the selector itself is removed;
- ``X()``, ``=()`` and ``^()`` mean nothing to mutate: outside a condition they stay in the patch as
  literal keys, as they do in Kyverno.

Kyverno's quirks are kept on purpose, since results depend on them: one copy of a selector is
shared by all resource elements (an ``+()`` resolved on the first element stays resolved for the
next), a condition whose value holds a ``+()`` anchor is not checked at all, scalar conditions
compare YAML *text* (``(replicas): 3`` matches ``"3"``), empty maps are removed from the patch, and
list elements are deleted by indexes taken before earlier deletions (an error where Go panics).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeGuard

from assertree.languages.kyverno.anchors import Anchor, AnchorKind, parse_anchor
from assertree.languages.kyverno.manifests import copy_json
from assertree.languages.kyverno.mutate.merge import ABSENT, scalar_text
from assertree.languages.kyverno.pattern import match_pattern
from assertree.results import Status

PatternMatcher = Callable[[Any, Any], "str | None"]
"""validate.MatchPattern(resource, pattern): None when the resource matches, else the reason.
`validate_matcher` is Kyverno's; tests may pass simpler ones."""


class ConditionFailed(Exception):
    """A ``(key)`` condition of the patch is not met: Kyverno drops the patch (``condition failed: ...``)."""

    def __str__(self) -> str:
        return f"condition failed: {self.args[0]}"


class GlobalConditionFailed(Exception):
    """A ``<(key)`` global condition is not met: Kyverno drops the whole patch."""

    def __str__(self) -> str:
        return f"global condition failed: {self.args[0]}"


class PreprocessError(Exception):
    """The patch could not be preprocessed (a list patched onto a map, ...): a rule error."""


_MARK = {
    AnchorKind.CONDITION: "",
    AnchorKind.GLOBAL: "<",
    AnchorKind.NEGATION: "X",
    AnchorKind.ADD_IF_NOT_PRESENT: "+",
    AnchorKind.EQUALITY: "=",
    AnchorKind.EXISTENCE: "^",
}


def _anchor(key: Any) -> Anchor | None:
    """Kyverno's anchor.Parse: the anchor a key spells, None for a plain key (or a key that is no string)."""
    if not isinstance(key, str):
        return None
    found = parse_anchor(key)
    return found if found.kind is not None else None


def validate_matcher(resource: Any, pattern: Any) -> str | None:
    """Kyverno's check of a condition: validate.MatchPattern, where anything but a pass (a fail, a
    skip from an anchor inside the condition, an error) makes the condition fail."""
    result = match_pattern(resource, pattern)
    return None if result.status is Status.PASS else (result.error or "pattern not matched")


def _written(found: Anchor) -> str:
    """anchor.String(): the key as Kyverno writes it back (marks, parentheses, trimmed key)."""
    return f"{_MARK[found.kind]}({found.key})" if found.kind is not None else found.key


def _is_condition(found: Anchor | None) -> TypeGuard[Anchor]:
    return found is not None and found.kind in (AnchorKind.CONDITION, AnchorKind.GLOBAL)


def _is_mutate_anchor(found: Anchor | None) -> bool:
    return _is_condition(found) or (found is not None and found.kind is AnchorKind.ADD_IF_NOT_PRESENT)


def _kind_is(*kinds: AnchorKind) -> Callable[[Anchor | None], bool]:
    return lambda found: found is not None and found.kind in kinds


def preprocess(pattern: dict, resource: Any, matcher: PatternMatcher | None = None) -> None:
    """Rewrite `pattern` in place for `resource` (PreProcessPattern).

    Raises ConditionFailed or GlobalConditionFailed when the patch does not apply (Kyverno then
    merges an empty patch), PreprocessError when the patch and resource disagree in shape.
    """
    _recurse(pattern, resource, matcher or validate_matcher)
    _delete_condition_elements(pattern)


def _recurse(pattern: Any, resource: Any, matcher: PatternMatcher) -> None:
    if isinstance(pattern, dict):
        _walk_map(pattern, resource, matcher)
    elif isinstance(pattern, list) and pattern and isinstance(pattern[0], dict):
        _process_list_of_maps(pattern, resource, matcher)


def _field(resource: Any, key: str) -> Any:
    """resource.Field(key).Value: ABSENT when the resource is no map or lacks the key."""
    if isinstance(resource, dict) and key in resource:
        return resource[key]
    return ABSENT


def _walk_map(pattern: dict, resource: Any, matcher: PatternMatcher) -> None:
    _add_if_not_present(pattern, resource)
    _check_conditions(pattern, resource, matcher)
    plain = [key for key in pattern if not _is_mutate_anchor(_anchor(key))]
    for key in plain:
        if key in pattern:
            _recurse(pattern[key], _field(resource, key), matcher)


def _process_list_of_maps(pattern: list, resource: Any, matcher: PatternMatcher) -> None:
    if resource is ABSENT or resource is None:
        elements: list = []
    elif isinstance(resource, list):
        elements = list(resource)
    else:
        raise PreprocessError(f"wrong node kind: expected SequenceNode but got MappingNode: {resource!r}")
    for selector in list(pattern):
        if not _has_anchors(selector, _is_mutate_anchor):
            continue
        is_global = _has_anchors(selector, _kind_is(AnchorKind.GLOBAL))
        any_global_passed = False
        last_global: GlobalConditionFailed | None = None
        trial = copy_json(selector)
        for element in elements:
            try:
                _recurse(trial, element, matcher)
            except ConditionFailed:
                continue
            except GlobalConditionFailed as failed:
                last_global = failed
                continue
            if is_global:
                any_global_passed = True
            else:
                _add_named_copy(pattern, trial, element)
        if resource is ABSENT:
            try:
                _recurse(trial, ABSENT, matcher)
            except ConditionFailed:
                continue
            if is_global:
                any_global_passed = True
        if not any_global_passed and last_global is not None:
            raise last_global


def _add_named_copy(pattern: list, selector: Any, element: Any) -> None:
    """handlePatternName: the selector, anchors removed, aimed at `element` by its name."""
    name = _field(element, "name")
    if name is ABSENT or name is None or name == {} or name == []:
        return
    named = copy_json(selector)
    if _delete_anchors(named, delete_scalar=True, traverse_maps=False):
        return
    if isinstance(named, dict):
        named["name"] = copy_json(name)
    pattern.append(named)


def _add_if_not_present(pattern: Any, resource: Any) -> int:
    """``+(key)``: keep as ``key`` if the resource lacks it, drop it if present; the number of such anchors."""
    if not isinstance(pattern, dict):
        return 0
    anchors = [found for key in pattern if (found := _anchor(key)) and found.kind is AnchorKind.ADD_IF_NOT_PRESENT]
    for found in anchors:
        written = _written(found)
        if isinstance(resource, dict) and found.key in resource:
            pattern.pop(written, None)
        else:
            _rename(pattern, written, found.key)
    return len(anchors)


def _rename(mapping: dict, old: str, new: str) -> None:
    """renameField: the key changes, its place and value stay."""
    if old not in mapping:
        return
    items = [(new if key == old else key, value) for key, value in mapping.items()]
    mapping.clear()
    mapping.update(items)


def _check_conditions(pattern: dict, resource: Any, matcher: PatternMatcher) -> None:
    """validateConditions: global anchors first, then conditions; the first failure stops."""
    reason = _first_failed_condition(pattern, resource, matcher, AnchorKind.GLOBAL)
    if reason is not None:
        raise GlobalConditionFailed(reason)
    reason = _first_failed_condition(pattern, resource, matcher, AnchorKind.CONDITION)
    if reason is not None:
        raise ConditionFailed(reason)


def _first_failed_condition(
    pattern: dict, resource: Any, matcher: PatternMatcher, kind: AnchorKind
) -> str | None:
    for key in list(pattern):
        found = _anchor(key)
        if found is None or found.kind is not kind:
            continue
        actual = _field(resource, found.key)
        if actual is ABSENT:
            return f'could not found "{found.key}" key in the resource'
        expected = pattern.get(_written(found), pattern.get(key))
        if _add_if_not_present(expected, actual) > 0:
            continue
        reason = matcher(_as_document(actual), _as_document(expected))
        if reason is not None:
            return reason
    return None


def _as_document(value: Any) -> Any:
    """convertRNodeToInterface: scalars become their YAML text, maps and lists their JSON value."""
    if isinstance(value, (dict, list)):
        return value
    return scalar_text(value)


def _has_anchors(node: Any, wanted: Callable[[Anchor | None], bool]) -> bool:
    """hasAnchors: a key anywhere below is such an anchor; a scalar *value* counts if it reads as a condition."""
    if isinstance(node, dict):
        for key, value in node.items():
            if wanted(_anchor(key)):
                return True
            if value not in (None, {}, []) and _has_anchors(value, wanted):
                return True
        return False
    if isinstance(node, list):
        return any(_has_anchors(element, wanted) for element in node)
    return _is_condition(_anchor(scalar_text(node)))


def _delete_condition_elements(pattern: dict) -> None:
    for key in list(pattern):
        if _delete_anchors(pattern[key], delete_scalar=_is_condition(_anchor(key)), traverse_maps=False):
            del pattern[key]


def _delete_anchors(node: Any, *, delete_scalar: bool, traverse_maps: bool) -> bool:
    """deleteAnchors: strip condition anchors; True when nothing but anchors (or nothing) was left."""
    if isinstance(node, dict):
        return _delete_anchors_in_map(node, traverse_maps)
    if isinstance(node, list):
        return _delete_anchors_in_list(node, traverse_maps)
    return delete_scalar


def _delete_anchors_in_map(node: dict, traverse_maps: bool) -> bool:
    anchors_left = False
    for key in list(node):
        found = _anchor(key)
        if not _is_condition(found):
            continue
        written = _written(found)
        if written not in node:
            continue
        if _delete_anchors(node[written], delete_scalar=True, traverse_maps=traverse_maps):
            del node[written]
        else:
            anchors_left = True
    if anchors_left:
        for key in list(node):
            found = _anchor(key)
            if _is_condition(found):
                _rename(node, _written(found), found.key)
    empty = True
    for key in list(node):
        if _delete_anchors(node[key], delete_scalar=False, traverse_maps=traverse_maps):
            del node[key]
        else:
            empty = False
    return empty


def _delete_anchors_in_list(node: list, traverse_maps: bool) -> bool:
    elements = list(node)
    was_empty = not elements
    for index, element in enumerate(elements):
        if _has_anchors(element, _is_mutate_anchor):
            delete = True
            if traverse_maps and isinstance(element, dict):
                delete = _delete_anchors(element, delete_scalar=True, traverse_maps=traverse_maps)
        else:
            delete = _delete_anchors(element, delete_scalar=False, traverse_maps=traverse_maps)
        if delete:
            if index >= len(node):
                raise PreprocessError(f"runtime error: slice bounds out of range [{index + 1}:{len(node)}]")
            del node[index]  # Kyverno's index into the list as it was before earlier deletions
    return not node and not was_empty
