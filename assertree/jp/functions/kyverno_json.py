"""kyverno-json's own four functions: at, concat, json_parse and wildcard.

They are registered after the community builtins and before Kyverno's
library, as kyverno-json does. Where the Go code panics (`at` with an index
out of range) an ordinary function error is raised instead.

`json_parse` decodes like kyverno-json's decoder (apimachinery's
``util/json``) except for one Go typing artefact: integers come back as
ordinary numbers, not Go ``int64`` values that ``type()``, ``abs()``, the
arithmetic functions and ``==`` would reject. Integers beyond int64 become
floats as in Go, numbers beyond float64 are errors, and the messages for
the usual mistakes read as Go's (``unexpected end of JSON input``).
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from assertree.jp.errors import FunctionError
from assertree.jp.functions.conversions import INT64_MAX, INT64_MIN
from assertree.jp.functions.wildcard import wildcard_match
from assertree.jp.registry import function


@function("at(array: array, index: number) -> any")
def at(array, index):
    """The element of `array` at `index` (truncated toward zero); an index out of range is an error."""
    position = int(index) if math.isfinite(index) else None
    if position is None or not 0 <= position < len(array):
        shown = position if position is not None else index
        raise FunctionError.kyverno("at", f"index out of range [{shown}] with length {len(array)}")
    return array[position]


@function("concat(a: string, b: string) -> string")
def concat(a, b):
    """The two strings joined."""
    return a + b


@function("json_parse(text: string) -> any")
def json_parse(text):
    """The JSON value `text` holds."""
    try:
        return decode_json(text)
    except ValueError as error:
        raise FunctionError.kyverno("json_parse", str(error)) from None


@function("wildcard(pattern: string, name: string) -> boolean")
def wildcard(pattern, name):
    """Whether `name` matches the wildcard `pattern` (`*` any run, `?` one character)."""
    return wildcard_match(pattern, name)


def decode_json(text: str) -> Any:
    """Decode JSON text as kyverno-json does; ValueError, worded as Go's, if it is not JSON.

    orjson decodes the common case (Terraform's JSON-in-a-string attributes) several times
    faster; text it rejects, and text with integers that may not fit int64 (which Go reads as
    float64 and orjson keeps exact), go through the exact decoder (`decode_json_exactly`) for Go's
    results and error texts. Invariant: both give the same value (`tests/functions/test_kyverno_json.py`
    holds them to each other on random JSON).
    """
    if _LONG_DIGIT_RUN.search(text) is None:
        import orjson

        try:
            return orjson.loads(text)
        except orjson.JSONDecodeError:
            pass
    return decode_json_exactly(text)


def decode_json_exactly(text: str) -> Any:
    """`decode_json` without its short cut: Python's decoder with Go's number rules and error texts."""
    try:
        value = json.loads(text, parse_int=_integer, parse_float=_float, parse_constant=_not_json)
    except json.JSONDecodeError as error:
        raise ValueError(_go_syntax_error(error)) from None
    except RecursionError:
        raise ValueError("exceeded max depth") from None
    if "\\u" in text and _has_surrogate(value):
        value = _replace_surrogates(value)
    return value


# 19 digits in a row: an integer that may not fit int64 (or a long string of digits, also sent the exact way).
# Spelled `[0-9][0-9]{18}`, not `[0-9]{19}`: CPython's re then scans for the first digit before trying a
# match, 2.5-3x faster over the ~500-character texts of a Terraform plan (the same matches).
_LONG_DIGIT_RUN = re.compile(r"[0-9][0-9]{18}")


def _integer(digits: str) -> int | float:
    if len(digits) <= 20:
        number = int(digits)
        if INT64_MIN <= number <= INT64_MAX:
            return number
    return _float(digits)  # Go falls back to float64 beyond int64


def _float(digits: str) -> float:
    number = float(digits)
    if math.isinf(number):
        shown = digits if len(digits) <= 40 else digits[:37] + "..."
        raise ValueError(f"json: cannot unmarshal number {shown} into Go value of type float64")
    return number


def _not_json(word: str) -> Any:
    raise json.JSONDecodeError("Expecting value", word, 0)


_GO_CONTEXTS = {
    "Expecting value": "looking for beginning of value",
    "Extra data": "after top-level value",
    "Expecting property name enclosed in double quotes": "looking for beginning of object key string",
    "Expecting ':' delimiter": "after object key",
    "Invalid control character at": "in string literal",
}


def _go_syntax_error(error: json.JSONDecodeError) -> str:
    """Go's wording for the common mistakes; Python's reason, with the offset, for the rest."""
    rest = error.doc[error.pos :]
    if not rest.strip(" \t\r\n") or error.msg.startswith("Unterminated string"):
        return "unexpected end of JSON input"
    if error.msg == "Expecting value" and (literal := _broken_literal(rest)):
        return literal
    context = _GO_CONTEXTS.get(error.msg)
    if context is None:
        return f"invalid character {_go_char(rest[0])} at offset {error.pos}: {error.msg}"
    return f"invalid character {_go_char(rest[0])} {context}"


def _broken_literal(rest: str) -> str | None:
    """Go's message for a misspelt or cut-off ``null``/``true``/``false`` (Go reads the end as a space)."""
    word = {"n": "null", "t": "true", "f": "false"}.get(rest[0])
    if word is None:
        return None
    for index, expected in enumerate(word):
        found = rest[index] if index < len(rest) else " "
        if found != expected:
            return f"invalid character {_go_char(found)} in literal {word} (expecting {_go_char(expected)})"
    return None


def _go_char(char: str) -> str:
    """A character quoted as Go's JSON errors quote it: 'x', '\\n', '\\''."""
    if char == "'":
        return "'\\''"
    if char == '"':
        return "'\"'"
    return "'" + json.dumps(char, ensure_ascii=False)[1:-1] + "'"


def _has_surrogate(value: Any) -> bool:
    if isinstance(value, str):
        return any("\ud800" <= ch <= "\udfff" for ch in value)
    if isinstance(value, list):
        return any(_has_surrogate(item) for item in value)
    if isinstance(value, dict):
        return any(_has_surrogate(key) or _has_surrogate(item) for key, item in value.items())
    return False


def _replace_surrogates(value: Any) -> Any:
    """Lone UTF-16 surrogates (from ``\\ud800`` escapes) become U+FFFD, as Go decodes them."""
    if isinstance(value, str):
        return "".join("\ufffd" if "\ud800" <= ch <= "\udfff" else ch for ch in value)
    if isinstance(value, list):
        return [_replace_surrogates(item) for item in value]
    if isinstance(value, dict):
        return {_replace_surrogates(key): _replace_surrogates(item) for key, item in value.items()}
    return value
