"""What running a Test's policies gives: per resource, one response per policy and phase.

`kyverno test` compares expected rows against *engine responses*, not against
a flat result list: each policy run on a resource gives one response per phase
(mutate, then validate on the mutated resource), holding the rule results of
that phase and the resource before and after it. A response with no rule
results still says "this policy looked at this resource", which is what
turns a missing rule into ``Excluded`` (a pass) instead of ``Not found``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

MUTATE = "mutate"
VALIDATE = "validate"


@dataclass
class PolicyResponse:
    """One policy's phase on one resource."""

    policy: Any  # PolicyInfo
    phase: str  # MUTATE or VALIDATE
    resource: Any  # the resource this phase ran on (JSON)
    patched: Any  # the resource after this phase (the same value for VALIDATE)
    results: list = field(default_factory=list)  # RuleResult, in rule order


@dataclass
class ResourceResponses:
    """Every response for one loaded resource, in the order the engine produced them."""

    key: tuple[str, str, str, str]  # apiVersion, kind, namespace, name
    value: Any  # the resource as loaded
    responses: list[PolicyResponse] = field(default_factory=list)
    target: bool = False  # a target resource (targetResources): its responses hold the results that patched it

    @property
    def name(self) -> str:
        return self.key[3]

    @property
    def namespace(self) -> str:
        return self.key[2]

    @property
    def kind(self) -> str:
        return self.key[1]

    def label(self) -> str:
        """``v1/Pod/default/name``, as the Kyverno CLI names a resource in its table."""
        api_version, kind, namespace, name = self.key
        return "/".join(part for part in (api_version, kind, namespace, name) if part)
