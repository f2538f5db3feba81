"""The function registry: one decorated Python function per JMESPath function.

A function is registered with its signature written the way users read it::

    @function("pad_left(subject: string, width: number, pad?: string) -> string")
    def pad_left(subject, width, pad=" "):
        \"\"\"Pads `subject` on the left to `width` bytes.\"\"\"

The signature is parsed once, at import: it gives the arity (checked when an
expression is compiled, so a policy with a wrong call fails at load time) and
per-argument type checks (run before every call, with an error naming the
function). The docstring's first line is the description `assertree jp
function` prints. Argument types are JMESPath names (`string`, `number`,
`boolean`, `array`, `object`, `null`, `any`, `expref`, `array[string]`,
`array[number]`) joined with `|`; `name?` marks an optional argument and
`*name` a variadic tail.

Registering a name twice is an error unless the later registration says
`replaces=True`: kyverno-json registers Kyverno's library after the community
builtins, and five names (`items`, `replace`, `split`, `trim`, `sum`) are
replaced on purpose.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from assertree.jp.errors import ArityError, InvalidTypeError
from assertree.jp.values import type_name
from assertree.records import ValueRecord

_SIMPLE_CHECKS: dict[str, Callable[[Any], bool]] = {
    "any": lambda v: True,
    "string": lambda v: type(v) is str or isinstance(v, str),
    "number": lambda v: (type(v) is int or type(v) is float)
    or (isinstance(v, (int, float)) and not isinstance(v, bool)),
    "boolean": lambda v: type(v) is bool,
    "array": lambda v: type(v) is list or isinstance(v, list),
    "object": lambda v: type(v) is dict or isinstance(v, dict),
    "null": lambda v: v is None,
    "expref": lambda v: type(v).__name__ == "Expref",
}


def _array_of(item_type: str) -> Callable[[Any], bool]:
    check = _SIMPLE_CHECKS[item_type]
    return lambda v: isinstance(v, list) and all(check(item) for item in v)


def _type_check(types: tuple[str, ...]) -> Callable[[Any], bool]:
    checks = []
    for name in types:
        if name in _SIMPLE_CHECKS:
            checks.append(_SIMPLE_CHECKS[name])
        elif name.startswith("array[") and name.endswith("]") and name[6:-1] in _SIMPLE_CHECKS:
            checks.append(_array_of(name[6:-1]))
        else:
            raise ValueError(f"unknown JMESPath type {name!r} in a function signature")
    if len(checks) == 1:
        return checks[0]
    exact = exact_types(types)

    def any_of(v: Any) -> bool:  # the exact types answer at once; subclasses and array[...] ask each check
        if type(v) in exact:
            return True
        return any(check(v) for check in checks)

    return any_of


# Types that pass a simple check as they are (the checks also accept subclasses, bools excepted).
_EXACT_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,), "number": (int, float), "boolean": (bool,), "array": (list,), "object": (dict,),
    "null": (type(None),),
}


def exact_types(types: tuple[str, ...]) -> frozenset[type]:
    """The Python types whose values pass the check of a parameter of `types` whatever they hold (``str`` for
    ``string``; none for ``array[string]``): a caller may skip the check for them."""
    return frozenset(kind for name in types for kind in _EXACT_TYPES.get(name, ()))


class Param(ValueRecord, hidden=("check",), uncompared=("check",)):
    """One declared argument: its name, accepted types, and whether optional or variadic."""

    name: str
    types: tuple[str, ...]
    optional: bool
    variadic: bool
    check: Callable[[Any], bool]

    __slots__ = ("check", "name", "optional", "types", "variadic")

    def __init__(
            self, name: str, types: tuple[str, ...], optional: bool = False, variadic: bool = False,
            check: Callable[[Any], bool] = lambda v: True,
    ) -> None:
        self.name = name
        self.types = types
        self.optional = optional
        self.variadic = variadic
        self.check = check

    def describe(self) -> str:
        prefix = "*" if self.variadic else ""
        suffix = "?" if self.optional else ""
        return f"{prefix}{self.name}{suffix}: {'|'.join(self.types)}"


class Function(ValueRecord, hidden=("impl",)):
    """A registered function: what `assertree jp function` lists and the compiler calls."""

    name: str
    params: tuple[Param, ...]
    returns: str
    impl: Callable[..., Any]
    description: str
    group: str

    __slots__ = ("description", "group", "impl", "name", "params", "returns")

    def __init__(
            self, name: str, params: tuple[Param, ...], returns: str, impl: Callable[..., Any], description: str,
            group: str,
    ) -> None:
        self.name = name
        self.params = params
        self.returns = returns
        self.impl = impl
        self.description = description
        self.group = group

    @property
    def min_args(self) -> int:
        return sum(1 for p in self.params if not p.optional and not p.variadic)

    @property
    def max_args(self) -> int | None:
        if any(p.variadic for p in self.params):
            return None
        return len(self.params)

    @property
    def signature(self) -> str:
        args = ", ".join(p.describe() for p in self.params)
        return f"{self.name}({args}) -> {self.returns}"

    def arity_problem(self, count: int) -> str | None:
        """Why `count` arguments are wrong for this function, or None when they are fine."""
        low, high = self.min_args, self.max_args
        if count < low:
            expected = f"at least {low}" if high != low else str(low)
        elif high is not None and count > high:
            expected = f"at most {high}" if high != low else str(high)
        else:
            return None
        noun = "argument" if (high or low) == 1 else "arguments"
        return f"function {self.name}() expects {expected} {noun} but {count} were supplied"

    def check_arguments(self, args: list[Any]) -> None:
        """Raise ArityError or InvalidTypeError, naming the function, if `args` do not fit."""
        problem = self.arity_problem(len(args))
        if problem is not None:
            raise ArityError(problem)
        params = self.params
        last = len(params) - 1
        for index, value in enumerate(args):
            param = params[min(index, last)]
            if not param.check(value):
                raise InvalidTypeError(
                    f"function {self.name}() argument {index + 1} ({param.name}) must be "
                    f"{' or '.join(param.types)}, got {type_name(value)}: {_short(value)}"
                )

    def __call__(self, *args: Any) -> Any:
        self.check_arguments(list(args))
        return self.impl(*args)


def _short(value: Any) -> str:
    from assertree.jp.values import json_excerpt

    return json_excerpt(value, 60)


REGISTRY: dict[str, Function] = {}
"""The table kyverno-json evaluates with: community builtins, then its own, then Kyverno's."""

REPLACED: dict[str, Function] = {}
"""Builtins that a later registration replaced, kept for the plain community dialect."""

DIALECTS = ("kyverno", "community")

_NAME_START = frozenset("abcdefghijklmnopqrstuvwxyz_")
_NAME_CHARS = _NAME_START | frozenset("0123456789")
_TYPE_CHARS = _NAME_CHARS | frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZ[]| ")


def _is_name(text: str) -> bool:
    """``[a-z_][a-z0-9_]*``: a function's or a parameter's name."""
    return bool(text) and text[0] in _NAME_START and all(char in _NAME_CHARS for char in text)


def parse_signature(text: str) -> tuple[str, tuple[Param, ...], str]:
    """Split ``name(a: t, b?: t|u, *rest: t) -> r`` into its name, parameters and return type.

    Read with string methods, not regular expressions: compiling the two patterns cost more than parsing
    every signature a scan looks up. `tests/functions/test_registry.py` holds it to the patterns it
    replaced (it accepts nothing they reject, and reads alike what both accept)."""
    head, paren, rest = text.partition("(")
    body, close, tail = rest.rpartition(")")
    name, tail = head.strip(), tail.strip()
    returns = tail[2:].strip()
    if not (paren and close and _is_name(name) and tail.startswith("->") and returns) or "\n" in body + returns:
        raise ValueError(f"malformed function signature: {text!r}")
    params: list[Param] = []
    body = body.strip()
    for part in body.split(",") if body else []:
        declared, colon, spelled = part.partition(":")
        declared, spelled = declared.strip(), spelled.strip()
        variadic = declared.startswith("*")
        optional = declared.endswith("?")
        param_name = declared[variadic:len(declared) - optional]
        if not (colon and _is_name(param_name) and spelled and _TYPE_CHARS.issuperset(spelled)):
            raise ValueError(f"malformed parameter {part!r} in signature {text!r}")
        types = tuple(t.strip() for t in spelled.split("|"))
        params.append(Param(name=param_name, types=types, optional=optional, variadic=variadic,
                            check=_type_check(types)))
    seen_optional = False
    for index, param in enumerate(params):
        if param.variadic and index != len(params) - 1:
            raise ValueError(f"only the last parameter may be variadic: {text!r}")
        if param.optional:
            seen_optional = True
        elif seen_optional and not param.variadic:
            raise ValueError(f"a required parameter follows an optional one: {text!r}")
    return name, tuple(params), returns


def function(signature: str, *, replaces: bool = False, group: str | None = None) -> Callable:
    """Register the decorated Python function under the JMESPath name of `signature`.

    The signature is parsed when the name is first looked up (`lookup`, `all_functions`), not at import: a
    scan looks up a handful of the ~45 functions its import registers. A malformed signature still fails
    the first lookup of its name, and the test suite looks up every one."""

    def register(impl: Callable[..., Any]) -> Callable[..., Any]:
        name = signature.split("(", 1)[0].strip()
        known = name in REGISTRY or name in _DECLARED
        if known and not replaces:
            raise ValueError(f"function {name}() is already registered; pass replaces=True to override it")
        if replaces and not known:
            raise ValueError(f"function {name}() says it replaces a registration, but none exists")
        doc = (impl.__doc__ or "").strip().splitlines()
        if not doc:
            raise ValueError(f"function {name}() needs a docstring: its first line is the description")
        module_group = group or impl.__module__.rsplit(".", 1)[-1]
        _DECLARED.setdefault(name, []).append((signature, impl, doc[0].strip(), module_group, replaces))
        return impl

    return register


_DECLARED: dict[str, list[tuple[str, Callable[..., Any], str, str, bool]]] = {}
"""Registrations not parsed yet, by name, in order: (signature, impl, description, group, replaces)."""


_DEFINING = threading.Lock()  # a server compiles in several threads: each name is defined once, whole


def _define(name: str) -> None:
    """Parse the registrations of `name` waiting in `_DECLARED` into `REGISTRY` (and `REPLACED`), in order.
    The name leaves `_DECLARED` only once defined: a lookup meanwhile waits for the lock, then finds it."""
    with _DEFINING:
        for signature, impl, description, group, replaces in _DECLARED.get(name, ()):
            parsed, params, returns = parse_signature(signature)
            if parsed != name:
                raise ValueError(f"malformed function signature: {signature!r}")
            if replaces:
                REPLACED[name] = REGISTRY[name]
            REGISTRY[name] = Function(name=name, params=params, returns=returns, impl=impl,
                                      description=description, group=group)
        _DECLARED.pop(name, None)


def lookup(name: str, dialect: str = "kyverno") -> Function | None:
    """The function called `name` in a dialect's table, importing its module on first use.

    ``kyverno`` is kyverno-json's table (what policies use). ``community`` is
    go-jmespath's own, where `items`, `replace`, `split`, `trim` and `sum` keep
    their community meaning (what the JMESPath compliance suites test).
    """
    from assertree.jp.functions import MODULE_OF  # importing the package registers the base table

    module = MODULE_OF.get(name)
    if module is not None:
        _load((module,))
    if name in _DECLARED:
        _define(name)
    if dialect == "community" and name in REPLACED:
        return REPLACED[name]
    return REGISTRY.get(name)


def all_functions() -> list[Function]:
    """Every registered function (the whole library is loaded), sorted by name."""
    from assertree.jp.functions import LIBRARY_MODULES

    _load(LIBRARY_MODULES)
    for name in list(_DECLARED):
        _define(name)
    return sorted(REGISTRY.values(), key=lambda f: f.name)


_loaded: set[str] = set()


def _load(modules: tuple[str, ...]) -> None:
    """Import function modules (each registers its functions on import), once."""
    import importlib

    for module in modules:
        if module not in _loaded:
            _loaded.add(module)
            importlib.import_module(f"assertree.jp.functions.{module}")
