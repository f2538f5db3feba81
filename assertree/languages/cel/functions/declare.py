"""Declaring Python functions for CEL, and the tagged maps that stand in for opaque types.

Kubernetes' libraries return opaque values (``quantity('1Gi')``,
``ip('10.0.0.1')``) whose methods are typed to them. The CEL library assertree
uses cannot carry a Python object through an expression (an abstract type's
value is "Unimplemented type"), so an opaque value travels as a one-key map
``{'@quantity': '1Gi'}``: its text under its tag. Methods are declared on
``map`` receivers and check the tag at run time. What this costs, written
down in `functions/__init__`: ``type()`` says map, ``==`` compares the text,
and the type checker accepts such a method on any map (a wrong map fails at
run time with "no such overload").

Several opaque types share method names (``isGreaterThan`` on quantities and
semvers); the library accepts one declaration per name, so `build` merges
them into one overload that dispatches on the receiver's tag.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from assertree.languages.cel.engine import Function, FunctionError, Overload

__all__ = ["Declaration", "build", "opaque", "opaque_text", "succeeds", "tag_of"]


def opaque(tag: str, text: str) -> dict[str, str]:
    """The stand-in for an opaque value of type `tag` written as `text`."""
    return {f"@{tag}": text}


def tag_of(value: Any) -> str | None:
    """The tag of an opaque stand-in, or None for any other value."""
    if isinstance(value, dict) and len(value) == 1:
        key = next(iter(value))
        if isinstance(key, str) and key.startswith("@") and isinstance(value[key], str):
            return key[1:]
    return None


def opaque_text(value: Any, tag: str) -> str:
    """The text of an opaque `tag` value; FunctionError for anything else."""
    if tag_of(value) != tag:
        raise FunctionError(f"no such overload: expected a {tag}")
    return value[f"@{tag}"]


def succeeds(parse: Callable[..., Any], *args: Any) -> bool:
    """Whether `parse` accepts `args`: the ``isQuantity``/``isIP``/``isURL`` predicates of each library."""
    try:
        parse(*args)
    except (FunctionError, ValueError, OverflowError):
        return False
    return True


@dataclass(frozen=True, slots=True)
class Declaration:
    """One overload of a library function; `receiver` names the opaque type a method belongs to."""

    name: str
    params: tuple[str, ...]
    result: str
    impl: Callable[..., Any]
    member: bool = False
    receiver: str | None = None


def _dispatch(name: str, by_tag: dict[str, Callable[..., Any]]) -> Callable[..., Any]:
    def call(target: Any, *args: Any) -> Any:
        impl = by_tag.get(tag_of(target) or "")
        if impl is None:
            raise FunctionError(f"no such overload: {name} on {tag_of(target) or type(target).__name__}")
        return impl(target, *args)

    return call


def build(declarations: Iterable[Declaration]) -> tuple[Function, ...]:
    """Group declarations into `Function`s: one per name, one overload per signature."""
    grouped: dict[str, dict[tuple[tuple[str, ...], bool], list[Declaration]]] = defaultdict(lambda: defaultdict(list))
    for declaration in declarations:
        grouped[declaration.name][(declaration.params, declaration.member)].append(declaration)
    functions = []
    for name, signatures in grouped.items():
        overloads = []
        for (params, member), same in signatures.items():
            overload_id = f"{name}_{'_'.join(params) or 'none'}{'_member' if member else ''}".replace(".", "_")
            if len(same) == 1 and same[0].receiver is None:
                impl = same[0].impl
            else:
                impl = _dispatch(name, {d.receiver or "": d.impl for d in same})
            results = {d.result for d in same}
            overloads.append(Overload(overload_id, params, results.pop() if len(results) == 1 else "dyn", impl, member))
        functions.append(Function(name, tuple(overloads)))
    return tuple(functions)
