"""Running the mutate and generate rules of compiled policies on resources, without validating anything.

`apply_mutations` is the mutate half of the engine's loop (`engine.scan` runs
the same mutators, then validates): each policy that mutates runs, in order, on
the output of the previous one, as Kyverno applies its policies; then the rules
that generate resources run on the mutated resource (Kyverno generates last).
What comes out is one `Applied` per resource: where it was read, its value
before and after, the result of every mutate rule that applied and of every
generate rule, so a caller can write the fix and what it generates, show them,
or say why a rule could not patch.

Rules that mutate existing resources (Kyverno ``mutate.targets``) patch the
objects of ``context.cluster``; each patched object replaces the original
there, so the next resource's rules build on it, as in a cluster.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from assertree.languages.base import ScanContext, generator_of
from assertree.results import ERROR, PASS, Resource, RuleResult

__all__ = ["Applied", "apply_mutations"]


@dataclass
class Applied:
    """One resource after the mutate rules: its origin, both values and the rule results."""

    source: str | None  # the file it was read from (None for values passed in Python)
    document: int | None  # its index in that file's YAML stream
    original: Any  # the value before any rule ran (a copy: mutators never touch it)
    mutated: Any  # the value after every policy's mutate rules
    results: list[RuleResult] = field(default_factory=list)  # one per mutate rule that applied, in order
    generated: list[RuleResult] = field(default_factory=list)  # one per generate rule that applied, in order

    @property
    def changed(self) -> bool:
        """Whether the rules changed the resource (numbers compare by value, booleans apart from numbers)."""
        from assertree.languages.kyverno.mutate.compare import json_equal

        return not json_equal(self.original, self.mutated)

    @property
    def applied_rules(self) -> list[RuleResult]:
        """The results of the rules that patched the resource."""
        return [result for result in self.results if result.status == PASS]

    @property
    def errors(self) -> list[RuleResult]:
        """The results of the rules that could not patch it (the resource keeps its other fixes), or could not
        say what it generates."""
        return [result for result in (*self.results, *self.generated) if result.status == ERROR]

    @property
    def patched_targets(self) -> list[RuleResult]:
        """The results that patched an existing resource (`RuleResult.target`)."""
        return [result for result in self.results if result.status == PASS and result.target is not None]


def apply_mutations(resources: Iterable[Any], policies: Iterable[Any], *,
                    context: ScanContext | None = None) -> list[Applied]:
    """Every policy's mutate rules on every resource, in order; policies that do not mutate are ignored.

    `resources` are JSON values or `Resource`s (which carry their file and document index);
    `policies` are compiled policies (`languages.base.CompiledPolicy`, e.g. from
    `assertree.compile_document` or `load_mutate_policies`); `context` carries a Kyverno
    values file, user info and PolicyExceptions.
    """
    context = context if context is not None else ScanContext()
    policies = list(policies)
    mutators = [mutator for policy in policies if (mutator := policy.mutator(context)) is not None]
    generators = [generator for policy in policies if (generator := generator_of(policy, context)) is not None]
    out: list[Applied] = []
    for item in resources:
        resource = item if isinstance(item, Resource) else Resource(item)
        original = copy.deepcopy(resource.value)
        results: list[RuleResult] = []
        for mutator in mutators:
            resource, found = mutator(resource)
            results.extend(found)
        generated = [found for generator in generators for found in generator(resource)]
        applied = Applied(resource.source, resource.document, original, resource.value, results, generated)
        if context.cluster is not None and hasattr(context.cluster, "add"):
            for result in applied.patched_targets:
                context.cluster.add(result.target)
        out.append(applied)
    return out
