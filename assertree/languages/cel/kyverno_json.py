"""kyverno-json's CEL environment: ``object``, ``bindings.resolve('name')`` and cel-go's options.

kyverno-json (pkg/core/compilers/cel/env.go at the pinned revision) declares
``object`` (the node's value, dyn) and ``bindings`` (an opaque value whose one
method ``resolve(string)`` reads a binding), and enables optional types
(``object.?spec``), cross-type numeric comparisons, the strings and sets
extensions, UTC as the default time zone and homogeneous aggregate literals.

Here ``bindings.resolve`` is a namespaced function reading the bindings of the
evaluation in progress (the library cannot carry a Python mapping as an opaque
value), so ``bindings.resolve('x')`` means what it means in kyverno-json and
any other use of ``bindings`` is a compile error, as selecting a field of an
opaque value is in cel-go. A binding stored as `assertree.jp.compiler.Lazy`
(kyverno-json context entries) is computed on first access. A missing binding
is go-jmespath's error, ``variable not defined: $name``.

Differences from cel-go that remain (the library offers no switch for them):
mixed-type list and map literals (``[1, 'a']``) compile, where homogeneous
aggregate literals reject them; cel-cpp's strings extension is its own version
of the functions. Results are plain JSON-like values (see `engine`); an
optional result is unwrapped as cel-go's ``Optional.Value()`` is (none -> null).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from assertree.jp.compiler import Lazy
from assertree.languages.cel.engine import Environment, Function, FunctionError, Overload, Program, evaluation_context

__all__ = ["ENVIRONMENT", "CompiledCel", "compile_kyverno_json"]


def _resolve(name: str) -> Any:
    bindings = evaluation_context()
    if bindings is None or name not in bindings:
        raise FunctionError(f"variable not defined: ${name}")
    value = bindings[name]
    return value.resolve() if isinstance(value, Lazy) else value


ENVIRONMENT = Environment(
    name="kyverno-json",
    variables=("object",),
    extensions=("optional", "strings", "sets"),
    functions=(Function("bindings.resolve", (Overload("bindings_resolve_string", ("string",), "dyn", _resolve),)),),
    cross_type_numeric_comparisons=True,
)


class CompiledCel:
    """A kyverno-json CEL statement, compiled once."""

    __slots__ = ("_program", "text")

    def __init__(self, program: Program) -> None:
        self._program = program
        self.text = program.text

    def evaluate(self, value: Any, bindings: Mapping[str, Any]) -> Any:
        """The statement on `value` (as ``object``); raises CelEvaluationError.

        `bindings` maps names without ``$`` to values or `Lazy` values.
        """
        return self._program.evaluate({"object": value}, bindings)

    def explain(self, value: Any, bindings: Mapping[str, Any], trace: Any) -> None:
        """Record the statement's top-level clauses with their values (`clauses.trace_clauses`; --explain)."""
        from assertree.languages.cel.clauses import trace_clauses

        trace_clauses(self._program, {"object": value}, trace, bindings)

    def __repr__(self) -> str:
        return f"CompiledCel({self.text!r})"


@lru_cache(maxsize=4096)
def compile_kyverno_json(text: str) -> CompiledCel:
    """Compile (cached by text); raises CelCompileError, or CelUnavailableError without the cel extra."""
    return CompiledCel(ENVIRONMENT.compile(text))
