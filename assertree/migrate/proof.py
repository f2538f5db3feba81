"""Running a converted policy against its source, resource by resource, with assertree's own engines.

The source rule runs in the Kyverno language (`assertree.languages.kyverno`),
with the autogen rules Kyverno derives from it; the converted documents run in
Kyverno's CEL policy kinds (`assertree.languages.kyverno.cel_policies`). Both
see each resource as ``kyverno test`` does (numbers as float64, the test's
values file, user info and operation).

Verdicts are compared as an admission request sees them:

- *not applied*: no result (match/exclude did not select) or ``skip``
  (preconditions, a conditional anchor): a CEL policy can only say the
  first with its match constraints and the second with a match condition,
  and Kyverno's CLI counts both as the rule not applying;
- *pass*;
- *deny*: ``fail`` or ``error``: both deny the request (failure policy
  ``Fail``), and Kyverno itself reports some violations as errors (a pattern
  whose anchored field is missing everywhere, a variable that cannot be
  resolved) where CEL reports a failed validation, and the other way round;
- *warn*.

A test's own resources are held to more: there a ``fail`` must stay a
``fail`` (not an ``error``), as the test's rows compare statuses exactly.
A rule is verified when every probe gives the same verdict on both sides.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from assertree.languages.base import ScanContext
from assertree.results import Resource

__all__ = ["VERDICTS", "Disagreement", "MutationRunner", "Probe", "RuleProof", "Runner", "prove", "source_mutator",
           "verdict"]

VERDICTS = {None: "not applied", "skip": "not applied", "pass": "pass", "fail": "deny", "error": "deny",
            "warn": "warn"}


@dataclass
class Probe:
    """One resource to run both sides on, where it came from, and the scan context (values, user, operation)."""

    value: dict
    origin: str
    context: ScanContext
    exact: bool = False  # a test's own resource: its status must match exactly (fail is not error), as rows do

    def key(self) -> str:
        metadata = self.value.get("metadata") or {}
        namespace = metadata.get("namespace")
        name = metadata.get("name") or "<unnamed>"
        return f"{self.value.get('kind')}/{namespace + '/' if namespace else ''}{name}"


@dataclass
class Disagreement:
    """A probe where the two sides gave different verdicts (statuses as the engines gave them)."""

    probe: Probe
    source: str
    converted: str

    def text(self) -> str:
        return (f"{self.probe.key()} ({self.probe.origin}, {self.probe.context.operation}): source "
                f"{self.source}, converted {self.converted}")


@dataclass
class RuleProof:
    """What the proof of one rule found."""

    probes: int = 0
    differing: int = 0
    disagreements: list[Disagreement] = field(default_factory=list)  # the first few, as examples
    applied: int = 0  # probes the source rule gave a result for
    # rules merged into one converted policy whose own status (as Kyverno gives it, in turn) is not the merged
    # policy's, each with the probes where it is not (`prove`'s `each_rule`)
    rule_disagreements: dict[str, list[Disagreement]] = field(default_factory=dict)
    # a test's own resources the source rule does not select (``kyverno test`` passes any row on them, Excluded)
    # while the converted policy selects and skips them (a match condition): such a row checks nothing
    unselected: list[Probe] = field(default_factory=list)

    @property
    def verified(self) -> bool:
        return self.probes > 0 and self.differing == 0


def verdict(result: Any) -> str | None:
    """The status a rule result gives (None: no result)."""
    return None if result is None else str(result.status)


class Runner:
    """Runs a set of compiled rules on resources, one runner per scan context (made on first use). With
    `audit`, a ``warn`` is read as the ``fail`` it stands for: a ValidatingAdmissionPolicy bound with
    ``Audit`` only warns where Kyverno's Audit policy reports a failure (neither denies the request)."""

    def __init__(self, rules: Sequence[Any], *, audit: bool = False) -> None:
        self.rules = list(rules)
        self.audit = audit
        self._runners: dict[int, tuple[ScanContext, list[Any]]] = {}

    def __call__(self, value: dict, context: ScanContext) -> str | None:
        found = self._runners.get(id(context))
        if found is None or found[0] is not context:
            found = (context, [rule.runner(context) for rule in self.rules])
            self._runners[id(context)] = found
        resource = Resource(value)
        for run in found[1]:
            result = run(resource)
            if result is not None:
                status = verdict(result)
                return "fail" if self.audit and status == "warn" else status
        return None


class MutationRunner:
    """Runs the mutate side of compiled policies on resources: the verdict, and the resource it made (tidied as
    ``kyverno test`` compares patched resources) when a rule changed it."""

    def __init__(self, policies: Sequence[Any]) -> None:
        self.policies = list(policies)
        self._mutators: dict[int, tuple[ScanContext, list[Any]]] = {}
        self.rule_statuses: dict[str, str] = {}  # of the last call: each rule's status (autogen rules folded in)

    def __call__(self, value: dict, context: ScanContext) -> tuple[str | None, Any]:
        from assertree.languages.kyverno.mutate.compare import tidy

        found = self._mutators.get(id(context))
        if found is None or found[0] is not context:
            found = (context, [mutator for policy in self.policies
                               if (mutator := policy.mutator(context)) is not None])
            self._mutators[id(context)] = found
        resource = Resource(value)
        status: str | None = None
        self.rule_statuses = {}
        for mutate in found[1]:
            resource, results = mutate(resource)
            for result in results:
                status = _worst(status, str(result.status))
                rule = getattr(result, "rule", None)
                name = getattr(rule, "autogen_of", None) or getattr(rule, "name", None)
                if isinstance(name, str):
                    self.rule_statuses[name] = _worst(self.rule_statuses.get(name), str(result.status))
        return status, _by_name(tidy(resource.value)) if status == "pass" else None


def _by_name(value: Any) -> Any:
    """`value` with every list of named maps (containers, env, volumes ...) in name order: Kyverno's strategic
    merge puts the patch's items first, a MutatingPolicy's apply configuration keeps the resource's order, and
    the proof compares what the items are, not where they stand."""
    if isinstance(value, dict):
        return {key: _by_name(item) for key, item in value.items()}
    if isinstance(value, list):
        items = [_by_name(item) for item in value]
        if items and all(isinstance(item, dict) and isinstance(item.get("name"), str) for item in items):
            return sorted(items, key=lambda item: item["name"])
        return items
    return value


def _worst(first: str | None, second: str) -> str:
    order = [None, "skip", "pass", "warn", "fail", "error"]
    return second if order.index(second) > order.index(first) else first  # type: ignore[return-value]


def source_mutator(compiled: Any, *rule_names: str) -> Any:
    """A compiled ClusterPolicy that runs only the mutate rules `rule_names` and their autogen rules (in the
    policy's order, each on the resource the one before made)."""
    from assertree.languages.kyverno.compile import CompiledKyvernoPolicy

    rules = [rule for rule in compiled.mutate_rules if rule.rule.name in rule_names
             or rule.rule.autogen_of in rule_names]
    return CompiledKyvernoPolicy(compiled.policy, [], rules)


def source_rules(compiled: Any, rule_name: str) -> list[Any]:
    """The validate rules of a compiled ClusterPolicy that run for `rule_name`: it and its autogen rules."""
    return [rule for rule in compiled.rules if rule.rule.name == rule_name or rule.rule.autogen_of == rule_name]


def converted_rules(policies: Iterable[Any]) -> list[Any]:
    """The rules of compiled CEL policies (each policy and its autogen variants)."""
    return [rule for policy in policies for rule in policy.rules]


def prove(source: Any, converted: Any, probes: Iterable[Probe], *, keep: int = 20,
          each_rule: Sequence[str] = (), exact: bool = False) -> RuleProof:
    """Run both sides (two `Runner`s or two `MutationRunner`s) on every probe; keep the first `keep`
    disagreements (all are counted in `probes`). With `each_rule` (mutate rules of the source merged into one
    converted policy), each of those rules' own verdict must also be the converted policy's: a test row names
    one rule and expects its status, which one policy's single status has to give. With `exact`, a ``fail``
    must stay a ``fail`` on every probe, not only on a test's own resources (a rule whose CEL runs as it is on
    both sides, where the two report an erroring expression differently)."""
    proof = RuleProof()
    from assertree.languages.kyverno.mutate.compare import json_equal

    for probe in probes:
        proof.probes += 1
        left = source(probe.value, probe.context)
        right = converted(probe.value, probe.context)
        left_patched = right_patched = None
        if isinstance(left, tuple):  # mutation runners: (status, the patched resource)
            left, left_patched = left
            right, right_patched = right
        for name in each_rule:
            own = source.rule_statuses.get(name)
            if VERDICTS.get(own) != VERDICTS.get(right):
                found = proof.rule_disagreements.setdefault(name, [])
                if len(found) < keep:
                    found.append(Disagreement(probe, own or "no result", right or "no result"))
        if left is not None:
            proof.applied += 1
        elif probe.exact and right == "skip":
            proof.unselected.append(probe)
        if VERDICTS.get(left) != VERDICTS.get(right) or ((probe.exact or exact) and left in ("fail", "error")
                                                             and left != right):
            proof.differing += 1
            if len(proof.disagreements) < keep:
                proof.disagreements.append(Disagreement(probe, left or "no result", right or "no result"))
            continue
        if not json_equal(left_patched, right_patched):
            proof.differing += 1
            if len(proof.disagreements) < keep:
                proof.disagreements.append(Disagreement(probe, f"{left}, {_excerpt(left_patched)}",
                                                        f"{right}, {_excerpt(right_patched)}"))
    return proof


def _excerpt(value: Any) -> str:
    from assertree.jp.values import json_excerpt

    return f"patched to {json_excerpt(value)}" if value is not None else "no patch"


def with_operation(context: ScanContext, operation: str) -> ScanContext:
    """`context` for another admission operation (a fresh cache: runners are made per context)."""
    return context.replace(operation=operation, memo={})
