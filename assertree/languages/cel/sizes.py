"""How big a CEL value can be: the sizes the cost estimate (`cost`) reasons with.

Kubernetes bounds the cost of a CEL expression with the sizes its schema
allows (``maxItems``, ``maxLength``, or the largest request for an unbounded
list); assertree's data has no schema, so its sizes are read from the data an
expression is about to run on, as if the data were its own schema: a `Size`
holds upper bounds for a value, or for any one of several values (the
elements of a list are one `Size`: the longest, the largest, with the fields
of all of them). It is measured lazily: ``object.metadata.name`` looks at one
string, not at the whole document, and what was measured is kept with the
value (`measure` keeps the last documents it saw, by identity, as the engine
keeps their CEL activations).

What a `Size` promises, for the value or any of the values it stands for:

- `length`: a list has at most this many items, a map this many entries;
- `chars`: a string has at most this many characters, bytes this many bytes;
- `number`: an integer's magnitude is at most this (None: unknown);
- `bytes()`: one copy takes at most this many bytes, by the rough model
  below (a string counts four bytes a character unless it is ASCII);
- `element()`, `key()`, `field(name)`: the same promises for the items of a
  list or the values of a map, the keys of a map, and the value under one key;
- `kinds`: which of `STRING`, `BYTES`, `LIST`, `MAP`, `SCALAR` it may be.

The memory model (`VALUE`, `ITEM`, `ENTRY`) is deliberately rough: it is for
telling a policy that builds a few kilobytes from one that builds gigabytes.
"""

from __future__ import annotations

import dataclasses
import datetime
import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from typing import Any

import orjson

__all__ = ["BYTES", "BYTES_PER_CHARACTER", "EMPTY", "ENTRY", "INFINITE", "ITEM", "LIST", "MAP", "SCALAR", "STRING",
           "VALUE", "Derived", "Measured", "Size", "Union", "anything", "cap", "join", "measure", "scalar"]

STRING, BYTES, LIST, MAP, SCALAR = 1, 2, 4, 8, 16
ANY_KIND = STRING | BYTES | LIST | MAP | SCALAR

VALUE = 48  # bytes of one value (a scalar, or the header of a string, list or map), as Python or CEL holds it
ITEM = 16  # bytes of one slot of a list, besides the item itself
ENTRY = 64  # bytes of one entry of a map, besides its key and value

INFINITE = 10**18  # larger than any limit; arithmetic on sizes saturates here

BYTES_PER_CHARACTER = VALUE
"""More bytes of the model than one character of a map's or list's compact JSON text can stand for:
a string's two quotes and characters stand for `VALUE` and at most four bytes a character, an empty
list's two characters for `VALUE`, a number in a list (``0,``) for an item and a value (64 bytes for
two characters); the most there is, ``[0]``, is 112 bytes for 3 characters (tests/cel/test_cel_limits.py
holds the ratio)."""


def cap(number: int) -> int:
    """`number`, saturated at INFINITE (sizes never need more, and stay cheap to multiply)."""
    return number if number < INFINITE else INFINITE


class Size:
    """Upper bounds for a value or any of several values (see the module docstring)."""

    __slots__ = ("chars", "kinds", "length", "number")

    kinds: int
    length: int
    chars: int
    number: int | None

    def bytes(self) -> int:
        raise NotImplementedError

    def bound_bytes(self) -> int:
        """At least `bytes()`, found faster (the size classes of `probes` need only a bound)."""
        return self.bytes()

    def element(self) -> Size:
        raise NotImplementedError

    def key(self) -> Size:
        raise NotImplementedError

    def field(self, name: str) -> Size:
        """The value under the string key `name` (the element when the keys are not known one by one)."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(kinds={self.kinds}, length={self.length}, chars={self.chars}, "
                f"number={self.number})")


class Derived(Size):
    """A size worked out by the estimate (a value the expression builds), or a fixed one."""

    __slots__ = ("_bytes", "_element", "_fields", "_key")

    def __init__(self, kinds: int, length: int, bytes_: int, *, chars: int = 0, element: Size | None = None,
                 key: Size | None = None, fields: Mapping[str, Size] | None = None,
                 number: int | None = None) -> None:
        self.kinds = kinds
        self.length = length if length < INFINITE else INFINITE
        self.chars = chars if chars < INFINITE else INFINITE
        self.number = number if number is None or number < INFINITE else INFINITE
        self._bytes = bytes_ if bytes_ < INFINITE else INFINITE
        self._element = element
        self._key = key
        self._fields = fields

    def bytes(self) -> int:
        return self._bytes

    def element(self) -> Size:
        return self._element if self._element is not None else EMPTY

    def key(self) -> Size:
        return self._key if self._key is not None else EMPTY

    def field(self, name: str) -> Size:
        if self._fields is not None:
            return self._fields.get(name, EMPTY)
        return self.element()


EMPTY: Size = Derived(0, 0, VALUE, number=0)
"""No value (an empty list, a missing field: nothing to iterate, nothing to copy)."""


def scalar(number: int | None = None) -> Size:
    """A number, a boolean, null, a timestamp: `number` bounds an integer's magnitude (None: unknown)."""
    if number is None:
        return _SCALAR
    return Derived(SCALAR, 0, VALUE, number=number)


_SCALAR = Derived(SCALAR, 0, VALUE)


def anything(length: int, bytes_: int, chars: int | None = None) -> Size:
    """Any value whose lists and maps have at most `length` items, whose strings have at most `chars`
    characters (`length` when not given) and that takes at most `bytes_`, however nested."""
    size = Derived(ANY_KIND, length, bytes_, chars=length if chars is None else chars)
    size._element = size._key = size
    return size


class Measured(Size):
    """The size of one concrete Python value, measured as the estimate asks for parts of it."""

    __slots__ = ("_bound", "_bytes", "_children", "_element", "_key", "_longest", "_measurable", "_most_chars",
                 "source", "value")

    def __init__(self, value: Any) -> None:
        self.value = self.source = value
        self._bytes: int | None = None
        self._bound: int | None = None
        self._longest: int | None = None
        self._most_chars: int | None = None
        self._measurable: bool | None = None
        self._element: Size | None = None
        self._key: Size | None = None
        self._children: dict[str, Size] | None = None
        self.number = None
        self.length = self.chars = 0
        kind = type(value)
        if kind is str:
            self.kinds, self.chars = STRING, len(value)
        elif kind is dict or isinstance(value, Mapping):
            self.kinds, self.length = MAP, len(value)
        elif kind is list or kind is tuple:
            self.kinds, self.length = LIST, len(value)
        elif kind is bytes or kind is bytearray:
            self.kinds, self.chars = BYTES, len(value)
        elif kind is int:
            self.kinds, self.number = SCALAR, min(abs(value), INFINITE)
        elif dataclasses.is_dataclass(value) and not isinstance(value, type):
            self.value = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
            self.kinds, self.length = MAP, len(self.value)
        else:
            self.kinds = SCALAR

    def bytes(self) -> int:
        if self._bytes is None:
            self._survey()
        assert self._bytes is not None
        return self._bytes

    def bound_bytes(self) -> int:
        if self._bytes is not None:
            return self._bytes
        if self._bound is None:
            self._bound = self._json_bound()
        return self._bound

    def _json_bound(self) -> int:
        """`BYTES_PER_CHARACTER` times the length of the value's compact JSON text (written in C, many times
        faster than walking the value in Python); the value walked when it is not JSON."""
        value = self.value
        if type(value) is str:
            return VALUE + (len(value) if value.isascii() else 4 * len(value))
        if type(value) is dict or type(value) is list:
            try:
                return BYTES_PER_CHARACTER * len(orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS))
            except (TypeError, ValueError):  # not JSON (a number past 64 bits, another type)
                pass
        return self.bytes()

    def longest(self) -> int:
        """The most items of any list or map in the value (itself included)."""
        if self._longest is None:
            self._survey()
        assert self._longest is not None
        return self._longest

    def most_chars(self) -> int:
        """The most characters of any string (or bytes of any bytes) in the value."""
        if self._most_chars is None:
            self._survey()
        assert self._most_chars is not None
        return self._most_chars

    def measurable(self) -> bool:
        """Whether the whole value is JSON-like data (a context holding other objects cannot be bounded)."""
        if self._measurable is None:
            self._survey()
        return bool(self._measurable)

    def element(self) -> Size:
        if self._element is None:
            if self.kinds == MAP:
                self._element = join(self.field(name) if isinstance(name, str) else Measured(self.value[name])
                                     for name in self.value)
            elif self.kinds == LIST:
                self._element = join(Measured(item) for item in self.value)
            else:
                self._element = EMPTY
        return self._element

    def key(self) -> Size:
        if self._key is None:
            self._key = join(Measured(name) for name in self.value) if self.kinds == MAP else EMPTY
        return self._key

    def field(self, name: str) -> Size:
        if self.kinds != MAP:
            return EMPTY
        if self._children is None:
            self._children = {}
        child = self._children.get(name)
        if child is None:
            child = Measured(self.value[name]) if name in self.value else EMPTY
            self._children[name] = child
        return child

    def _survey(self, parts: bool = True) -> None:
        """`bytes`, `longest`, `most_chars` and `measurable` in one walk (iterative: documents nest 1,024 deep).

        With `parts`, a list or map directly inside this one is measured on its own (`measure`, which
        keeps it), so that a map made anew for each evaluation (Kubernetes' ``variables``) costs its
        entries, not their contents. Written for speed: every input of every evaluation is surveyed
        once (strings and numbers are counted where they are found, only lists and maps are stacked).
        """
        top = self.value
        total = longest = most_chars = 0
        measurable = True
        stack: list[Any] = []
        if type(top) is dict or type(top) is list:
            stack.append(top)
        else:
            total, most_chars, measurable, nested = _leaf(top)
            stack.extend(nested)
        first = parts
        while stack:
            item = stack.pop()
            n = len(item)
            if n > longest:
                longest = n
            if type(item) is dict:
                total += VALUE + ENTRY * n
                for key in item:
                    if type(key) is str:
                        size = len(key)
                        total += VALUE + (size if key.isascii() else 4 * size)
                        if size > most_chars:
                            most_chars = size
                    else:
                        stack.append([key])
                values = item.values()
            else:
                total += VALUE + ITEM * n
                values = item
            for value in values:
                kind = type(value)
                if kind is str:
                    size = len(value)
                    total += VALUE + (size if value.isascii() else 4 * size)
                    if size > most_chars:
                        most_chars = size
                elif kind is dict or kind is list:
                    if first:
                        part = measure(value)
                        if part._bytes is None:
                            part._survey(parts=False)
                        total += part.bytes()
                        longest = max(longest, part.longest())
                        most_chars = max(most_chars, part.most_chars())
                        measurable = measurable and part.measurable()
                    else:
                        stack.append(value)
                elif kind is int or kind is float or kind is bool or value is None:
                    total += VALUE
                else:
                    size, chars, fine, nested = _leaf(value)
                    total, most_chars, measurable = total + size, max(most_chars, chars), measurable and fine
                    stack.extend(nested)
            first = False
        self._bytes, self._longest, self._most_chars, self._measurable = total, longest, most_chars, measurable


def _leaf(value: Any) -> tuple[int, int, bool, list[Any]]:
    """(bytes, characters, measurable, lists to walk) of a value that is not a dict or a list."""
    kind = type(value)
    if kind is str:
        return VALUE + (len(value) if value.isascii() else 4 * len(value)), len(value), True, []
    if kind is bytes or kind is bytearray:
        return VALUE + len(value), len(value), True, []
    if isinstance(value, Mapping):
        return 0, 0, True, [dict(value)]
    if kind is tuple:
        return 0, 0, True, [list(value)]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return 0, 0, True, [{f.name: getattr(value, f.name) for f in dataclasses.fields(value)}]
    fine = value is None or isinstance(value, (bool, int, float, datetime.datetime, datetime.timedelta))
    return VALUE, 0, fine, []


class Union(Size):
    """Any one of several sizes (the elements of a list, the branches of a condition).

    Its measures are worked out when read: `probes` notes what the estimate reads, and a union built
    along the way is often never asked for all of them.
    """

    __slots__ = ("_bytes", "_element", "_fields", "_key", "_measures", "parts")

    def __init__(self, parts: list[Size]) -> None:
        self.parts = parts
        self._measures: dict[str, Any] = {}
        self._bytes: int | None = None
        self._element: Size | None = None
        self._key: Size | None = None
        self._fields: dict[str, Size] = {}

    @property
    def kinds(self) -> int:  # type: ignore[override]  # read only: worked out from the parts
        found = self._measures.get("kinds")
        if found is None:
            found = self._measures["kinds"] = _or(part.kinds for part in self.parts)
        return found

    @property
    def length(self) -> int:  # type: ignore[override]
        found = self._measures.get("length")
        if found is None:
            found = self._measures["length"] = max(part.length for part in self.parts)
        return found

    @property
    def chars(self) -> int:  # type: ignore[override]
        found = self._measures.get("chars")
        if found is None:
            found = self._measures["chars"] = max(part.chars for part in self.parts)
        return found

    def bound_bytes(self) -> int:
        return max(part.bound_bytes() for part in self.parts)

    @property
    def number(self) -> int | None:  # type: ignore[override]
        if "number" not in self._measures:
            numbers = [part.number for part in self.parts]
            self._measures["number"] = None if None in numbers else max(n for n in numbers if n is not None)
        return self._measures["number"]

    def bytes(self) -> int:
        if self._bytes is None:
            self._bytes = max(part.bytes() for part in self.parts)
        return self._bytes

    def element(self) -> Size:
        if self._element is None:
            self._element = join(part.element() for part in self.parts)
        return self._element

    def key(self) -> Size:
        if self._key is None:
            self._key = join(part.key() for part in self.parts)
        return self._key

    def field(self, name: str) -> Size:
        found = self._fields.get(name)
        if found is None:
            found = self._fields[name] = join(part.field(name) for part in self.parts)
        return found


def _or(kinds: Iterable[int]) -> int:
    found = 0
    for kind in kinds:
        found |= kind
    return found


def join(sizes: Iterable[Size]) -> Size:
    """A size for any one of `sizes` (EMPTY when there are none)."""
    if type(sizes) is tuple and len(sizes) == 2:  # the common case, quickly
        first, second = sizes
        if first is second or second is EMPTY:
            return first
        if first is EMPTY:
            return second
    parts: list[Size] = []
    seen: set[int] = set()
    for size in sizes:
        for part in size.parts if isinstance(size, Union) else (size,):
            if part is EMPTY or id(part) in seen:
                continue
            seen.add(id(part))
            parts.append(part)
    if not parts:
        return EMPTY
    if len(parts) == 1:
        return parts[0]
    if all(type(part) is Measured and part.kinds == SCALAR for part in parts):
        numbers = [part.number for part in parts]
        return scalar(None if None in numbers else max(n for n in numbers if n is not None))
    if all(type(part) is Measured and part.kinds == STRING for part in parts):
        return Derived(STRING, 0, max(part.bytes() for part in parts), chars=max(part.chars for part in parts))
    return Union(parts)


_KEPT = 128
_local = threading.local()


def measure(value: Any) -> Measured:
    """The `Size` of `value`; a list, map, long string or dataclass is kept by identity (the last `_KEPT`,
    pinned alive), so that every expression evaluated on the same document reuses what was measured."""
    kind = type(value)
    if kind is not dict and kind is not list and not (kind is str and len(value) > 4096) \
            and not dataclasses.is_dataclass(value):
        return Measured(value)
    kept: OrderedDict[int, Measured] = _local.__dict__.setdefault("kept", OrderedDict())
    found = kept.get(id(value))
    if found is not None and found.source is value:
        return found
    if len(kept) >= _KEPT:
        kept.popitem(last=False)  # a plain dict's first key is found in time growing with what was deleted
    size = kept[id(value)] = Measured(value)
    return size
