"""An upper bound on what evaluating a CEL expression costs: time (cost units) and memory (bytes).

The CEL library assertree runs (cel-cpp) tracks no cost, so the bound is
worked out here, over the expression's syntax tree (`checked`), the way
cel-go's estimator does it for Kubernetes (checker/cost.go, with Kubernetes'
library costs from k8s.io/apiserver/pkg/cel/library/cost.go): one unit for an
identifier, a field selection or a call, a tenth of a unit per character a
string function walks, and so on; a comprehension costs its range's length
times its body. The sizes come from `sizes`: from the data the expression is
about to run on (at run time) or as small as any data could make them (at
compile time, which gives the cost *whatever the input*).

Where cel-cpp differs from cel-go the estimate follows cel-cpp, since that is
what runs: a list or map it builds is copied, not shared, so adding one item
to the accumulator of ``map``/``filter`` copies all the items so far (a
``map`` over n items makes n²/2 copies: 8,000 items took 1.3 s and 1.3 GB),
and its evaluation arena frees nothing until the evaluation ends, so the
memory bound is the sum of everything built, plus the result converted to
Python (twice: the library's conversion and the JSON-like copy).

Every formula is monotone in the sizes, and a comprehension's accumulator is
followed to its size after the last iteration (exactly when it grows by the
same amount each time, step by step for a few dozen steps otherwise); beyond
that the estimate says "unbounded". Costs of a loop body that grows with the
accumulator are summed by the trapezoid rule, which is an upper bound for
the convex (polynomial) costs used here.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from assertree.languages.cel.checked import (
    Call,
    Comprehension,
    Const,
    CreateList,
    CreateStruct,
    Expr,
    Ident,
    Select,
)
from assertree.languages.cel.sizes import (
    BYTES,
    BYTES_PER_CHARACTER,
    EMPTY,
    ENTRY,
    INFINITE,
    ITEM,
    LIST,
    MAP,
    STRING,
    VALUE,
    Derived,
    Measured,
    Size,
    Union,
    anything,
    cap,
    join,
    measure,
    scalar,
)

__all__ = ["Estimate", "Unbounded", "World", "estimate", "proven", "python_result"]

# cel-go's unit costs (common/cost.go)
SELECT = 1
CALL = 1
LIST_CREATE = 10
MAP_CREATE = 30
STRUCT_CREATE = 40
TRAVERSAL = 0.1  # per character (or byte of the memory model) walked
REGEX = 0.25  # per character of a pattern, times the text walked

_PRECISION = re.compile(r"%[-+ #0]*\d*\.(\d+)")  # the precision of a format verb (``%.3f``)
_STEPS_FOLLOWED = 64  # accumulator steps followed one by one when it does not grow linearly
_VISITS = 200_000  # nodes visited by one estimate (nested loops are walked twice per level)


class Unbounded(Exception):
    """The expression's cost cannot be bounded (a superlinear accumulator, nesting too complex to follow)."""


@dataclass(frozen=True, slots=True)
class World:
    """What the estimate assumes where the expression reads something it was not given.

    `number`: an integer of unknown magnitude; `absent`: a name the inputs do not hold (at run
    time a type name such as ``int``); `unknown()`: what a function written in Python may return
    when nothing else bounds it (a lookup in the evaluation's context, a binding). At compile time
    all are the smallest possible, so that the estimate is the cost whatever the input; at run time
    the largest allowed.
    """

    number: int
    absent: Size
    unknown: Callable[[], Size]


@dataclass(frozen=True, slots=True)
class Estimate:
    cost: int
    memory: int
    size: Size
    uncertain: bool = False  # a library function the rules do not know was assumed to build little


def _units(amount: float) -> int:
    return cap(math.ceil(amount)) if amount < INFINITE else INFINITE


def _traverse(size: Size) -> int:
    """Walking a value once: a tenth of a unit per byte of the memory model."""
    return _units(TRAVERSAL * size.bytes())


def _scan(size: Size) -> int:
    """Walking a string once: a tenth of a unit per character (cel-go's StringTraversalCostFactor)."""
    return _units(TRAVERSAL * size.chars)


def _text(chars: int, like: Size = EMPTY) -> Size:
    """A string of at most `chars` characters made of the characters of `like` (ASCII stays ASCII)."""
    width = 1 if like.chars and like.bytes() - VALUE <= like.chars else 4
    return Derived(STRING, 0, VALUE + cap(chars * width), chars=chars)


def _list(length: int, element: Size) -> Size:
    return Derived(LIST, length, VALUE + cap(length * (ITEM + element.bytes())), element=element)


def _number(size: Size, world: World) -> int:
    return world.number if size.number is None else size.number


class _Walk:
    """One estimate: the inputs' sizes, the names bound by comprehensions, the functions written in Python."""

    def __init__(self, inputs: Mapping[str, Size], world: World,
                 python_functions: Mapping[str, frozenset[str]]) -> None:
        self.scopes: dict[str, list[Size]] = {}
        self.inputs = inputs
        self.world = world
        self.python_functions = python_functions
        self.visits = 0
        self.uncertain = False

    def walk(self, node: Expr) -> tuple[int, int, Size]:
        """(cost, memory, size of the result) of evaluating `node` once."""
        self.visits += 1
        if self.visits > _VISITS:
            raise Unbounded("the expression nests too many comprehensions to bound its cost")
        if isinstance(node, Select):
            cost, memory, operand = self.walk(node.operand)
            if node.test_only:
                return cost + SELECT, memory, scalar()
            return cost + SELECT, memory, operand.field(node.field)
        if isinstance(node, Ident):
            return SELECT, 0, self._name(node.name)
        if isinstance(node, Call):
            return self._call(node)
        if isinstance(node, Const):
            if node.size is None:
                node.size = _constant(node.value)
            return 0, 0, node.size
        if isinstance(node, CreateList):
            return self._list(node.elements)
        if isinstance(node, CreateStruct):
            return self._struct(node)
        return self._comprehension(node)

    # -------------------------------------------------------------- names and literals

    def _name(self, name: str) -> Size:
        bound = self.scopes.get(name)
        if bound:
            return bound[-1]
        return self.inputs.get(name, self.world.absent)

    def _bind(self, name: str, size: Size) -> None:
        self.scopes.setdefault(name, []).append(size)

    def _unbind(self, name: str) -> None:
        self.scopes[name].pop()

    def _list(self, elements: list[Expr]) -> tuple[int, int, Size]:
        cost, memory, sizes = LIST_CREATE, 0, []
        for element in elements:
            c, m, s = self.walk(element)
            cost, memory = cost + c, memory + m
            sizes.append(s)
        size = _list(len(sizes), join(sizes))
        return cost, memory + size.bytes(), size

    def _struct(self, struct: CreateStruct) -> tuple[int, int, Size]:
        cost = STRUCT_CREATE if struct.message else MAP_CREATE
        memory = 0
        keys: list[Size] = []
        values: list[Size] = []
        fields: dict[str, Size] = {}
        named = True
        for key_node, value_node in struct.entries:
            c, m, value = self.walk(value_node)
            cost, memory = cost + c, memory + m
            values.append(value)
            if key_node is None:
                continue
            c, m, key = self.walk(key_node)
            cost, memory = cost + c, memory + m
            keys.append(key)
            if isinstance(key_node, Const) and isinstance(key_node.value, str):
                fields[key_node.value] = join((fields.get(key_node.value, EMPTY), value))
            else:
                named = False
        total = VALUE + sum(ENTRY + k.bytes() for k in keys) + sum(v.bytes() for v in values)
        size = Derived(MAP, len(struct.entries), total, element=join(values), key=join(keys),
                       fields=fields if named else None)
        return cost, memory + size.bytes(), size

    # -------------------------------------------------------------- comprehensions

    def _comprehension(self, loop: Comprehension) -> tuple[int, int, Size]:
        cost, memory, iterated = self.walk(loop.iter_range)
        c, m, accumulator = self.walk(loop.accu_init)
        cost, memory = cost + c, memory + m
        if _is_bind(loop):  # cel.bind(name, value, body): the body once, with the name bound
            self._bind(loop.accu_var, accumulator)
            try:
                c, m, result = self.walk(loop.result)
            finally:
                self._unbind(loop.accu_var)
            return cost + c, memory + m, result
        count = iterated.length
        index = scalar(count)
        if not iterated.kinds & LIST:  # a map: its keys, then (two variables) its values
            first, second = iterated.key(), iterated.element()
        elif not iterated.kinds & MAP:  # a list: its items, or (two variables) its indexes, then its items
            first, second = (index, iterated.element()) if loop.iter_var2 else (iterated.element(), EMPTY)
        else:
            first, second = join((iterated.key(), iterated.element(), index)), iterated.element()
        self._bind(loop.iter_var, first)
        if loop.iter_var2:
            self._bind(loop.iter_var2, second)
        try:
            step_cost, step_memory, final = self._iterations(loop, accumulator, count)
        finally:
            self._unbind(loop.iter_var)
            if loop.iter_var2:
                self._unbind(loop.iter_var2)
        self._bind(loop.accu_var, final)
        try:
            c, m, result = self.walk(loop.result)
        finally:
            self._unbind(loop.accu_var)
        return cap(cost + step_cost + c), cap(memory + step_memory + m), result

    def _step(self, loop: Comprehension, accumulator: Size) -> tuple[int, int, Size]:
        """(cost, memory, next accumulator) of one iteration with the accumulator at `accumulator`."""
        self._bind(loop.accu_var, accumulator)
        try:
            c1, m1, _ = self.walk(loop.condition)
            c2, m2, after = self.walk(loop.step)
        finally:
            self._unbind(loop.accu_var)
        return c1 + c2, m1 + m2, after

    def _iterations(self, loop: Comprehension, start: Size, count: int) -> tuple[int, int, Size]:
        """(cost, memory, accumulator after the last iteration) of `count` iterations from `start`."""
        if count <= 0:
            return 0, 0, start
        cost0, memory0, after = self._step(loop, start)
        growth = _growth(start, after)
        if growth is None:  # the accumulator does not grow: every iteration costs the same
            return cap(count * cost0), cap(count * memory0), join((start, after))
        end = _grown(start, after, growth, count)
        cost_n, memory_n, after_n = self._step(loop, end)
        if _growth(end, after_n) in (None, growth):  # linear growth: the trapezoid bounds the convex sum
            return (_units(count * (cost0 + cost_n) / 2), _units(count * (memory0 + memory_n) / 2),
                    join((end, after_n)))
        if count > _STEPS_FOLLOWED:
            raise Unbounded("a comprehension's accumulator grows faster than linearly")
        cost, memory, current = 0, 0, start
        for _ in range(count):
            c, m, after = self._step(loop, current)
            cost, memory = cap(cost + c), cap(memory + m)
            current = join((current, after))
        return cost, memory, current

    # -------------------------------------------------------------- calls

    def _call(self, call: Call) -> tuple[int, int, Size]:
        name = call.function
        if name == "_&&_" or name == "_||_":
            cost, memory = CALL, 0
            for argument in call.args:
                c, m, _ = self.walk(argument)
                cost, memory = cost + c, memory + m
            return cost, memory, scalar()
        if name == "_?_:_" and len(call.args) == 3:  # one branch runs: the dearer one
            c0, m0, _ = self.walk(call.args[0])
            c1, m1, s1 = self.walk(call.args[1])
            c2, m2, s2 = self.walk(call.args[2])
            return c0 + max(c1, c2) + CALL, m0 + max(m1, m2), join((s1, s2))
        cost, memory = CALL, 0
        nodes = ([call.target] if call.target is not None else []) + call.args
        sizes = []
        for argument in nodes:
            c, m, s = self.walk(argument)
            cost, memory = cost + c, memory + m
            sizes.append(s)
        rule = _RULES.get(name)
        if rule is not None:
            c, allocated, size = rule(self, name, nodes, sizes)
        elif name in self.python_functions:
            c, allocated, size = _python_function(self, name, sizes)
        else:
            self.uncertain = True
            c, allocated, size = _unknown_library_function(sizes)
        return cap(cost + c), cap(memory + allocated), size


def _is_bind(loop: Comprehension) -> bool:
    """cel.bind's expansion: an empty range, a false condition, an accumulator of the user's name."""
    iterated, condition = loop.iter_range, loop.condition
    return (isinstance(iterated, CreateList) and not iterated.elements and isinstance(condition, Const)
            and condition.value is False and loop.accu_var not in ("@result", "__result__"))


def _growth(before: Size, after: Size) -> tuple[int, int, int, int] | None:
    """How much one step grew the accumulator (length, chars, bytes, number), or None when it did not."""
    length = max(0, after.length - before.length)
    chars = max(0, after.chars - before.chars)
    bytes_ = max(0, after.bytes() - before.bytes())
    if before.number is None:
        number = 0
    elif after.number is None:
        number = INFINITE
    else:
        number = max(0, after.number - before.number)
    return (length, chars, bytes_, number) if length or chars or bytes_ or number else None


def _grown(start: Size, after: Size, growth: tuple[int, int, int, int], count: int) -> Size:
    """The accumulator after `count` steps that each grow it by `growth`."""
    length, chars, bytes_, number = growth
    return Derived(start.kinds | after.kinds, start.length + count * length, start.bytes() + count * bytes_,
                   chars=start.chars + count * chars, element=join((start.element(), after.element())),
                   key=join((start.key(), after.key())),
                   number=None if start.number is None else start.number + count * number)


def _constant(value: object) -> Size:
    if isinstance(value, (str, bytes)):
        return measure(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return scalar(abs(value))
    return scalar()


def _literal_string(node: Expr) -> str | None:
    return node.value if isinstance(node, Const) and isinstance(node.value, str) else None


# ------------------------------------------------------------------ function rules
#
# A rule gives (cost, bytes allocated, size of the result) of one call, its arguments' own costs
# aside. The target of a member call (``x.f(y)``) is the first of `sizes`.

Rule = Callable[[_Walk, str, list[Expr], list[Size]], tuple[int, int, Size]]
_RULES: dict[str, Rule] = {}


def _rule(*names: str) -> Callable[[Rule], Rule]:
    def register(rule: Rule) -> Rule:
        for name in names:
            _RULES[name] = rule
        return rule

    return register


@_rule("_+_")
def _add(walk: _Walk, name: str, nodes: list[Expr], sizes: list[Size]) -> tuple[int, int, Size]:
    a, b = sizes[0], sizes[-1]
    kinds = a.kinds | b.kinds
    length, chars = a.length + b.length, a.chars + b.chars
    cost = allocated = 0
    if kinds & (STRING | BYTES):  # a new string holding both
        cost, allocated = _units(TRAVERSAL * chars), VALUE + cap(a.bytes() + b.bytes())
    if kinds & (LIST | MAP):  # cel-cpp copies both lists' items into a new one
        cost, allocated = max(cost, cap(length)), max(allocated, VALUE + cap(length * ITEM))
    number = None if a.number is None or b.number is None else a.number + b.number
    size = Derived(kinds, length, a.bytes() + b.bytes(), chars=chars, element=join((a.element(), b.element())),
                   key=join((a.key(), b.key())), number=number)
    return cost, allocated, size


@_rule("_-_", "_/_", "_%_", "-_")
def _arithmetic(walk: _Walk, name: str, nodes: list[Expr], sizes: list[Size]) -> tuple[int, int, Size]:
    numbers = [size.number for size in sizes]
    return 0, 0, scalar(None if None in numbers else sum(n for n in numbers if n is not None))


@_rule("_*_")
def _multiply(walk: _Walk, name: str, nodes: list[Expr], sizes: list[Size]) -> tuple[int, int, Size]:
    a, b = sizes[0].number, sizes[-1].number
    return 0, 0, scalar(None if a is None or b is None else cap(a * b))


@_rule("_==_", "_!=_", "_<_", "_<=_", "_>_", "_>=_")
def _compare(walk: _Walk, name: str, nodes: list[Expr], sizes: list[Size]) -> tuple[int, int, Size]:
    return _units(TRAVERSAL * min(size.bytes() for size in sizes)), 0, scalar()


@_rule("@in")
def _in(walk: _Walk, name: str, nodes: list[Expr], sizes: list[Size]) -> tuple[int, int, Size]:
    needle, haystack = sizes[0], sizes[-1]
    cost = 1 + _traverse(needle) if haystack.kinds & MAP else 1  # a map hashes the key
    if haystack.kinds & LIST:  # each comparison walks at most the shorter side: all of them, the list
        cost += cap(haystack.length + _units(TRAVERSAL * min(haystack.bytes(), haystack.length * needle.bytes())))
    return cost, 0, scalar()


@_rule("_[_]", "_[?_]", "_?._")
def _index(walk: _Walk, name: str, nodes: list[Expr], sizes: list[Size]) -> tuple[int, int, Size]:
    container = sizes[0]
    key = _literal_string(nodes[1]) if len(nodes) > 1 else None
    return 1, 0, container.field(key) if key is not None else container.element()


@_rule("size")
def _size(walk: _Walk, name: str, nodes: list[Expr], sizes: list[Size]) -> tuple[int, int, Size]:
    return 0, 0, scalar(max(sizes[0].length, sizes[0].chars))


@_rule("!_", "@not_strictly_false", "type", "bool", "int", "uint", "double", "duration", "timestamp",
       "getDate", "getDayOfMonth", "getDayOfWeek", "getDayOfYear", "getFullYear", "getHours", "getMilliseconds",
       "getMinutes", "getMonth", "getSeconds", "hasValue", "optional.none", "math.isInf", "math.isNaN",
       "math.isFinite", "math.ceil", "math.floor", "math.round", "math.trunc", "math.abs", "math.sign",
       "math.sqrt", "math.bitAnd", "math.bitOr", "math.bitXor", "math.bitNot", "math.bitShiftLeft",
       "math.bitShiftRight")
def _scalar(walk: _Walk, name: str, nodes: list[Expr], sizes: list[Size]) -> tuple[int, int, Size]:
    return sum(_scan(size) for size in sizes), 0, scalar()  # parsing a string walks it


@_rule("dyn", "optional.of", "optional.ofNonZeroValue", "value", "orValue", "or")
def _same(walk: _Walk, name: str, nodes: list[Expr], sizes: list[Size]) -> tuple[int, int, Size]:
    return 0, 0, join(sizes)  # one of the arguments (x.orValue(y): x's value or y)


@_rule("first", "last")
def _end(walk: _Walk, name: str, nodes: list[Expr], sizes: list[Size]) -> tuple[int, int, Size]:
    return 0, 0, sizes[0].element()


@_rule("matches")
def _matches(walk: _Walk, name: str, nodes: list[Expr], sizes: list[Size]) -> tuple[int, int, Size]:
    text, pattern = sizes[0], sizes[-1]
    return _units(TRAVERSAL * (text.chars + 1)) * _units(REGEX * pattern.chars), 0, scalar()


@_rule("contains", "indexOf", "lastIndexOf")
def _search(walk: _Walk, name: str, nodes: list[Expr], sizes: list[Size]) -> tuple[int, int, Size]:
    text, needle = sizes[0], sizes[1] if len(sizes) > 1 else EMPTY
    cost = cap(_scan(text) * max(1, _scan(needle)))
    if text.kinds & LIST:  # Kubernetes' lists library (indexOf on a list)
        cost = max(cost, cap(text.length + _units(TRAVERSAL * min(text.bytes(), text.length * needle.bytes()))))
    return cost, 0, scalar(max(text.length, text.chars))


@_rule("startsWith", "endsWith")
def _affix(walk: _Walk, name: str, nodes: list[Expr], sizes: list[Size]) -> tuple[int, int, Size]:
    return _scan(sizes[-1]), 0, scalar()


@_rule("charAt", "lowerAscii", "upperAscii", "trim", "reverse", "substring", "string", "slice", "distinct",
       "sort", "base64.decode")
def _same_or_shorter(walk: _Walk, name: str, nodes: list[Expr], sizes: list[Size]) -> tuple[int, int, Size]:
    source = sizes[0]
    cost = allocated = 0
    kinds = 0
    result_length = result_chars = 0
    if source.kinds & LIST:  # list functions: a new list of (some of) the items, sorted or deduplicated
        n = source.length
        cost = cap(n * n) if name == "distinct" else cap(n * max(1, n.bit_length()))
        allocated, kinds, result_length = VALUE + cap(n * ITEM), LIST, n
    if source.kinds & (STRING | BYTES):
        cost, allocated = max(cost, _scan(source)), max(allocated, source.bytes())
        kinds, result_chars = kinds | (source.kinds & (STRING | BYTES)), source.chars
    if source.kinds & ~(LIST | STRING | BYTES) or not kinds:  # string(42), string(timestamp)
        result_chars, kinds = max(result_chars, 40), kinds | STRING
    size = Derived(kinds, result_length, max(source.bytes(), VALUE + result_chars), chars=result_chars,
                   element=source.element())
    return max(cost, 1), max(allocated, size.bytes()) if kinds == STRING else allocated, size


@_rule("bytes")
def _to_bytes(walk: _Walk, name: str, nodes: list[Expr], sizes: list[Size]) -> tuple[int, int, Size]:
    chars = 4 * sizes[0].chars  # UTF-8: up to four bytes a character
    return _scan(sizes[0]), VALUE + chars, Derived(BYTES, 0, VALUE + chars, chars=chars)


@_rule("strings.quote")
def _quote(walk: _Walk, name: str, nodes: list[Expr], sizes: list[Size]) -> tuple[int, int, Size]:
    result = _text(2 * sizes[0].chars + 2, sizes[0])
    return _scan(result), result.bytes(), result


@_rule("base64.encode")
def _base64(walk: _Walk, name: str, nodes: list[Expr], sizes: list[Size]) -> tuple[int, int, Size]:
    result = _text((sizes[0].chars + 2) // 3 * 4)
    return _scan(result), result.bytes(), result


@_rule("replace")
def _replace(walk: _Walk, name: str, nodes: list[Expr], sizes: list[Size]) -> tuple[int, int, Size]:
    text, new = sizes[0], sizes[2] if len(sizes) > 2 else EMPTY
    old = _literal_string(nodes[1]) if len(nodes) > 1 else None
    if not old:  # an empty (or unknown) old string may be found before every character and at the end
        count = text.chars + 1
    else:
        count = -(-text.chars // len(old))
    if len(sizes) > 3 and sizes[3].number is not None:
        count = min(count, sizes[3].number)
    result = _text(cap(text.chars + count * new.chars), join((text, new)))
    return _units(TRAVERSAL * (text.chars + result.chars)), result.bytes(), result


def _pieces(text: Size, most: int | None = None) -> Size:
    """A list of pieces of `text` (at most `most`): one per character and one more at most, their
    characters together no more than the text's."""
    pieces = text.chars + 1 if most is None else min(text.chars + 1, max(1, most))
    return Derived(LIST, pieces, VALUE + cap(pieces * (ITEM + VALUE)) + text.bytes(), element=_text(text.chars, text))


@_rule("split")
def _split(walk: _Walk, name: str, nodes: list[Expr], sizes: list[Size]) -> tuple[int, int, Size]:
    text = sizes[0]
    size = _pieces(text, sizes[2].number if len(sizes) > 2 else None)
    return _units(2 * TRAVERSAL * text.chars) + size.length, size.bytes(), size


@_rule("join")
def _join(walk: _Walk, name: str, nodes: list[Expr], sizes: list[Size]) -> tuple[int, int, Size]:
    items = sizes[0]
    separator = sizes[1] if len(sizes) > 1 else EMPTY
    element = items.element()
    result = _text(cap(items.length * element.chars + max(0, items.length - 1) * separator.chars),
                   join((element, separator)))
    return _scan(result) + items.length, result.bytes(), result


@_rule("format", "strings.format")
def _format(walk: _Walk, name: str, nodes: list[Expr], sizes: list[Size]) -> tuple[int, int, Size]:
    template, arguments = sizes[0], sizes[-1]
    widest = _precision(nodes[0], template)
    element = arguments.element()
    # each verb writes one argument: its text (a list or map as text: at most four times its bytes),
    # or a number with as many digits as the precision asks
    result = _text(cap(template.chars + arguments.length * (4 * element.bytes() + widest + 32)),
                   join((template, element)))
    return _scan(result), result.bytes(), result


def _precision(node: Expr, template: Size) -> int:
    """The largest precision a format template asks for (``%.3f``: 3 more digits), read from its text."""
    texts = [_literal_string(node)]
    if texts[0] is None:
        parts = template.parts if isinstance(template, Union) else [template]
        texts = [part.value if isinstance(part, Measured) and isinstance(part.value, str) else None
                 for part in parts]
    if any(text is None for text in texts) and template.chars:
        return INFINITE
    return max((int(p) for text in texts if text for p in _PRECISION.findall(text)), default=0)


@_rule("lists.range")
def _range(walk: _Walk, name: str, nodes: list[Expr], sizes: list[Size]) -> tuple[int, int, Size]:
    count = _number(sizes[0], walk.world)
    result = _list(count, scalar(count))
    return count, result.bytes(), result


@_rule("flatten")
def _flatten(walk: _Walk, name: str, nodes: list[Expr], sizes: list[Size]) -> tuple[int, int, Size]:
    outer = sizes[0]
    depth = _number(sizes[1], walk.world) if len(sizes) > 1 else 1
    length, element = outer.length, outer.element()
    for _ in range(min(depth, 64)):
        if not element.kinds & LIST:
            break
        length, element = cap(length * max(1, element.length)), join((element, element.element()))
    result = Derived(LIST, length, outer.bytes() + cap(length * ITEM), element=element)
    return cap(length + _traverse(outer)), VALUE + cap(length * ITEM), result


@_rule("sets.contains", "sets.equivalent", "sets.intersects")
def _sets(walk: _Walk, name: str, nodes: list[Expr], sizes: list[Size]) -> tuple[int, int, Size]:
    a, b = sizes[0], sizes[-1]  # every pair compared, each comparison walking at most the smaller item
    pairs = cap(a.length * b.length)
    return cap(pairs + _units(TRAVERSAL * min(a.length * b.bytes(), b.length * a.bytes()))), 0, scalar()


@_rule("math.@max", "math.@min", "isSorted", "sum", "min", "max", "math.greatest", "math.least")
def _over_list(walk: _Walk, name: str, nodes: list[Expr], sizes: list[Size]) -> tuple[int, int, Size]:
    cost = sum(cap(size.length + _traverse(size)) for size in sizes)
    elements = [size.element() if size.kinds & LIST else size for size in sizes]
    copied = sum(size.bytes() for size in sizes) if name in walk.python_functions else 0
    return cost, copied, join(elements)


@_rule("cel.@mapInsert")
def _map_insert(walk: _Walk, name: str, nodes: list[Expr], sizes: list[Size]) -> tuple[int, int, Size]:
    target, rest = sizes[0], sizes[1:]
    if len(rest) == 2:  # (map, key, value)
        added, keys, values = 1, [rest[0]], [rest[1]]
    else:  # (map, other map)
        added, keys, values = sum(s.length for s in rest), [s.key() for s in rest], [s.element() for s in rest]
    length = cap(target.length + added)
    total = target.bytes() + sum(ENTRY + s.bytes() for s in rest)
    size = Derived(MAP, length, total, element=join((target.element(), *values)), key=join((target.key(), *keys)))
    return length, VALUE + cap(length * ENTRY), size


@_rule("@sortByAssociatedKeys", "sortBy")
def _sort_by(walk: _Walk, name: str, nodes: list[Expr], sizes: list[Size]) -> tuple[int, int, Size]:
    n = sizes[0].length
    return cap(n * max(1, n.bit_length())), VALUE + cap(n * ITEM), sizes[0]


def _unknown_library_function(sizes: list[Size]) -> tuple[int, int, Size]:
    """A library function the rules do not know: assumed to build no more than its arguments hold."""
    if not sizes:
        return 1, VALUE, scalar()
    total = cap(sum(size.bytes() for size in sizes))
    size = Derived(join(sizes).kinds, sum(s.length for s in sizes), total, chars=sum(s.chars for s in sizes),
                   element=join(s.element() for s in sizes), key=join(s.key() for s in sizes))
    return 1 + _units(TRAVERSAL * total), total, size


# ------------------------------------------------------------------ functions written in Python

SCALAR_TYPES = frozenset({"int", "uint", "double", "bool", "null", "timestamp", "duration"})

_ARGUMENT_BOUNDED = frozenset({
    # assertree.languages.cel.functions: opaque values (a tagged map holding the text they were made from),
    # their accessors and predicates, and small helpers: each result is made of its arguments' text
    "quantity", "isQuantity", "sign", "asInteger", "asApproximateFloat", "isInteger", "isGreaterThan",
    "isLessThan", "compareTo", "add", "sub", "ip", "isIP", "cidr", "isCIDR", "family", "isUnspecified",
    "isLoopback", "isLinkLocalMulticast", "isLinkLocalUnicast", "isGlobalUnicast", "ip.isCanonical", "prefixLength",
    "masked", "containsIP", "containsCIDR", "url", "isURL", "getScheme", "getHost", "getHostname", "getPort",
    "getEscapedPath", "getQuery", "semver", "isSemver", "major", "minor", "patch", "image", "isImage", "registry",
    "repository", "identifier", "tag", "digest", "containsDigest", "parseServiceAccount", "time.now", "isSorted",
    "sum", "min", "max", "jsonpatch.escapeKey", "find", "findAll", "json.unmarshal",
    # hex digests: at most 128 characters, within the slack
    "hash.md5", "hash.sha1", "hash.sha256", "md5", "sha1", "sha256",
})
_SLACK_LENGTH = 64  # what such a function may add to its arguments (a tag, a default port, a canonical form)
_SLACK_BYTES = 1024
_ALIASES_ALLOWED = 4 * 1024 * 1024  # what YAML aliases may add to a parsed document, by the model of `sizes`


def _yaml(chars: int) -> Size:
    """A parsed YAML document of `chars` characters: no more than JSON text of that length would make
    (`BYTES_PER_CHARACTER`), and what its aliases repeat, up to `_ALIASES_ALLOWED`. go-yaml's own alias
    budget would allow hundreds of megabytes for a few kilobytes of text; past this bound the result is
    refused when the function returns (`limits.check_function_result`)."""
    return anything(chars, VALUE + BYTES_PER_CHARACTER * chars + _ALIASES_ALLOWED, chars)


def _arguments(sizes: list[Size]) -> Size:
    return anything(sum(size.length for size in sizes) + _SLACK_LENGTH,
                    sum(size.bytes() for size in sizes) + _SLACK_BYTES,
                    sum(size.chars for size in sizes) + _SLACK_LENGTH)


_GZIP_RATIO = 1032  # deflate's largest expansion: 258 bytes from one 2-bit code, about 1032 to 1
_MAX_DECOMPRESSED = 64 * 1024 * 1024  # functions.kyverno.MAX_DECOMPRESSED
_REPEAT = 1000  # the largest repetition count of an RE2 pattern (``{1000}``): what `random` may repeat


def _built(sizes: list[Size], factor: int = 1) -> Size:
    """What a builder written in Python returns: an opaque value (an authorizer check, a format, an Envoy
    response), a list of validation errors, made of its arguments with a few fixed words around them; with a
    `factor`, a decoding whose text may grow (a certificate's bytes written as hexadecimal). Additive, so
    that a chain of builders grows with its length, not as a power of it."""
    return anything(factor * sum(size.length for size in sizes) + 64,
                    factor * sum(size.bytes() for size in sizes) + 65536,
                    factor * sum(size.chars for size in sizes) + 1024)


_LOOKUP = re.compile(r"(^|\.)(get|Get|list|List|post|Post|getMetadata|GetMetadata)$")
"""Functions that read the evaluation's context (a fake cluster, image data, global context entries, HTTP
responses): bounded by the context (`World.unknown`), not by their arguments."""

_RESULTS: dict[str, Callable[[list[Size]], Size]] = {
    "find": lambda sizes: _text(sizes[0].chars, sizes[0]),
    "jwt.Decode": lambda sizes: _built(sizes, 2),
    "x509.decode": lambda sizes: _built(sizes, 2),
    "gzip.decompress": lambda sizes: _text(min(_GZIP_RATIO * sizes[0].chars, _MAX_DECOMPRESSED)),
    "json.marshal": lambda sizes: _text(cap(6 * sizes[0].bytes() + 64)),  # at worst a \u escape per byte
    "random": lambda sizes: _text(cap(_REPEAT * (sizes[0].chars if sizes else 16) + 64)),
    "random.random": lambda sizes: _text(cap(_REPEAT * (sizes[0].chars if sizes else 16) + 64)),
    "findAll": lambda sizes: _pieces(sizes[0]),
    "json.unmarshal": lambda sizes: anything(sizes[0].chars, VALUE + BYTES_PER_CHARACTER * sizes[0].chars),
    "jsonpatch.escapeKey": lambda sizes: _text(2 * sizes[0].chars, sizes[0]),
    "yaml.parse": lambda sizes: _yaml(sizes[0].chars),
}
"""Python functions whose result is bounded by their arguments, though not by their text alone."""


def python_result(name: str, result_types: frozenset[str], sizes: list[Size], world: World) -> Size:
    """A bound on what the Python function `name` returns for arguments of these sizes.

    Declared scalar results are scalars; the functions of `assertree.languages.cel.functions` are
    bounded by their arguments (`_RESULTS`, and `_ARGUMENT_BOUNDED` by construction); a lookup in the
    evaluation's context (`_LOOKUP`, kyverno-json's ``bindings.resolve``) by `world.unknown()`; any other
    builder by `_built`. `limits.check_function_result` holds every function not proven to its bound when
    it returns.
    """
    if result_types and result_types <= SCALAR_TYPES:
        return scalar()
    if name in _RESULTS:
        return _RESULTS[name](sizes)
    if name in _ARGUMENT_BOUNDED:
        return _arguments(sizes)
    if name == "bindings.resolve" or _LOOKUP.search(name):
        return world.unknown()
    return _built(sizes)


def proven(name: str, result_types: frozenset[str]) -> bool:
    """Whether `python_result` holds for `name` by construction, so that its results need no measuring."""
    return (bool(result_types) and result_types <= SCALAR_TYPES) or name in _ARGUMENT_BOUNDED


def _python_function(walk: _Walk, name: str, sizes: list[Size]) -> tuple[int, int, Size]:
    """A function written in Python: its arguments are copied to Python, its result is made in Python and
    copied to CEL."""
    copied = cap(sum(size.bytes() for size in sizes))
    result = python_result(name, walk.python_functions[name], sizes, walk.world)
    return 1 + _units(TRAVERSAL * (copied + result.bytes())), cap(copied + 2 * result.bytes()), result


def estimate(root: Expr, inputs: Mapping[str, Size], world: World,
             python_functions: Mapping[str, frozenset[str]] | None = None) -> Estimate:
    """Upper bounds on the cost (units) and memory (bytes) of evaluating `root` on inputs of these sizes,
    and on the size of its result. Raises Unbounded when they cannot be bounded."""
    walk = _Walk(inputs, world, python_functions or {})
    try:
        cost, memory, size = walk.walk(root)
    except RecursionError:
        raise Unbounded("the expression nests too deeply to bound its cost") from None
    return Estimate(cost, cap(memory + 2 * size.bytes()), size, walk.uncertain)
