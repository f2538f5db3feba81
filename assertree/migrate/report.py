"""The migration's report: what became of each source rule, as JSON (``--report``) and as a text summary.

The JSON shape is the interface scripts read:

    {"policies": [{"source": {"file", "kind", "name"},
                   "rules": [{"name", "status", "reason", "converted": [{"file", "kind", "name"}]}]}]}

one entry per rule written in the source (autogen rules fold into theirs);
``status`` is ``verified``, ``differs`` or ``not-converted``; source files are
relative to the working directory, converted ones to DIR.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

__all__ = ["DIFFERS", "NOT_CONVERTED", "VERIFIED", "ConvertedRef", "PolicyEntry", "Report", "RuleEntry"]

VERIFIED = "verified"
DIFFERS = "differs"
NOT_CONVERTED = "not-converted"


@dataclass
class ConvertedRef:
    file: str
    kind: str
    name: str

    def as_json(self) -> dict[str, str]:
        return {"file": self.file, "kind": self.kind, "name": self.name}


@dataclass
class RuleEntry:
    name: str
    status: str
    reason: str = ""
    converted: list[ConvertedRef] = field(default_factory=list)
    probes: int = 0  # resources the proof ran both sides on
    examples: list[str] = field(default_factory=list)  # disagreeing resources, for the text summary

    def as_json(self) -> dict[str, Any]:
        return {"name": self.name, "status": self.status, "reason": self.reason,
                "converted": [ref.as_json() for ref in self.converted]}


@dataclass
class PolicyEntry:
    file: str
    kind: str
    name: str
    rules: list[RuleEntry] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {"source": {"file": self.file, "kind": self.kind, "name": self.name},
                "rules": [rule.as_json() for rule in self.rules]}


@dataclass
class Report:
    """Every source policy's entry, the input problems met on the way, and what the rewritten tests gave."""

    policies: list[PolicyEntry] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # inputs that could not be read (exit 2)
    out: str = ""
    documents: int = 0  # converted documents written
    tests: str = ""  # the rewritten tests' summary line, when they ran
    notes: list[str] = field(default_factory=list)  # what rewriting the tests left out, and why
    tests_failed: int = 0  # rows of the rewritten tests that failed
    test_failures: list[str] = field(default_factory=list)  # each failed row, for the text summary

    def counts(self) -> dict[str, int]:
        counts = {VERIFIED: 0, DIFFERS: 0, NOT_CONVERTED: 0}
        for policy in self.policies:
            for rule in policy.rules:
                counts[rule.status] += 1
        return counts

    @property
    def all_verified(self) -> bool:
        counts = self.counts()
        return counts[DIFFERS] == counts[NOT_CONVERTED] == 0

    def as_json(self) -> dict[str, Any]:
        return {"policies": [policy.as_json() for policy in self.policies]}

    def json_text(self) -> str:
        return json.dumps(self.as_json(), indent=2, ensure_ascii=False) + "\n"

    def text(self) -> str:
        """The summary printed on standard output."""
        lines = []
        for policy in self.policies:
            lines.append(f"{policy.file}: {policy.kind} {policy.name}")
            for rule in policy.rules:
                targets = ", ".join(f"{ref.kind} {ref.name}" for ref in rule.converted)
                if rule.status == VERIFIED:
                    line = f"  {rule.name}: verified on {rule.probes:,} resources -> {targets}"
                    if rule.reason:
                        line += f" ({rule.reason})"
                elif rule.status == DIFFERS:
                    line = f"  {rule.name}: differs -> {targets}: {rule.reason}"
                else:
                    line = f"  {rule.name}: not converted: {rule.reason}"
                lines.append(line)
                lines.extend(f"      {example}" for example in rule.examples)
        counts = self.counts()
        rules = sum(counts.values())
        lines.append(f"Migrated {len(self.policies)} polic{'y' if len(self.policies) == 1 else 'ies'} "
                     f"({rules} rule{'' if rules == 1 else 's'}): {counts[VERIFIED]} verified, "
                     f"{counts[DIFFERS]} differ, {counts[NOT_CONVERTED]} not converted; wrote {self.documents} "
                     f"document{'' if self.documents == 1 else 's'} to {self.out}")
        lines.extend(f"Note: {note}" for note in self.notes)
        if self.tests:
            lines.append(f"Rewritten tests: {self.tests}")
            lines.extend(f"  failed: {failure}" for failure in self.test_failures)
        return "\n".join(lines) + "\n"
