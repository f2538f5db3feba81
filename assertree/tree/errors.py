"""What a failing node of an assertion tree reports: a `FieldError`, as kyverno-json words it.

The tree stage produces these and the result model carries them; they live
with the trees so that evaluation never imports the result model.
"""

from __future__ import annotations

from typing import Any

from assertree.jp.values import to_display
from assertree.records import ValueRecord
from assertree.tree import fieldpath

# Kubernetes field.ErrorType names, as kyverno-json's JSON report writes them.
INVALID = "FieldValueInvalid"
REQUIRED = "FieldValueRequired"
TYPE_INVALID = "FieldValueTypeInvalid"
INTERNAL = "InternalError"

_BODY_PREFIX = {INVALID: "Invalid value", REQUIRED: "Required value", TYPE_INVALID: "Invalid value"}
_NO_VALUE = object()


class FieldError(ValueRecord):
    """One failing node of an assertion tree.

    `path` is the raw field path (see `assertree.tree.fieldpath`); `field` its
    kyverno-json text. A leaf that did not match carries `expected`, and its
    `detail` ("Expected value: ...") is only worded when someone reads it:
    match trees produce many such errors that nobody prints.
    """

    type: str
    path: Any
    reason: str
    value: Any
    expected: Any

    __slots__ = ("expected", "path", "reason", "type", "value")

    def __init__(self, type: str, path: Any, reason: str = "", value: Any = None, expected: Any = _NO_VALUE) -> None:
        self.type = type
        self.path = path
        self.reason = reason
        self.value = value
        self.expected = expected

    @property
    def field(self) -> str:
        return fieldpath.render(self.path)

    @property
    def has_expected(self) -> bool:
        return self.expected is not _NO_VALUE

    @property
    def detail(self) -> str:
        if self.expected is not _NO_VALUE:
            return f"Expected value: {to_display(self.expected)}"
        return self.reason

    @property
    def payload_steps(self) -> list[Any]:
        """Keys/indexes of the failing field inside the resource, as far as they are known."""
        return fieldpath.payload_steps(self.path)

    def body(self) -> str:
        """``Invalid value: 3: Expected value: 4``, as kyverno-json words it (values in JSON)."""
        prefix = _BODY_PREFIX[self.type]
        if self.type == REQUIRED:
            return f"{prefix}: {self.detail}"
        return f"{prefix}: {to_display(self.value)}: {self.detail}"

    def __str__(self) -> str:
        return f"{self.body()} (PATH={self.field})"
