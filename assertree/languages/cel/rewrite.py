"""Source rewrites that let Kubernetes' and Kyverno's CEL compile on the CEL library.

Three rewrites: typed constructors, list ``indexOf``, and functions that return an optional.

**Typed-object constructors** (``Object{...}``, ``JSONPatch{...}``) become map literals.

Mutating policies build their patches with message constructors:
``Object{spec: Object.spec{containers: [...]}}`` for an apply configuration,
``JSONPatch{op: "add", path: "/x", value: 1}`` for a JSON patch. cel-go knows
these types from Kubernetes' OpenAPI schemas; the CEL library assertree uses
only knows protobuf types, which a policy's object types are not. The values
they make are plain maps once converted back to JSON, so each constructor is
rewritten, before compiling, into the map literal with the same fields:
``{"spec": {"containers": [...]}}``. The rewrite scans the text (strings are
copied untouched, nesting is tracked) rather than parsing CEL: it only needs
to find ``Name{`` and the ``field:`` names directly inside those braces.

Each is wrapped in ``dyn(...)``: a message type is nullable, so
``cond ? Object.spec{...} : null`` type-checks in cel-go, and so must the map.
What this gives up: the type checker no longer knows field types (a typo in a
field name is not caught), and ``has()`` on a constructed object reads a map.

**List ``indexOf``/``lastIndexOf``** (Kubernetes' lists library): the CEL library
declares one function per name and its strings extension owns ``indexOf``, so
member calls ``.indexOf(`` and ``.lastIndexOf(`` are renamed to functions
(`INDEX_FUNCTIONS`) that serve both strings and lists.

**Optional results** (Kubernetes' format library: ``format.named(name)``,
``<format>.validate(s)``): a Python function cannot return an optional to the
CEL library, so these return a map holding the value under one key, or an
empty map, and each call gets ``[?'<key>']`` appended
(`assertree.languages.cel.functions.format.OPTIONAL_RESULTS`): the optional
index of that map is the optional Kubernetes returns.
"""

from __future__ import annotations

import re

from assertree.languages.cel.functions.format import OPTIONAL_RESULTS
from assertree.languages.cel.functions.lists import INDEX_FUNCTIONS
from assertree.languages.cel.lexer import string_end

__all__ = ["CONSTRUCTOR_TYPES", "rewrite"]

CONSTRUCTOR_TYPES = ("Object", "JSONPatch")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_CHAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\s*\.\s*[A-Za-z_][A-Za-z0-9_]*)*")
_FIELD = re.compile(r"(\s*)(\??)([A-Za-z_][A-Za-z0-9_]*)(\s*):")


def _rename_calls(chain: str, text: str, end: int, preceded_by_dot: bool) -> str:
    """`chain` (``a.b.indexOf``) with a last ``.indexOf`` renamed when a call follows."""
    head, dot, last = chain.rpartition(".")
    if not (dot or preceded_by_dot) or last not in INDEX_FUNCTIONS or not text[end:].lstrip().startswith("("):
        return chain
    return f"{head}{dot}{INDEX_FUNCTIONS[last]}"


def _optional_key(chain: str, preceded_by_dot: bool) -> str | None:
    """The key to index the result of a call to `chain` with, when it stands for a function returning an optional."""
    for name, key in OPTIONAL_RESULTS.items():
        if "." in name and chain == name and not preceded_by_dot:  # a namespaced function: format.named(...)
            return key
        if "." not in name and chain.rpartition(".")[2] == name and ("." in chain or preceded_by_dot):  # a method
            return key
    return None


def rewrite(text: str) -> str:
    """`text` with constructors written as map literals, ``indexOf`` calls renamed and optional results
    indexed (else unchanged)."""
    if not any(name in text for name in (*CONSTRUCTOR_TYPES, *INDEX_FUNCTIONS, *OPTIONAL_RESULTS)):
        return text
    out: list[str] = []
    stack: list[str] = []  # "message", "map", "(", "[", "optional:<key>" (a call whose result is indexed)
    position = 0
    expect_field = False
    optional_key: str | None = None  # set between a function returning an optional and its "("
    while position < len(text):
        char = text[position]
        if expect_field:
            expect_field = False
            field = _FIELD.match(text, position)
            if field is not None:
                out.append(f'{field.group(1)}{field.group(2)}"{field.group(3)}"{field.group(4)}:')
                position = field.end()
                continue
        end = string_end(text, position)
        if end is not None and (position == 0 or not (text[position - 1].isalnum() or text[position - 1] == "_")):
            out.append(text[position:end])
            position = end
            continue
        chain = _CHAIN.match(text, position)
        if chain is not None:  # a letter outside ASCII is no identifier: the parser reports it
            after = chain.end()
            while after < len(text) and text[after].isspace():
                after += 1
            head = _IDENTIFIER.match(chain.group(0))
            before = position - 1
            while before >= 0 and text[before].isspace():
                before -= 1
            preceded_by_dot = before >= 0 and text[before] == "."
            if (head is not None and head.group(0) in CONSTRUCTOR_TYPES and not preceded_by_dot
                    and after < len(text) and text[after] == "{"):
                out.append("dyn({")
                stack.append("message")
                position = after + 1
                expect_field = True
                continue
            if after < len(text) and text[after] == "(":
                optional_key = _optional_key(chain.group(0), preceded_by_dot)
            out.append(_rename_calls(chain.group(0), text, chain.end(), preceded_by_dot))
            position = chain.end()
            continue
        if char == "{":
            stack.append("map")
        elif char == "(" and optional_key is not None:
            stack.append(f"optional:{optional_key}")
            optional_key = None
        elif char in "([":
            stack.append(char)
        elif char in "})]" and stack:
            closed = stack.pop()
            if closed == "message":
                out.append("})")
                position += 1
                continue
            if closed.startswith("optional:"):
                out.append(f")[?'{closed.partition(':')[2]}']")
                position += 1
                continue
        elif char == "," and stack and stack[-1] == "message":
            expect_field = True
        out.append(char)
        position += 1
    return "".join(out)
