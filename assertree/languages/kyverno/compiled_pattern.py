"""Kyverno patterns compiled to closures once per rule: the fast path beside the interpreter in `pattern`.

`pattern.match_pattern` copies the pattern for every resource (wildcard
metadata keys are rewritten in the copy), then walks it: per map it parses
every key's anchor, sorts the keys, asks which hold anchors further down, and
per string leaf it splits the operator language (``>= 1Gi | 0``) and parses
its operands again. Here all of that is done once: each map, list and leaf of
the pattern becomes a closure holding its keys in Kyverno's order, each key's
handler and each leaf's parsed operands, and a resource is then walked without
copying anything.

Invariant (must never change a result): for every pattern `compile_pattern`
accepts and every resource, ``compile_pattern(p).match(r)`` equals
``match_pattern(r, p)`` (status, path and Kyverno's error text), and
`CompiledPatterns.validate` words the rule's outcome exactly as
`pattern.validate_rule`. It holds because the closures make the interpreter's
decisions in the interpreter's order, and the one thing they leave out, the
per-resource rewrite of wildcard keys under ``metadata.labels`` and
``metadata.annotations``, is a no-op for the patterns accepted: those whose
label and annotation maps hold only string values under keys without ``*``
or ``?`` (the rewrite keeps such a map as it is; any other pattern is refused
here and goes to the interpreter). `tests/kyverno/test_compiled_pattern.py`
holds the two to each other on every pattern rule of the conformance data and
on random patterns (anchors, wildcards, operators) and resources.

A pattern that still holds variables is substituted per resource, so it cannot
be compiled once; the caller keeps the interpreter for it (`evaluate`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from assertree.languages.kyverno.anchors import AnchorKind
from assertree.languages.kyverno.manifests import to_float64
from assertree.languages.kyverno.operators import (
    _ORDERINGS,
    IN_RANGE,
    NOT_IN_RANGE,
    Operator,
    _compare_text,
    _number_text,
    compare_quantities,
    go_type_name,
    operator_of,
    parse_duration_text,
    parse_quantity,
    validate_value,
)
from assertree.languages.kyverno.pattern import (
    _CONDITIONAL_MISMATCH,
    _GLOBAL_MISMATCH,
    _MAP_ANCHORS,
    _MISSING_TRACKED,
    _NEGATION_MATCHED,
    _OK,
    Message,
    PatternResult,
    RuleOutcome,
    _anchor_of,
    _Error,
    _kind_of,
    _mismatch,
    _Outcome,
    _plain_key_order,
    _Walk,
    any_pattern_outcome,
    existence_type_error,
    pattern_outcome,
    settle_anchors,
    settle_items,
    verdict,
)
from assertree.languages.kyverno.wildcard import contains_wildcard

__all__ = ["CompiledPattern", "CompiledPatterns", "compile_pattern", "compile_patterns"]

Element = Callable[[Any, str, _Walk], _Outcome]
"""``element(resource, path, walk)``: `pattern._Walk.element` for one part of the pattern."""
Leaf = Callable[[Any], bool]
"""``leaf(value)``: `operators.validate_value` for one pattern leaf."""


class CompiledPattern:
    """One pattern, compiled: `match` is `pattern.match_pattern` on it."""

    __slots__ = ("_root",)

    def __init__(self, root: Element) -> None:
        self._root = root

    def match(self, resource: Any) -> PatternResult:
        walk = _Walk()
        failed_path, error = self._root(resource, "/", walk)
        return verdict(walk, failed_path, error)


class CompiledPatterns:
    """A rule's ``pattern`` or ``anyPattern``, compiled: `validate` is `pattern.validate_rule` on it."""

    __slots__ = ("_any", "_patterns")

    def __init__(self, patterns: list[CompiledPattern], *, any_pattern: bool) -> None:
        self._patterns = patterns
        self._any = any_pattern

    def validate(self, resource: Any, rule: str, message: Message) -> RuleOutcome:
        if not self._any:
            return pattern_outcome(self._patterns[0].match(resource), rule, message)
        return any_pattern_outcome((pattern.match(resource) for pattern in self._patterns), rule, message)


def compile_patterns(pattern: Any, any_pattern: Any) -> CompiledPatterns | None:
    """A rule's (variable-free) ``pattern``/``anyPattern`` compiled, or None when one of them cannot be
    (see the module docstring), or when there is nothing to compile (no pattern, an anyPattern that is
    not a list: `validate_rule` words those without walking anything)."""
    if pattern is not None:
        compiled = compile_pattern(pattern)
        return None if compiled is None else CompiledPatterns([compiled], any_pattern=False)
    if not isinstance(any_pattern, list) or not any_pattern:
        return None
    candidates = [compile_pattern(candidate) for candidate in to_float64(any_pattern)]  # as validate_rule reads them
    if any(candidate is None for candidate in candidates):
        return None
    return CompiledPatterns(candidates, any_pattern=True)  # type: ignore[arg-type]


def compile_pattern(pattern: Any) -> CompiledPattern | None:
    """`pattern` compiled, or None when the interpreter must walk it (wildcard metadata keys to rewrite)."""
    if _rewrites_metadata(pattern):
        return None
    return CompiledPattern(_element(pattern))


# -- which patterns the per-resource rewrite could change ---------------------------------------------------


def _names(key: str, tag: str) -> bool:
    """Whether the pattern key is `tag`, plainly or inside an anchor (as `pattern._lookup` finds it)."""
    if key == tag:
        return True
    found = _anchor_of(key)
    return found is not None and found.key == tag


def _rewrites_metadata(pattern: Any) -> bool:
    """Whether `pattern._expand_metadata_wildcards` could change some map of `pattern` for some resource: a
    label or annotation map under a metadata key with a wildcard key or a value that is not a string."""
    pending = [pattern]
    while pending:
        item = pending.pop()
        if isinstance(item, list):
            pending.extend(item)
            continue
        if not isinstance(item, dict):
            continue
        pending.extend(item.values())
        for key, metadata in item.items():
            if not (isinstance(metadata, dict) and _names(key, "metadata")):
                continue
            for tag, entries in metadata.items():
                if isinstance(entries, dict) and (_names(tag, "labels") or _names(tag, "annotations")) and any(
                        not isinstance(value, str) or contains_wildcard(name) for name, value in entries.items()):
                    return True
    return False


# -- elements ------------------------------------------------------------------------------------------------


def _element(pattern: Any) -> Element:
    """`_Walk.element` for `pattern`."""
    if isinstance(pattern, dict):
        return _map(pattern)
    if isinstance(pattern, list):
        return _array(pattern)
    if pattern is None or isinstance(pattern, str | bool | int | float):
        return _scalar(pattern)

    def unknown(resource: Any, path: str, walk: _Walk) -> _Outcome:
        return path, _Error(f"failed at '{path}', pattern contains unknown type")

    return unknown


def _scalar(pattern: Any) -> Element:
    leaf = _leaf(pattern)

    def scalar(resource: Any, path: str, walk: _Walk) -> _Outcome:
        if isinstance(resource, list):
            for item in resource:
                if not leaf(item):
                    return path, _mismatch(resource, pattern, path)
            return _OK
        if not leaf(resource):
            return path, _mismatch(resource, pattern, path)
        return _OK

    return scalar


def _map(pattern: dict) -> Element:
    """`_Walk.element` then `_Walk.map` for a map pattern: anchors noted, anchored keys, then plain keys."""
    tracked = [(key, found.key) for key in pattern
               if (found := _anchor_of(key)) is not None and found.kind in _MISSING_TRACKED]
    anchored = [_handler(key, pattern[key]) for key in sorted(key for key in pattern if _kind_of(key) in _MAP_ANCHORS)]
    plain = [_handler(key, pattern[key]) for key in _plain_key_order(
        [key for key in pattern if _kind_of(key) not in _MAP_ANCHORS], pattern, {})]

    def element(resource: Any, path: str, walk: _Walk) -> _Outcome:
        if not isinstance(resource, dict):
            return path, _Error(
                f"pattern and resource have different structures. Path: {path}. "
                f"Expected map[string]interface {{}}, found {go_type_name(resource)}"
            )
        if tracked:
            seen = walk.anchor_seen
            for key, name in tracked:
                if not seen.get(key):
                    seen[key] = name in resource
        if anchored:
            ended = settle_anchors((handle(resource, path, walk) for handle in anchored), path)
            if ended is not None:
                return ended
        for handle in plain:
            failed_path, error = handle(resource, path, walk)
            if error is not None:
                return failed_path, error
        return _OK

    return element


def _array(pattern: list) -> Element:
    """`_Walk.element` then `_Walk.array` for a list pattern."""
    if not pattern:
        def empty(resource: Any, path: str, walk: _Walk) -> _Outcome:
            return _not_a_list(resource, path) or (path, _Error("pattern Array empty"))

        return empty
    first = pattern[0]
    if isinstance(first, dict):
        item = _element(first)
        return _each(lambda resource: ((value, item) for value in resource))
    if first is None or isinstance(first, str | bool | int | float):
        scalar = _scalar(first)

        def scalars(resource: Any, path: str, walk: _Walk) -> _Outcome:
            return _not_a_list(resource, path) or scalar(resource, path, walk)

        return scalars
    items = [_element(item) for item in pattern]
    each = _each(lambda resource: zip(resource, items, strict=False))
    count = len(pattern)

    def lists(resource: Any, path: str, walk: _Walk) -> _Outcome:
        if isinstance(resource, list) and len(resource) < count:
            return "", _Error(
                f"validate Array failed, array length mismatch, resource Array len is {len(resource)} "
                f"and pattern Array len is {count}"
            )
        return each(resource, path, walk)

    return lists


def _not_a_list(resource: Any, path: str) -> _Outcome | None:
    if isinstance(resource, list):
        return None
    return path, _Error(
        f"validation rule failed at path {path}, resource does not satisfy the expected overlay pattern")


def _each(pairs: Callable[[list], Any]) -> Element:
    """`_Walk._each`: (resource item, compiled item pattern) pairs; the list skips only when every item did."""

    def each(resource: Any, path: str, walk: _Walk) -> _Outcome:
        if (wrong := _not_a_list(resource, path)) is not None:
            return wrong
        outcomes = (item(value, f"{path}{index}/", walk) for index, (value, item) in enumerate(pairs(resource)))
        return settle_items(outcomes, path)

    return each


# -- one key of a map pattern ----------------------------------------------------------------------------------

Handler = Callable[[dict, str, _Walk], _Outcome]
"""``handler(resource, path, walk)``: `_Walk.handle` for one key of a map pattern."""


def _handler(key: str, pattern: Any) -> Handler:
    found = _anchor_of(key)
    kind = None if found is None else found.kind
    if found is None or kind is AnchorKind.ADD_IF_NOT_PRESENT:
        return _plain(key, pattern)
    name = found.key
    suffix = f"{name}/"
    if kind is AnchorKind.NEGATION:
        def negation(resource: dict, path: str, walk: _Walk) -> _Outcome:
            if name in resource:
                here = path + suffix
                return here, _Error(f"{_NEGATION_MATCHED}: {here} is not allowed", anchor="negation")
            return _OK

        return negation
    if kind is AnchorKind.EXISTENCE:
        return _existence(name, pattern)
    element = _element(pattern)
    if kind is AnchorKind.EQUALITY:
        def equality(resource: dict, path: str, walk: _Walk) -> _Outcome:
            if name not in resource:
                return _OK
            failed_path, error = element(resource[name], path + suffix, walk)
            return (failed_path, error) if error is not None else _OK

        return equality
    if kind is AnchorKind.CONDITION:
        def condition(resource: dict, path: str, walk: _Walk) -> _Outcome:
            here = path + suffix
            if name not in resource:
                return here, _Error(
                    f"{_CONDITIONAL_MISMATCH}: conditional anchor key doesn't exist in the resource",
                    anchor="conditional",
                )
            failed_path, error = element(resource[name], here, walk)
            if error is not None:
                return failed_path, _Error(f"{_CONDITIONAL_MISMATCH}: {error.message}", anchor="conditional")
            return _OK

        return condition

    def global_(resource: dict, path: str, walk: _Walk) -> _Outcome:  # GLOBAL: the anchors left
        if name not in resource:
            return _OK
        failed_path, error = element(resource[name], path + suffix, walk)
        if error is not None:
            return failed_path, _Error(f"{_GLOBAL_MISMATCH}: {error.message}", anchor="global")
        return _OK

    return global_


def _plain(key: str, pattern: Any) -> Handler:
    if isinstance(pattern, str) and pattern == "*":
        def present(resource: dict, path: str, walk: _Walk) -> _Outcome:
            if resource.get(key) is not None:
                return _OK
            return path, _Error(f"{path}/{key} not found")

        return present
    element = _element(pattern)
    suffix = f"{key}/"

    def plain(resource: dict, path: str, walk: _Walk) -> _Outcome:
        failed_path, error = element(resource.get(key), path + suffix, walk)
        return (failed_path, error) if error is not None else _OK

    return plain


def _existence(name: str, pattern: Any) -> Handler:
    """`_Walk._existence`: some item of the resource list matches each map of the pattern list."""
    suffix = f"{name}/"
    items = [_element(item) if isinstance(item, dict) else None for item in pattern] \
        if isinstance(pattern, list) else []

    def existence(resource: dict, path: str, walk: _Walk) -> _Outcome:
        if name not in resource:
            return _OK
        here = path + suffix
        value = resource[name]
        wrong = existence_type_error(value, pattern)
        if wrong is not None:
            return here, wrong
        for item in items:
            if item is None:
                return here, _Error(
                    f"invalid pattern type {go_type_name(pattern)}: Pattern has to be of type map to compare "
                    "against items in resource"
                )
            if not any(item(entry, f"{here}{index}/", walk)[1] is None for index, entry in enumerate(value)):
                return here, _Error(f"existence anchor validation failed at path {here}")
        return _OK

    return existence


# -- leaves ----------------------------------------------------------------------------------------------------


def _leaf(pattern: Any) -> Leaf:
    """`operators.validate_value` with `pattern` read once (a string leaf's operator language above all)."""
    if type(pattern) is bool:
        return lambda value: type(value) is bool and value is pattern
    if not isinstance(pattern, str):
        return lambda value: validate_value(value, pattern)
    alternatives = [[_part(part.strip(" ")) for part in alternative.strip(" ").split("&")]
                    for alternative in pattern.split("|")]

    def leaf(value: Any) -> bool:
        if isinstance(value, str) and value == pattern:
            return True
        return any(all(part(value) for part in parts) for parts in alternatives)

    return leaf


def _part(pattern: str) -> Leaf:
    """`operators._validate_string_pattern` for one part of a string leaf, its operand parsed once."""
    operator = operator_of(pattern)
    if operator is Operator.IN_RANGE or operator is Operator.NOT_IN_RANGE:
        found = (IN_RANGE if operator is Operator.IN_RANGE else NOT_IN_RANGE).match(pattern)
        if found is None:
            return lambda value: False
        if operator is Operator.IN_RANGE:
            low, high = _part(f">= {found.group(1)}"), _part(f"<= {found.group(2)}")
            return lambda value: low(value) and high(value)
        below, above = _part(f"< {found.group(1)}"), _part(f"> {found.group(2)}")
        return lambda value: below(value) or above(value)
    operand = pattern[len(operator.value):].strip()
    ordering = _ORDERINGS[operator]
    duration = parse_duration_text(operand)
    quantity = parse_quantity(operand)

    def part(value: Any) -> bool:
        if duration is not None:
            text = _number_text(value)
            actual = None if text is None else parse_duration_text(text)
            if actual is not None:
                return ordering((actual > duration) - (actual < duration))
        if quantity is not None:
            text = _number_text(value)
            measured = None if text is None else parse_quantity(text)
            if measured is not None:
                return ordering(compare_quantities(measured, quantity))
        return _compare_text(value, operand, operator)

    return part

