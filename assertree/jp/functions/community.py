"""The 15 functions JMESPath Community Edition adds, as go-jmespath implements them.

Offsets and widths are in UTF-8 **bytes** where go-jmespath counts bytes
(``find_first``, ``pad_left``), because Go strings are byte strings. In
kyverno-json, Kyverno's library later replaces `items`, `replace`, `split`
and `trim`; these versions stay reachable in the ``community`` dialect, which
the compliance suites test.
"""

from __future__ import annotations

from assertree.jp.errors import InvalidTypeError, InvalidValueError
from assertree.jp.functions.unicase import simple_lower, simple_upper
from assertree.jp.limits import check_replace, check_split, check_string_length
from assertree.jp.registry import function

_GO_WHITESPACE = (  # unicode.IsSpace
    "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000"
)


def _integer(value, name: str, argument: str) -> int:
    if float(value).is_integer():
        return int(value)
    raise InvalidValueError(f"invalid value, the function '{name}' expects its '{argument}' argument to be an integer.")


def _find(subject: str, sub: str, start, end, name: str, last: bool):
    if not subject or not sub:
        return None
    data = subject.encode()
    needle = sub.encode()
    low = 0 if start is None else max(0, _integer(start, name, "start"))
    high = len(data) if end is None else min(len(data), _integer(end, name, "end"))
    if low > high:
        raise InvalidValueError(f"invalid value, the function '{name}' expects 'start' to be at most 'end'.")
    position = data.rfind(needle, low, high) if last else data.find(needle, low, high)
    return None if position < 0 else position


@function("find_first(subject: string, sub: string, start?: number, end?: number) -> number|null")
def find_first(subject, sub, start=None, end=None):
    """Byte offset of the first occurrence of `sub` in `subject[start:end]`, or null."""
    return _find(subject, sub, start, end, "find_first", last=False)


@function("find_last(subject: string, sub: string, start?: number, end?: number) -> number|null")
def find_last(subject, sub, start=None, end=None):
    """Byte offset of the last occurrence of `sub` in `subject[start:end]`, or null."""
    return _find(subject, sub, start, end, "find_last", last=True)


@function("from_items(pairs: array[array]) -> object")
def from_items(pairs):
    """An object built from `[key, value]` pairs; later pairs win."""
    out = {}
    for pair in pairs:
        if len(pair) != 2 or not isinstance(pair[0], str):
            raise InvalidValueError("invalid value, each array must contain two elements, a pair of string and value")
        out[pair[0]] = pair[1]
    return out


@function("group_by(items: array, expression: expref) -> object|null")
def group_by(items, expression):
    """Items grouped under the string the expression gives for each (null for an empty array)."""
    if not items:
        return None
    groups: dict[str, list] = {}
    for item in items:
        key = expression(item)
        if not isinstance(key, str):
            raise InvalidTypeError("invalid type, the expression must evaluate to a string")
        groups.setdefault(key, []).append(item)
    return groups


@function("items(object: object) -> array")
def items(obj):
    """The object as `[key, value]` pairs."""
    return [[key, value] for key, value in obj.items()]


@function("lower(subject: string) -> string")
def lower(subject):
    """The string in lower case (Go's simple case mapping, as `to_lower`)."""
    return simple_lower(subject)


@function("upper(subject: string) -> string")
def upper(subject):
    """The string in upper case (Go's simple case mapping, as `to_upper`)."""
    return simple_upper(subject)


def _pad(subject: str, width, pad, name: str, left: bool) -> str:
    if not float(width).is_integer() or width < 0:
        raise InvalidValueError(
            f"invalid value, the function '{name}' expects its 'width' argument to be a an integer value "
            "greater than or equal to zero."
        )
    if len(pad.encode()) > 1:
        raise InvalidValueError(f"invalid value, the function '{name}' expects its 'pad' argument to be a single byte.")
    missing = int(width) - len(subject.encode())
    if missing <= 0 or not pad:
        return subject
    check_string_length(f"{name}()", len(subject) + missing)  # before `pad * missing` asks for the memory
    return pad * missing + subject if left else subject + pad * missing


@function("pad_left(subject: string, width: number, pad?: string) -> string")
def pad_left(subject, width, pad=" "):
    """The string padded on the left to `width` bytes."""
    return _pad(subject, width, pad, "pad_left", left=True)


@function("pad_right(subject: string, width: number, pad?: string) -> string")
def pad_right(subject, width, pad=" "):
    """The string padded on the right to `width` bytes."""
    return _pad(subject, width, pad, "pad_right", left=False)


def _count(value, name: str) -> int:
    if value is None:
        return -1
    if not float(value).is_integer() or value < 0:
        raise InvalidValueError(
            f"invalid value, the function '{name}' expects its 'count' argument to be an integer "
            "greater than or equal to zero."
        )
    return int(value)


@function("replace(subject: string, old: string, new: string, count?: number) -> string")
def replace(subject, old, new, count=None):
    """`subject` with `old` replaced by `new` (all occurrences, or the first `count`)."""
    limit = _count(count, "replace")
    check_replace("replace()", subject, old, new, limit)
    return subject.replace(old, new, limit)


@function("split(subject: string, separator: string, count?: number) -> array[string]")
def split(subject, separator, count=None):
    """The string cut at each separator (at most `count` cuts)."""
    limit = _count(count, "split")
    if subject == "":
        return []
    if limit == 0:
        return [subject]
    check_split("split()", subject, separator)
    if separator == "":
        characters = list(subject)
        if limit < 0 or limit >= len(characters):
            return characters
        return characters[:limit] + ["".join(characters[limit:])]
    return subject.split(separator, limit)


def _strip(subject: str, chars, how: str) -> str:
    cutset = chars if chars else _GO_WHITESPACE
    if how == "left":
        return subject.lstrip(cutset)
    if how == "right":
        return subject.rstrip(cutset)
    return subject.strip(cutset)


@function("trim(subject: string, chars?: string) -> string")
def trim(subject, chars=None):
    """The string without leading and trailing `chars` (white space by default)."""
    return _strip(subject, chars, "both")


@function("trim_left(subject: string, chars?: string) -> string")
def trim_left(subject, chars=None):
    """The string without leading `chars` (white space by default)."""
    return _strip(subject, chars, "left")


@function("trim_right(subject: string, chars?: string) -> string")
def trim_right(subject, chars=None):
    """The string without trailing `chars` (white space by default)."""
    return _strip(subject, chars, "right")


@function("zip(first: array, *rest: array) -> array")
def zip_(first, *rest):
    """Arrays of the i-th items of each array, as long as the shortest."""
    return [list(group) for group in zip(first, *rest)]
