"""A leaf of a Kyverno pattern (``"?*"``, ``">=2Gi"``, ``"!*:latest | nginx"``, ``true``, ``0``) as a CEL test.

Kyverno compares one resource value with one pattern leaf by the value's Go
type (`assertree.languages.kyverno.operators.validate_value`): a bool leaf
wants that bool, a number wants an equal number or a numeric string, ``null``
any zero value, and a string leaf is a small language of alternatives
(``|``), conjunctions (``&``), operators (``>``, ``<=``, ``!``, ranges
``1-10`` and ``1!-10``), with each operand read as a Go duration, else a
Kubernetes quantity, else a wildcard text.

Two forms are written, and the first that agrees with Kyverno is kept:

* the *text* form reads the value as ``string(x)``, as Kyverno reads bools
  and numbers as text before comparing (``string(x) != ''`` for ``"?*"``,
  ``!string(x).endsWith(':latest')``); a null, list or map makes
  ``string()`` fail, and a failing validation denies like a failed one (the
  migration's proof counts an error and a failure as the same verdict);
* the *typed* form tests each kind of value on its own (``type(x) ==
  string && ...``), deciding here, with Kyverno's own function, whatever
  does not depend on the value's content.

"Agrees" is checked here, on values drawn from the pattern itself (each
operand, its neighbours, zero values, each JSON kind), by running both the
CEL and Kyverno's function. Kyverno prints numbers with Go's ``%E`` before a
wildcard reads them, which CEL cannot reproduce: for such leaves a form that
agrees on every value but numbers is kept (the proof then shows whether the
field ever holds one); a leaf where no form agrees even so is refused. A leaf whose answer for null is true puts
``x == null`` first, since ``string(null)`` fails.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

from assertree.jp.functions.quantity import Quantity
from assertree.languages.kyverno.operators import (
    IN_RANGE,
    NOT_IN_RANGE,
    Operator,
    alternatives_hold,
    operator_of,
    parse_duration_text,
    parse_quantity,
    validate_value,
)
from assertree.migrate.convert import cel
from assertree.migrate.convert.refusal import NotConvertible

__all__ = ["dynamic_leaf_test", "leaf_test"]

_CEL_ORDER = {Operator.EQUAL: "==", Operator.NOT_EQUAL: "!=", Operator.MORE: ">", Operator.LESS: "<",
              Operator.MORE_EQUAL: ">=", Operator.LESS_EQUAL: "<="}
# Go's time.ParseDuration syntax (cel-go's duration() parses with it); the micro-second spellings are left out:
# the CEL library assertree runs does not read them.
GO_DURATION = r"^[-+]?(0|(([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|ms|s|m|h))+)$"
_DECIMAL_FLOAT = r"^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$"
_PLACEHOLDER = "object.v"


def leaf_test(value: str, pattern: Any, *, exact: bool = False) -> str:
    """CEL: whether the value `value` (any JSON value; null for a missing field) satisfies the leaf `pattern`.
    With `exact` the test never fails with an error (it is read below a conditional anchor, where an error
    would not deny but skip). NotConvertible when no form of the test agrees with Kyverno."""
    form = _form(json.dumps(pattern, sort_keys=True), exact)
    if form is None:
        raise NotConvertible(f"the pattern value {pattern!r} compares values as Go prints them (3E+00 for a number), "
                             "which CEL cannot reproduce")
    return _FORMS[form](value, pattern)


def dynamic_leaf_test(value: str, pattern: str) -> str:
    """CEL: whether `value` satisfies a leaf whose pattern is the CEL value `pattern`, known only at run time (a
    ``{{ }}`` variable in a pattern). Kyverno substitutes the variable, then reads the result as a leaf; here a
    text is read as one plain operand (a Go duration, else a quantity, else the text itself; operators and
    wildcards in the variable's value are not interpreted, which the proof checks), a number as Kyverno's
    JSON numbers (floats) compare, a bool as itself, null as any zero value."""
    leaf = "patternValue"  # bound once, below
    text = f"string({value})"
    scalar = f"type({value}) in [string, int, uint, double, bool]"
    as_text = (f"({leaf}.matches({cel.string(GO_DURATION)}) && {text}.matches({cel.string(GO_DURATION)})) ? "
               f"duration({text}) == duration({leaf}) : ((isQuantity({leaf}) && isQuantity({text})) ? "
               f"quantity({text}).compareTo(quantity({leaf})) == 0 : {text} == {leaf})")
    number = (f"{value} == {leaf} || type({value}) == string && "
              f"({value}.matches({cel.string(_DECIMAL_FLOAT)}) && double({value}) == double({leaf}))")
    test = (f"{leaf} == null ? ({value} == null || {value} == false || {value} == 0 || {value} == '') : "
            f"(type({leaf}) == string ? ({scalar} && ({as_text})) : "
            f"(type({leaf}) == bool ? {value} == {leaf} : ({number})))")
    return f"[dyn({pattern})].all({leaf}, {test})"


@lru_cache(maxsize=4096)
def _form(key: str, exact: bool) -> str | None:
    """The first form of `_FORMS` whose CEL agrees with Kyverno on the pattern's probe values (errors count as
    false, or, with `exact`, as disagreeing); `key` is the pattern as JSON (which keeps 1 apart from 1.0)."""
    pattern = json.loads(key)
    for name, build in _FORMS.items():
        if exact and name in ("operators", "text"):
            continue
        if not exact and name == "guarded":
            continue
        try:
            expression = build(_PLACEHOLDER, pattern)
        except NotConvertible:
            continue
        if _agrees(expression, pattern, own_text=name not in ("operators", "guarded"), exact=exact):
            return name
    for name, build in _FORMS.items():  # numbers aside: Kyverno prints them with %E before reading them as text
        if exact and name in ("operators", "text"):
            continue
        try:
            expression = build(_PLACEHOLDER, pattern)
        except NotConvertible:
            continue
        if _agrees(expression, pattern, own_text=name not in ("operators", "guarded"), exact=exact, numbers=False):
            return name
    return None


def _agrees(expression: str, pattern: Any, *, own_text: bool, exact: bool, numbers: bool = True) -> bool:
    """Whether `expression` gives Kyverno's answer on every probe value (numbers left out without `numbers`:
    a text field never holds one in an admitted object, and the migration's proof tries them elsewhere)."""
    from assertree.languages.cel.engine import CelError
    from assertree.languages.kyverno.cel_policies.compile import compile_expression

    program = compile_expression(expression, ("leaf",))
    for sample in probe_values(pattern, own_text=own_text):
        if not numbers and isinstance(sample, int | float) and not isinstance(sample, bool):
            continue
        want = validate_value(sample, pattern)
        try:
            got = program.evaluate({"object": {"v": sample}, "oldObject": None, "request": None, "params": None,
                                    "namespaceObject": None, "variables": {}, "exceptions": {}}, None)
        except CelError:
            if exact:
                return False
            got = False  # an error denies as a failure does
        if got is not want:
            return False
    return True


def probe_values(pattern: Any, *, own_text: bool = False) -> list[Any]:
    """Values that tell a leaf's answers apart: each JSON kind, zero values, and values drawn from the
    pattern (each operand as written, without its wildcards, and its numeric neighbours); the pattern's
    whole text only with `own_text` when it holds operators (see ``operators`` in `_FORMS`)."""
    values: list[Any] = [None, True, False, 0, 1, 3, -2, 0.0, 1.0, 1.5, 3.0, -0.5, 100.0, 1024.0, 2147483648.0,
                         "", "a", "0", "1", "true", "false", "x:y", [], {}, ["a"], {"a": "b"}]
    if isinstance(pattern, bool | int | float):
        values.extend([pattern, str(pattern), f"+{pattern}", f"0{pattern}", f"{pattern}.0"])
        if not isinstance(pattern, bool):
            values.extend([pattern + 1, pattern - 1, float(pattern)])
    if isinstance(pattern, str):
        if own_text or alternatives_hold(pattern, pattern):
            values.append(pattern)
        for alternative in pattern.split("|"):
            for part in alternative.split("&"):
                operand = part.strip().lstrip("!<>=").strip()
                for piece in (operand, *operand.split("-")):
                    values.extend(_neighbours(piece))
    unique: list[Any] = []
    for item in values:
        if isinstance(pattern, str) and item == pattern and not (own_text or alternatives_hold(pattern, pattern)):
            continue
        if not any(type(item) is type(seen) and item == seen for seen in unique):
            unique.append(item)
    return unique


def _neighbours(operand: str) -> list[Any]:
    out: list[Any] = [operand, operand.replace("*", ""), operand.replace("*", "x").replace("?", "y"),
                      operand.replace("*", "x:latest"), "prefix-" + operand.replace("*", "")]
    quantity = parse_quantity(operand)
    if quantity is not None:
        number = _quantity_value(quantity)
        out.extend([number, number + 1, number - 1, str(number), f"{number + 1}", f"{number - 1}"])
    duration = parse_duration_text(operand)
    if duration is not None:
        seconds = duration // 1_000_000_000
        out.extend([f"{seconds}s", f"{seconds + 1}s", f"{max(seconds - 1, 0)}s", f"{seconds * 1000}ms"])
    return out


def _quantity_value(quantity: Quantity) -> float:
    return float(f"{quantity.unscaled}e{quantity.exponent}")


# -- the text form -------------------------------------------------------------------------------------------


def _text_form(value: str, pattern: Any, *, shortcut: bool = True) -> str:
    if not isinstance(pattern, str):
        raise NotConvertible("only string leaves have a text form")
    text = f"string({value})"
    test = _alternatives(text, pattern, _string_part)
    if shortcut and not alternatives_hold(pattern, pattern):  # Kyverno accepts the pattern's own text first
        test = cel.or_([f"{text} == {cel.string(pattern)}", test])
    if validate_value(None, pattern):
        test = cel.or_([f"{value} == null", test])
    return test


# -- the typed form ------------------------------------------------------------------------------------------


def _typed_form(value: str, pattern: Any) -> str:
    if isinstance(pattern, bool):
        return f"{value} == {cel.literal(pattern)}"
    if isinstance(pattern, int | float):
        return _number_leaf(value, pattern)
    if pattern is None:
        return f"{value} == null || {value} == false || {value} == 0 || {value} == ''"
    if isinstance(pattern, dict):
        return f"type({value}) == map"
    if isinstance(pattern, str):
        return _string_leaf(value, pattern)
    raise NotConvertible(f"a pattern leaf of type {type(pattern).__name__}")


def _operators_form(value: str, pattern: Any) -> str:
    return _text_form(value, pattern, shortcut=False)


def _equality_form(value: str, pattern: Any) -> str:
    """``x == 'LoadBalancer'``: for a leaf that is one plain value (CEL's equality is false across kinds)."""
    if isinstance(pattern, dict | list) or (isinstance(pattern, str) and pattern != pattern.strip()):
        raise NotConvertible("not one plain value")
    return f"{value} == {cel.literal(pattern)}"


def _guarded_form(value: str, pattern: Any) -> str:
    """The text form below a conditional anchor: only scalars reach ``string()``."""
    test = _text_form(value, pattern, shortcut=False)
    scalar = f"type({value}) in [bool, int, uint, double, string]"
    if validate_value(None, pattern):
        return cel.or_([f"{value} == null", cel.and_([scalar, test.removeprefix(f"{value} == null || ")])])
    return cel.and_([scalar, test])


_FORMS = {"equality": _equality_form, "operators": _operators_form, "text": _text_form, "guarded": _guarded_form,
          "typed": _typed_form}
"""The forms tried, most readable first (``operators`` and ``text`` only where an error may deny,
``guarded`` only where it may not). ``operators`` and ``guarded`` leave out Kyverno's acceptance of a value
that is the pattern's own text (an image named ``!*:latest`` passes ``!*:latest``): they are checked on
every probe value except that text, a difference the documentation states."""


def _number_leaf(value: str, pattern: int | float) -> str:
    number = cel.literal(pattern)
    if isinstance(pattern, int):
        digits = str(abs(pattern))
        sign = "-" if pattern < 0 else "[+]?" if pattern > 0 else "[+-]?"
        text = f"^{sign}0*{digits.lstrip('0') or '0'}$" if pattern else "^[+-]?0+$"
        strings = f"{value}.matches({cel.string(text)})"
    else:
        strings = f"{value}.matches({cel.string(_DECIMAL_FLOAT)}) && double({value}) == {number}"
    return cel.or_([f"{value} == {number}", f"type({value}) == string && {cel.paren(strings)}"])


def _string_leaf(value: str, pattern: str) -> str:
    always: list[str] = []  # kinds every value of which passes
    parts = []
    if validate_value(None, pattern):
        parts.append(f"{value} == null")
    on_true, on_false = validate_value(True, pattern), validate_value(False, pattern)
    if on_true and on_false:
        always.append("bool")
    elif on_true or on_false:
        parts.append(f"{value} == {cel.literal(on_true)}")
    numbers = _alternatives(value, pattern, _number_part)
    if numbers == cel.TRUE:
        always.extend(("int", "uint", "double"))
    elif numbers != cel.FALSE:
        parts.append(cel.and_([cel.is_number(value), numbers]))
    strings = _alternatives(value, pattern, _string_part)
    if not alternatives_hold(pattern, pattern):
        strings = cel.or_([f"{value} == {cel.string(pattern)}", strings])
    if strings == cel.TRUE:
        always.append("string")
    elif strings != cel.FALSE:
        parts.append(cel.and_([f"type({value}) == string", strings]))
    if always:
        kinds = f"type({value}) == {always[0]}" if len(always) == 1 else f"type({value}) in [{', '.join(always)}]"
        parts.insert(0, kinds)
    return cel.or_(parts)


def _alternatives(value: str, pattern: str, part_test) -> str:
    """Kyverno's ``a | b`` of ``c & d`` structure, each part tested by `part_test`."""
    return cel.or_(
        cel.and_(_part(value, part.strip(" "), part_test) for part in alternative.strip(" ").split("&"))
        for alternative in pattern.split("|"))


def _part(value: str, pattern: str, part_test) -> str:
    operator = operator_of(pattern)
    if operator is Operator.IN_RANGE:
        found = IN_RANGE.match(pattern)
        if found is None:
            return cel.FALSE
        return cel.and_([_part(value, f">= {found.group(1)}", part_test),
                         _part(value, f"<= {found.group(2)}", part_test)])
    if operator is Operator.NOT_IN_RANGE:
        found = NOT_IN_RANGE.match(pattern)
        if found is None:
            return cel.FALSE
        return cel.or_([_part(value, f"< {found.group(1)}", part_test),
                        _part(value, f"> {found.group(2)}", part_test)])
    return part_test(value, pattern[len(operator.value):].strip(), operator)


def _quantity_number(quantity: Quantity) -> str:
    """A quantity's exact value as a CEL number literal (an int when whole)."""
    unscaled, exponent = quantity.unscaled, quantity.exponent
    if exponent >= 0:
        return str(unscaled * 10**exponent)
    return cel.literal(float(f"{unscaled}e{exponent}"))


def _number_part(value: str, operand: str, operator: Operator) -> str:
    """One operator part against a number (Kyverno prints it as text first: an int as is, a float with %f)."""
    duration = parse_duration_text(operand)
    quantity = parse_quantity(operand)
    if duration is not None and quantity is None:
        # only an int 0 prints as a duration ("0"); other numbers reach the text comparison, which for a
        # duration operand never holds (Go prints no number as "1h")
        zero = _order(0, duration, operator)
        text = cel.literal(operator is Operator.NOT_EQUAL)
        return cel.ternary(f"type({value}) == int && {value} == 0", cel.literal(zero), text)
    if quantity is not None:
        return f"{value} {_CEL_ORDER[operator]} {_quantity_number(quantity)}"
    if operator not in (Operator.EQUAL, Operator.NOT_EQUAL):
        return cel.FALSE
    # a wildcard text against Go's number text: decided on the text of each number by the agreement check
    return cel.wildcard_test(operand, f"string({value})") if operator is Operator.EQUAL else cel.not_(
        cel.wildcard_test(operand, f"string({value})"))


def _order(left: int, right: int, operator: Operator) -> bool:
    compare = (left > right) - (left < right)
    return {Operator.EQUAL: compare == 0, Operator.NOT_EQUAL: compare != 0, Operator.MORE: compare > 0,
            Operator.LESS: compare < 0, Operator.MORE_EQUAL: compare >= 0, Operator.LESS_EQUAL: compare <= 0}.get(
        operator, False)


def _string_part(value: str, operand: str, operator: Operator) -> str:
    """One operator part against a string value: as durations, else quantities, else wildcard text."""
    text = _text_part(value, operand, operator)
    quantity = parse_quantity(operand)
    if quantity is not None:
        compared = f"quantity({value}).compareTo(quantity({cel.string(operand)})) {_CEL_ORDER[operator]} 0"
        text = cel.ternary(f"isQuantity({value})", compared, text)
    if parse_duration_text(operand) is not None:
        if "µ" in operand or "μ" in operand:
            raise NotConvertible(f"the duration {operand!r} is spelled with µs, which CEL does not read")
        compared = f"duration({value}) {_CEL_ORDER[operator]} duration({cel.string(operand)})"
        text = cel.ternary(f"{value}.matches({cel.string(GO_DURATION)})", compared, text)
    return text


def _text_part(value: str, operand: str, operator: Operator) -> str:
    if operator is Operator.EQUAL:
        return cel.wildcard_test(operand, value)
    if operator is Operator.NOT_EQUAL:
        return cel.not_(cel.wildcard_test(operand, value))
    return cel.FALSE
