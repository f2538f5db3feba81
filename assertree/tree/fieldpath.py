"""Field paths of assertion-tree nodes, printed the way kyverno-json prints them.

A path is built while a tree is evaluated, so it must cost almost nothing
until a violation needs it: each step is a tuple ``(parent, text, bracket,
step)`` and the text form is only assembled by `render`. Keys are written
exactly as in the policy (``spec.~.containers[0].(image)``); list positions and
map keys visited by ``~`` are bracketed (``[0]``, ``[team/x]``).

`step` is the key or index this step takes inside the *payload* when the tree
follows the payload's own structure (a plain key, a list position, a foreach
over a plain key), else `NOT_IN_PAYLOAD`: reporters use it to find the line of
a failing field in the payload file.
"""

from __future__ import annotations

from typing import Any

FieldPath = tuple | None
NOT_IN_PAYLOAD = object()


def child(parent: FieldPath, text: str, step: Any = NOT_IN_PAYLOAD) -> tuple:
    """A map key below `parent`."""
    return (parent, text, False, step)


def index(parent: FieldPath, position: int, step: Any = NOT_IN_PAYLOAD) -> tuple:
    """A list position (or a map key visited by foreach) below `parent`."""
    return (parent, str(position), True, step)


def render(path: FieldPath) -> str:
    """The kyverno-json text of a path: ``a.b[0].(expr)``; "" for the root."""
    out = []  # from the last step back to the first: a key after another step takes a dot
    while path is not None:
        parent, text, bracket, _ = path
        out.append(f"[{text}]" if bracket else text if parent is None else "." + text)
        path = parent
    out.reverse()
    return "".join(out)


def payload_steps(path: FieldPath) -> list[Any]:
    """The keys and indexes the path takes inside the payload, up to the first step that
    leaves the payload's structure (an expression key)."""
    steps = []
    while path is not None:
        parent, _, _, step = path
        steps.append(step)
        path = parent
    steps.reverse()
    for position, step in enumerate(steps):
        if step is NOT_IN_PAYLOAD:
            return steps[:position]
    return steps
