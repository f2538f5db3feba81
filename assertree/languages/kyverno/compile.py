"""Compiling a ClusterPolicy/Policy once into the objects the engine runs.

`compile_policy` builds the model (the written rules plus the autogen rules for
Pod controllers and CronJobs), refuses rule types assertree does not run yet
naming the field (``generate``, ``verifyImages``, mutate ``targets``, ...: a
load-time error, never a surprise halfway through a scan), compiles
``validate.cel`` rules with Kyverno's CEL environment
(`cel_policies.validate_cel`, imported only when a policy has such a rule) and
``validate.podSecurity`` rules with the Pod Security Standards checks
(`pod_security.rule`), and gives:

- `CompiledKyvernoPolicy` (`base.CompiledPolicy`): ``rules`` are the validate
  rules, ``mutator(context)`` runs the mutate rules;
- `CompiledKyvernoRule` (`base.CompiledRule`): ``runner(context)`` gives the
  function that runs the rule on one resource (`evaluate`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from assertree.errors import PolicyError, Unsupported
from assertree.languages.base import reduce_compiled
from assertree.languages.kyverno.model import KyvernoPolicy, KyvernoRule, policy_from_document

if TYPE_CHECKING:
    from assertree.languages.base import Explain, Mutator, RuleRunner, ScanContext

# Rule parts assertree cannot run yet: a clear error naming the field, at load time.
_UNSUPPORTED = {
    ("validate", "manifests"): "validate.manifests (signed manifests) is not supported",
    ("validate", "assert"): "validate.assert (assertion trees in a ClusterPolicy) is not supported yet",
    ("mutate", "targets"): "mutate.targets (mutating existing resources) is not supported",
}
_UNSUPPORTED_RULES = {
    "generate": "generate rules are not supported",
    "verifyImages": "verifyImages rules need image registries and are not supported",
}
_OFFLINE_CONTEXT = ("configMap", "apiCall", "imageRegistry", "globalReference")


@dataclass(eq=False)
class CompiledKyvernoRule:
    """One validate rule of a policy, ready to run (`base.CompiledRule`)."""

    policy: KyvernoPolicy
    rule: KyvernoRule
    # Filled by `evaluate.prepare_rule` for validate rules: the rule's checks, read once.
    plan: Any = field(default=None, repr=False)
    siblings: list[CompiledKyvernoRule] = field(default_factory=list, repr=False)  # for applyRules: One

    def runner(self, context: ScanContext) -> RuleRunner:
        from assertree.languages.kyverno.evaluate import rule_runner

        return rule_runner(self, context)

    def explainer(self, context: ScanContext) -> Explain:
        """How this rule failed or errored on a resource (`explain`)."""
        from assertree.languages.kyverno.explain import explainer

        return explainer(self, context)


@dataclass(eq=False)
class CompiledKyvernoPolicy:
    """A policy ready to run (`base.CompiledPolicy`): validate rules and a mutator."""

    policy: KyvernoPolicy
    rules: list[CompiledKyvernoRule]  # validate rules, in evaluation order
    mutate_rules: list[CompiledKyvernoRule]

    def mutator(self, context: ScanContext) -> Mutator | None:
        if not self.mutate_rules:
            return None
        from assertree.languages.kyverno.mutation import policy_mutator

        return policy_mutator(self, context)

    def __reduce__(self) -> tuple[Any, tuple]:
        """Pickles as its document, compiled again where it is unpickled (`base.reduce_compiled`)."""
        return reduce_compiled(compile_policy, self.policy)


def compile_policy(document: dict, *, source: str | None = None, index: int | None = None,
                   line: int | None = None) -> CompiledKyvernoPolicy:
    """Model and compile a schema-checked policy document (see `language.compile_document`)."""
    for position, rule in enumerate(document["spec"]["rules"]):
        _refuse_unsupported(rule, ("spec", "rules", position))
    generated = generate_autogen_rules(document)
    policy = policy_from_document(document, generated=generated, source=source, index=index, line=line)
    validate: list[CompiledKyvernoRule] = []
    mutate: list[CompiledKyvernoRule] = []
    for rule in policy.rules:
        compiled = CompiledKyvernoRule(policy, rule)
        (mutate if rule.mutates else validate).append(compiled)
    from assertree.languages.kyverno.evaluate import prepare_rule

    for compiled in validate:
        prepare_rule(compiled, _rule_path(policy, compiled.rule))
        compiled.siblings = validate
    return CompiledKyvernoPolicy(policy, validate, mutate)


def generate_autogen_rules(document: dict) -> list[dict]:
    """The rules Kyverno's autogen adds to `document` (Pod rules for controllers and CronJobs)."""
    from assertree.languages.kyverno.bridge import autogen_rules

    return autogen_rules(document)


def _refuse_unsupported(rule: dict, at: tuple) -> None:
    for kind, message in _UNSUPPORTED_RULES.items():
        if rule.get(kind) is not None:
            raise Unsupported(message, path=(*at, kind))
    for (section, key), message in _UNSUPPORTED.items():
        part = rule.get(section)
        if isinstance(part, dict) and part.get(key) is not None:
            raise Unsupported(message, path=(*at, section, key))
    # configMap/apiCall/imageRegistry/globalReference entries are accepted: offline, Kyverno takes their
    # values from the values file, and without one the entry fails when the rule runs (an ERROR result).
    for position, entry in enumerate(rule.get("context") or []):
        if isinstance(entry, dict) and not any(entry.get(k) is not None for k in ("variable", *_OFFLINE_CONTEXT)):
            raise PolicyError("a context entry needs one of: variable, configMap, apiCall, imageRegistry, "
                              "globalReference", path=(*at, "context", position))


def _rule_path(policy: KyvernoPolicy, rule: KyvernoRule) -> tuple:
    """Where a rule is in the policy document (generated rules point at the rule they came from)."""
    name = rule.autogen_of or rule.name
    for position, written in enumerate(policy.spec.get("rules") or []):
        if written.get("name") == name:
            return ("spec", "rules", position)
    return ("spec", "rules")
