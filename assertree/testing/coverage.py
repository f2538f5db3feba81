"""``assertree test --coverage``: which rules the tests show both passing and failing.

A policy test proves something about a rule only when it holds a resource the
rule lets through *and* one it stops: a rule with only passing rows may never
fail at all. `coverage_of` reads a `TestRun` and counts, per policy and rule,
the rows that held (the row's result was the expected one) by their result:

* ``pass`` and ``fail`` are the two sides a validating rule must show; a
  ``warn`` row (a failure of a policy that is not scored) counts as ``fail``;
* a rule that mutates or generates cannot fail a resource the way a validation
  does: its two sides are ``pass`` (it changed the resource) and ``skip`` (it
  left one alone);
* otherwise ``skip`` and ``error`` rows are counted and shown but cover
  neither side: a skipped rule said nothing about the resource, and an
  expected error shows that the rule breaks, not that it tells good from bad;
* rows that did not hold (the test run fails on them anyway), ``Excluded``
  rows (the rule selected nothing: ``kyverno test`` counts them as passed, but
  the rule never ran) and ``Not found`` rows cover nothing.

Autogen rules (``autogen-<rule>``, ``autogen-cronjob-<rule>``) count for the
rule they were generated from. Policy kinds without rules (Kyverno's CEL
``ValidatingPolicy`` and ``MutatingPolicy``, Kubernetes'
ValidatingAdmissionPolicy) are one entry each, with no rule name: the policy is
the unit its rows name. Every policy a Test loads is listed, with the rules
the policy has; one that no row names is marked as not tested, all its rules
uncovered. Policies are told apart by their file and place in it, so one
policy loaded by several Tests is one entry.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from assertree.results import ERROR, FAIL, PASS, SKIP, WARN
from assertree.testing import TestRun
from assertree.testing.check import EXCLUDED, NOT_FOUND, ruleless

__all__ = ["Coverage", "PolicyCoverage", "RuleCoverage", "coverage_of"]

COUNTED = (PASS, FAIL, SKIP, ERROR)
"""The results a rule's rows are counted by (``warn`` is counted as ``fail``)."""


@dataclass
class RuleCoverage:
    """One rule (None for a policy kind without rules): its held rows by result, and the two it needs."""

    name: str | None
    needs: tuple[str, str] = (PASS, FAIL)  # (PASS, SKIP) for a rule that mutates or generates
    rows: Counter[str] = field(default_factory=Counter)

    @property
    def missing(self) -> list[str]:
        """The needed results no held row has."""
        return [result for result in self.needs if not self.rows[result]]

    @property
    def covered(self) -> bool:
        return not self.missing

    def as_dict(self) -> dict[str, Any]:
        return {"rule": self.name, "needs": list(self.needs), "rows": {key: self.rows[key] for key in COUNTED},
                "covered": self.covered, "missing": self.missing}


@dataclass
class PolicyCoverage:
    """One policy the Tests loaded, with its rules; `tested` is whether a row of a Test that loads it names it."""

    name: str
    kind: str
    source: str | None
    rules: list[RuleCoverage]
    tested: bool = False

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "kind": self.kind, "source": self.source, "tested": self.tested,
                "rules": [rule.as_dict() for rule in self.rules]}


@dataclass
class Coverage:
    """Every policy the Tests loaded, in the order they were first loaded."""

    policies: list[PolicyCoverage]

    def uncovered(self) -> list[tuple[PolicyCoverage, RuleCoverage]]:
        return [(policy, rule) for policy in self.policies for rule in policy.rules if not rule.covered]

    def summary(self) -> dict[str, int]:
        rules = [rule for policy in self.policies for rule in policy.rules]
        return {"policies": len(self.policies), "untested": sum(not policy.tested for policy in self.policies),
                "rules": len(rules), "covered": sum(rule.covered for rule in rules)}

    def as_dict(self) -> dict[str, Any]:
        return {"policies": [policy.as_dict() for policy in self.policies], "summary": self.summary()}


def coverage_of(run: TestRun) -> Coverage:
    """The coverage of every policy the Tests of `run` loaded (see the module docstring)."""
    policies: dict[tuple, PolicyCoverage] = {}
    for outcome in run.outcomes:
        named = {row.expected.policy_name for row in outcome.rows}
        for policy in outcome.policies:
            key = _key(policy)
            if key not in policies:
                policies[key] = PolicyCoverage(policy.name, policy.kind, policy.source, _rules(policy))
            policies[key].tested = policies[key].tested or policy.name in named
        for row in outcome.rows:
            if row.policy_info is None or row.actual in (NOT_FOUND, EXCLUDED) or not row.ok:
                continue
            entry = policies.get(_key(row.policy_info))
            if entry is None:
                continue
            rule = _entry_of(entry, row.policy_info, row.result)
            if rule is not None:
                rule.rows[FAIL if row.actual == WARN else row.actual] += 1
    return Coverage(list(policies.values()))


def _key(policy: Any) -> tuple:
    """A policy's identity across Tests: where it was read (a policy read twice is the same policy)."""
    if policy.source is None:
        return ("", None, policy.kind, policy.name)
    return (policy.source, policy.document_index, policy.kind, policy.name)


def _rules(policy: Any) -> list[RuleCoverage]:
    """The entries of a policy: one per written rule (autogen folded in), or one for a kind without rules."""
    if ruleless(policy):
        return [RuleCoverage(None, _needs(policy, None))]
    entries: dict[str, RuleCoverage] = {}
    for rule in policy.rules:
        name = _written(rule)
        if name not in entries:
            entries[name] = RuleCoverage(name, _needs(policy, rule))
    return list(entries.values())


def _entry_of(entry: PolicyCoverage, policy: Any, result: Any) -> RuleCoverage | None:
    if ruleless(policy):
        return entry.rules[0]
    rule = getattr(result, "rule", None)
    if rule is None:
        return None
    name = _written(rule)
    return next((item for item in entry.rules if item.name == name), None)


def _written(rule: Any) -> str:
    """The rule a rule counts for: the written one an autogen rule was generated from, else itself."""
    return getattr(rule, "autogen_of", None) or rule.name


def _needs(policy: Any, rule: Any) -> tuple[str, str]:
    """The two results a rule must show: pass and fail, or pass and skip for one that changes or makes
    resources (a mutate or generate rule, a mutating or generating policy kind)."""
    kind = getattr(rule, "kind", "") if rule is not None else ""
    acts = kind in ("mutate", "generate") or getattr(policy, "mutating", False) is True or (
        rule is None and any(word in policy.kind for word in ("Mutating", "Generating")))
    return (PASS, SKIP) if acts else (PASS, FAIL)
