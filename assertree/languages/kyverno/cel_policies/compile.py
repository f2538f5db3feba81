"""Compiling a read policy into runners: every CEL text compiled once, with the field path it came from.

`compile_policy` builds the policy's rules (the policy as written, then its
autogen variants), compiles each rule's expressions in the Kyverno
environment (`environment`), and wires them to the engine's interface
(`assertree.languages.base`): a ValidatingPolicy, ImageValidatingPolicy
(`images`) or DeletingPolicy (`deleting`) gives rules whose runners return
one `RuleResult` per selected resource; a MutatingPolicy gives a mutator
(which also patches the existing resources of ``context.cluster`` its
``mutateExisting`` targets: `existing`); a GeneratingPolicy (`generating`)
gives rules and a generator. Selection is `matching` on the resource's
admission request (`request`) in Kubernetes mode; JSON mode selects every
payload. An ImageValidatingPolicy that reads signatures, attestations or image
data from a registry is refused (``policy.refused``), with the function named.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from assertree.errors import PolicyError, Problem, Severity
from assertree.languages.base import Generator, Mutator, RuleRunner, ScanContext, reduce_compiled
from assertree.languages.cel.engine import CelCompileError, CelUnavailableError, Environment, Program
from assertree.languages.kyverno.cel_policies.environment import (
    environment,
    generating_environment,
    image_environment,
    needs_cluster,
    registry_function,
    uses_authorizer,
)
from assertree.languages.kyverno.cel_policies.evaluate import (
    CompiledSpec,
    Outcome,
    evaluate_mutations,
    evaluate_validations,
)
from assertree.languages.kyverno.cel_policies.model import CelPolicy, CelRule, PolicySpec
from assertree.languages.kyverno.cel_policies.reading import ReadError, read_policy, read_spec
from assertree.languages.kyverno.cel_policies.rewrite import rewrite
from assertree.languages.kyverno.cel_policies.selection import selected_data
from assertree.results import ERROR, FAIL, PASS, WARN, RefusedRule, Resource, RuleError, RuleResult, Violation

__all__ = ["CompiledCelPolicy", "CompiledCelRule", "compile_expression", "compile_policy", "compile_spec"]


def compile_expression(text: str, path: tuple, env: Environment | None = None) -> Program:
    """One CEL text compiled in Kyverno's environment (or `env`); PolicyError naming `path` when it does not
    compile."""
    if uses_authorizer(text):
        raise PolicyError("the Kubernetes authorizer needs a cluster: expressions using `authorizer` cannot run "
                          "offline", path=path)
    try:
        return (env or environment()).compile(rewrite(text))
    except CelUnavailableError as error:
        raise PolicyError(error.message, path=path) from None
    except CelCompileError as error:
        raise PolicyError(f"invalid CEL expression: {error.message}", path=path) from None


def compile_spec(spec: PolicySpec, kind: str = "ValidatingPolicy") -> CompiledSpec:
    """Every expression of `spec`, compiled in the environment of `kind`; PolicyError at the first that does
    not compile."""
    from assertree.languages.kyverno.cel_policies.model import GENERATING_KINDS, IMAGE_KINDS

    env = generating_environment() if kind in GENERATING_KINDS else image_environment() if kind in IMAGE_KINDS \
        else environment()

    def text(source: str, path: tuple) -> Program:
        return compile_expression(source, path, env)

    compiled = CompiledSpec(failure_policy=spec.failure_policy, verify_digest=spec.verify_digest,
                            required=spec.required)
    for item in spec.variables:
        compiled.variables.append((item.name, text(item.text, item.path), item.path))
    for item in spec.match_conditions:
        compiled.match_conditions.append((item.name, text(item.text, item.path), item.path))
    for item in spec.conditions:
        compiled.conditions.append((item.name, text(item.text, item.path), item.path))
    for validation in spec.validations:
        message = None
        if validation.message_expression:
            message_path = (*validation.path[:-1], "messageExpression")
            message = text(validation.message_expression, message_path)
        compiled.validations.append((validation, text(validation.expression, validation.path), message))
    for mutation in spec.mutations:
        compiled.mutations.append((mutation, text(mutation.expression, mutation.path)))
    if spec.generations:
        from assertree.languages.kyverno.cel_policies.generating import compile_generation

        compiled.generations = [compile_generation(generation, text) for generation in spec.generations]
    for reference in spec.image_references:
        program = text(reference.expression, reference.path) if reference.expression else None
        compiled.image_references.append((reference, program))
    for item in spec.image_extractors:
        compiled.image_extractors.append((item.name, text(item.text, item.path), item.path))
    if spec.target_expression is not None:
        compiled.target_expression = text(spec.target_expression.text, spec.target_expression.path)
    return compiled


def _lookups(context: ScanContext) -> Any:
    return getattr(context, "lookups", None)


@dataclass(eq=False)
class CompiledCelRule:
    """One rule (the policy or an autogen variant) ready to validate resources."""

    policy: CelPolicy
    rule: CelRule
    compiled: CompiledSpec

    def result(self, resource: Resource, outcome: Outcome) -> RuleResult:
        """The `RuleResult` an outcome makes (a failure under ``Warn`` only is a warning)."""
        status = outcome.status
        actions = self.rule.spec.validation_actions
        if status == FAIL and "Warn" in actions and not {"Deny", "Audit"} & set(actions):
            status = WARN
        violations = []
        if status in (FAIL, WARN):
            from assertree.errors import field_path_text

            violations.append(Violation(field_path_text(outcome.check), outcome.message, []))
        from assertree.languages.kyverno.manifests import resource_key

        return RuleResult(resource=resource, policy=self.policy, rule=self.rule, status=status,
                          identifier=resource_key(resource.value), message=outcome.message, violations=violations,
                          error=outcome.error if status == ERROR else None, patched=outcome.patched)

    def runner(self, context: ScanContext) -> RuleRunner:
        lookups = _lookups(context)
        policy = self.policy

        def run(resource: Resource) -> RuleResult | None:
            try:
                data = selected_data(policy, self.rule, resource.value, context, any_operation=policy.deleting)
            except ValueError as error:  # a label selector Kubernetes would not build
                return RuleResult(resource, policy, self.rule, ERROR, message=str(error),
                                  error=RuleError(f"failed to execute matching: {error}", kind="match"))
            if data is None:
                return None
            if policy.generating:
                return self._generate(resource, data, lookups)
            if policy.deleting:
                from assertree.languages.kyverno.cel_policies.deleting import evaluate_conditions
                from assertree.languages.kyverno.generate import describe

                outcome = evaluate_conditions(self.compiled, data, lookups, describe(resource.value))
                found = self.result(resource, outcome)
                found.action = "delete" if outcome.status == PASS else None
                return found
            if policy.validates_images:
                from assertree.languages.kyverno.cel_policies.images import evaluate_images
                from assertree.languages.kyverno.cel_policies.resources import plural_of

                kind = str(resource.value.get("kind") or "") if isinstance(resource.value, dict) else ""
                return self.result(resource, evaluate_images(self.compiled, data, lookups, plural_of(kind)))
            return self.result(resource, evaluate_validations(self.compiled, data, lookups))

        return run

    def _generate(self, resource: Resource, data: dict[str, Any], lookups: Any) -> RuleResult | None:
        """A GeneratingPolicy on one selected trigger: no result when its match conditions are false."""
        from assertree.languages.kyverno.cel_policies.evaluate import check_match_conditions, prepare_variables
        from assertree.languages.kyverno.cel_policies.generating import evaluate_generations
        from assertree.languages.kyverno.generate import describe

        scope = prepare_variables(self.compiled, data, lookups)
        stopped = check_match_conditions(self.compiled, scope, lookups)
        if stopped is not None:
            return None if stopped.status != ERROR else self.result(resource, stopped)
        outcome = evaluate_generations(self.compiled.generations, scope, lookups, self.policy.namespace)
        result = self.result(resource, Outcome(outcome.status, outcome.message, error=outcome.error))
        if outcome.status == PASS:
            result.generated = outcome.generated
            result.action = "generate"
            result.message = ("would generate " + ", ".join(describe(item) for item in outcome.generated)
                              if outcome.generated else "would generate nothing")
        return result


@dataclass(eq=False)
class CompiledCelPolicy:
    """A policy ready to run: validating rules, or a mutator for a MutatingPolicy."""

    policy: CelPolicy
    compiled_rules: list[CompiledCelRule] = field(default_factory=list)

    @property
    def rules(self) -> list[CompiledCelRule]:
        return [] if self.policy.mutating else self.compiled_rules

    @property
    def refused(self) -> list[RefusedRule]:
        return self.policy.refused

    def generator(self, context: ScanContext) -> Generator | None:
        """A GeneratingPolicy's rules on one trigger (`base.Generator`); None for the other kinds."""
        if not self.policy.generating:
            return None
        runners = [rule.runner(context) for rule in self.compiled_rules]
        return lambda resource: [found for run in runners if (found := run(resource)) is not None]

    def mutator(self, context: ScanContext) -> Mutator | None:
        if not self.policy.mutating:
            return None
        lookups = _lookups(context)
        rules = self.compiled_rules

        def mutate(resource: Resource) -> tuple[Resource, list[RuleResult]]:
            results = []
            current = resource
            for rule in rules:
                try:
                    data = selected_data(self.policy, rule.rule, current.value, context)
                except ValueError as error:
                    results.append(RuleResult(current, self.policy, rule.rule, ERROR, message=str(error),
                                              error=RuleError(f"failed to execute matching: {error}", kind="match")))
                    continue
                if data is None:
                    continue
                outcome = evaluate_mutations(rule.compiled, data, lookups)
                result = rule.result(current, outcome)
                if outcome.patched is not None:
                    current = Resource(outcome.patched, source=current.source, document=current.document,
                                       root=current.root, origin=current.origin,
                                       default_identifier=current.default_identifier, file=current.file)
                    result.patched = outcome.patched
                results.append(result)
            if self.policy.spec.mutate_existing and context.cluster is not None:
                from assertree.languages.kyverno.cel_policies.existing import mutate_targets

                results.extend(mutate_targets(self, resource, context))
            return current, results

        return mutate

    def __reduce__(self) -> tuple[Any, tuple]:
        """Pickles as its document, compiled again where it is unpickled (`base.reduce_compiled`)."""
        return reduce_compiled(compile_document_again, self.policy)


def compile_document_again(document: dict, *, source: str | None = None, index: int | None = None,
                           line: int | None = None) -> CompiledCelPolicy:
    """A document that was read and compiled once, compiled again (unpickling a `CompiledCelPolicy`)."""
    return compile_policy(read_policy(document, source=source, index=index, line=line))


def compile_policy(policy: CelPolicy) -> CompiledCelPolicy:
    """`policy` with its rules (as written, then autogen variants) compiled; PolicyError at the first problem."""
    from assertree.languages.kyverno.cel_policies.autogen import variants

    spec_document = policy.document.get("spec") or {}
    refusal = _refusal(policy)
    if refusal is not None:
        policy.refused = [RefusedRule(policy.name, refusal)]
        policy.rules = []
        return CompiledCelPolicy(policy, [])
    base = CelRule(name=policy.name, index=0, document=spec_document, spec=policy.spec)
    compiled = CompiledCelPolicy(policy, [CompiledCelRule(policy, base, compile_spec(policy.spec, policy.kind))])
    rules = [base]
    if policy.spec.mode != "JSON" and not (policy.generating or policy.deleting):
        for group, kinds, rewritten in variants(spec_document, mutating=policy.mutating):
            name = f"autogen-cronjob-{policy.name}" if group == "cronjobs" else f"autogen-{policy.name}"
            try:
                spec = read_spec(rewritten, policy.kind)
            except ReadError as error:  # a rewrite Kyverno also makes; reported where the original is
                raise PolicyError(f"autogen ({', '.join(kinds)}): {error}", path=error.path) from None
            rule = CelRule(name=name, index=len(rules), document=rewritten, spec=spec, targets=tuple(kinds))
            rules.append(rule)
            compiled.compiled_rules.append(CompiledCelRule(policy, rule, compile_spec(spec, policy.kind)))
    policy.rules = rules
    return compiled


def _refusal(policy: CelPolicy) -> Problem | None:
    """Why `policy` cannot run offline: the first expression that needs a cluster, or (ImageValidatingPolicy)
    reads a registry."""
    spec = policy.spec
    texts = [*((item.text, item.path) for item in (*spec.variables, *spec.match_conditions, *spec.conditions,
                                                   *spec.image_extractors)),
             *((item.expression, item.path) for item in spec.validations),
             *((item.expression, item.path) for item in spec.mutations),
             *((item.expression, item.path) for item in spec.generations if item.expression)]
    if spec.target_expression is not None:
        texts.append((spec.target_expression.text, spec.target_expression.path))
    for text, path in texts:
        why = needs_cluster(text)
        function = registry_function(text) if policy.validates_images else None
        if function is not None:
            why = (f"{function} reads image signatures, attestations or data from the image registry (assertree "
                   "never reaches the network)")
        if why is not None:
            return Problem(f"rule {policy.name!r} is not run: {why}", path=path, severity=Severity.WARNING)
    return None
