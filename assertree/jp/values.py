"""JSON values as the dialect sees them: types, truth, equality, Go-style text.

Values are plain Python JSON values (`dict`, `list`, `str`, `int`, `float`,
`bool`, `None`). Two rules differ from Python's own and are kept here, in one
place, so every part of assertree applies them the same way:

* booleans are never numbers (Python's ``True == 1`` must not leak through);
* numbers compare by value whatever their Python type (``3 == 3.0``).

Text forms follow Go, because kyverno-json users see them: `to_json` is Go's
``json.Marshal`` (sorted keys, ``<>&`` escaped, integral floats without a
fraction), used by ``to_string()`` and JSON output of expressions.
"""

from __future__ import annotations

import math
from typing import Any

from assertree.jp.limits import MAX_JSON_LENGTH

NUMBER_TYPES = (int, float)
_NUMBER_TYPE_SET = frozenset((int, float))

_TYPE_NAMES: dict[type, str] = {
    str: "string",
    bool: "boolean",
    int: "number",
    float: "number",
    list: "array",
    dict: "object",
    type(None): "null",
}


def type_name(value: Any) -> str:
    """The JMESPath type of a value: string, number, boolean, array, object, null or expref."""
    name = _TYPE_NAMES.get(type(value))
    if name is not None:
        return name
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    if callable(value):
        return "expref"
    return type(value).__name__


def is_number(value: Any) -> bool:
    """True for int and float, never for bool."""
    return type(value) in _NUMBER_TYPE_SET or (
        isinstance(value, (int, float)) and not isinstance(value, bool)
    )


def is_false(value: Any) -> bool:
    """JMESPath falsiness: null, false, and empty strings, arrays and objects (0 is true)."""
    return value is None or value is False or (type(value) in (str, list, dict) and not value)


def equal(a: Any, b: Any) -> bool:
    """Deep JSON equality: numbers by value, booleans apart from numbers, objects unordered."""
    ta = type(a)
    tb = type(b)
    if ta is tb:
        if a is b and (ta is list or ta is dict):  # Go's DeepEqual too: shared parts ([$a, $a]) cost nothing
            return True
        if ta is list:
            return len(a) == len(b) and all(equal(x, y) for x, y in zip(a, b))
        if ta is dict:
            return len(a) == len(b) and all(k in b and equal(v, b[k]) for k, v in a.items())
        return a == b
    if ta in _NUMBER_TYPE_SET and tb in _NUMBER_TYPE_SET:
        return a == b
    if ta is bool or tb is bool:
        return False
    # Subclasses of the JSON types (rare: user data from Python callers).
    if is_number(a) and is_number(b):
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return len(a) == len(b) and all(k in b and equal(v, b[k]) for k, v in a.items())
    if isinstance(a, str) and isinstance(b, str):
        return str(a) == str(b)
    return False


def format_float(value: float) -> str:
    """A float as Go's ``encoding/json`` writes it: ``3`` not ``3.0``, ``1e+21``, ``1e-7``.

    Raises ValueError for NaN and infinities, which JSON cannot hold.
    """
    if math.isnan(value) or math.isinf(value):
        raise ValueError(f"json: unsupported value: {go_float_word(value)}")
    if value == 0:
        return "-0" if math.copysign(1.0, value) < 0 else "0"
    magnitude = abs(value)
    if 1e-6 <= magnitude < 1e21:
        if value.is_integer() and magnitude < 2**53:  # beyond 2**53, int() shows digits Go does not print
            return str(int(value))
        text = repr(value)
        if "e" in text:  # repr uses exponents below 1e-4 and from 1e16; Go does not in this range
            text = _positional(value)
        return text.removesuffix(".0")
    text = repr(value)
    mantissa, _, exponent = text.partition("e")
    if not exponent:
        return text
    sign = "-" if exponent.startswith("-") else "+"
    digits = exponent.lstrip("+-").lstrip("0") or "0"
    mantissa = mantissa.removesuffix(".0")
    return f"{mantissa}e{sign}{digits}"


def _positional(value: float) -> str:
    """Shortest round-tripping digits of `value`, written without an exponent."""
    from decimal import Decimal

    return format(Decimal(repr(value)), "f")


def go_float_word(value: float) -> str:
    """How Go prints NaN and the infinities (``NaN``, ``+Inf``, ``-Inf``)."""
    if math.isnan(value):
        return "NaN"
    return "+Inf" if value > 0 else "-Inf"


def format_number(value: float) -> str:
    """A number as Go's JSON encoder writes it (integers exactly, floats via `format_float`).

    Raises ValueError for an integer of thousands of digits (Python's limit on
    int-to-text conversion; no Go number is that long).
    """
    if type(value) is float:
        return format_float(value)
    try:
        return str(int(value))
    except ValueError:
        raise ValueError(f"json: unsupported value: an integer of {int(value).bit_length()} bits") from None


_JSON_ESCAPES = {
    '"': '\\"',
    "\\": "\\\\",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "<": "\\u003c",
    ">": "\\u003e",
    "&": "\\u0026",
    "\u2028": "\\u2028",
    "\u2029": "\\u2029",
}


def _quote(text: str) -> str:
    out = ['"']
    for ch in text:
        escaped = _JSON_ESCAPES.get(ch)
        if escaped is not None:
            out.append(escaped)
        elif ch < " ":
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


class JSONTooLongError(ValueError):
    """A value whose JSON text would pass `limits.MAX_JSON_LENGTH` (found while writing, before it is built)."""


def to_json(value: Any) -> str:
    """Compact JSON exactly as Go's ``json.Marshal`` writes a JSON value.

    Raises ValueError for NaN/Infinity and for values that are not JSON, and
    JSONTooLongError (a ValueError) once the text would pass
    `limits.MAX_JSON_LENGTH`: values that share parts (``[$a, $a]``, YAML
    aliases) can describe more text than any memory holds.
    """
    out: list[str] = []
    _write(value, out, [MAX_JSON_LENGTH], _quote, _json_scalar)
    return "".join(out)


def to_display(value: Any) -> str:
    """A value as people read it in reports: compact JSON, keys sorted, no HTML escaping.

    Unlike `to_json` it never fails: NaN and infinities print as Go does
    (``NaN``, ``+Inf``), non-JSON values fall back to ``repr``, and text past
    `limits.MAX_JSON_LENGTH` is cut off with ``... (truncated)``.
    """
    if type(value) is str and len(value) <= _SHORT_STRING:  # the usual field value, quoted in one call
        return _display_quote(value)
    if value is None or value is True or value is False:
        return _LITERALS[value]
    return _display(value)


# Fast path of `to_display` (reports word thousands of field values): a string this short quotes to at most
# six times its length (``\u0000``), far below MAX_JSON_LENGTH, so `_display` would write it whole, unchanged.
_SHORT_STRING = 1000
_LITERALS = {None: "null", True: "true", False: "false"}  # keyed by the three singletons, looked up by identity


def _display(value: Any) -> str:
    """`to_display` by the general path, for any value."""
    out: list[str] = []
    try:
        _write(value, out, [MAX_JSON_LENGTH], _display_quote, _display_scalar)
    except JSONTooLongError:
        out.append(" ... (truncated)")
    return "".join(out)


def json_excerpt(value: Any, width: int = 60) -> str:
    """The start of `value`'s JSON text, at most `width` characters with ``...`` where it was cut; never fails.

    For error messages: costs at most `width` characters of work, whatever the
    size of the value (a type error on a whole Terraform plan, a shared value).
    """
    out: list[str] = []
    try:
        _write(value, out, [width + 1], _quote, _display_scalar)
    except JSONTooLongError:
        out.append("...")
    text = "".join(out)
    return text if len(text) <= width else text[: width - 3] + "..."


def _json_scalar(value: Any) -> str:
    if is_number(value):
        return format_number(value)
    raise ValueError(f"json: unsupported type: {type_name(value)}")


def _display_scalar(value: Any) -> str:
    if is_number(value):
        if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
            return go_float_word(value)
        try:
            return format_number(value)
        except ValueError:
            return f"<an integer of {int(value).bit_length()} bits>"
    try:
        return repr(value)
    except ValueError:  # a subclass's repr may fail the same way
        return f"<{type(value).__name__}>"


def _write(value: Any, out: list[str], budget: list[int], quote: Any, scalar: Any) -> None:
    """Append `value`'s compact JSON text to `out`, keys sorted; `budget[0]` is what may still be written.

    Strings are measured before they are quoted (quoting never shortens), so a
    value over the budget costs at most the budget in time and memory.
    """
    if value is None:
        text = "null"
    elif value is True:
        text = "true"
    elif value is False:
        text = "false"
    elif isinstance(value, str):
        if len(value) + 2 > budget[0]:
            if budget[0] <= _SHOWN_WHEN_CUT:  # an excerpt or a report shows the start of the string
                out.append(quote(value[: max(0, budget[0])]))
            raise _too_long()
        text = quote(value)
    elif isinstance(value, list):
        budget[0] -= 2
        out.append("[")
        for index, item in enumerate(value):
            if index:
                out.append(",")
                budget[0] -= 1
            _write(item, out, budget, quote, scalar)
        out.append("]")
        if budget[0] < 0:
            raise _too_long()
        return
    elif isinstance(value, dict):
        budget[0] -= 2
        out.append("{")
        for index, key in enumerate(sorted(value, key=str)):
            if index:
                out.append(",")
                budget[0] -= 1
            _write(str(key), out, budget, quote, scalar)
            out.append(":")
            budget[0] -= 1
            _write(value[key], out, budget, quote, scalar)
        out.append("}")
        if budget[0] < 0:
            raise _too_long()
        return
    else:
        text = scalar(value)
    budget[0] -= len(text)
    if budget[0] < 0:
        raise _too_long()
    out.append(text)


_SHOWN_WHEN_CUT = 1000  # a string cut by a small budget is written in part; a large budget's loss is not worth it


def _too_long() -> JSONTooLongError:
    return JSONTooLongError(f"the JSON text would be longer than {MAX_JSON_LENGTH:,} characters, assertree's limit")


def _display_quote(text: str) -> str:
    """``json.dumps(text, ensure_ascii=False)``, through the function it calls for a string (a fifth of the time)."""
    import json.encoder

    return json.encoder.encode_basestring(text)


def go_quote(text: str) -> str:
    """Go's ``%q`` for plain text in error messages (escapes ``"`` and ``\\``)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
