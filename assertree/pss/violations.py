"""What a failed check says: upstream's reason and detail, and the restricted fields it found.

`Violation.reason` and `detail` are upstream's texts (``host namespaces``,
``hostNetwork=true``). `errors` are the field errors that Kyverno's fork of
the library adds (``WithFieldErrors``): one per restricted field found, with
the field path in Kubernetes' notation and the offending value; Kyverno's
exclusions and messages are made from them. A `FieldError`'s value keeps the
Go type the fork gives it (a string, a boolean, an integer or a list of
strings; ``""`` for none), because Kyverno reads values by type.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["FORBIDDEN", "REQUIRED", "BadValue", "FieldError", "Violation", "field_steps", "go_quote", "join_quote",
           "plural"]

REQUIRED, FORBIDDEN = "Required value", "Forbidden"

BadValue = str | bool | int | tuple[str, ...]


@dataclass(frozen=True, slots=True)
class FieldError:
    """A restricted field (``spec.containers[0].securityContext.privileged``): `type` is `REQUIRED` (must be
    set) or `FORBIDDEN` (set to a value not allowed, `bad_value`)."""

    type: str
    field: str
    bad_value: BadValue = ""

    def __str__(self) -> str:
        """Go's ``field.Error.Error()``: ``<field>: Required value`` or ``<field>: Forbidden``."""
        return f"{self.field}: {self.type}"


@dataclass(frozen=True, slots=True)
class Violation:
    """A check that refused the Pod: its ID, upstream's reason and detail, and its field errors."""

    check: str
    reason: str
    detail: str
    errors: tuple[FieldError, ...] = ()


def required(field: str) -> FieldError:
    return FieldError(REQUIRED, field)


def forbidden(field: str, bad_value: BadValue = "") -> FieldError:
    return FieldError(FORBIDDEN, field, bad_value)


def plural(singular: str, plural_form: str, count: int) -> str:
    return singular if count == 1 else plural_form


def join_quote(items: list[str] | tuple[str, ...]) -> str:
    """``"a", "b"`` (upstream's ``joinQuote``: no escaping)."""
    return '"' + '", "'.join(items) + '"' if items else ""


_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v",
            "\\": "\\\\", '"': '\\"'}


def go_quote(text: str) -> str:
    """`text` as Go's ``%q`` writes it (printable characters kept, others escaped Go's way)."""
    out = []
    for char in text:
        if char in _ESCAPES:
            out.append(_ESCAPES[char])
        elif char.isprintable():
            out.append(char)
        elif ord(char) < 0x80:
            out.append(f"\\x{ord(char):02x}")
        elif ord(char) < 0x10000:
            out.append(f"\\u{ord(char):04x}")
        else:
            out.append(f"\\U{ord(char):08x}")
    return '"' + "".join(out) + '"'


_STEP = re.compile(r"\[([^\]]*)\]|([^.\[]+)")


def field_steps(field: str) -> tuple[str | int, ...]:
    """A field path as steps: ``spec.containers[0].ports`` is ``("spec", "containers", 0, "ports")``, and
    ``metadata.annotations[a.b/c]`` is ``("metadata", "annotations", "a.b/c")``."""
    steps: list[str | int] = []
    for index, name in _STEP.findall(field):
        if name:
            steps.append(name)
        else:
            steps.append(int(index) if index.isdigit() else index)
    return tuple(steps)
