"""Which sizes of its inputs an expression's cost depends on, read cheaply before each evaluation.

Kubernetes' estimator looks up, for each path an expression reads
(``object.spec.containers.@items.image``), the ``maxItems`` and ``maxLength``
its schema gives. `trace` finds those paths the same way: it runs the
estimate (`cost`) once, at compile time, on inputs that stand for any value
at all and write down every path and every measure (`length`, `chars`,
`bytes`, `number`) the estimate reads of them. Before an evaluation,
`Probes.size_class` reads just those measures from the data (the longest
container image, the most capabilities of any container: a few lookups,
not a walk over the whole document), rounds each up to a power of two, and
the tuple is the evaluation's *size class*: `limits` judges each class
once per expression, with `class_inputs` (inputs as large as the class
allows), and keeps the verdict.

Why it holds: the estimate is monotone in the sizes, the class's inputs are
at least as large as the data in every measure the trace saw the estimate
read, and any measure it did not see (a branch the trace did not take) is
infinite in them. So a class judged within the limits holds every
evaluation of that class within them.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from assertree.languages.cel.sizes import (
    ANY_KIND,
    BYTES,
    EMPTY,
    INFINITE,
    SCALAR,
    STRING,
    VALUE,
    Measured,
    Size,
    measure,
)

__all__ = ["Path", "Probes", "Trace", "class_inputs"]

Path = tuple[str, ...]
"""An input's name, then field names, ``*`` (an item of a list or a value of a map) and ``@keys``."""

ITEMS, KEYS = "*", "@keys"
MEASURES = ("length", "chars", "bytes", "number")
_SMALLEST = {"length": 16, "chars": 256, "bytes": 1 << 14, "number": 16}


class Trace:
    """The paths and measures an estimate read: `Traced` inputs write here."""

    def __init__(self) -> None:
        self.read: dict[Path, set[str]] = {}

    def note(self, path: Path, measure_name: str) -> None:
        self.read.setdefault(path, set()).add(measure_name)

    def inputs(self) -> Mapping[str, Size]:
        """Inputs standing for any value: every name the estimate asks for is traced."""
        return _TracedInputs(self)

    def probes(self) -> Probes:
        """Every (path, measure) read, to be read of the data before each evaluation."""
        return Probes(self.read)


class _ByPath(Size):
    """A size reached by a path of the inputs, whose parts are the sizes of the paths one step longer
    (nothing is reached through a map key: a string or a number)."""

    __slots__ = ("_children", "path")

    def __init__(self, path: Path) -> None:
        self.path = path
        self._children: dict[str, Size] = {}

    def _below(self, path: Path) -> Size:
        raise NotImplementedError

    def _child(self, step: str) -> Size:
        child = self._children.get(step)
        if child is None:
            child = EMPTY if self.path[-1] == KEYS else self._below((*self.path, step))
            self._children[step] = child
        return child

    def element(self) -> Size:
        return self._child(ITEMS)

    def key(self) -> Size:
        return self._child(KEYS)

    def field(self, name: str) -> Size:
        return self._child(name)


class Traced(_ByPath):
    """Any value at all, reached by `path`; every measure read is written to the trace."""

    __slots__ = ("trace",)

    def __init__(self, trace: Trace, path: Path) -> None:
        super().__init__(path)
        self.trace = trace

    @property
    def kinds(self) -> int:  # type: ignore[override]  # read only: a read is recorded
        return (STRING | BYTES | SCALAR) if self.path[-1] == KEYS else ANY_KIND

    @property
    def length(self) -> int:  # type: ignore[override]  # read only: a read is recorded
        self.trace.note(self.path, "length")
        return INFINITE

    @property
    def chars(self) -> int:  # type: ignore[override]  # read only: a read is recorded
        self.trace.note(self.path, "chars")
        return INFINITE

    @property
    def number(self) -> int | None:  # type: ignore[override]  # read only: a read is recorded
        self.trace.note(self.path, "number")
        return None

    def bytes(self) -> int:
        self.trace.note(self.path, "bytes")
        return INFINITE

    def _below(self, path: Path) -> Size:
        return Traced(self.trace, path)


class _TracedInputs(Mapping[str, Size]):
    def __init__(self, trace: Trace) -> None:
        self._trace = trace
        self._made: dict[str, Size] = {}

    def __getitem__(self, name: str) -> Size:
        found = self._made.get(name)
        if found is None:
            found = self._made[name] = Traced(self._trace, (name,))
        return found

    def get(self, name: str, default: Any = None) -> Size:
        return self[name]

    def __iter__(self) -> Iterator[str]:
        return iter(())

    def __len__(self) -> int:
        return 0


# ---------------------------------------------------------------- reading the data


class Probes:
    """The measures to read, as a tree of paths (each part of the data is visited once, however many
    measures are read of it and below it); `layout` is the order of a size class's numbers."""

    def __init__(self, read: Mapping[Path, set[str]]) -> None:
        self.layout: tuple[tuple[Path, str], ...] = tuple(sorted((path, name) for path, names in read.items()
                                                                 for name in names))
        self._smallest = tuple(_SMALLEST[name] for _path, name in self.layout)
        self._roots: dict[str, _Node] = {}
        for slot, (path, name) in enumerate(self.layout):
            node = self._roots.setdefault(path[0], _Node())
            for step in path[1:]:
                node = node.children.setdefault(step, _Node())
            node.measures.append((_KIND[name], slot))

    @classmethod
    def of_layout(cls, layout: Sequence[Sequence[Any]]) -> Probes:
        """The probes whose `layout` this is (kept between runs as plain values)."""
        read: dict[Path, set[str]] = {}
        for path, name in layout:
            if name not in _KIND or type(path) is not tuple or not path or not all(type(step) is str for step in path):
                raise ValueError(f"not a probe: {path!r} {name!r}")
            read.setdefault(path, set()).add(name)
        probes = cls(read)
        if probes.layout != tuple(layout):
            raise ValueError("not a layout: its probes are not in order, or one is repeated")
        return probes

    def size_class(self, variables: Mapping[str, Any]) -> tuple[int, ...]:
        """Each probe's largest value in `variables`, rounded up to a power of two (a name they do not
        hold, such as the type name ``int``, measures as nothing, as the estimate sees it at run time).

        """
        found = [0] * len(self.layout)
        for name, node in self._roots.items():
            value = variables.get(name, _ABSENT)
            if value is _ABSENT:
                for kind, slot in node.measures:
                    found[slot] = VALUE if kind == _BYTES else 0
            else:
                node.read((value,), found)
        return tuple([smallest if amount <= smallest else INFINITE if amount >= INFINITE
                      else 1 << (amount - 1).bit_length()
                      for amount, smallest in zip(found, self._smallest, strict=True)])


_ABSENT = object()
_LENGTH, _CHARS, _BYTES, _NUMBER = 0, 1, 2, 3
_KIND = {"length": _LENGTH, "chars": _CHARS, "bytes": _BYTES, "number": _NUMBER}


class _Node:
    """One step of the probed paths: the measures read of the values there, and the steps below.

    The data is read as it is (walking a few paths of plain dicts and lists is cheaper than building
    `sizes.Measured` for them), each value once whatever number of measures are read of it.
    """

    __slots__ = ("children", "measures")

    def __init__(self) -> None:
        self.measures: list[tuple[int, int]] = []  # (measure, slot in the size class)
        self.children: dict[str, _Node] = {}

    def read(self, values: Sequence[Any], found: list[int]) -> None:
        for kind, slot in self.measures:
            most = found[slot]
            for value in values:
                amount = _measure(value, kind)
                if amount > most:
                    most = amount
            found[slot] = most
        for step, child in self.children.items():
            below: list[Any] = []
            for value in values:
                value_type = type(value)
                if value_type is dict or (value_type is not list and value_type is not str
                                          and isinstance(value, Mapping)):
                    if step == ITEMS:
                        below.extend(value.values())
                    elif step == KEYS:
                        below.extend(value)
                    else:
                        found_value = value.get(step, _ABSENT)
                        if found_value is not _ABSENT:
                            below.append(found_value)
                elif (value_type is list or value_type is tuple) and step == ITEMS:
                    below.extend(value)
            if below:
                child.read(below, found)


def _measure(value: Any, kind: int) -> int:
    """One measure of one value, as `sizes.Measured` reads it (its bytes: `Size.bound_bytes`)."""
    value_type = type(value)
    if kind == _LENGTH:
        if value_type is dict or value_type is list or value_type is tuple:
            return len(value)
        return len(value) if value_type is not str and isinstance(value, Mapping) else 0
    if kind == _CHARS:
        return len(value) if value_type is str or value_type is bytes or value_type is bytearray else 0
    if kind == _NUMBER:
        return abs(value) if value_type is int else INFINITE
    if value_type is str:
        return VALUE + (len(value) if value.isascii() else 4 * len(value))
    return Measured(value).bound_bytes() if value_type is dict or value_type is list else measure(value).bytes()


class _Class(_ByPath):
    """An input as large as its size class allows; a part no probe measured is as large as anything."""

    __slots__ = ("_bytes", "_values")

    def __init__(self, values: Mapping[tuple[Path, str], int], path: Path) -> None:
        super().__init__(path)
        self._values = values
        self.kinds = (STRING | BYTES | SCALAR) if path[-1] == KEYS else ANY_KIND
        self.length = values.get((path, "length"), INFINITE)
        self.chars = values.get((path, "chars"), INFINITE)
        number = values.get((path, "number"), INFINITE)
        self.number = None if number >= INFINITE else number
        self._bytes = values.get((path, "bytes"), INFINITE)

    def bytes(self) -> int:
        return self._bytes

    def _below(self, path: Path) -> Size:
        return _Class(self._values, path)


def class_inputs(probes: Probes, size_class: tuple[int, ...], names: tuple[str, ...]) -> dict[str, Size]:
    """Inputs as large as `size_class` allows, for the names evaluated (others: as the estimate sees them)."""
    values = dict(zip(probes.layout, size_class, strict=True))
    return {name: _Class(values, (name,)) for name in names}
