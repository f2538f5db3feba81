"""Validating a resource against a Kyverno ``validate.pattern`` or ``validate.anyPattern``.

Kyverno walks the pattern and the resource side by side
(``pkg/engine/validate/validate.go``, ``pkg/engine/anchor/handlers.go``):
maps key by key, a list pattern's first map against every item of the
resource list, scalar leaves through the value operators (`operators`).
Anchors (read by `anchors.parse_anchor`) change what a key means:

* ``(key)`` conditional: if the value does not match, the map it sits in is
  *skipped*, not failed; ``<(key)`` global: a mismatch skips the whole rule;
* ``X(key)`` negation: the key must be absent; ``=(key)`` equality: checked
  only if present; ``^(key)`` existence: some item of the list must match;
* a leaf ``"*"`` on a plain key requires the field to be present (non-null);
* wildcard keys (``"app.kubernetes.io/*"``) are expanded against the
  resource only in ``metadata.labels`` and ``metadata.annotations``, as
  Kyverno's ``wildcards.ExpandInMetadata`` does; elsewhere they are literal.

`match_pattern` returns what Kyverno's ``validate.MatchPattern`` decides:
pass, fail with the failing path (``/spec/containers/0/image/``), skip
(conditional or global anchor not met) or error (Kyverno's ``PatternError``
without a path, which the validate handler reports as a rule error).
`validate_rule` then words the rule result as Kyverno's validate handler
does (``validation error: <message> rule <name> failed at path <path>``),
for ``pattern`` and ``anyPattern``.

Kyverno quirks kept on purpose (each changes results users see):

* anchors of a map are evaluated in sorted key order before plain keys, and
  plain keys holding anchors further down are evaluated first (in reverse
  sorted order), so which error wins is Kyverno's;
* a non-skip error that is not a negation, after an anchor key was missing
  somewhere in the walk, is a rule *error* (``KeysAreMissing``);
* metadata wildcard expansion drops label/annotation pattern entries whose
  value is not a string, and picks one matching resource key (Go picks at
  random among several; here the first in the resource's order);
* an ``anyPattern`` goes through a JSON round trip, so its whole numbers are
  float64 (a string ``"1.0"`` then equals ``1``; in ``pattern`` it does not).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from assertree.languages.kyverno import wildcard
from assertree.languages.kyverno.anchors import Anchor, AnchorKind, parse_anchor
from assertree.languages.kyverno.manifests import copy_json, to_float64
from assertree.languages.kyverno.operators import go_type_name, sprint, validate_value
from assertree.results import Status

__all__ = ["PatternResult", "RuleOutcome", "any_pattern_outcome", "match_pattern", "pattern_outcome", "validate_rule",
           "verdict"]

_CONDITIONAL_MISMATCH = "conditional anchor mismatch"
_GLOBAL_MISMATCH = "global anchor mismatch"
_NEGATION_MATCHED = "negation anchor matched in resource"


@dataclass(frozen=True, slots=True)
class PatternResult:
    """The verdict of one pattern on one resource.

    `status` is PASS, FAIL, SKIP or ERROR. `path` is Kyverno's failure path
    (``/spec/containers/0/image/``; empty unless FAIL). `error` is Kyverno's
    own error text (``resource value 'nginx:latest' does not match '!*:latest'
    at path /spec/containers/0/image/``; for SKIP the anchor mismatch text);
    empty on PASS.
    """

    status: Status
    path: str = ""
    error: str = ""


@dataclass(frozen=True, slots=True)
class RuleOutcome:
    """A validate rule's result on a resource, worded as Kyverno's validate handler words it."""

    status: Status
    message: str
    path: str = ""  # the failing path of a `pattern` rule (empty for anyPattern and non-failures)


# -- errors as Kyverno's engine passes them around ------------------------------------------------


class _Error:
    """A Go ``error`` of the walk: an anchor error (typed), a PatternError, or a plain error."""

    __slots__ = ("anchor", "message", "pattern")

    def __init__(self, message: str, *, anchor: str | None = None, pattern: bool = False) -> None:
        self.message = message
        self.anchor = anchor  # "conditional", "global", "negation" for Kyverno's validateAnchorError
        self.pattern = pattern  # a *PatternError (made by a map or list that skipped)


def _is_skip(error: _Error) -> bool:
    # Kyverno checks the type of an anchor error, and the text of any other error.
    if error.anchor is not None:
        return error.anchor in ("conditional", "global")
    return _CONDITIONAL_MISMATCH in error.message or _GLOBAL_MISMATCH in error.message


def _is_negation(error: _Error) -> bool:
    if error.anchor is not None:
        return error.anchor == "negation"
    return _NEGATION_MATCHED in error.message


def _combined_skip(errors: list[_Error]) -> _Error:
    """A PatternError wrapping `errors` the way ``multierr.Combine`` prints them."""
    return _Error("; ".join(error.message for error in errors), pattern=True)


_Outcome = tuple[str, "_Error | None"]
Message = str | Callable[[], str]
"""A rule's message, or the function that substitutes its variables (called only if the outcome words it)."""
_OK: _Outcome = ("", None)


def _anchor_of(key: str) -> Anchor | None:
    """The anchor of a pattern key, or None; Kyverno trims spaces around the key before reading it."""
    found = parse_anchor(key.strip())
    return found if found.kind is not None else None


def _kind_of(key: str) -> AnchorKind | None:
    found = _anchor_of(key)
    return None if found is None else found.kind


_MAP_ANCHORS = (AnchorKind.CONDITION, AnchorKind.EXISTENCE, AnchorKind.EQUALITY, AnchorKind.NEGATION)
_MISSING_TRACKED = (AnchorKind.CONDITION, AnchorKind.EXISTENCE, AnchorKind.NEGATION)


class _Walk:
    """One run of Kyverno's validateResourceElement over a resource, with its anchor bookkeeping."""

    def __init__(self) -> None:
        # Kyverno's AnchorMap: for each conditional/existence/negation key seen, whether any map had it.
        self.anchor_seen: dict[str, bool] = {}
        # `_has_nested_anchors` of each pattern map and list met, so that each level does not walk its subtree
        # again: by id, with the object kept (its id cannot be reused by a map made later in the walk)
        self.nested_anchors: dict[int, tuple[Any, bool]] = {}

    def keys_are_missing(self) -> bool:
        return any(not seen and _kind_of(key) is not AnchorKind.NEGATION for key, seen in self.anchor_seen.items())

    def _note_anchors(self, pattern: dict, resource: dict) -> None:
        for key in pattern:
            found = _anchor_of(key)
            if found is None or found.kind not in _MISSING_TRACKED:
                continue
            if self.anchor_seen.get(key):
                continue
            self.anchor_seen[key] = found.key in resource

    # -- elements -----------------------------------------------------------------------------

    def element(self, resource: Any, pattern: Any, path: str) -> _Outcome:
        if isinstance(pattern, dict):
            if not isinstance(resource, dict):
                return path, _Error(
                    f"pattern and resource have different structures. Path: {path}. "
                    f"Expected map[string]interface {{}}, found {go_type_name(resource)}"
                )
            self._note_anchors(pattern, resource)
            return self.map(resource, pattern, path)
        if isinstance(pattern, list):
            if not isinstance(resource, list):
                return path, _Error(
                    f"validation rule failed at path {path}, resource does not satisfy the expected overlay pattern"
                )
            return self.array(resource, pattern, path)
        if pattern is None or isinstance(pattern, str | bool | int | float):
            if isinstance(resource, list):
                if not all(validate_value(item, pattern) for item in resource):
                    return path, _mismatch(resource, pattern, path)
                return _OK
            if not validate_value(resource, pattern):
                return path, _mismatch(resource, pattern, path)
            return _OK
        return path, _Error(f"failed at '{path}', pattern contains unknown type")

    def map(self, resource: dict, pattern: dict, path: str) -> _Outcome:
        _expand_metadata_wildcards(pattern, resource)
        anchored = sorted(key for key in pattern if _kind_of(key) in _MAP_ANCHORS)
        ended = settle_anchors((self.handle(key, pattern[key], resource, path) for key in anchored), path)
        if ended is not None:
            return ended
        for key in _plain_key_order([key for key in pattern if _kind_of(key) not in _MAP_ANCHORS], pattern,
                                    self.nested_anchors):
            failed_path, error = self.handle(key, pattern[key], resource, path)
            if error is not None:
                return failed_path, error
        return _OK

    def array(self, resource: list, pattern: list, path: str) -> _Outcome:
        if not pattern:
            return path, _Error("pattern Array empty")
        first = pattern[0]
        if isinstance(first, dict):
            return self._array_of_maps(resource, first, path)
        if first is None or isinstance(first, str | bool | int | float):
            return self.element(resource, first, path)
        if len(resource) < len(pattern):
            return "", _Error(
                f"validate Array failed, array length mismatch, resource Array len is {len(resource)} "
                f"and pattern Array len is {len(pattern)}"
            )
        return self._items(resource, pattern, path)

    def _items(self, resource: list, pattern: list, path: str) -> _Outcome:
        """Lists of lists: item i of the pattern against item i of the resource."""
        return self._each(zip(resource, pattern, strict=False), path)

    def _array_of_maps(self, resource: list, pattern: dict, path: str) -> _Outcome:
        """The map pattern against every item; items where a conditional anchor fails are skipped."""
        return self._each(((item, pattern) for item in resource), path)

    def _each(self, pairs: Iterable[tuple[Any, Any]], path: str) -> _Outcome:
        """Validate (resource item, pattern) pairs; skip the list only when every item skipped."""
        return settle_items((self.element(item, item_pattern, f"{path}{index}/")
                             for index, (item, item_pattern) in enumerate(pairs)), path)

    # -- one key of a map pattern (Kyverno's element handlers) ----------------------------------

    def handle(self, key: str, pattern: Any, resource: dict, path: str) -> _Outcome:
        found = _anchor_of(key)
        kind = None if found is None else found.kind
        if found is None or kind is AnchorKind.ADD_IF_NOT_PRESENT:
            return self._plain(key, pattern, resource, path)
        name = found.key
        here = f"{path}{name}/"
        present = name in resource
        if kind is AnchorKind.NEGATION:
            if present:
                return here, _Error(f"{_NEGATION_MATCHED}: {here} is not allowed", anchor="negation")
            return _OK
        if kind is AnchorKind.EQUALITY:
            if not present:
                return _OK
            failed_path, error = self.element(resource[name], pattern, here)
            return (failed_path, error) if error is not None else _OK
        if kind is AnchorKind.CONDITION:
            if not present:
                return here, _Error(
                    f"{_CONDITIONAL_MISMATCH}: conditional anchor key doesn't exist in the resource",
                    anchor="conditional",
                )
            failed_path, error = self.element(resource[name], pattern, here)
            if error is not None:
                return failed_path, _Error(f"{_CONDITIONAL_MISMATCH}: {error.message}", anchor="conditional")
            return _OK
        if kind is AnchorKind.GLOBAL:
            if not present:
                return _OK
            failed_path, error = self.element(resource[name], pattern, here)
            if error is not None:
                return failed_path, _Error(f"{_GLOBAL_MISMATCH}: {error.message}", anchor="global")
            return _OK
        return self._existence(name, pattern, resource, here)

    def _plain(self, key: str, pattern: Any, resource: dict, path: str) -> _Outcome:
        value = resource.get(key)
        if isinstance(pattern, str) and pattern == "*":
            if value is not None:
                return _OK
            return path, _Error(f"{path}/{key} not found")
        failed_path, error = self.element(value, pattern, f"{path}{key}/")
        return (failed_path, error) if error is not None else _OK

    def _existence(self, name: str, pattern: Any, resource: dict, here: str) -> _Outcome:
        if name not in resource:
            return _OK
        value = resource[name]
        wrong = existence_type_error(value, pattern)
        if wrong is not None:
            return here, wrong
        outcome = _OK
        for item_pattern in pattern:
            if not isinstance(item_pattern, dict):
                return here, _Error(
                    f"invalid pattern type {go_type_name(pattern)}: Pattern has to be of type map to compare "
                    "against items in resource"
                )
            outcome = self._some_item_matches(value, item_pattern, here)
            if outcome[1] is not None:
                return outcome
        return outcome

    def _some_item_matches(self, items: list, pattern: dict, path: str) -> _Outcome:
        for index, item in enumerate(items):
            if self.element(item, pattern, f"{path}{index}/")[1] is None:
                return _OK
        return path, _Error(f"existence anchor validation failed at path {path}")


def settle_anchors(outcomes: Iterable[_Outcome], path: str) -> _Outcome | None:
    """Kyverno's reading of a map's anchored keys, walked in order: the first error that is not a skip
    ends the map (unless a conditional anchor already skipped it), and skips end it as a skip when no
    key applied or one of them is an anchor's own; None when the plain keys are to be walked next."""
    skips: list[_Error] = []
    applied = 0
    for failed_path, error in outcomes:
        if error is not None:
            if _is_skip(error):
                skips.append(error)
                continue
            if not any(not skip.pattern for skip in skips):
                return failed_path, error
            continue  # a sibling conditional anchor already decided this map is skipped
        applied += 1
    if skips and (applied == 0 or any(not skip.pattern for skip in skips)):
        return path, _combined_skip(skips)
    return None


def settle_items(outcomes: Iterable[_Outcome], path: str) -> _Outcome:
    """Kyverno's reading of a list's items, walked in order: the first error that is not a skip fails
    the list, which skips only when every item skipped."""
    skips: list[_Error] = []
    applied = 0
    for failed_path, error in outcomes:
        if error is not None:
            if _is_skip(error):
                skips.append(error)
                continue
            return failed_path, error
        applied += 1
    if applied == 0 and skips:
        return path, _combined_skip(skips)
    return _OK


def existence_type_error(value: Any, pattern: Any) -> _Error | None:
    """Why an existence anchor cannot compare the resource's `value` with its `pattern`: both must be lists."""
    if not isinstance(value, list):
        return _Error(f"invalid resource type {go_type_name(value)}: Existence ^ () anchor can be used only on "
                      "list/array type resource")
    if not isinstance(pattern, list):
        return _Error(
            f"invalid pattern type {go_type_name(pattern)}: Pattern has to be of list to compare against resource")
    return None


def _mismatch(resource: Any, pattern: Any, path: str) -> _Error:
    return _Error(f"resource value '{sprint(resource)}' does not match '{sprint(pattern)}' at path {path}")


def _has_nested_anchors(pattern: Any, memo: dict[int, tuple[Any, bool]]) -> bool:
    """Kyverno's ``hasNestedAnchors``, remembered per map and list in `memo` (Kyverno asks it again at every
    level of the walk: a pattern 1,000 levels deep took seconds, a wide one under it far longer). Wildcard
    expansion (`_expand_metadata_wildcards`) keeps every key anchored or not, so an answer stays true."""
    if not isinstance(pattern, dict | list):
        return False
    known = memo.get(id(pattern))
    if known is not None:
        return known[1]
    if isinstance(pattern, dict):
        found = any(_anchor_of(key) is not None and _kind_of(key) is not AnchorKind.ADD_IF_NOT_PRESENT
                    for key in pattern) or any(_has_nested_anchors(value, memo) for value in pattern.values())
    else:
        found = any(_has_nested_anchors(value, memo) for value in pattern)
    memo[id(pattern)] = (pattern, found)
    return found


def _plain_key_order(keys: list[str], pattern: dict, memo: dict[int, tuple[Any, bool]]) -> list[str]:
    """Kyverno's ``getSortedNestedAnchorResource``: keys with anchors below them first (pushed to the front)."""
    front: list[str] = []
    back: list[str] = []
    for key in sorted(keys):
        if _kind_of(key) is AnchorKind.GLOBAL or _has_nested_anchors(pattern[key], memo):
            front.insert(0, key)
        else:
            back.append(key)
    return front + back


# -- wildcard keys in metadata.labels / metadata.annotations --------------------------------------


def _lookup(tag: str, data: dict) -> tuple[str, Any]:
    """Kyverno's ``getPatternValue``: the entry whose key is `tag`, plainly or inside an anchor."""
    for key, value in data.items():
        if key == tag:
            return key, value
        found = _anchor_of(key)
        if found is not None and found.key == tag:
            return key, value
    return "", None


def _string_entries(tag: str, data: Any) -> tuple[str, dict[str, str] | None]:
    if not isinstance(data, dict):
        return "", None
    key, value = _lookup(tag, data)
    if not isinstance(value, dict):
        return "", None
    return key, {name: text for name, text in value.items() if isinstance(text, str)}


def _expand_metadata_wildcards(pattern: dict, resource: dict) -> None:
    """Kyverno's ``ExpandInMetadata``: rewrite wildcard label/annotation keys of `pattern` (in place)."""
    _, pattern_metadata = _lookup("metadata", pattern)
    resource_metadata = resource.get("metadata")
    if not isinstance(pattern_metadata, dict) or resource_metadata is None:
        return
    for tag in ("labels", "annotations"):
        pattern_key, entries = _string_entries(tag, pattern_metadata)
        if entries is None:
            continue
        _, resource_entries = _string_entries(tag, resource_metadata)
        if resource_entries is None:
            continue
        pattern_metadata[pattern_key] = _expand_keys(entries, resource_entries)


def _expand_keys(entries: dict[str, str], resource_entries: dict[str, str]) -> dict[str, Any]:
    expanded: dict[str, Any] = {}
    for key, value in entries.items():
        if not wildcard.contains_wildcard(key):
            expanded[key] = value
            continue
        found = _anchor_of(key)
        kind = None if found is None else found.kind
        name = key if found is None else found.key
        name = wildcard.first_match(name, resource_entries) or name
        expanded[name if kind is None else f"{kind.value[:-2]}({name})"] = value
    return expanded


# -- entry points ----------------------------------------------------------------------------------


def match_pattern(resource: Any, pattern: Any) -> PatternResult:
    """Validate `resource` against one pattern, as Kyverno's ``validate.MatchPattern``.

    The pattern is not modified (Kyverno rewrites wildcard metadata keys in
    its own copy; so does this). Both arguments are decoded JSON.
    """
    walk = _Walk()
    failed_path, error = walk.element(resource, copy_json(pattern), "/")
    return verdict(walk, failed_path, error)


def verdict(walk: _Walk, failed_path: str, error: _Error | None) -> PatternResult:
    """What a finished walk decided: Kyverno's reading of the error the root element returned."""
    if error is None:
        return PatternResult(Status.PASS)
    if _is_skip(error):
        return PatternResult(Status.SKIP, "", error.message)
    if not _is_negation(error) and walk.keys_are_missing():
        return PatternResult(Status.ERROR, "", error.message)
    if not failed_path:
        return PatternResult(Status.ERROR, "", error.message)
    return PatternResult(Status.FAIL, failed_path, error.message)


def _error_message(rule: str, message: str, error: str, path: str) -> str:
    """Kyverno's ``buildErrorMessage`` for a `pattern` rule."""
    if not message:
        if path:
            return f"validation error: rule {rule} failed at path {path}"
        return f"validation error: rule {rule} execution error: {error}"
    if not message.endswith("."):
        message += "."
    if path:
        return f"validation error: {message} rule {rule} failed at path {path}"
    return f"validation error: {message} rule {rule} execution error: {error}"


def _any_pattern_message(message: str, errors: list[str]) -> str:
    """Kyverno's ``buildAnyPatternErrorMessage``."""
    joined = " ".join(errors)
    if not message:
        return f"validation error: {joined}"
    if message.endswith("."):
        return f"validation error: {message} {joined}"
    return f"validation error: {message}. {joined}"


def validate_rule(
    resource: Any,
    rule: str,
    *,
    pattern: Any = None,
    any_pattern: Any = None,
    message: Message = "",
) -> RuleOutcome:
    """The result of a validate rule with `pattern` or `any_pattern` on `resource`, as Kyverno reports it.

    `rule` is the rule name and `message` its ``validate.message`` with
    variables already substituted (empty when absent), or a function that
    substitutes them, called only when the outcome words the message. Patterns must already
    be variable-substituted too. `pattern` wins when both are given, as in
    Kyverno. ``anyPattern`` passes on the first pattern that passes, skips
    when every pattern skipped, and otherwise fails listing each failure.
    """
    if pattern is not None:
        return pattern_outcome(match_pattern(resource, pattern), rule, message)
    if any_pattern is None:
        return RuleOutcome(Status.PASS, _text(message))
    if not isinstance(any_pattern, list):
        return RuleOutcome(Status.ERROR, "failed to deserialize anyPattern, expected type array")
    # Go's JSON round trip: float64 numbers
    return any_pattern_outcome((match_pattern(resource, candidate) for candidate in to_float64(any_pattern)),
                               rule, message)


def _text(message: Message) -> str:
    return message() if callable(message) else message


def pattern_outcome(result: PatternResult, rule: str, message: Message) -> RuleOutcome:
    """A `pattern` rule's outcome from its pattern's result."""
    if result.status is Status.PASS:
        return RuleOutcome(Status.PASS, f"validation rule '{rule}' passed.")
    if result.status is Status.SKIP:
        return RuleOutcome(Status.SKIP, result.error)
    text = _error_message(rule, _text(message), result.error, result.path)
    return RuleOutcome(result.status, text, result.path)


def any_pattern_outcome(results: Iterable[PatternResult], rule: str, message: Message) -> RuleOutcome:
    """An `anyPattern` rule's outcome from its patterns' results, in order (read up to the first pass)."""
    failures: list[str] = []
    skips: list[str] = []
    for index, result in enumerate(results):
        if result.status is Status.PASS:
            return RuleOutcome(Status.PASS, f"validation rule '{rule}' anyPattern[{index}] passed.")
        if result.status is Status.SKIP:
            skips.append(f"rule {rule}[{index}] skipped: {result.error}")
        elif result.path:
            failures.append(f"rule {rule}[{index}] failed at path {result.path}")
        else:
            failures.append(f"rule {rule}[{index}] failed: {result.error}")
    if skips and not failures:
        return RuleOutcome(Status.SKIP, " ".join(skips))
    if failures:
        return RuleOutcome(Status.FAIL, _any_pattern_message(_text(message), failures))
    return RuleOutcome(Status.PASS, _text(message))
