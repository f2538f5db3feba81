"""Kyverno's conditions: the ``key``/``operator``/``value`` tests of preconditions and deny rules.

Two layers, as in Kyverno (``pkg/engine/variables/operator/*.go`` and
``pkg/engine/variables/evaluate.go``):

* `evaluate_operator` compares one already-substituted key with one value.
  Each operator keeps Kyverno's type rules, which users see: ``Equals``
  compares a string key as a duration, then a quantity, then with the
  *value* as a wildcard pattern; numbers compare with numeric strings;
  ``GreaterThan`` and friends try durations, quantities, numbers, then
  semantic versions; set operators (``AnyIn`` ...) print every item with
  Go's ``fmt.Sprint``, match wildcards both ways, accept a JSON array
  written as a string and a range ``"1-10"``; the deprecated ``In`` and
  ``NotIn`` compare exactly. Operator names are matched case-insensitively
  but the ordering operators only order under their exact spelling, as in
  Kyverno (``greaterthan`` is accepted and is always false).
* `evaluate_conditions` evaluates a block: ``{any: [...], all: [...]}`` (both
  must hold; an ``any`` that is present but empty is false) or the legacy
  plain list (all must hold). It short-circuits like Kyverno, so only the
  conditions Kyverno would evaluate are substituted: the caller passes
  `resolve`, called on each condition's raw key and value just before use; an
  exception it raises becomes the block's `ConditionError`, as Kyverno turns a
  substitution failure into a rule error.

Values are decoded JSON with Kyverno's number typing in mind: a top-level
number is a float64 (Kyverno round-trips scalar keys and values through JSON,
and JMESPath results are float64); inside lists and maps a Python ``int`` is
an int64 and a ``float`` a float64, which matters only for ``Equals`` on whole
lists and maps (Go's ``reflect.DeepEqual`` tells ``1`` from ``1.0``). A
resolver that mirrors Kyverno returns JMESPath results with float numbers.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from assertree.jp.functions.conversions import INT64_MIN
from assertree.jp.functions.duration import SECOND, duration_seconds
from assertree.jp.functions.semver import compare as compare_versions
from assertree.jp.functions.semver import parse_version
from assertree.languages.kyverno import wildcard
from assertree.languages.kyverno.operators import (
    Operator,
    compare_quantities,
    go_type_name,
    is_go_float,
    is_go_int,
    operator_of,
    parse_duration_text,
    parse_float,
    parse_int,
    parse_quantity,
    sprint,
    validate_value,
)

__all__ = [
    "OPERATORS",
    "Condition",
    "ConditionBlock",
    "ConditionError",
    "ConditionsResult",
    "Resolver",
    "evaluate_condition",
    "evaluate_conditions",
    "evaluate_operator",
    "is_known_operator",
    "parse_conditions",
]

Resolver = Callable[[Any], Any]
"""Substitutes variables in a raw condition key or value; raises to report an unresolvable variable."""

Observer = Callable[["Condition", bool, "ConditionError | None"], None]
"""Told of each condition evaluated, in order, with its outcome (--explain records them)."""


@dataclass(frozen=True, slots=True)
class Condition:
    """One condition as written in the policy (key and value not yet substituted)."""

    key: Any
    operator: str
    value: Any = None
    message: str = ""

    @classmethod
    def from_raw(cls, raw: Any) -> Condition:
        """A condition from its decoded YAML/JSON map; missing fields read as Kyverno's zero values."""
        if not isinstance(raw, dict):
            raise TypeError(f"a condition must be a map, not {type(raw).__name__}")
        message = "" if raw.get("message") is None else str(raw["message"])
        return cls(raw.get("key"), str(raw.get("operator") or ""), raw.get("value"), message)


@dataclass(frozen=True, slots=True)
class ConditionError:
    """Why a block could not be evaluated: Kyverno's error text, the condition, and the resolver's exception."""

    message: str
    condition: Condition | None = None
    cause: BaseException | None = None


@dataclass(frozen=True, slots=True)
class ConditionsResult:
    """The outcome of a condition block.

    `passed` is the block's truth (for deny rules: True means *deny*).
    `message` is Kyverno's: the non-empty messages of the conditions that
    decided the result (the true ones when passed, the false ones
    otherwise), joined as Kyverno joins them. `reasons` are those conditions;
    `failed` is the condition that made the block false: the failing ``all``
    condition, else the first ``any`` condition (None when passed). With an
    `error`, `passed` is False and the rest is empty.
    """

    passed: bool
    message: str = ""
    reasons: tuple[Condition, ...] = ()
    failed: Condition | None = None
    error: ConditionError | None = None


# -- Go helpers --------------------------------------------------------------------------------------


class _Panic(Exception):
    """Kyverno's Go code would panic here (a failed type assertion)."""


def _top_level(value: Any) -> Any:
    """A top-level key or value as Kyverno sees it: JSON round-tripped, so every number is a float64."""
    if type(value) is int:
        return float(value)
    return value


def _go_equal(left: Any, right: Any) -> bool:
    """Go's ``reflect.DeepEqual`` on decoded JSON: int64 and float64 never equal each other."""
    if type(left) is bool or type(right) is bool:
        return type(left) is type(right) and left == right
    if is_go_int(left) or is_go_int(right):
        return is_go_int(left) and is_go_int(right) and left == right
    if is_go_float(left) or is_go_float(right):
        return is_go_float(left) and is_go_float(right) and float(left) == float(right)
    if isinstance(left, dict) and isinstance(right, dict):
        return left.keys() == right.keys() and all(_go_equal(left[key], right[key]) for key in left)
    if isinstance(left, list) and isinstance(right, list):
        return len(left) == len(right) and all(_go_equal(a, b) for a, b in zip(left, right, strict=True))
    return type(left) is type(right) and left == right


def _seconds_duration(number: float | int) -> int:
    """Go's ``time.Duration(n) * time.Second``: truncated to whole seconds, wrapping like int64."""
    if isinstance(number, float) and not (math.isfinite(number) and INT64_MIN <= number < 2.0**63):
        whole = INT64_MIN  # Go's float-to-int conversion out of range, as amd64 does it
    else:
        whole = int(number)
    nanos = whole * SECOND
    return ((nanos + (1 << 63)) % (1 << 64)) - (1 << 63)


def _durations(key: Any, value: Any) -> tuple[int, int] | None:
    """Kyverno's ``parseDuration``: both sides as durations when at least one is a duration string."""
    key_duration = parse_duration_text(key) if isinstance(key, str) and key != "0" else None
    value_duration = parse_duration_text(value) if isinstance(value, str) and value != "0" else None
    if key_duration is None and value_duration is None:
        return None
    if key_duration is None:
        if not (is_go_int(key) or is_go_float(key)):
            return None
        key_duration = _seconds_duration(key)
    if value_duration is None:
        if not (is_go_int(value) or is_go_float(value)):
            return None
        value_duration = _seconds_duration(value)
    return key_duration, value_duration


def _is_number(value: Any) -> bool:
    return is_go_int(value) or is_go_float(value)


# -- Equals / NotEquals ------------------------------------------------------------------------------


def _equals(key: Any, value: Any) -> bool:
    if type(key) is bool:
        return type(value) is bool and key == value
    if _is_number(key):
        return _number_equals(float(key), value)
    if isinstance(key, str):
        return _string_equals(key, value)
    if isinstance(key, dict):
        return isinstance(value, dict) and _go_equal(key, value)
    if isinstance(key, list):
        return isinstance(value, list) and _go_equal(key, value)
    return False


def _number_equals(key: float, value: Any) -> bool:
    if is_go_int(value):
        return key.is_integer() and int(key) == value
    if is_go_float(value):
        return float(value) == key
    if isinstance(value, str):
        parsed = parse_float(value)
        return parsed is not None and parsed == key
    return False


def _number_not_equals(key: float, value: Any) -> bool:
    """Not simply the negation of `_number_equals`: Kyverno answers true wherever it cannot compare."""
    if is_go_int(value):
        return not key.is_integer() or int(key) != value
    if is_go_float(value):
        return float(value) != key
    if isinstance(value, str):
        parsed = parse_float(value)
        return parsed is None or parsed != key
    return True


def _string_equals(key: str, value: Any) -> bool:
    durations = _durations(key, value)
    if durations is not None:
        return duration_seconds(durations[0]) == duration_seconds(durations[1])
    quantity = parse_quantity(key)
    if quantity is not None and isinstance(value, str):
        other = parse_quantity(value)
        return other is not None and compare_quantities(quantity, other) == 0
    if isinstance(value, str):
        return wildcard.match(value, key)
    return False


def _not_equals(key: Any, value: Any) -> bool:
    if type(key) is bool:
        return type(value) is not bool or key != value
    if _is_number(key):
        return _number_not_equals(float(key), value)
    if isinstance(key, str):
        return _string_not_equals(key, value)
    if isinstance(key, dict):
        return not isinstance(value, dict) or not _go_equal(key, value)
    if isinstance(key, list):
        return not isinstance(value, list) or not _go_equal(key, value)
    return False


def _string_not_equals(key: str, value: Any) -> bool:
    durations = _durations(key, value)
    if durations is not None:
        return duration_seconds(durations[0]) != duration_seconds(durations[1])
    quantity = parse_quantity(key)
    if quantity is not None and isinstance(value, str):
        if value == "":
            return not wildcard.match(value, key)
        other = parse_quantity(value)
        return other is None or compare_quantities(quantity, other) != 0
    if isinstance(value, str):
        return not wildcard.match(value, key)
    return True


# -- GreaterThan ... / Duration... -------------------------------------------------------------------

_ORDER = {
    "GreaterThanOrEquals": lambda a, b: a >= b,
    "GreaterThan": lambda a, b: a > b,
    "LessThanOrEquals": lambda a, b: a <= b,
    "LessThan": lambda a, b: a < b,
}
_DURATION_ORDER = {f"Duration{name}": test for name, test in _ORDER.items()}


def _order(operator: str, left: Any, right: Any, table: dict[str, Callable[[Any, Any], bool]]) -> bool:
    test = table.get(operator)  # exact spelling, as Kyverno's compareByCondition
    return bool(test and test(left, right))


def _numeric(operator: str, key: Any, value: Any) -> bool:
    if _is_number(key):
        return _numeric_number_key(operator, float(key), value)
    if isinstance(key, str):
        return _numeric_string_key(operator, key, value)
    return False


def _numeric_number_key(operator: str, key: float, value: Any) -> bool:
    if _is_number(value):
        return _order(operator, key, float(value), _ORDER)
    if isinstance(value, str):
        durations = _durations(key, value)
        if durations is not None:
            return _order(operator, duration_seconds(durations[0]), duration_seconds(durations[1]), _ORDER)
        parsed = parse_float(value)
        if parsed is None:
            whole = parse_int(value)
            parsed = None if whole is None else float(whole)
        return parsed is not None and _order(operator, key, parsed, _ORDER)
    return False


def _numeric_string_key(operator: str, key: str, value: Any) -> bool:
    durations = _durations(key, value)
    if durations is not None:
        return _order(operator, duration_seconds(durations[0]), duration_seconds(durations[1]), _ORDER)
    if isinstance(value, str):
        left, right = parse_quantity(key), parse_quantity(value)
        if left is not None and right is not None:
            return _order(operator, compare_quantities(left, right), 0, _ORDER)
    number = parse_float(key)
    if number is None:
        whole = parse_int(key)
        number = None if whole is None else float(whole)
    if number is not None:
        return _numeric_number_key(operator, number, value)
    try:
        version = parse_version(key)
    except ValueError:
        return False
    if not isinstance(value, str):
        return False
    try:
        other = parse_version(value)
    except ValueError:
        return False
    return _order(operator, compare_versions(version, other), 0, _ORDER)


def _duration_operator(operator: str, key: Any, value: Any) -> bool:
    left = _duration_value(key)
    if left is None:
        return False
    right = _duration_value(value)
    if right is None:
        return False
    return _order(operator, left, right, _DURATION_ORDER)


def _duration_value(value: Any) -> int | None:
    """A number as whole seconds, a string as Go's duration text, in nanoseconds; None for anything else."""
    if _is_number(value):
        return _seconds_duration(value)
    if isinstance(value, str):
        return parse_duration_text(value)
    return None


# -- set operators ---------------------------------------------------------------------------------------


_NOT_JSON = object()


def _refuse_constant(constant: str) -> Any:
    raise ValueError(f"{constant} is not JSON")


def _decode_json(text: str) -> Any:
    """`text` decoded as strict JSON (Go's ``json.Valid``: no NaN or Infinity), or `_NOT_JSON`."""
    try:
        return json.loads(text, parse_constant=_refuse_constant)
    except (ValueError, RecursionError):
        return _NOT_JSON


def _json_strings(text: str) -> list[str] | None:
    """Go's ``json.Unmarshal`` of `text` into ``[]string``; None where Go reports an error."""
    decoded = _decode_json(text)
    if decoded is None:
        return []
    if not isinstance(decoded, list) or not all(item is None or isinstance(item, str) for item in decoded):
        return None
    return ["" if item is None else item for item in decoded]


def _is_json(text: str) -> bool:
    return _decode_json(text) is not _NOT_JSON


def _both_ways(a: str, b: str) -> bool:
    return wildcard.match(a, b) or wildcard.match(b, a)


def _in_range(key: str, value: str) -> bool:
    return validate_value(key, value)


def _key_exists(key: str, value: Any) -> bool | None:
    """Kyverno's ``anyKeyExistsInArray`` / ``allKeyExistsInArray`` (the same): None for an unusable value."""
    if isinstance(value, list):
        return any(_both_ways(sprint(item), key) for item in value)
    if not isinstance(value, str):
        return None
    if wildcard.match(value, key):
        return True
    if operator_of(value) is Operator.IN_RANGE:
        return _in_range(key, value)
    if _is_json(value):
        items = _json_strings(value)
        if items is None:
            return None
    else:
        items = [value]
    return key in items


def _set_values(value: Any, numbers: bool) -> list[str] | None:
    """The value side of a set operator on a list key, when it is a list (or, for Any*, a number or bool)."""
    if isinstance(value, list):
        return [sprint(item) for item in value]
    if numbers and (type(value) is bool or _is_number(value)):
        return [sprint(value)]
    return None


def _any_in(keys: list[str], values: list[str]) -> bool:
    return any(_both_ways(key, item) for key in keys for item in values)


def _any_not_in(keys: list[str], values: list[str]) -> bool:
    return any(not any(_both_ways(key, item) for item in values) for key in keys)


def _all_in(keys: list[str], values: list[str]) -> bool:
    return all(any(_both_ways(key, item) for item in values) for key in keys)


def _all_not_in(keys: list[str], values: list[str]) -> bool:
    return not _any_in(keys, values)


def _any_set(keys: list[str], value: Any, negate: bool) -> bool | None:
    values = _set_values(value, numbers=True)
    if values is None:
        if not isinstance(value, str):
            return None
        if len(keys) == 1 and keys[0] == value:
            return not negate
        if operator_of(value) is Operator.IN_RANGE:
            if negate:
                outside = value.replace("-", "!-", 1)
                return any(_in_range(key, outside) for key in keys)
            return any(_in_range(key, value) for key in keys)
        values = _string_values(value)
        if values is None:
            return None
    return _any_not_in(keys, values) if negate else _any_in(keys, values)


def _all_set(keys: list[str], value: Any, negate: bool) -> bool | None:
    values = _set_values(value, numbers=False)
    if values is None:
        if not isinstance(value, str):
            return None
        if len(keys) == 1 and keys[0] == value:
            return not negate
        if operator_of(value) is Operator.IN_RANGE:
            inside = [_in_range(key, value) for key in keys]
            return not any(inside) if negate else all(inside)
        values = _string_values(value)
        if values is None:
            return None
    return _all_not_in(keys, values) if negate else _all_in(keys, values)


def _string_values(value: str) -> list[str] | None:
    """A string value of a set operator: a JSON array of strings, or the string itself."""
    if _is_json(value):
        return _json_strings(value)
    return [value]


def _set_operator(name: str, key: Any, value: Any) -> bool:
    """AnyIn, AllIn, AnyNotIn, AllNotIn: an unusable key or value is false for all four."""
    negate = name.endswith("notin")
    if isinstance(key, list):
        keys = [sprint(item) for item in key]
        found = _any_set(keys, value, negate) if name.startswith("any") else _all_set(keys, value, negate)
        return bool(found)
    if isinstance(key, str) or type(key) is bool or _is_number(key):
        exists = _key_exists(sprint(key), value)
        if exists is None:
            return False
        return not exists if negate else exists
    return False


def _legacy_in(negate: bool, key: Any, value: Any) -> bool:
    """The deprecated In / NotIn: exact comparison, JSON array strings, no wildcards in sets."""
    if isinstance(key, list):
        keys = []
        for item in key:
            if not isinstance(item, str):
                raise _Panic(f"interface conversion: interface {{}} is {go_type_name(item)}, not string")
            keys.append(item)
        values: list[str] | None
        if isinstance(value, list):
            if not all(isinstance(item, str) for item in value):
                return False
            values = list(value)
        elif isinstance(value, str):
            if len(keys) == 1 and keys[0] == value:
                return True  # Kyverno answers true here for NotIn as well
            values = _json_strings(value)
            if values is None:
                return False
        else:
            return False
        available = set(values)
        if negate:
            return any(item not in available for item in keys)
        return all(item in available for item in keys)
    if isinstance(key, str) or type(key) is bool or _is_number(key):
        text = sprint(key)
        if isinstance(value, list):
            exists = any(_both_ways(sprint(item), text) for item in value)
        elif isinstance(value, str):
            if wildcard.match(value, text):
                exists = True
            else:
                items = _json_strings(value)
                if items is None:
                    return False
                exists = text in items
        else:
            return False
        return not exists if negate else exists
    return False


# -- dispatch -----------------------------------------------------------------------------------------------

OPERATORS = (
    "Equal", "Equals", "NotEqual", "NotEquals", "In", "AnyIn", "AllIn", "NotIn", "AnyNotIn", "AllNotIn",
    "GreaterThanOrEquals", "GreaterThan", "LessThanOrEquals", "LessThan",
    "DurationGreaterThanOrEquals", "DurationGreaterThan", "DurationLessThanOrEquals", "DurationLessThan",
)
"""Every operator name Kyverno accepts (``Equal`` and ``NotEqual``, ``In`` and ``NotIn`` are deprecated)."""

_KINDS = {name.lower(): name for name in OPERATORS}


def is_known_operator(operator: str) -> bool:
    """Whether Kyverno has a handler for `operator` (names are compared case-insensitively)."""
    return operator.lower() in _KINDS


def evaluate_operator(operator: str, key: Any, value: Any) -> bool:
    """Whether `key` `operator` `value` holds, both already substituted (Kyverno's ``handler.Evaluate``).

    Raises ValueError for an operator Kyverno has no handler for (see
    `is_known_operator`), and RuntimeError where Kyverno's own code would
    panic (the deprecated ``In``/``NotIn`` with a key list holding a
    non-string).
    """
    kind = _KINDS.get(operator.lower())
    if kind is None:
        raise ValueError(f"unknown condition operator {operator!r}")
    key, value = _top_level(key), _top_level(value)
    try:
        return _dispatch(kind, operator, key, value)
    except _Panic as panic:
        raise RuntimeError(str(panic)) from None


def _dispatch(kind: str, operator: str, key: Any, value: Any) -> bool:
    if kind in ("Equal", "Equals"):
        return _equals(key, value)
    if kind in ("NotEqual", "NotEquals"):
        return _not_equals(key, value)
    if kind in ("In", "NotIn"):
        return _legacy_in(kind == "NotIn", key, value)
    if kind in ("AnyIn", "AllIn", "AnyNotIn", "AllNotIn"):
        return _set_operator(kind.lower(), key, value)
    if kind.startswith("Duration"):
        return _duration_operator(operator, key, value)
    return _numeric(operator, key, value)


# -- blocks --------------------------------------------------------------------------------------------------


def _identity(value: Any) -> Any:
    return value


def evaluate_condition(condition: Condition, resolve: Resolver = _identity) -> tuple[bool, ConditionError | None]:
    """One condition: substitute its key, then its value (through `resolve`), then apply its operator.

    Returns (holds, None), or (False, error) when substitution fails, the
    operator is unknown, or Kyverno would panic.
    """
    try:
        key = resolve(condition.key)
    except Exception as error:  # noqa: BLE001 - the resolver's failures are data for the caller
        return False, ConditionError(f"failed to substitute variables in condition key: {error}", condition, error)
    try:
        value = resolve(condition.value)
    except Exception as error:  # noqa: BLE001 - as above
        return False, ConditionError(f"failed to substitute variables in condition value: {error}", condition, error)
    if not is_known_operator(condition.operator):
        return False, ConditionError("failed to create handler for condition operator: %!w(<nil>)", condition)
    try:
        return evaluate_operator(condition.operator, key, value), None
    except RuntimeError as panic:
        return False, ConditionError(f"panic: {panic}", condition, panic)


def _join(messages: list[str], separator: str) -> str:
    return separator.join(message for message in messages if message)


def _parse_list(raw: Any, prepare: Callable[[Any], Any]) -> list[Condition]:
    if not isinstance(raw, list):
        raise TypeError("conditions must be a list")
    conditions = [Condition.from_raw(item) for item in raw]
    if prepare is _identity:
        return conditions
    return [Condition(prepare(item.key), item.operator, prepare(item.value), item.message) for item in conditions]


@dataclass(frozen=True, slots=True)
class ConditionBlock:
    """A precondition or deny block read once (`parse_conditions`): what `evaluate_conditions` reads of it
    for every resource. `legacy` is the plain list form; `unparsed` the result of a block that does not parse."""

    legacy: list[Condition] | None = None
    any_block: list[Condition] | None = None
    all_block: list[Condition] | None = None
    unparsed: ConditionsResult | None = None


def parse_conditions(conditions: Any, prepare: Callable[[Any], Any] = _identity) -> ConditionBlock:
    """`conditions` (as `evaluate_conditions` takes them) read into a `ConditionBlock` once, each key and
    value replaced by ``prepare(key)``, ``prepare(value)``: what `resolve` is then given (by default the key
    and value themselves)."""
    try:
        if conditions is None:
            return ConditionBlock(all_block=[])
        if isinstance(conditions, list):
            return ConditionBlock(legacy=_parse_list(conditions, prepare))
        if isinstance(conditions, dict):
            any_raw, all_raw = conditions.get("any"), conditions.get("all")
            return ConditionBlock(any_block=None if any_raw is None else _parse_list(any_raw, prepare),
                                  all_block=[] if all_raw is None else _parse_list(all_raw, prepare))
    except TypeError as problem:
        return ConditionBlock(unparsed=ConditionsResult(
            False, error=ConditionError(f"failed to parse conditions: {problem}")))
    return ConditionBlock(unparsed=ConditionsResult(
        False, error=ConditionError("failed to parse conditions: invalid condition")))


def evaluate_conditions(conditions: Any, resolve: Resolver = _identity,
                        observe: Observer | None = None) -> ConditionsResult:
    """Evaluate a precondition or deny block as written in the policy, substituting lazily through `resolve`.

    `conditions` is the decoded ``preconditions`` / ``deny.conditions`` value:
    ``None`` (true), a map with ``any`` and/or ``all`` lists, or the legacy
    list of conditions; or that value already read by `parse_conditions`. A
    malformed block gives an error result. `observe`, when given, is told of
    each condition evaluated (an explanation's hook; it changes nothing).
    """
    if conditions is None:
        return ConditionsResult(True)
    block = conditions if isinstance(conditions, ConditionBlock) else parse_conditions(conditions)
    if block.unparsed is not None:
        return block.unparsed
    if block.legacy is not None:
        return _evaluate_legacy(block.legacy, resolve, observe)
    return _evaluate_any_all(block.any_block, block.all_block or [], resolve, observe)


def _evaluate_legacy(block: list[Condition], resolve: Resolver, observe: Observer | None) -> ConditionsResult:
    held: list[Condition] = []
    for condition in block:
        holds, error = evaluate_condition(condition, resolve)
        if observe is not None:
            observe(condition, holds, error)
        if error is not None:
            return ConditionsResult(False, error=error)
        if not holds:
            return ConditionsResult(False, condition.message, (condition,), condition)
        held.append(condition)
    return ConditionsResult(True, _join([c.message for c in held], ";"), tuple(held))


def _evaluate_any_all(
    any_block: list[Condition] | None, all_block: list[Condition], resolve: Resolver, observe: Observer | None
) -> ConditionsResult:
    held: list[Condition] = []
    missed: list[Condition] = []
    any_holds = True
    if any_block is not None:
        any_holds = False
        for condition in any_block:
            holds, error = evaluate_condition(condition, resolve)
            if observe is not None:
                observe(condition, holds, error)
            if error is not None:
                return ConditionsResult(False, error=error)
            if holds:
                any_holds = True
                held.append(condition)
                break
            missed.append(condition)
    all_holds = True
    for condition in all_block:
        holds, error = evaluate_condition(condition, resolve)
        if observe is not None:
            observe(condition, holds, error)
        if error is not None:
            return ConditionsResult(False, error=error)
        if not holds:
            all_holds = False
            missed.append(condition)
            break
        held.append(condition)
    if any_holds and all_holds:
        return ConditionsResult(True, _join([c.message for c in held], "; "), tuple(held))
    first_failed = missed[-1] if not all_holds else (missed[0] if missed else None)
    return ConditionsResult(False, _join([c.message for c in missed], "; "), tuple(missed), first_failed)
