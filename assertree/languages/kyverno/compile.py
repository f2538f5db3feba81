"""Compiling a ClusterPolicy/Policy once into the objects the engine runs.

`compile_policy` builds the model (the written rules plus the autogen rules for
Pod controllers and CronJobs), leaves out each rule assertree cannot run
offline (`refusals`) or that Kyverno would refuse (`generate_checks`: the rule
is kept in ``policy.refused`` as a warning, the other rules still run),
compiles ``validate.cel`` rules with Kyverno's CEL environment
(`cel_policies.validate_cel`, imported only when a policy has such a rule) and
``validate.podSecurity`` rules with the Pod Security Standards checks
(`pod_security.rule`), and gives:

- `CompiledKyvernoPolicy` (`base.CompiledPolicy`): ``rules`` are the rules that
  check the resource once it is mutated, in Kyverno's order (validate rules and
  the image checks of ``verifyImages`` rules, then ``generate`` rules, which say
  what they would create); ``mutator(context)`` runs the mutate rules (those
  with ``targets`` patch the existing resources of ``context.cluster``, never
  the resource itself), then the image phase of ``verifyImages`` rules;
- `CompiledKyvernoRule` (`base.CompiledRule`): ``runner(context)`` gives the
  function that runs the rule on one resource (`evaluate`, `verify_images`,
  `generate`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from assertree.errors import PolicyError
from assertree.languages.base import reduce_compiled
from assertree.languages.kyverno.model import KyvernoPolicy, KyvernoRule, policy_from_document

if TYPE_CHECKING:
    from assertree.languages.base import Explain, Generator, Mutator, RuleRunner, ScanContext

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
        if self.rule.generates:
            from assertree.languages.kyverno.generate import generate_runner

            return generate_runner(self, context)
        if self.rule.verifies_images:
            from assertree.languages.kyverno.verify_images import image_check_runner

            return image_check_runner(self, context)
        from assertree.languages.kyverno.evaluate import rule_runner

        return rule_runner(self, context)

    def explainer(self, context: ScanContext) -> Explain:
        """How this rule failed or errored on a resource (`explain`; `verify_images` for an image check)."""
        if self.rule.verifies_images:
            from assertree.languages.kyverno.verify_images import image_check_explainer

            return image_check_explainer(self, context)
        from assertree.languages.kyverno.explain import explainer

        return explainer(self, context)


@dataclass(eq=False)
class CompiledKyvernoPolicy:
    """A policy ready to run (`base.CompiledPolicy`): its checking and generating rules, a mutator, a generator."""

    policy: KyvernoPolicy
    rules: list[CompiledKyvernoRule]  # validate and image-check rules, then generate rules, in evaluation order
    mutate_rules: list[CompiledKyvernoRule]  # mutate rules (resource and existing), then verifyImages rules

    @property
    def refused(self) -> list:
        """The rules left out, one located warning each (`refusals`)."""
        return self.policy.refused

    def generator(self, context: ScanContext) -> Generator | None:
        """The policy's ``generate`` rules on one trigger (`base.Generator`); None when it has none."""
        runners = [rule.runner(context) for rule in self.rules if rule.rule.generates]
        if not runners:
            return None
        return lambda resource: [found for run in runners if (found := run(resource)) is not None]

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
    from assertree.languages.kyverno.generate_checks import generate_problems
    from assertree.languages.kyverno.refusals import refusal

    refused = {}
    kyverno_refuses = generate_problems(document)
    for position, rule in enumerate(document["spec"]["rules"]):
        _check_context(rule, ("spec", "rules", position))
        problem = refusal(rule, ("spec", "rules", position)) or kyverno_refuses.get(position)
        if problem is not None:
            refused[rule["name"]] = problem
    generated = generate_autogen_rules(document)
    policy = policy_from_document(document, generated=generated, source=source, index=index, line=line,
                                  refused=refused)
    validate: list[CompiledKyvernoRule] = []
    mutate: list[CompiledKyvernoRule] = []
    generate: list[CompiledKyvernoRule] = []
    images: list[CompiledKyvernoRule] = []
    for rule in policy.rules:
        compiled = CompiledKyvernoRule(policy, rule)
        if rule.kind == "mutate":
            mutate.append(compiled)
        elif rule.generates:
            generate.append(compiled)
        else:
            if rule.verifies_images:
                images.append(compiled)
            validate.append(compiled)
    from assertree.languages.kyverno.evaluate import prepare_rule

    for compiled in validate:
        if compiled.rule.validates:
            prepare_rule(compiled, _rule_path(policy, compiled.rule))
        compiled.siblings = validate
    return CompiledKyvernoPolicy(policy, validate + generate, mutate + images)


def generate_autogen_rules(document: dict) -> list[dict]:
    """The rules Kyverno's autogen adds to `document` (Pod rules for controllers and CronJobs)."""
    from assertree.languages.kyverno.bridge import autogen_rules

    return autogen_rules(document)


def _check_context(rule: dict, at: tuple) -> None:
    """A context entry without a source is a broken policy (an error), not a rule assertree cannot run."""
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
