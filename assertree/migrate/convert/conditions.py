"""Kyverno conditions (``preconditions``, ``deny.conditions``) as CEL.

A block is ``{any: [...], all: [...]}`` (both must hold; an ``any`` that is
present but empty is false) or the legacy list (all must hold); each condition
is ``key``, ``operator``, ``value``, where key and value may hold ``{{ }}``
variables (`jmespath`).

Kyverno's operators keep Go's type rules (`assertree.languages.kyverno.conditions`):
``Equals`` reads a string as a duration, then a quantity, then matches the
value as a wildcard; the set operators (``AnyIn`` ...) print each item as Go
does and match wildcards both ways; ``GreaterThan`` compares numbers,
numeric strings, quantities, durations and versions. A condition never fails
with an error in Kyverno: what cannot be compared is false. So each condition
with a constant value is written in the plainest CEL form that agrees with
Kyverno's own operator, on keys of every JSON kind and on keys drawn from the
value (`_key_samples`), *without any error*: a deny condition that errors
where Kyverno says false would turn a pass into an error. Forms are tried
from the most readable (``key == 'x'``, ``key in ['a', 'b']``,
``key > 3``) to the most guarded; a condition no form matches is refused.

Conditions whose value holds variables are translated directly (``==``,
``in``), since no constant can be checked here; the migration's proof runs
them against Kyverno's engine.

A set operator's reverse wildcard (a key that itself holds ``*`` matching a
value, as RBAC rules do) is reproduced with a regular expression made from
the key at run time (`cel.reverse_wildcard`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from assertree.languages.kyverno.conditions import evaluate_operator, is_known_operator
from assertree.languages.kyverno.operators import parse_duration_text, parse_quantity, sprint
from assertree.migrate.convert import cel
from assertree.migrate.convert.jmespath import (
    NO_DEFAULT,
    Expr,
    Names,
    maps_equal,
    translate_template,
    translate_with_default,
    truthy,
)
from assertree.migrate.convert.leaves import GO_DURATION
from assertree.migrate.convert.refusal import NotConvertible

__all__ = ["block_test", "condition_test"]

_KEY = "object.k"
_SET_OPERATORS = ("anyin", "allin", "anynotin", "allnotin", "in", "notin")
_JSON_ARRAY = r"^\s*\[[\s\S]*\]\s*$"
_ORDERING = {"greaterthan": ">", "greaterthanorequals": ">=", "lessthan": "<", "lessthanorequals": "<="}


def block_test(block: Any, names: Names, path: tuple) -> str:
    """CEL: whether a condition block holds (``None`` holds)."""
    if block is None:
        return cel.TRUE
    if isinstance(block, list):
        return cel.and_(condition_test(item, names, (*path, i)) for i, item in enumerate(block))
    if not isinstance(block, dict):
        raise NotConvertible("conditions must be a list or a map with any/all", path)
    parts = []
    if block.get("any") is not None:
        items = block["any"]
        if not isinstance(items, list):
            raise NotConvertible("any must be a list", (*path, "any"))
        parts.append(cel.or_(condition_test(item, names, (*path, "any", i)) for i, item in enumerate(items))
                     if items else cel.FALSE)
    for i, item in enumerate(block.get("all") or []):
        parts.append(condition_test(item, names, (*path, "all", i)))
    return cel.and_(parts)


def condition_test(condition: Any, names: Names, path: tuple) -> str:
    """CEL: whether one condition holds."""
    if not isinstance(condition, dict):
        raise NotConvertible("a condition must be a map", path)
    operator = str(condition.get("operator") or "")
    if not is_known_operator(operator):
        raise NotConvertible(f"unknown operator {operator!r}", (*path, "operator"))
    try:
        key, default = _key(condition.get("key"), names)
    except NotConvertible as refusal:
        raise refusal.at((*path, "key")) from None
    value = condition.get("value")
    if _is_constant(value) and key.kind != "merged":
        default_json = None if default is NO_DEFAULT else json.dumps(default)
        plain = key.text.startswith("request.operation")  # an admission operation holds no wildcard
        found = _form(operator, json.dumps(value, sort_keys=True), key.kind, default_json, key.optional, plain)
        if found is None:
            raise NotConvertible(f"no CEL form agrees with Kyverno's {operator} for the value "
                                 f"{json.dumps(value)} on every kind of key", path)
        form, mode = found
        return _BUILDERS[form](operator, cel.paren(_key_text(key, default, mode)), value)
    if default is not NO_DEFAULT:
        key = Expr(_key_text(key, default, "exact"), "any")
    try:
        other = _operand(value, names)
    except NotConvertible as refusal:
        raise refusal.at((*path, "value")) from None
    return _dynamic(operator, key, other, path)


def _key(raw: Any, names: Names) -> tuple[Expr, Any]:
    """The key's CEL, and the literal it defaults to when written ``{{ x || <literal> }}``."""
    if isinstance(raw, str):
        from assertree.languages.kyverno.substitution import has_markers

        stripped = raw.strip()
        if has_markers(raw) and stripped.startswith("{{") and stripped.endswith("}}") and \
                _closing_at_end(stripped):
            return translate_with_default(stripped[2:-2].lstrip("-"), names)
    return _operand(raw, names), NO_DEFAULT


def _closing_at_end(text: str) -> bool:
    from assertree.migrate.convert.jmespath import _closing

    return _closing(text, 0) == len(text) - 2


def _key_text(key: Expr, default: Any, mode: str) -> str:
    """The key's CEL text: its value (`mode` "value"), its value or the default when missing ("or-value"),
    or JMESPath's ``x || d`` exactly ("exact")."""
    if mode == "or-empty":  # a missing list: Kyverno's operator says on null what it says on []
        return key.value("[]")
    if default is NO_DEFAULT or mode == "value":
        return key.value()
    if mode == "or-value":
        return key.value(cel.literal(default))
    return cel.ternary(truthy(key), f"dyn({key.value()})", f"dyn({cel.literal(default)})")


def _operand(raw: Any, names: Names) -> Expr:
    if isinstance(raw, str):
        return translate_template(raw, names)
    if _is_constant(raw):
        from assertree.migrate.convert.jmespath import _kind_of

        return Expr(cel.literal(raw), _kind_of(raw))
    raise NotConvertible("a key or value with variables inside a list or map")


def _is_constant(value: Any) -> bool:
    if isinstance(value, str):
        return "{{" not in value
    if isinstance(value, list):
        return all(_is_constant(item) for item in value)
    if isinstance(value, dict):
        return all(_is_constant(item) for item in value.values()) and all("{{" not in str(k) for k in value)
    return True


def _dynamic(operator: str, key: Expr, value: Expr, path: tuple) -> str:
    """A condition whose value is computed: the plain reading of each operator. In the set operators the
    value is a list of items or one text (Kyverno reads a text as the one item), and an item ``*`` matches
    every key item, as Kyverno's wildcards do."""
    kind = operator.lower()
    same = maps_equal(key, value)
    if same is not None and kind in ("equals", "equal", "notequals", "notequal"):
        return same if kind.startswith("equal") else cel.not_(same)
    if kind in ("equals", "equal"):
        return f"{cel.paren(key.value())} == {cel.paren(value.value())}"
    if kind in ("notequals", "notequal"):
        return f"{cel.paren(key.value())} != {cel.paren(value.value())}"
    if kind in _SET_OPERATORS:
        if value.kind not in ("list", "any", "string"):
            raise NotConvertible(f"{operator} against a computed value that is no list or text", path)
        # Kyverno: a null value is false for all four; AnyIn says the same of an empty list
        present = cel.TRUE
        if value.optional and value.suffix:
            values = cel.paren(value.value("[]"))
            if kind not in ("anyin", "in"):
                present = f"{value.text}.hasValue()"
        elif value.optional:
            values = cel.paren(value.value())
            present = f"{values} != null"
        else:
            values = cel.paren(value.value())

        def member(item: str) -> str:
            in_list = f"{values}.exists(value, dyn(value) == dyn({item}) || dyn(value) == '*')"
            # a text holding a JSON array is its items (a ConfigMap's data is text: '["a", "b"]')
            listed = (f"(type({values}) == string && {values}.matches({cel.string(_JSON_ARRAY)}) && "
                      f"json.unmarshal({values}).exists(value, dyn(value) == dyn({item})))")
            one = f"dyn({values}) == dyn({item}) || dyn({values}) == '*' || {listed}"
            if value.kind == "list":
                return in_list
            if value.kind == "string":
                return one
            return cel.ternary(f"type({values}) == list", in_list, one)

        def over(keys: str) -> str:
            return {"anyin": f"{keys}.exists(key, {member('key')})", "allin": f"{keys}.all(key, {member('key')})",
                    "in": f"{keys}.all(key, {member('key')})",
                    "anynotin": f"{keys}.exists(key, {cel.not_(member('key'))})",
                    "allnotin": cel.not_(f"{keys}.exists(key, {member('key')})"),
                    "notin": f"{keys}.exists(key, {cel.not_(member('key'))})"}[kind]

        if key.kind == "list":
            return cel.and_([present, over(cel.paren(key.value("[]")))])
        single = member(cel.paren(key.value()))
        single = cel.not_(single) if "not" in kind else single
        if key.kind in ("string", "number", "bool"):
            return cel.and_([present, single])
        keys = cel.paren(key.value())
        return cel.and_([present, cel.ternary(f"type({keys}) == list", over(keys), single)])
    if kind in _ORDERING and key.kind == "number" and value.kind == "number":
        return f"{cel.paren(key.value())} {_ORDERING[kind]} {cel.paren(value.value())}"
    raise NotConvertible(f"{operator} with a value computed from variables", path)


# -- forms for a constant value -----------------------------------------------------------------------------


def _equality(operator: str, key: str, value: Any) -> str:
    kind = operator.lower()
    if kind in ("equals", "equal"):
        return f"{key} == {cel.literal(value)}"
    if kind in ("notequals", "notequal"):
        return f"{key} != {cel.literal(value)}"
    raise NotConvertible("not an equality")


def _matches_any(text: str, values: list[str], reverse: bool = True) -> str:
    """Whether the CEL string `text` matches one of `values` (Kyverno's wildcards in the values, and with
    `reverse` in `text`)."""
    plain = [value for value in values if "*" not in value and "?" not in value]
    tests = []
    if plain:
        tests.append(f"{text} in {cel.literal(plain)}" if len(plain) > 1 else f"{text} == {cel.literal(plain[0])}")
    tests.extend(cel.wildcard_test(value, text) for value in values if value not in plain)
    if reverse:
        tests.append(cel.reverse_wildcard(text, values))
    return cel.or_(tests)


def _set_values(value: Any) -> list[str] | None:
    if isinstance(value, list):
        return [sprint(item) for item in value]
    if isinstance(value, str | bool | int | float):
        return [sprint(value)]
    return None


def _set_form(operator: str, key: str, value: Any, *, scalar: bool = True, lists: bool = True,
              guard: bool = False, reverse: bool = True) -> str:
    """The set operators: each key item printed (``string()``) and matched against the values."""
    kind = operator.lower()
    values = _set_values(value)
    if values is None or kind not in _SET_OPERATORS:
        raise NotConvertible("not a set operator on a list")

    def member(item: str) -> str:
        return _matches_any(item, values, reverse)

    def printed(item: str) -> str:
        return f"string({item})"

    negate = "not" in kind
    if kind in ("anyin", "in"):
        over_list = f"{key}.exists(item, {member(printed('item'))})"
    elif kind == "allin":
        over_list = f"{key}.all(item, {member(printed('item'))})"
    elif kind in ("anynotin", "notin"):
        over_list = f"{key}.exists(item, {cel.not_(member(printed('item')))})"
    else:
        over_list = cel.not_(f"{key}.exists(item, {member(printed('item'))})")
    one = member(printed(key))
    one = cel.not_(one) if negate else one
    if guard:
        one = cel.and_([f"type({key}) in [bool, int, uint, double, string]", one])
    if scalar and lists:
        return cel.ternary(f"type({key}) == list", over_list, one)
    return over_list if lists else one


def _scalar_set(operator: str, key: str, value: Any) -> str:
    return _set_form(operator, key, value, lists=False)


def _list_set(operator: str, key: str, value: Any) -> str:
    return _set_form(operator, key, value, scalar=False)


def _either_set(operator: str, key: str, value: Any) -> str:
    return _set_form(operator, key, value)


def _guarded_set(operator: str, key: str, value: Any) -> str:
    return _set_form(operator, key, value, guard=True)


def _ordering_operand(operator: str, value: Any) -> tuple[str, int | float | str]:
    """(CEL comparison symbol, the value as a number when it reads as one, else its text)."""
    kind = operator.lower()
    if kind not in _ORDERING or operator[0] != operator[0].upper():  # Kyverno orders only under the exact name
        raise NotConvertible("not an ordering")
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise NotConvertible("an ordering needs a number, quantity or duration")
    number = _number_value(value)
    if number is not None and (not isinstance(value, str) or parse_duration_text(value) is None):
        return _ORDERING[kind], number
    return _ORDERING[kind], str(value)


def _ordering(operator: str, key: str, value: Any) -> str:
    symbol, operand = _ordering_operand(operator, value)
    if not isinstance(operand, str):
        return f"{key} {symbol} {cel.literal(operand)}"
    if parse_quantity(operand) is not None and parse_duration_text(operand) is None:
        return f"quantity({key}).compareTo(quantity({cel.string(operand)})) {symbol} 0"
    if parse_duration_text(operand) is not None and parse_quantity(operand) is None:
        return f"duration({key}) {symbol} duration({cel.string(operand)})"
    raise NotConvertible("an ordering on this value")


def _typed_ordering(operator: str, key: str, value: Any) -> str:
    """Orderings by kind of key: numbers directly, strings as Kyverno reads them (duration, quantity,
    number); everything else false."""
    symbol, operand = _ordering_operand(operator, value)
    number = f"type({key}) in [int, uint, double]"
    text = f"type({key}) == string"
    is_duration = f"{key}.matches({cel.string(GO_DURATION)}) && {key} != '0'"
    if not isinstance(operand, str):
        literal = cel.literal(operand)
        as_number = f"{key}.matches({cel.string(_NUMBER)}) && double({key}) {symbol} {literal}"
        as_duration = f"{is_duration} && duration({key}) {symbol} duration({cel.string(_seconds(operand))})"
        return cel.or_([cel.and_([number, f"{key} {symbol} {literal}"]),
                        cel.and_([text, cel.or_([as_duration, as_number])])])
    parts = []
    if parse_duration_text(operand) is not None and operand != "0":
        parts.append(cel.and_([text, is_duration, f"duration({key}) {symbol} duration({cel.string(operand)})"]))
    if parse_quantity(operand) is not None:
        parts.append(cel.and_([text, f"isQuantity({key})",
                               f"quantity({key}).compareTo(quantity({cel.string(operand)})) {symbol} 0"]))
    if not parts:
        raise NotConvertible("an ordering on this value")
    if len(parts) == 2:
        return cel.ternary(cel.and_([text, is_duration]), parts[0], parts[1])
    return parts[0]


_NUMBER = r"^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$"


def _number_value(value: Any) -> int | float | None:
    """`value` as a number when it is one, or a string Go reads as one (``"4"``)."""
    from assertree.languages.kyverno.operators import parse_float

    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return value
    if isinstance(value, str):
        number = parse_float(value)
        if number is not None:
            return int(number) if number.is_integer() and abs(number) < 2**53 else number
    return None


def _seconds(value: int | float) -> str:
    return f"{int(value)}s"


def _typed_equality(operator: str, key: str, value: Any) -> str:
    """Equals/NotEquals on a string value by kind of key, as Kyverno reads a string key."""
    kind = operator.lower()
    if kind not in ("equals", "equal", "notequals", "notequal") or not isinstance(value, str):
        raise NotConvertible("not an equality on text")
    text = f"type({key}) == string"
    quantity = parse_quantity(value)
    duration = parse_duration_text(value) if value != "0" else None
    if quantity is not None:
        as_text = cel.ternary(f"isQuantity({key})", f"quantity({key}).compareTo(quantity({cel.string(value)})) == 0",
                              cel.wildcard_test(value, key))
    else:
        as_text = cel.and_([f"!isQuantity({key})", cel.wildcard_test(value, key)])
    if duration is not None:
        as_text = cel.ternary(f"{key}.matches({cel.string(GO_DURATION)}) && {key} != '0'",
                              f"duration({key}) == duration({cel.string(value)})", as_text)
    from assertree.languages.kyverno.operators import parse_float

    number = parse_float(value)
    numbers = f"type({key}) in [int, uint, double] && {key} == {cel.literal(number)}" if number is not None \
        else cel.FALSE
    equal = cel.or_([cel.and_([text, as_text]), numbers])
    return equal if kind.startswith("equal") else cel.not_(equal)


def _wildcard_equality(operator: str, key: str, value: Any) -> str:
    """Equals/NotEquals on a string holding wildcards: ``type(k) == string && k.startsWith('x')``."""
    kind = operator.lower()
    if kind not in ("equals", "equal", "notequals", "notequal") or not isinstance(value, str):
        raise NotConvertible("not an equality on text")
    test = cel.and_([f"type({key}) == string", cel.wildcard_test(value, key)])
    return test if kind.startswith("equal") else cel.not_(test)


def _range_set(operator: str, key: str, value: Any) -> str:
    """A set operator whose value is a range (``5000-6000``): each printed key item read as the pattern leaf
    (``AnyNotIn`` reads the outside of the range, ``5000!-6000``)."""
    from assertree.languages.kyverno.operators import IN_RANGE
    from assertree.migrate.convert.leaves import leaf_test

    kind = operator.lower()
    if not isinstance(value, str) or not IN_RANGE.match(value) or kind not in ("anyin", "anynotin", "allin",
                                                                                "allnotin"):
        raise NotConvertible("not a range")
    outside = value.replace("-", "!-", 1)

    def inside(item: str) -> str:
        return leaf_test(f"dyn(string({item}))", value, exact=True)

    if kind == "anyin":
        return f"{key}.exists(item, {inside('item')})"
    if kind == "anynotin":
        return f"{key}.exists(item, {leaf_test('dyn(string(item))', outside, exact=True)})"
    if kind == "allin":
        return f"{key}.all(item, {inside('item')})"
    return cel.not_(f"{key}.exists(item, {inside('item')})")


def _typed_not_equality(operator: str, key: str, value: Any) -> str:
    """NotEquals on a string value by kind of key: Kyverno answers true wherever it cannot compare, except for
    a null key (false)."""
    from assertree.languages.kyverno.operators import parse_float

    if operator.lower() not in ("notequals", "notequal") or not isinstance(value, str):
        raise NotConvertible("not a not-equality on text")
    number = parse_float(value)
    numbers = cel.TRUE if number is None else f"{key} != {cel.literal(number)}"
    if value == "":
        quantity_case = f"{key} != ''"
    elif parse_quantity(value) is not None:
        quantity_case = f"quantity({key}).compareTo(quantity({cel.string(value)})) != 0"
    else:
        quantity_case = cel.TRUE
    strings = cel.ternary(f"isQuantity({key})", quantity_case, cel.not_(cel.wildcard_test(value, key)))
    if value != "0" and parse_duration_text(value) is not None:
        strings = cel.ternary(f"{key}.matches({cel.string(GO_DURATION)}) && {key} != '0'",
                              f"duration({key}) != duration({cel.string(value)})", strings)
    return cel.and_([f"{key} != null", cel.ternary(f"type({key}) == string", strings,
                                                   cel.ternary(f"type({key}) in [int, uint, double]", numbers,
                                                               cel.TRUE))])


_BUILDERS: dict[str, Callable[[str, str, Any], str]] = {
    "equality": _equality,
    "wildcard-equality": _wildcard_equality,
    "typed-equality": _typed_equality,
    "typed-not-equality": _typed_not_equality,
    # keys that never hold wildcards (the request's operation) need not be read as patterns themselves
    "plain-scalar-set": lambda operator, key, value: _set_form(operator, key, value, lists=False, reverse=False),
    "plain-set": lambda operator, key, value: _set_form(operator, key, value, reverse=False),
    "scalar-set": _scalar_set,
    "list-set": _list_set,
    "set": _either_set,
    "guarded-set": _guarded_set,
    "range-set": _range_set,
    "ordering": _ordering,
    "typed-ordering": _typed_ordering,
}


_MISSING = object()


@lru_cache(maxsize=4096)
def _form(operator: str, value_json: str, key_kind: str, default_json: str | None,
          optional: bool, plain: bool = False) -> tuple[str, str] | None:
    """(builder, key mode) of the first form that agrees with Kyverno's operator on every sample key, with no
    error; keys of `key_kind` only, when known. A key ``x || d`` (`default_json`) is tried as
    ``x.orValue(d)`` first (a missing `optional` key gives ``d``), then as JMESPath's exact ``||``."""
    value = json.loads(value_json)
    default = NO_DEFAULT if default_json is None else json.loads(default_json)
    samples = _key_samples(value, key_kind, wildcards=operator.lower() in _SET_OPERATORS and not plain)
    if default is not NO_DEFAULT:
        # the falsy values a key of its kind can hold (any: every one), which JMESPath replaces by the default
        by_kind: dict[str, list[Any]] = {"list": [[]], "string": [""], "map": [{}], "bool": [False], "number": []}
        falsy = by_kind.get(key_kind, [None, "", [], {}, False])
        samples.extend(sample for sample in falsy if not any(type(sample) is type(s) and sample == s
                                                             for s in samples))
        if optional:
            samples.append(_MISSING)
    if default is NO_DEFAULT and optional:
        samples.append(_MISSING)
    if default is NO_DEFAULT:
        modes: tuple[str, ...] = ("or-empty", "value") if optional and key_kind == "list" else ("value",)
    else:
        modes = ("or-value", "exact")
    placeholder = Expr("object.?k", optional=True) if optional else Expr("object.k")
    for mode in modes:
        key_text = cel.paren(_key_text(placeholder, default, mode))
        for name, build in _BUILDERS.items():
            try:
                expression = build(operator, key_text, value)
            except NotConvertible:
                continue
            if _agrees(expression, operator, value, samples, default):
                return name, mode
    return None


def _agrees(expression: str, operator: str, value: Any, samples: list[Any], default: Any) -> bool:
    from assertree.jp.values import is_false
    from assertree.languages.cel.engine import CelError
    from assertree.languages.kyverno.cel_policies.compile import compile_expression
    from assertree.languages.kyverno.manifests import to_float64

    try:
        program = compile_expression(expression, ("condition",))
    except Exception:  # noqa: BLE001 - a form that does not compile simply does not agree
        return False
    for sample in samples:
        key = sample
        if default is not NO_DEFAULT and (sample is _MISSING or is_false(sample)):
            key = default
        want = evaluate_operator(operator, to_float64(key), value)
        data = {} if sample is _MISSING else {"k": sample}
        try:
            got = program.evaluate({"object": data, "oldObject": None, "request": None, "params": None,
                                    "namespaceObject": None, "variables": {}, "exceptions": {}}, None)
        except CelError:
            return False
        if got is not want:
            return False
    return True


def _key_samples(value: Any, key_kind: str, *, wildcards: bool = False) -> list[Any]:
    """Keys that tell the operator's answers apart: every JSON kind, and values drawn from `value`; with
    `wildcards` (the set operators, which match both ways) keys holding wildcards too."""
    scalars: list[Any] = [None, True, False, 0.0, 1.0, 3.0, -1.0, 1.5, 100.0, "", "a", "0", "3", "true", "x:y"]
    drawn: list[Any] = []
    for item in value if isinstance(value, list) else [value]:
        if isinstance(item, str):
            drawn.extend([item, item.replace("*", ""), item.replace("*", "x").replace("?", "y"), item + "x",
                          "x" + item, item.upper(), item.lower()])
            quantity = parse_quantity(item)
            if quantity is not None:
                number = float(f"{quantity.unscaled}e{quantity.exponent}")
                drawn.extend([number, number + 1, number - 1, str(int(number)) if number.is_integer() else str(number)])
            duration = parse_duration_text(item)
            if duration is not None:
                seconds = duration // 1_000_000_000
                drawn.extend([f"{seconds}s", f"{seconds + 1}s", f"{max(seconds - 1, 0)}s"])
        elif isinstance(item, bool):
            drawn.extend([item, not item, str(item).lower()])
        elif isinstance(item, int | float):
            drawn.extend([float(item), float(item) + 1, float(item) - 1, str(item), f"{item}s"])
    drawn = [item for item in drawn if not (isinstance(item, str) and ("*" in item or "?" in item))]
    if wildcards:
        texts = [item for item in drawn if isinstance(item, str) and item]
        drawn.extend(["*", "?", "x*", *(text[:1] + "*" for text in texts[:3]), *("*" + text[-1:] for text in texts[:3]),
                      *(text[:-1] + "?" for text in texts[:2]), "a.b*", "(*)"])
    lists: list[Any] = [[], [item for item in drawn[:2]], ["other"], [*drawn[:1], "other"], [1.0], [True]]
    maps: list[Any] = [{}, {"a": "b"}]
    if key_kind == "list":
        candidates = lists + [[item] for item in drawn]
    elif key_kind in ("string", "number", "bool"):
        candidates = [s for s in scalars + drawn if _kind(s) == key_kind]
    else:
        candidates = scalars + drawn + lists + maps
    unique: list[Any] = []
    for item in candidates:
        if not any(type(item) is type(seen) and item == seen for seen in unique):
            unique.append(item)
    return unique


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "other"
