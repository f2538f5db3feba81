"""A list of CEL conditions as Kyverno checks them (the ``match`` of pkg/cel/policies/*/compiler/policy.go).

Each condition runs in order; the first that is false ends the check (it
wins over errors met before it); a condition that errors or gives no bool is
collected, and the caller decides what errors mean (an ERROR, or no match
under ``failurePolicy: Ignore``). Used for a policy's ``matchConditions``,
an exception's, and an authorization policy's.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from assertree.languages.cel.engine import CelError
from assertree.languages.cel.fallback import Runnable

__all__ = ["ConditionCheck", "check_conditions"]


@dataclass
class ConditionCheck:
    """The first false condition (name, field path), or None; and the errors met (message, field path)."""

    false: tuple[str, tuple] | None = None
    errors: list[tuple[str, tuple]] = field(default_factory=list)

    @property
    def holds(self) -> bool:
        return self.false is None and not self.errors

    def message(self) -> str:
        return "; ".join(message for message, _ in self.errors)


def check_conditions(conditions: Iterable[tuple[str, Runnable, tuple]], data: Mapping[str, Any], context: Any,
                     label: str = "matchCondition") -> ConditionCheck:
    """Run `conditions` ((name, program, field path) each) on `data`; `label` names them in messages."""
    check = ConditionCheck()
    for name, program, path in conditions:
        try:
            result = program.evaluate(data, context)
        except CelError as failure:
            check.errors.append((f"{label} {name!r}: {failure.message}", path))
            continue
        if not isinstance(result, bool):
            check.errors.append((f"{label} {name!r} must evaluate to bool, got {type(result).__name__}", path))
            continue
        if not result:
            check.false = (name, path)
            return check
    return check
