"""A CEL expression's top-level clauses and what each evaluates to (``--explain``).

``a && b && c`` that is false says little; which clause was false says why.
`split_clauses` cuts an expression's text at its top-level ``||`` (the
lowest-precedence operator below the conditional) or, when there is none, at
its top-level ``&&``; `trace_clauses` compiles each clause in the program's own
environment and evaluates it with the same variables, recording one step per
clause. Nothing here changes how an expression is evaluated: the clauses are
only ever evaluated for an explanation, after the verdict.

The split is done on the text by hand because cel-expr-python exposes no
syntax tree (only a serialized checked expression). It needs only CEL's
lexical structure: string and bytes literals (`literals`), ``//`` comments,
and brackets; an expression whose top level is a conditional (``c ? a : b``)
is not split, since the conditional binds looser than ``||`` and ``&&``. A
clause that does not compile on its own (it should always) is recorded as
such, never raised.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from assertree.explanation import Trace
from assertree.languages.cel.engine import CelError, Program
from assertree.languages.cel.lexer import CLOSING, OPENING, PUNCT, STRING, Token, closing_quote, tokens

__all__ = ["split_clauses", "trace_clauses"]

_COMPILED_KEPT = 256
_compiled: dict[tuple[int, str], tuple[Any, Program | CelError]] = {}


def split_clauses(text: str) -> tuple[str, list[str]] | None:
    """(``"||"`` or ``"&&"``, the clauses' texts) when `text` is two or more clauses joined at its top level
    by that operator; None otherwise (one clause, a top-level conditional, unbalanced or unterminated text).
    Read with the CEL lexer (`lexer.tokens`), so strings and comments hide what they hold."""
    cuts: dict[str, list[int]] = {"||": [], "&&": []}
    depth = 0
    previous: Token | None = None
    for token in tokens(text):
        if token.kind == STRING and closing_quote(text, token.start) is None:
            return None
        if token.kind == PUNCT:
            if token.text in OPENING:
                depth += 1
            elif token.text in CLOSING:
                depth -= 1
                if depth < 0:
                    return None
            elif depth == 0 and token.text in cuts:
                cuts[token.text].append(token.start)
            elif depth == 0 and token.text == "?" and not (previous is not None and previous.text == "."):
                return None  # a top-level conditional (`.?` is an optional field, not one)
        previous = token
    if depth != 0:
        return None
    operator = "||" if cuts["||"] else "&&"
    if not cuts[operator]:
        return None
    clauses = []
    start = 0
    for cut in cuts[operator]:
        clauses.append(text[start:cut].strip())
        start = cut + 2
    clauses.append(text[start:].strip())
    if not all(clauses):
        return None
    return operator, clauses



def trace_clauses(program: Program, variables: Mapping[str, Any], trace: Trace, context: Any = None, *,
                  policy_path: str = "", text: str | None = None) -> None:
    """Record each top-level clause of `program` (of `text`, the expression as written, when the program
    compiled a rewrite of it) with what it evaluates to under `variables` (and `context`, as
    `Program.evaluate` takes it), each compiled in `program`'s environment; records nothing for an
    expression that is one clause."""
    split = split_clauses(program.text if text is None else text)
    if split is None:
        return
    operator, clauses = split
    for position, clause in enumerate(clauses):
        if trace.full:
            return
        what = clause if position == 0 else f"{operator} {clause}"
        compiled = _compile(program, clause)
        if isinstance(compiled, CelError):
            trace.add(what, "", detail=f"cannot be evaluated on its own: {compiled.message}",
                      policy_path=policy_path)
            continue
        try:
            value = compiled.evaluate(variables, context)
        except CelError as error:
            trace.add(what, "error", detail=error.message, policy_path=policy_path)
            continue
        if isinstance(value, bool):
            trace.add(what, "true" if value else "false", policy_path=policy_path)
        else:
            trace.add(what, "", value=value, detail="not a bool", policy_path=policy_path)


def _compile(program: Program, clause: str) -> Program | CelError:
    """A clause compiled in `program`'s environment, kept (the same clauses are explained again and again)."""
    environment = program.environment
    key = (id(environment), clause)
    kept = _compiled.get(key)
    if kept is not None and kept[0] is environment:
        return kept[1]
    found: Program | CelError
    try:
        found = environment.compile(clause)
    except CelError as error:
        found = error
    if len(_compiled) >= _COMPILED_KEPT:
        _compiled.pop(next(iter(_compiled)))
    _compiled[key] = (environment, found)  # the environment pins its id
    return found



def trace_expression(what: str, program: Any, variables: Mapping[str, Any], trace: Trace, path: tuple, *,
                     context: Any = None, split_with: Program | None = None, source: str | None = None) -> Any:
    """Record one expression (`program`: anything with `Program.evaluate`'s signature) with what it gave and,
    unless that is true, the top-level clauses of `split_with` (of `source`, the expression as written, when
    that program compiled a rewrite of it; None: not split); returns the result, or the CelError it raised.
    What every CEL language's ``--explain`` records for an expression."""
    from assertree.errors import field_path_text

    where = field_path_text(path)
    try:
        result = program.evaluate(variables, context)
    except CelError as error:
        trace.add(what, "error", detail=error.message, policy_path=where)
        outcome: Any = error
    else:
        if isinstance(result, bool):
            trace.add(what, "true" if result else "false", policy_path=where)
        else:
            trace.add(what, "error", value=result, detail="must evaluate to bool", policy_path=where)
        outcome = result
    if outcome is not True and split_with is not None:
        with trace.nested():
            trace_clauses(split_with, variables, trace, context, policy_path=where, text=source)
    return outcome
