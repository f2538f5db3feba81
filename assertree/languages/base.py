"""The interface between a policy language and the engine.

A language package (``kyverno_json``, ``kyverno``, ``cel``) recognises its
documents, checks and compiles them, and yields `CompiledPolicy` objects. The
engine knows nothing else about a language: it asks each compiled rule for a
runner (once per scan) and calls it on each resource; a policy that mutates
gives a mutator that runs before any rule of any policy validates the resource
(Kyverno's order: mutate, then validate the mutated resource).

Reports read policies and rules only through `PolicyInfo` and `RuleInfo`, so a
new language adds no code to the reporters.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from assertree.results import PolicyInfo, Resource, RuleInfo, RuleResult

__all__ = ["CompiledPolicy", "CompiledRule", "Mutator", "PolicyInfo", "RuleInfo", "RuleRunner", "ScanContext"]


@dataclass
class ScanContext:
    """What a scan knows besides the resources and the policies; each language reads what it needs."""

    bindings: Mapping[str, Any] = field(default_factory=dict)  # kyverno-json: user bindings, as $name
    values: Any = None  # Kyverno CLI values file (assertree.languages.kyverno.values)
    user_info: Any = None  # Kyverno CLI user-info file: request.userInfo, roles, clusterRoles
    operation: str = "CREATE"  # the admission operation Kyverno evaluates
    exceptions: Sequence[Any] = ()  # PolicyException documents that may exempt resources
    lookups: Any = None  # Kyverno CEL: resource/image/globalContext lookups from a test's context file


RuleRunner = Callable[[Resource], "RuleResult | None"]
"""One rule on one resource; None when the rule does not select the resource (no result at all)."""

Mutator = Callable[[Resource], tuple[Resource, list[RuleResult]]]
"""A policy's mutate rules on one resource: the mutated resource and one result per rule that applied."""


class CompiledRule(Protocol):
    """A rule ready to run. Members are read-only, so a language's own (narrower) policy and rule
    types satisfy the protocol."""

    @property
    def policy(self) -> PolicyInfo: ...
    @property
    def rule(self) -> RuleInfo: ...

    def runner(self, context: ScanContext) -> RuleRunner:
        """Everything that depends only on the scan (bindings, values) is prepared here, once."""
        ...


class CompiledPolicy(Protocol):
    """A policy ready to run; read-only members, as in `CompiledRule`."""

    @property
    def policy(self) -> PolicyInfo: ...
    @property
    def rules(self) -> Sequence[CompiledRule]: ...  # the rules that validate (run on the mutated resource)

    def mutator(self, context: ScanContext) -> Mutator | None:
        """None when the policy mutates nothing."""
        ...
