"""Source rewrites that let Kyverno's CEL compile on the CEL library: constructors and list ``indexOf``.

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
"""

from __future__ import annotations

import re

from assertree.languages.cel.literals import literal_at, literal_end

__all__ = ["CONSTRUCTOR_TYPES", "INDEX_FUNCTIONS", "rewrite"]

CONSTRUCTOR_TYPES = ("Object", "JSONPatch")
INDEX_FUNCTIONS = {"indexOf": "kyvernoIndexOf", "lastIndexOf": "kyvernoLastIndexOf"}
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_CHAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\s*\.\s*[A-Za-z_][A-Za-z0-9_]*)*")
_FIELD = re.compile(r"(\s*)(\??)([A-Za-z_][A-Za-z0-9_]*)(\s*):")


def _rename_calls(chain: str, text: str, end: int, preceded_by_dot: bool) -> str:
    """`chain` (``a.b.indexOf``) with a last ``.indexOf`` renamed when a call follows."""
    head, dot, last = chain.rpartition(".")
    if not (dot or preceded_by_dot) or last not in INDEX_FUNCTIONS or not text[end:].lstrip().startswith("("):
        return chain
    return f"{head}{dot}{INDEX_FUNCTIONS[last]}"


def rewrite(text: str) -> str:
    """`text` with constructors written as map literals and ``indexOf`` calls renamed (else unchanged)."""
    if not any(name in text for name in (*CONSTRUCTOR_TYPES, *INDEX_FUNCTIONS)):
        return text
    out: list[str] = []
    stack: list[str] = []  # "message", "map", "(", "["
    position = 0
    expect_field = False
    while position < len(text):
        char = text[position]
        if expect_field:
            expect_field = False
            field = _FIELD.match(text, position)
            if field is not None:
                out.append(f'{field.group(1)}{field.group(2)}"{field.group(3)}"{field.group(4)}:')
                position = field.end()
                continue
        if literal_at(text, position):
            end = literal_end(text, position) or len(text)
            out.append(text[position:end])
            position = end
            continue
        if char.isalpha() or char == "_":
            chain = _CHAIN.match(text, position)
            assert chain is not None
            after = chain.end()
            while after < len(text) and text[after].isspace():
                after += 1
            head = _IDENTIFIER.match(chain.group(0))
            preceded_by_dot = bool(out) and "".join(out).rstrip().endswith(".")
            if (head is not None and head.group(0) in CONSTRUCTOR_TYPES and not preceded_by_dot
                    and after < len(text) and text[after] == "{"):
                out.append("dyn({")
                stack.append("message")
                position = after + 1
                expect_field = True
                continue
            out.append(_rename_calls(chain.group(0), text, chain.end(), preceded_by_dot))
            position = chain.end()
            continue
        if char == "{":
            stack.append("map")
        elif char in "([":
            stack.append(char)
        elif char in "})]" and stack:
            if stack.pop() == "message":
                out.append("})")
                position += 1
                continue
        elif char == "," and stack and stack[-1] == "message":
            expect_field = True
        out.append(char)
        position += 1
    return "".join(out)
