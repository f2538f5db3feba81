"""A YAML loader that only ever builds JSON values.

PyYAML's safe loader already refuses to construct Python objects; on top of
that, dates and timestamps stay the strings they were written as (as Go's YAML
reader gives them to kyverno-json), and ``!!binary``/``!!set``/``!!omap`` are
refused, because a policy engine over JSON has no use for other types; a
mapping that repeats a key is an error (as in Go's yaml.v3), wherever the YAML
comes from, so a payload, a policy and a report location all see the same
document. The C loader is used when PyYAML was built with libyaml.

libyaml's composer recurses in C, so a document nested deep enough (about
100,000 levels) crashes the whole process rather than raising; `check_nesting`
refuses documents nested deeper than JSON payloads may be (1024 levels) first.
That limit is assertree's own, whichever PyYAML is installed: libyaml 0.2.6
(in PyYAML 6.0.4's wheels) stops at its own nesting limit of 1,000 levels with
its own words, so where PyYAML lets it be set, libyaml's limit is raised above
assertree's at import (`limits.make_room_in_libyaml`); older libyaml has none.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any, ClassVar

import yaml

from assertree.documents.limits import MAX_NESTING, check_aliases, make_room_in_libyaml

make_room_in_libyaml()  # before any YAML is read (see its docstring)

_Base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
MAX_DEPTH = MAX_NESTING
NESTING_INDICATORS = "[{-:?"  # the characters that can open a nested collection


def check_nesting(text: str) -> None:
    """Raise a YAML error (with its position) if `text` nests collections more than MAX_DEPTH deep.

    Only texts with enough indicator characters to nest that deep pay for the
    extra pass over libyaml's events (its parser keeps an explicit stack, so
    this pass cannot crash).
    """
    if sum(text.count(indicator) for indicator in NESTING_INDICATORS) <= MAX_DEPTH:
        return
    check_event_depth(text)


def check_event_depth(source: Any, limit: int = MAX_DEPTH) -> None:
    """Raise a YAML error at the first collection of `source` (text or an open binary file) nested more
    than `limit` deep, from libyaml's events alone: the composer would recurse in C and crash first."""
    depth = 0
    for event in yaml.parse(source, Loader=_Base):
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > limit:
                # libyaml's marks (yaml._yaml.Mark) carry the same fields as yaml.error.Mark, the only
                # type the stubs accept
                raise yaml.MarkedYAMLError(problem=f"nested more than {limit} levels deep",
                                           problem_mark=event.start_mark)  # type: ignore[arg-type]
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1


# _Base is picked at run time (libyaml's CSafeLoader when PyYAML has it), so mypy cannot use it as a base class
class JSONSafeLoader(_Base):  # type: ignore[misc, valid-type]
    """Safe YAML loading restricted to JSON values (timestamps stay strings, repeated keys refused)."""

    def construct_mapping(self, node, deep=False):
        if isinstance(node, yaml.MappingNode):
            reject_duplicate_keys(node)
        return yaml.constructor.SafeConstructor.construct_mapping(self, node, deep=deep)


def reject_duplicate_keys(node: yaml.MappingNode) -> None:
    """Raise a located YAML error when `node` writes the same key twice (merge keys ``<<`` aside)."""
    seen: dict[tuple, yaml.Node] = {}
    for key_node, _ in node.value:
        if not isinstance(key_node, yaml.ScalarNode) or key_node.tag == "tag:yaml.org,2002:merge":
            continue
        identity = (key_node.tag, key_node.value)
        first = seen.setdefault(identity, key_node)
        if first is not key_node:
            raise yaml.constructor.ConstructorError(
                None, None, f"duplicate key {key_node.value!r} (first defined on line {first.start_mark.line + 1})",
                key_node.start_mark,
            )


def _not_a(node: yaml.Node, text: Any, why: str = "") -> yaml.constructor.ConstructorError:
    kind = node.tag.rsplit(":", 1)[-1]
    return yaml.constructor.ConstructorError(
        None, None, f"cannot read {text!r} as {kind}{': ' + why if why else ''} (explicit !!{kind} tag)",
        node.start_mark)


def _as_string(loader: yaml.SafeLoader, node: yaml.Node) -> str:
    """A timestamp, kept as the text it was written as; an explicit ``!!timestamp`` on other text is an error
    (as in go-yaml)."""
    # any node can be tagged !!timestamp; construct_scalar itself refuses a non-scalar one with a located error
    text = loader.construct_scalar(node)  # type: ignore[arg-type]
    if not yaml.constructor.SafeConstructor.timestamp_regexp.match(text):
        raise _not_a(node, text)
    return text


def _refuse(loader: yaml.SafeLoader, node: yaml.Node):
    raise yaml.constructor.ConstructorError(
        None, None, f"the YAML type {node.tag} has no JSON equivalent", node.start_mark
    )


def checked_scalar(construct):
    """A PyYAML scalar constructor whose failure on text its explicit tag does not fit (``!!int .5``,
    ``!!int ""``, ``!!bool maybe``: a ValueError, IndexError or KeyError inside PyYAML) becomes a
    located YAML error."""

    def checked(loader: yaml.SafeLoader, node: yaml.Node) -> Any:
        try:
            return construct(loader, node)
        except (ValueError, IndexError, KeyError) as error:
            raise _not_a(node, node.value, str(error) if isinstance(error, ValueError) else "") from None

    return checked


JSONSafeLoader.add_constructor("tag:yaml.org,2002:timestamp", _as_string)
for _tag, _construct in (("int", yaml.constructor.SafeConstructor.construct_yaml_int),
                         ("float", yaml.constructor.SafeConstructor.construct_yaml_float),
                         ("bool", yaml.constructor.SafeConstructor.construct_yaml_bool)):
    JSONSafeLoader.add_constructor(f"tag:yaml.org,2002:{_tag}", checked_scalar(_construct))
for _tag in ("binary", "set", "omap", "pairs"):
    JSONSafeLoader.add_constructor(f"tag:yaml.org,2002:{_tag}", _refuse)


# -- payloads: YAML as kyverno-json reads it (gopkg.in/yaml.v3) ------------------------------------

_YAML_V3_FLOAT = re.compile(r"^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$")
_INT64 = 1 << 63


def go_yaml_number(text: str) -> int | float | str:
    """A plain scalar that starts like a number, read as yaml.v3 reads it into an ``any``.

    Underscores are dropped; then Go's base-prefixed integers (``0x1F``, ``0o17``, ``0b101``, and
    ``017``, the YAML 1.1 octal yaml.v3 still reads), 64-bit signed or unsigned; then decimal
    floats; anything else stays the string it was written as (``1:30`` is no sexagesimal number).
    """
    if text.isascii() and text.isdigit() and len(text) < 19 and (text[0] != "0" or len(text) == 1):
        return int(text)  # the common case, decided without the steps below (which give the same number)
    plain = text.replace("_", "")
    sign, digits = (-1, plain[1:]) if plain[:1] == "-" else (1, plain[1:] if plain[:1] == "+" else plain)
    prefix = digits[:2].lower()
    base = {"0x": 16, "0o": 8, "0b": 2}.get(prefix)
    body = digits[2:] if base else digits
    if base is None:
        base = 8 if len(digits) > 1 and digits[0] == "0" else 10
    if body and body.isascii() and body.isalnum():
        try:
            number = sign * int(body, base)
        except ValueError:
            number = None
        if number is not None and -_INT64 <= number < 2 * _INT64:
            return number
    if _YAML_V3_FLOAT.match(plain):
        real = float(plain)
        if not math.isinf(real):  # Go's ParseFloat fails past float64's range: yaml.v3 keeps the string
            return real
    return text


_SPECIAL_FLOATS = {".inf": float("inf"), "+.inf": float("inf"), "-.inf": float("-inf"), ".nan": float("nan")}


def _explicit(node: yaml.Node, pattern: str) -> bool:
    """Whether a scalar's tag was written (``!!int "12"``) rather than resolved from its plain text: only a
    plain scalar matching the resolver's pattern can be resolved to it."""
    # a plain scalar's style is None in PyYAML, "" in libyaml
    return bool(getattr(node, "style", None)) or not re.match(pattern, node.value)


def _payload_int(loader: yaml.SafeLoader, node: yaml.Node) -> Any:
    text = loader.construct_scalar(node)  # type: ignore[arg-type]
    number = go_yaml_number(text)
    if isinstance(number, str) and _explicit(node, _INT_PATTERN):  # yaml.v3: "cannot decode !!str as a !!int"
        raise _not_a(node, text)
    return number


def _payload_float(loader: yaml.SafeLoader, node: yaml.Node) -> Any:
    text = loader.construct_scalar(node)  # type: ignore[arg-type]
    special = _SPECIAL_FLOATS.get(text.lower())
    if special is not None:
        return special
    number = go_yaml_number(text)
    if isinstance(number, str) and _explicit(node, _FLOAT_PATTERN):
        raise _not_a(node, text)
    return float(number) if isinstance(number, int) else number


def _payload_bool(loader: yaml.SafeLoader, node: yaml.Node) -> bool:
    """yaml.v3's booleans only: ``!!bool yes`` is an error there, as ``!!bool maybe`` is."""
    text = loader.construct_scalar(node)  # type: ignore[arg-type]
    if text not in _BOOLEANS:
        raise _not_a(node, text)
    return _BOOLEANS[text]


def _plain_value(loader: yaml.SafeLoader, node: yaml.Node) -> Any:
    """A node with a tag no JSON type has (``!Ref``, ``!GetAtt``, ``!include``): its plain value."""
    if isinstance(node, yaml.ScalarNode):
        return loader.construct_scalar(node)
    if isinstance(node, yaml.SequenceNode):
        return [loader.construct_object(child, deep=True) for child in node.value]
    return loader.construct_mapping(node, deep=True)  # type: ignore[arg-type]


def table_resolve(self: Any, kind: type, value: str, implicit: tuple[bool, bool]) -> str:
    """PyYAML's `BaseResolver.resolve` for a loader with no path resolvers and no wildcard resolver
    (`check_table_resolvable`): called by libyaml's composer for every node, so it does only what
    such tables need. A loader class takes it as its ``resolve``."""
    if kind is yaml.ScalarNode:
        if implicit[0]:
            for tag, pattern in self.yaml_implicit_resolvers.get(value[:1], ()):
                if pattern.match(value):
                    return tag
        return _STR
    return _SEQ if kind is yaml.SequenceNode else _MAP


def check_table_resolvable(loader: type[yaml.resolver.BaseResolver]) -> None:
    """Fail at import if `table_resolve` would not resolve as PyYAML does for `loader`."""
    if loader.yaml_path_resolvers or None in loader.yaml_implicit_resolvers:
        raise AssertionError(f"{loader.__name__}: path or wildcard resolvers, which table_resolve does not read")


class PayloadLoader(JSONSafeLoader):
    """YAML read the way kyverno-json reads payloads (gopkg.in/yaml.v3), as JSON values.

    Scalars follow yaml.v3's resolver (`go_yaml_number` for numbers): only ``true``/``false``
    (any of their three spellings) are booleans, so ``on``, ``yes``, ``no``, ``off`` stay strings;
    ``null``/``~``/empty are null; no sexagesimal numbers. Mapping keys are always strings: a
    scalar key is the text it was written as (``200:`` is ``"200"``, ``on:`` is ``"on"``), as
    JSON's model requires; a list or mapping as a key is an error. A tag no JSON type has (AWS
    CloudFormation's ``!Ref``, ``!GetAtt``, ``!Sub``, any custom tag) gives the value it tags.
    Repeated keys are an error, as everywhere. Configured on PyYAML's resolver tables, so the C
    loader does the parsing.
    """

    yaml_implicit_resolvers: ClassVar[dict] = {}  # its own table: none of PyYAML's YAML 1.1 resolvers

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if not PayloadLoader.yaml_implicit_resolvers:  # the first loader made fills the table (one assignment)
            PayloadLoader.yaml_implicit_resolvers = _implicit_resolvers()
        super().__init__(*args, **kwargs)

    def construct_mapping(self, node, deep=False):
        if not isinstance(node, yaml.MappingNode):  # refused, with a located error
            return yaml.constructor.SafeConstructor.construct_mapping(self, node, deep=deep)
        seen: dict[str, yaml.Node] = {}
        for key_node, _ in node.value:
            if not isinstance(key_node, yaml.ScalarNode):
                raise yaml.constructor.ConstructorError(
                    None, None, "a mapping key must be a string, number or boolean, not a list or mapping "
                    "(JSON keys are strings)", key_node.start_mark)
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            first = seen.setdefault(key_node.value, key_node)
            if first is not key_node:
                raise yaml.constructor.ConstructorError(
                    None, None,
                    f"duplicate key {key_node.value!r} (first defined on line {first.start_mark.line + 1})",
                    key_node.start_mark)
        self.flatten_mapping(node)
        mapping = {}
        for key_node, value_node in node.value:
            mapping[key_node.value] = self.construct_object(value_node, deep=deep)
        return mapping

    resolve = table_resolve

    # libyaml's composer also calls these two for every node, for path resolvers, which this loader has none
    # of (asserted below). Builtins bind no `self`, so these are C calls that do nothing: ``{}.get(parent,
    # index)`` and ``tuple()`` (measured: 9% of a small manifest's parse, against 5% for Python no-ops).
    descend_resolver: ClassVar[Any] = {}.get
    ascend_resolver: ClassVar[Any] = tuple


def _implicit_resolvers() -> dict[str, list[tuple[str, re.Pattern[str]]]]:
    """PayloadLoader's resolver table, as PyYAML's ``add_implicit_resolver`` builds it (first character to
    ``(tag, regex)`` pairs, in order): compiled when the first PayloadLoader is made, not at import (1-3 ms,
    which a scan of JSON payloads never needs)."""
    table: dict[str, list[tuple[str, re.Pattern[str]]]] = {}
    for tag, pattern, first in _RESOLVERS:
        compiled = re.compile(pattern)
        for character in first:
            table.setdefault(character, []).append((f"tag:yaml.org,2002:{tag}", compiled))
    return table


_BOOLEANS = {"true": True, "True": True, "TRUE": True, "false": False, "False": False, "FALSE": False}
_INT_PATTERN = r"^[-+]?[0-9][0-9_]*$|^[-+]?0[xXoObB][0-9a-fA-F_]+$"
_FLOAT_PATTERN = (r"^[-+]?(?:\.[0-9_]+|[0-9][0-9_]*\.[0-9_]*)(?:[eE][-+]?[0-9_]+)?$"
                  r"|^[-+]?[0-9][0-9_]*[eE][-+]?[0-9_]+$|^[-+]?\.(?:inf|Inf|INF)$|^\.(?:nan|NaN|NAN)$")
_RESOLVERS: tuple[tuple[str, str, str | list[str]], ...] = (
    ("bool", r"^(?:true|True|TRUE|false|False|FALSE)$", "tTfF"),
    ("null", r"^(?:~|null|Null|NULL|)$", ["~", "n", "N", ""]),
    ("int", _INT_PATTERN, "-+0123456789"),
    ("float", _FLOAT_PATTERN, "-+.0123456789"),
    ("merge", r"^<<$", "<"),
)
PayloadLoader.add_constructor("tag:yaml.org,2002:int", _payload_int)
PayloadLoader.add_constructor("tag:yaml.org,2002:float", _payload_float)
PayloadLoader.add_constructor("tag:yaml.org,2002:bool", _payload_bool)
PayloadLoader.add_constructor(None, _plain_value)


# -- the fast constructor -----------------------------------------------------------------------------

_STR, _SEQ, _MAP = "tag:yaml.org,2002:str", "tag:yaml.org,2002:seq", "tag:yaml.org,2002:map"
_NULL = "tag:yaml.org,2002:null"
_MERGE = "tag:yaml.org,2002:merge"
PAYLOAD_SCALARS = {"tag:yaml.org,2002:int": _payload_int, "tag:yaml.org,2002:float": _payload_float,
                   "tag:yaml.org,2002:bool": _payload_bool}
check_table_resolvable(PayloadLoader)


class Unsupported(Exception):
    """A document `construct_plain` leaves to PyYAML's constructor (a merge key, a tag of its own)."""


def build_value(constructor: Any, root: yaml.Node, scalars: dict[str, Any],
                key_of: Callable[[Any], Any] | None = None, *, may_alias: bool) -> Any:
    """The value of a composed document, as `constructor`'s ``construct_document(root)`` gives it.

    PyYAML's constructor spends most of a small file's parse on its generality (a generator per
    mapping, a table lookup and a cache entry per node); readers use little of it, so a document that
    cannot hold an alias is built in one walk (`construct_plain`), which leaves anything unusual, and
    any error, to that constructor: it gives the value, or the error, it always gave. A document
    that `may_alias` (the same node twice, which PyYAML builds once and shares) is held to go-yaml's
    alias budget first (`check_aliases`), then built by the constructor.
    """
    if may_alias:
        check_aliases(root)
        return constructor.construct_document(root)
    try:
        return construct_plain(constructor, root, scalars, key_of)
    except (Unsupported, yaml.YAMLError, ValueError, LookupError, TypeError, RecursionError):
        return constructor.construct_document(root)


def construct_plain(loader: Any, root: yaml.Node, scalars: dict[str, Any],
                    key_of: Callable[[Any], Any] | None = None) -> Any:
    """A document's value in one recursive walk, with the constructors `scalars` maps tags to (str and
    null are built here): only plain mappings, sequences and those scalars. It must never change a
    value: it raises `Unsupported` for anything else (a merge key ``<<``, any other tag) before building
    anything, and is only called on documents that cannot hold an alias. Without `key_of`, a key is the
    text it was written as (PayloadLoader); with it, `key_of` of the key's scalar value. A key written
    twice, or two keys that become one, is `Unsupported`: each loader has its own rule for that (an
    error, or the last value wins), which its general constructor applies."""
    return _PlainWalk(loader, scalars, key_of).build(root)


class _PlainWalk:
    """`construct_plain`'s walk. A class, not a closure that calls itself: that closure would be a
    reference cycle holding the document's nodes (its text) until the cycle collector runs, which is rare
    in a process that holds much."""

    def __init__(self, loader: Any, scalars: dict[str, Any], key_of: Callable[[Any], Any] | None) -> None:
        self.loader, self.scalars, self.key_of = loader, scalars, key_of

    def build(self, node: yaml.Node) -> Any:
        kind, tag = node.__class__, node.tag
        if kind is yaml.ScalarNode:
            if tag == _STR:
                return node.value
            if tag == _NULL:
                return None
            construct = self.scalars.get(tag)
            if construct is None:
                raise Unsupported(tag)
            return construct(self.loader, node)
        if kind is yaml.MappingNode and tag == _MAP:
            return self.build_mapping(node)
        if kind is yaml.SequenceNode and tag == _SEQ:
            return [self.build(child) for child in node.value]
        raise Unsupported(tag)

    def build_mapping(self, node: yaml.Node) -> dict[Any, Any]:
        mapping: dict[Any, Any] = {}
        written: set[tuple[str, str]] = set()
        key_of = self.key_of
        for key_node, value_node in node.value:
            if key_node.__class__ is not yaml.ScalarNode or key_node.tag == _MERGE:
                raise Unsupported("key")
            if key_of is None:
                key = key_node.value
            else:
                spelling = (key_node.tag, key_node.value)
                if spelling in written:
                    raise Unsupported("repeated key")
                written.add(spelling)
                key = key_of(self.build(key_node))
            if key in mapping:
                raise Unsupported("repeated key")
            mapping[key] = self.build(value_node)
        return mapping

