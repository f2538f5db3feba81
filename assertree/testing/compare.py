"""A migration report: run a policy set and its rewrite (ClusterPolicy -> CEL) and list where they disagree.

People moving from Kyverno ClusterPolicy to the CEL kinds (a ClusterPolicy
with ``validate.cel``, or a ``policies.kyverno.io`` ValidatingPolicy) keep
both versions side by side until they trust the new one. `compare` runs the
old set and the new set over the same resources, with the same scan context,
and puts their verdicts next to each other, one row per (resource, twin pair).

Twins. A new policy is the twin of an old one, in this order:

1. ``pairs`` (``--pair OLD=NEW``) says so; both names must exist.
2. It has the same name: kyverno/policies keeps a policy's name in its
   ``-cel`` and ``-vpol`` folders (``best-practices/disallow-latest-tag`` and
   ``best-practices-vpol/disallow-latest-tag`` are both ``disallow-latest-tag``).
3. Its name is the old name plus ``-cel`` or ``-vpol`` (twins kept in one
   cluster cannot share a name when both are ClusterPolicies).

A name is ``metadata.name``, ``namespace/name`` for a namespaced Policy. Two
policies of one side with the same name are refused: no pairing could tell
them apart. Policies left without a twin are listed, not compared.

Verdicts. A policy's verdict on a resource sums up its rules there, whatever
their number and names (a ClusterPolicy's rules and their ``autogen-`` copies
against the one rule, and its autogen copies, of a ValidatingPolicy):
``fail`` if any rule failed (``warn``, a failure of an unscored policy, counts
as one), else ``error`` if any errored, else ``pass`` if any passed, else
``skip`` if a rule applied and skipped (preconditions, an exception), else
``not-selected``: no rule matched the resource. ``skip`` and ``not-selected``
both mean the policy had nothing to say, and agree unless `strict`; every
other pair of different verdicts is a difference.

Mutation is compared only through its verdicts: each side validates the
resource as its own mutating policies left it, as admission would.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from assertree.errors import PolicyError, UsageError
from assertree.languages.base import ScanContext
from assertree.results import ERROR, FAIL, PASS, SKIP, WARN, PolicyInfo, Resource, RuleResult, ScanResult

__all__ = ["SUFFIXES", "Comparison", "Row", "Twin", "Verdict", "VerdictStatus", "compare", "pair_policies",
           "policy_name", "policy_verdict"]

SUFFIXES = ("-cel", "-vpol")
"""Name endings a new policy may add to its old twin's name."""


class VerdictStatus(StrEnum):
    """A policy's verdict on a resource, strongest first."""

    FAIL = "fail"
    ERROR = "error"
    PASS = "pass"
    SKIP = "skip"
    NOT_SELECTED = "not-selected"


SILENT = (VerdictStatus.SKIP, VerdictStatus.NOT_SELECTED)  # the policy had nothing to say


@dataclass(frozen=True, slots=True)
class Verdict:
    """One policy's verdict on one resource, and the rules (with their messages) that decided it."""

    status: VerdictStatus
    rules: tuple[str, ...] = ()
    messages: tuple[str, ...] = ()  # "rule: message", for fail, error and skip verdicts

    @property
    def blocks(self) -> bool:
        """Admission would refuse the resource (a failure or an error; Kyverno's default failurePolicy)."""
        return self.status in (VerdictStatus.FAIL, VerdictStatus.ERROR)


@dataclass(frozen=True, slots=True)
class Twin:
    """An old policy and the new policy that replaces it; `paired_by` is "pair", "name" or "suffix"."""

    old: PolicyInfo
    new: PolicyInfo
    paired_by: str

    @property
    def label(self) -> str:
        old, new = policy_name(self.old), policy_name(self.new)
        return old if old == new else f"{old} -> {new}"


@dataclass(frozen=True, slots=True)
class Row:
    """The two verdicts of a twin pair on one resource."""

    resource: Resource
    twin: Twin
    old: Verdict
    new: Verdict
    agree: bool

    @property
    def admission_changes(self) -> bool:
        """One side refuses the resource and the other admits it: the difference a cluster would feel."""
        return self.old.blocks != self.new.blocks


@dataclass
class Comparison:
    """Every row of a comparison, in resource then pair order, and the policies left without a twin."""

    resources: list[Resource]
    twins: list[Twin]
    rows: list[Row]
    old_only: list[PolicyInfo]
    new_only: list[PolicyInfo]
    strict: bool = False

    @property
    def differences(self) -> list[Row]:
        return [row for row in self.rows if not row.agree]

    @property
    def unpaired(self) -> int:
        return len(self.old_only) + len(self.new_only)

    @property
    def agree(self) -> bool:
        """True when no verdict differs (and, when `strict`, every policy has a twin): exit code 0."""
        return not self.differences and not (self.strict and self.unpaired)

    def summary(self) -> dict[str, int]:
        differ = len(self.differences)
        return {"pairs": len(self.twins), "resources": len(self.resources), "agree": len(self.rows) - differ,
                "differ": differ, "oldOnly": len(self.old_only), "newOnly": len(self.new_only)}


def policy_name(policy: PolicyInfo) -> str:
    """The name twins are paired by: ``metadata.name``, or ``namespace/name`` for a namespaced policy."""
    namespace = getattr(policy, "namespace", None)
    return f"{namespace}/{policy.name}" if namespace else policy.name


def pair_policies(old: Sequence[PolicyInfo], new: Sequence[PolicyInfo], pairs: Mapping[str, str] | None = None
                  ) -> tuple[list[Twin], list[PolicyInfo], list[PolicyInfo]]:
    """(twins in old-policy order, old policies without a twin, new policies without a twin).

    Raises UsageError when `pairs` names a policy that is not there or twice,
    PolicyError when one side has two policies of the same name.
    """
    old_by_name = _by_name(old, "old")
    new_by_name = _by_name(new, "new")
    found: dict[str, tuple[str, str]] = {}  # old name -> (new name, how)
    taken: set[str] = set()
    for old_name, new_name in (pairs or {}).items():
        for name, side, names in ((old_name, "old", old_by_name), (new_name, "new", new_by_name)):
            if name not in names:
                known = ", ".join(sorted(names)) or "none"
                raise UsageError(f"--pair {old_name}={new_name}: no {side} policy named {name!r} (found: {known})")
        if new_name in taken:
            raise UsageError(f"--pair: new policy {new_name!r} is paired twice")
        found[old_name] = (new_name, "pair")
        taken.add(new_name)
    for how, candidates in (("name", lambda name: [name]), ("suffix", lambda name: [name + s for s in SUFFIXES])):
        for old_name in old_by_name:
            if old_name in found:
                continue
            match = next((name for name in candidates(old_name) if name in new_by_name and name not in taken), None)
            if match is not None:
                found[old_name] = (match, how)
                taken.add(match)
    twins = [Twin(policy, new_by_name[found[name][0]], found[name][1])
             for name, policy in old_by_name.items() if name in found]
    old_only = [policy for name, policy in old_by_name.items() if name not in found]
    new_only = [policy for name, policy in new_by_name.items() if name not in taken]
    return twins, old_only, new_only


def policy_verdict(results: Iterable[RuleResult]) -> Verdict:
    """The verdict of one policy's rule results on one resource (none: not selected)."""
    by_status: dict[VerdictStatus, list[RuleResult]] = {}
    for result in results:
        by_status.setdefault(_verdict_of(result.status), []).append(result)
    for status in VerdictStatus:
        deciding = by_status.get(status)
        if deciding:
            messages = () if status == VerdictStatus.PASS else tuple(
                f"{result.rule.name}: {_message(result)}" for result in deciding)
            return Verdict(status, tuple(result.rule.name for result in deciding), messages)
    return Verdict(VerdictStatus.NOT_SELECTED)


def compare(resources: Iterable[Any], old: Sequence[Any], new: Sequence[Any], *,
            context: ScanContext | None = None, pairs: Mapping[str, str] | None = None,
            strict: bool = False) -> Comparison:
    """Scan `resources` with the `old` and the `new` compiled policies (from `load_policies`) and compare.

    Both scans share `context` (values, user info, exceptions). With `strict`,
    ``skip`` against ``not-selected`` is a difference, and a policy without a
    twin makes the comparison fail.
    """
    from assertree.engine.scan import scan

    items = [item if isinstance(item, Resource) else Resource(item) for item in resources]
    old_policies = [policy.policy for policy in old]
    new_policies = [policy.policy for policy in new]
    twins, old_only, new_only = pair_policies(old_policies, new_policies, pairs)
    old_results = _grouped(scan(items, old, context=context), items)
    new_results = _grouped(scan(items, new, context=context), items)
    rows = []
    for position, resource in enumerate(items):
        for twin in twins:
            before = policy_verdict(old_results.get((position, id(twin.old)), ()))
            after = policy_verdict(new_results.get((position, id(twin.new)), ()))
            rows.append(Row(resource, twin, before, after, _same(before.status, after.status, strict=strict)))
    return Comparison(items, twins, rows, old_only, new_only, strict)


def _by_name(policies: Sequence[PolicyInfo], side: str) -> dict[str, PolicyInfo]:
    named: dict[str, PolicyInfo] = {}
    for policy in policies:
        name = policy_name(policy)
        if name in named:
            where = ", ".join(str(p.source) for p in (named[name], policy) if p.source) or "the policies given"
            raise PolicyError(f"two {side} policies are named {name!r} ({where}): twins are paired by name")
        named[name] = policy
    return named


def _grouped(scanned: ScanResult, inputs: list[Resource]) -> dict[tuple[int, int], list[RuleResult]]:
    """Results by (position of the input resource, id of the policy).

    A mutating policy hands the next one, and the validating rules, a new
    `Resource`: validate results carry the scan's final resource at the same
    position, a chain's first mutate results the input. The scan emits each
    resource's results together and starts them with one of those two, so a
    result on an intermediate resource belongs to the last position seen.
    """
    position_of = {id(resource): position for position, resource in enumerate(inputs)}
    position_of.update((id(resource), position) for position, resource in enumerate(scanned.resources))
    grouped: dict[tuple[int, int], list[RuleResult]] = {}
    position = -1
    for result in scanned.results:
        position = position_of.get(id(result.resource), position)
        grouped.setdefault((position, id(result.policy)), []).append(result)
    return grouped


def _verdict_of(status: str) -> VerdictStatus:
    if status in (FAIL, WARN):
        return VerdictStatus.FAIL
    if status == ERROR:
        return VerdictStatus.ERROR
    if status == PASS:
        return VerdictStatus.PASS
    if status == SKIP:
        return VerdictStatus.SKIP
    raise ValueError(f"unknown rule status {status!r}")


def _message(result: RuleResult) -> str:
    if result.error is not None:
        return result.error.message
    if result.exception:
        return f"{result.message or 'skipped'} (exception {result.exception})"
    if result.message:
        return result.message
    return "; ".join(violation.headline() for violation in result.violations) or str(result.status)


def _same(old: VerdictStatus, new: VerdictStatus, *, strict: bool) -> bool:
    return old == new or (not strict and old in SILENT and new in SILENT)
