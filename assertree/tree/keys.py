"""What a key (or a leaf string) of an assertion tree says.

kyverno-json reads a key in a fixed order, and assertree follows it exactly
because policies depend on the corner cases:

1. a foreach prefix ``~name.`` or ``~.``;
2. a trailing binding ``->name`` (split greedily, so ``(a) -> x`` keeps the
   space and stops being an expression);
3. either an escaped ``\\text\\`` (taken literally) or a projection
   ``(statement)`` / ``(compiler;statement)``, where exactly the first ``(``
   and the last ``)`` are removed.

Anything else is a plain map key. One deliberate difference: kyverno-json's
patterns stop at line breaks, so a multi-line ``(...)`` there silently becomes
a literal; assertree reads it as the expression it obviously is.
"""

from __future__ import annotations

import re

from assertree.records import ValueRecord

_FOREACH = re.compile(r"~(\w+)?\.(.*)", re.ASCII | re.DOTALL)
_BINDING = re.compile(r"(.*)\s*->\s*(\w+)", re.ASCII | re.DOTALL)
_ESCAPED = re.compile(r"\\(.+)\\", re.DOTALL)
_PROJECTION = re.compile(r"\((?:(\w+);)?(.+)\)", re.ASCII | re.DOTALL)

DEFAULT_COMPILER = "default"
"""The compiler of a bare ``(statement)``: the policy's (or rule's, ...) default."""


class KeySyntax(ValueRecord):
    """A parsed key. `compiler` is "" for a plain or escaped key, "default" for ``(...)``."""

    statement: str
    foreach: bool
    foreach_name: str
    binding: str
    compiler: str
    escaped: bool

    __slots__ = ("binding", "compiler", "escaped", "foreach", "foreach_name", "statement")

    def __init__(
            self, statement: str, foreach: bool = False, foreach_name: str = "", binding: str = "", compiler: str = "",
            escaped: bool = False,
    ) -> None:
        self.statement = statement
        self.foreach = foreach
        self.foreach_name = foreach_name
        self.binding = binding
        self.compiler = compiler
        self.escaped = escaped


def parse_key(text: str) -> KeySyntax:
    """Split a key into its foreach, binding, escape and projection parts."""
    foreach = False
    foreach_name = ""
    binding = ""
    compiler = ""
    escaped = False
    if match := _FOREACH.match(text):
        foreach = True
        foreach_name = match.group(1) or ""
        text = match.group(2)
    if match := _BINDING.fullmatch(text):
        binding = match.group(2)
        text = match.group(1)
    if match := _ESCAPED.fullmatch(text):
        text = match.group(1)
        escaped = True
    elif match := _PROJECTION.fullmatch(text):
        compiler = match.group(1) or DEFAULT_COMPILER
        text = match.group(2)
    return KeySyntax(text, foreach, foreach_name, binding, compiler, escaped)
