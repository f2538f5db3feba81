"""A policy's ``variables``, evaluated the way Kubernetes and Kyverno evaluate them: lazily, inside CEL.

ValidatingAdmissionPolicy, Kyverno's CEL kinds and Kyverno's authorization
policies compile each ``spec.variables`` entry in order, typing
``variables.<name>`` with the entry's result type, and bind them per request
as a lazy map (k8s.io/apiserver/pkg/cel/lazy): an entry is evaluated the
first time an expression reads it, and reading one that failed gives that
failure. So a variable may hold anything an expression can (a timestamp, an
optional, an error) and one that fails only matters where it is read.

The CEL library cannot hold such values outside an evaluation, so
`inline_variables` binds each variable an expression reads inside that
expression's own text, in declaration order, with the bindings extension::

    variables.a.size() > variables.b      # a: "object.spec.x", b: "2"
    cel.bind(__variables_a__, (object.spec.x), cel.bind(__variables_b__, (2),
             (__variables_a__.size() > __variables_b__)))

``cel.bind`` evaluates a value only when it is read, so a variable's failure
stays where it is read, as in the lazy map. Each expression evaluates the
variables it reads once (the lazy map caches across the expressions of one
request; here each expression reads its own copy: the results are the same,
the cost is paid per expression).

Read forms: ``variables.name`` and ``variables.?name`` (an optional of the
value); ``has(variables.name)`` is true for a declared name, as for the
declared fields of the lazy map. An expression that uses ``variables`` any
other way (``variables['name']``, ``variables`` alone) cannot be rewritten:
`inline_variables` returns None and the caller evaluates it against
precomputed values. A name that is not declared, or declared after the
variable that reads it, is a `VariableReferenceError`, as the type checker
reports it in cel-go (the variables' type has no such field yet).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from assertree.languages.cel.lexer import IDENT, Token, tokens
from assertree.languages.cel.text_facts import TextFacts

__all__ = ["VariableReferenceError", "inline_variables", "referenced_variables"]

ROOT = "variables"


class VariableReferenceError(ValueError):
    """An expression reads a variable that is not declared before it."""

    def __init__(self, name: str) -> None:
        self.name = name
        super().__init__(f"undefined field '{name}'")


def _alias(name: str) -> str:
    return f"__{ROOT}_{name}__"


def _reads(items: list[Token]) -> list[tuple[int, int, str, str]] | None:
    """(first, last, form, name) of each read of a variable; None when `variables` is used another way.

    form: "value" (variables.name), "optional" (variables.?name), "has" (has(variables.name)).
    """
    found = []
    index = 0
    while index < len(items):
        token = items[index]
        if token.kind != IDENT or token.text != ROOT or (index > 0 and items[index - 1].text == "."):
            index += 1
            continue
        rest = [item.text for item in items[index + 1:index + 4]]
        if rest[:1] == ["."] and len(rest) > 1 and items[index + 2].kind == IDENT:
            first, last, form, name = index, index + 2, "value", rest[1]
        elif rest[:2] == [".", "?"] and len(rest) > 2 and items[index + 3].kind == IDENT:
            first, last, form, name = index, index + 3, "optional", rest[2]
        else:
            return None
        if (form == "value" and first >= 2 and items[first - 1].text == "(" and items[first - 2].text == "has"
                and last + 1 < len(items) and items[last + 1].text == ")"):
            first, last, form = first - 2, last + 1, "has"
        found.append((first, last, form, name))
        index = last + 1
    return found


def referenced_variables(text: str) -> set[str] | None:
    """The names of the variables `text` reads, or None when it uses ``variables`` another way."""
    if ROOT not in text:
        return set()
    reads = _reads(tokens(text))
    return None if reads is None else {name for *_, name in reads}


def _substituted(text: str) -> str | None:
    if ROOT not in text:
        return text
    items = tokens(text)
    reads = _reads(items)
    if reads is None:
        return None
    out = []
    position = 0
    for first, last, form, name in reads:
        out.append(text[position:items[first].start])
        out.append({"value": _alias(name), "optional": f"optional.of({_alias(name)})", "has": "true"}[form])
        position = items[last].end
    out.append(text[position:])
    return "".join(out)


_INLINED = TextFacts("cel-inlined", lambda: (str(Path(__file__).parent),))
"""What texts inlined to before, by the text and the declared variables: decided by this package's code."""


def inline_variables(text: str, declared: Sequence[tuple[str, str]]) -> str | None:
    """`text` with the variables it reads bound in it (`declared`: (name, expression) in order).

    None when `text` uses ``variables`` in a way that cannot be rewritten. Raises
    `VariableReferenceError` for a read of an undeclared name, or (within a
    variable's own expression) of one declared after it.

    Memo: a pure function of `text` and `declared` (and of this package's code, which names the folder it is
    kept in between runs: `text_facts`), so what was inlined before is not lexed again; an error is never
    kept. `tests/cel/test_cel_variables.py` holds the memo to inlining afresh.
    """
    if ROOT not in text:
        return text
    key = "\0".join((text, *(f"{name}\0{expression}" for name, expression in declared)))
    kept = _INLINED.get(key)
    if type(kept) is tuple and len(kept) == 1 and (kept[0] is None or type(kept[0]) is str):
        return kept[0]
    inlined = inline_afresh(text, declared)
    _INLINED.put(key, (inlined,))
    return inlined


def inline_afresh(text: str, declared: Sequence[tuple[str, str]]) -> str | None:
    """`inline_variables` worked out now (no memo)."""
    body = _substituted(text)
    if body is None:
        return None
    position = {name: index for index, (name, _) in enumerate(declared)}
    needed: set[str] = set()
    pending = list(referenced_variables(text) or ())
    while pending:
        name = pending.pop()
        if name in needed:
            continue
        if name not in position:
            raise VariableReferenceError(name)
        needed.add(name)
        reads = referenced_variables(declared[position[name]][1])
        if reads is None:
            return None
        for other in reads:
            if other not in position or position[other] >= position[name]:
                raise VariableReferenceError(other)
            pending.append(other)
    for name in sorted(needed, key=position.__getitem__, reverse=True):
        value = _substituted(declared[position[name]][1])
        if value is None:
            return None
        body = f"cel.bind({_alias(name)}, ({value}\n), ({body}\n))"
    return body

