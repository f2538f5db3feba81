"""YAML as Kyverno's ``parse_yaml`` reads it (sigs.k8s.io/yaml over go-yaml v2).

sigs.k8s.io/yaml: go-yaml v2 reads the first document, then
the value goes through JSON. PyYAML supplies the event stream (libyaml when
available, the C library go-yaml v2 was ported from, so syntax errors carry
the same problem texts); plain scalars are then resolved by go-yaml v2's
rules rather than PyYAML's (``y``/``n``/``on``/``off`` are booleans, ``0o17``
is octal, ``1e3`` is a float, no base-60 numbers, timestamps stay strings),
and the value is made JSON as sigs.k8s.io/yaml does (keys become strings,
NaN and infinities are errors, integral floats read back as integers).
Values are built from events with an explicit stack, so nesting depth costs
no Python recursion; it is capped at 1024 levels, as for payloads (libyaml's
flow parsing slows quadratically with depth and its own composer can crash
on very deep input). An alias shares the anchored value instead of copying
it, but counts as the copy go-yaml makes: go-yaml v2's alias budget
(`limits.yaml_alias_ratio`) refuses a "billion laughs" document with its
error, ``yaml: document contains excessive aliasing``.

Imported on first use of ``parse_yaml``, so scans that never call it do not
load PyYAML's event machinery for it.
"""

from __future__ import annotations

import math
import re
from typing import Any

import yaml

from assertree.documents.limits import MAX_NESTING, make_room_in_libyaml, yaml_alias_ratio
from assertree.jp.errors import FunctionError, LimitError
from assertree.jp.functions.base64 import Base64Error, decode_base64
from assertree.jp.functions.conversions import INT64_MAX, INT64_MIN, float32_text, go_g_layout, go_string, utf8_bytes
from assertree.jp.values import go_float_word

_EventSource = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
make_room_in_libyaml()  # before any YAML is read here: a process that read none elsewhere has libyaml's limit
_MAX_DEPTH = MAX_NESTING
_UINT64_LIMIT = 1 << 64

_TAG = "tag:yaml.org,2002:"
_STR, _BOOL, _INT, _FLOAT, _NULL, _TIMESTAMP, _BINARY, _MERGE = (
    _TAG + name for name in ("str", "bool", "int", "float", "null", "timestamp", "binary", "merge")
)
_RESOLVABLE = frozenset((_STR, _BOOL, _INT, _FLOAT, _NULL, _TIMESTAMP))


def _words(tag: str, value: Any, *spellings: str) -> dict[str, tuple[str, Any]]:
    return {spelling: (tag, value) for spelling in spellings}


# go-yaml v2's words: the YAML 1.1 booleans in three casings (y and n included), nulls, special floats.
_RESERVED = {
    **_words(_BOOL, True, "y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"),
    **_words(_BOOL, False, "n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"),
    **_words(_NULL, None, "", "~", "null", "Null", "NULL"),
    **_words(_FLOAT, math.nan, ".nan", ".NaN", ".NAN"),
    **_words(_FLOAT, math.inf, ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"),
    **_words(_FLOAT, -math.inf, "-.inf", "-.Inf", "-.INF"),
}
_NUMBER_START = frozenset("+-0123456789")
_WORD_START = frozenset("yYnNtTfFoO~.") | _NUMBER_START  # other first characters are always strings
_GO_INTEGER = re.compile(r"([+-]?)(0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+|0[0-7]*|[1-9][0-9]*)")
_YAML_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?")
_DOT_FLOAT = re.compile(r"\.[0-9]+([eE][-+]?[0-9]+)?")
_TIMESTAMP_TEXT = re.compile(
    r"[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}"
    r"(?:[Tt][0-9]{1,2}:[0-9]{1,2}:[0-9]{1,2}(?:\.[0-9]+)?(?:Z|[+-][0-9]{2}:[0-9]{2})"
    r"| [0-9]{1,2}:[0-9]{1,2}:[0-9]{1,2}(?:\.[0-9]+)?)?"
)


def _go_integer(text: str) -> int | None:
    """Go's ``ParseInt(text, 0, 64)``, then ``ParseUint(text, 0, 64)``: the integer, or None."""
    match = _GO_INTEGER.fullmatch(text)
    if match is None:
        return None
    sign, digits = match.groups()
    if len(digits) > 66:  # longer than any 64-bit integer in any base (0b and 64 binary digits)
        return None
    if len(digits) > 1 and digits[0] == "0" and digits[1].isdigit():
        number = int(digits, 8)  # a leading zero means octal
    else:
        number = int(digits, 0)
    if sign == "-":
        number = -number
    if INT64_MIN <= number <= INT64_MAX or (not sign and number < _UINT64_LIMIT):
        return number
    return None


def _finite_float(text: str) -> float | None:
    number = float(text)  # never limited by Python's int digit limit; 10**5000 reads as inf
    return None if math.isinf(number) else number  # Go's ParseFloat fails on overflow


def _resolve(text: str) -> tuple[str, Any]:
    """What go-yaml v2 makes of a scalar's text: (tag, value); timestamps are not looked for here."""
    if text and text[0] not in _WORD_START:
        return _STR, text
    reserved = _RESERVED.get(text)
    if reserved is not None:
        return reserved
    if text[0] == ".":
        if _DOT_FLOAT.fullmatch(text) and (number := _finite_float(text)) is not None:
            return _FLOAT, number
    elif text[0] in _NUMBER_START:
        plain = text.replace("_", "")
        integer = _go_integer(plain)
        if integer is not None:
            return _INT, integer
        if _YAML_FLOAT.fullmatch(plain) and (number := _finite_float(plain)) is not None:
            return _FLOAT, number
    return _STR, text


_BASE60_FLOAT = re.compile(r"[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?")


def plain_is_string(text: str) -> bool:
    """Whether go-yaml v2 would read `text`, written plain, back as the same string: what its encoder asks
    before writing a string without quotes (else it double-quotes it: ``"3"``, ``"true"``, ``"y"``, a date)."""
    return (_resolve(text)[0] == _STR and not _TIMESTAMP_TEXT.fullmatch(text)
            and not _BASE60_FLOAT.fullmatch(text))


def _short_tag(tag: str) -> str:
    return "!!" + tag.removeprefix(_TAG) if tag.startswith(_TAG) else tag


def _scalar(event: yaml.ScalarEvent) -> Any:
    """A scalar as go-yaml v2 decodes it into an ``interface{}``."""
    tag, text = event.tag, event.value
    if tag is None:
        return _resolve(text)[1] if event.implicit[0] else text  # plain scalars are resolved, quoted ones not
    if tag == _BINARY:
        try:
            return go_string(decode_base64(utf8_bytes(text)))
        except Base64Error:
            raise FunctionError("yaml: !!binary value contains invalid base64 data") from None
    if tag not in _RESOLVABLE or tag == _STR:
        return text  # unknown tags keep the text
    if tag == _TIMESTAMP:
        resolved_tag, value = (_TIMESTAMP, text) if _TIMESTAMP_TEXT.fullmatch(text) else _resolve(text)
    else:
        resolved_tag, value = _resolve(text)
    if resolved_tag == tag:
        return value
    if tag == _FLOAT and resolved_tag == _INT:
        return float(value)
    shown = text if len(text) <= 60 else text[:57] + "..."
    raise FunctionError(f"yaml: cannot decode {_short_tag(resolved_tag)} `{shown}` as a {_short_tag(tag)}")


_YAML_FLOAT_WORDS = {"NaN": ".nan", "+Inf": ".inf", "-Inf": "-.inf"}


def _float32_g(number: float) -> str:
    """Go's ``FormatFloat(f, 'g', -1, 32)`` (how sigs.k8s.io/yaml writes float keys), with YAML's inf/nan words."""
    text = float32_text(number)
    if text in _YAML_FLOAT_WORDS:
        return _YAML_FLOAT_WORDS[text]
    return go_g_layout(text)


def _json_key(key: Any) -> str:
    """A decoded map key as sigs.k8s.io/yaml makes it a JSON object key."""
    if isinstance(key, str):
        return key
    if isinstance(key, bool):
        return "true" if key else "false"
    if isinstance(key, int):
        return str(key)
    if isinstance(key, float):
        return _float32_g(key)
    if key is None:
        raise FunctionError("yaml: a null map key has no JSON equivalent")
    raise FunctionError("yaml: invalid map key: a map key must be a scalar")


def _json_value(value: Any) -> Any:
    """A decoded scalar as it reads back from the JSON text sigs.k8s.io/yaml writes for it."""
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            raise FunctionError(f"json: unsupported value: {go_float_word(value)}")
        if value.is_integer() and INT64_MIN <= value <= INT64_MAX:
            return int(value)  # Go writes it without a fraction, and it reads back as an integer
        return value
    if isinstance(value, int) and not isinstance(value, bool) and value > INT64_MAX:
        return float(value)  # a uint64 beyond int64 reads back as a float
    return value


def _merge(target: dict, value: Any) -> None:
    """go-yaml v2's ``<<``: a map, or a list of maps where earlier maps win, sets keys of `target`."""
    sources = reversed(value) if isinstance(value, list) else [value]
    for source in sources:
        if not isinstance(source, dict):
            raise FunctionError("yaml: map merge requires map or sequence of maps as the value")
        target.update(source)


_MERGE_KEY = object()


class _Collection:
    """A sequence or mapping whose events are still arriving."""

    __slots__ = ("anchor", "key", "size", "value")

    def __init__(self, anchor: str | None, value: list | dict) -> None:
        self.anchor = anchor
        self.value = value
        self.key: Any = None  # a mapping's pending key; None while a key is expected
        self.size = 1  # the nodes go-yaml decodes for this one, aliases expanded


    def add(self, item: Any, merge_key: bool) -> None:
        if isinstance(self.value, list):
            self.value.append(_json_value(item))
        elif self.key is None:
            self.key = _MERGE_KEY if merge_key else _json_key(item)
        else:
            if self.key is _MERGE_KEY:
                _merge(self.value, item)
            else:
                self.value[self.key] = _json_value(item)
            self.key = None


class _AliasBudget:
    """go-yaml v2's count of decoded nodes and of those an alias expanded (decode.go, ``unmarshal``)."""

    __slots__ = ("aliased", "decoded")

    def __init__(self) -> None:
        self.decoded = 1  # the document node
        self.aliased = 0

    def add(self, decoded: int, aliased: int = 0) -> None:
        self.decoded += decoded
        self.aliased += aliased
        if self.aliased > 100 and self.decoded > 1000 and self.aliased / self.decoded > yaml_alias_ratio(self.decoded):
            raise LimitError("yaml: document contains excessive aliasing")


def _build_document(events: Any) -> Any:
    """The value of the document whose start event was just read, from the rest of its events."""
    anchors: dict[str, tuple[Any, int]] = {}  # name: (value, its size in decoded nodes)
    open_anchors: dict[str, int] = {}  # anchors of the collections being read: an alias to one is a cycle
    budget = _AliasBudget()
    stack: list[_Collection] = []
    while True:
        event = events.get_event()
        merge_key = False
        if isinstance(event, yaml.ScalarEvent):
            value, size = _scalar(event), 1
            merge_key = event.value == "<<" and (event.tag == _MERGE or (event.tag is None and event.implicit[0]))
            anchor = event.anchor
            budget.add(1)
        elif isinstance(event, yaml.AliasEvent):
            name = event.anchor or ""  # an alias always names its anchor
            if open_anchors.get(name):
                raise FunctionError(f"yaml: anchor '{name}' value contains itself")
            if name not in anchors:
                raise FunctionError(f"yaml: unknown anchor '{name}' referenced")
            (value, expanded), anchor = anchors[name], None
            size = 1 + expanded
            budget.add(size, expanded)  # before the shared value can reach anything that walks it
        elif isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
            if len(stack) == _MAX_DEPTH:
                raise FunctionError(f"yaml: nested more than {_MAX_DEPTH} levels deep")
            stack.append(_Collection(event.anchor, [] if isinstance(event, yaml.SequenceStartEvent) else {}))
            if event.anchor is not None:
                open_anchors[event.anchor] = open_anchors.get(event.anchor, 0) + 1
            budget.add(1)
            continue
        else:  # the end of a sequence or mapping
            collection = stack.pop()
            value, anchor, size = collection.value, collection.anchor, collection.size
            if anchor is not None:
                open_anchors[anchor] -= 1
        if anchor is not None:
            anchors[anchor] = (value, size)
        if not stack:
            events.get_event()  # the document's end, which go-yaml reads too
            return _json_value(value)
        stack[-1].size += size
        stack[-1].add(value, merge_key)


def _yaml_error_text(error: yaml.YAMLError) -> str:
    """go-yaml v2's wording: ``yaml: line N: problem`` (libyaml's problem texts)."""
    if not isinstance(error, yaml.MarkedYAMLError):
        return f"yaml: {getattr(error, 'reason', None) or str(error).splitlines()[0]}"
    line = 0
    if error.problem_mark is not None and error.problem_mark.line:
        line = error.problem_mark.line + (1 if isinstance(error, yaml.scanner.ScannerError) else 0)
    elif error.context_mark is not None:
        line = error.context_mark.line
    where = f"line {line}: " if line else ""
    return f"yaml: {where}{error.problem or 'unknown problem parsing YAML content'}"


def decode_yaml(text: str) -> Any:
    """The JSON value of the first YAML document in `text`; FunctionError with go-yaml's text."""
    events = _EventSource(utf8_bytes(text))
    try:
        events.get_event()  # the stream's start
        if events.check_event(yaml.StreamEndEvent):
            return None
        events.get_event()  # the document's start
        return _build_document(events)
    except yaml.YAMLError as error:
        raise FunctionError(_yaml_error_text(error)) from None
    finally:
        events.dispose()
