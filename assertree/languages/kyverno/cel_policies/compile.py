"""Compiling a read policy into runners: every CEL text compiled once, with the field path it came from.

`compile_policy` builds the policy's rules (the policy as written, then its
autogen variants), compiles each rule's expressions in the Kyverno
environment (`environment`), and wires them to the engine's interface
(`assertree.languages.base`): a ValidatingPolicy gives rules whose runners
return one `RuleResult` per selected resource; a MutatingPolicy gives a
mutator. Selection is `matching` on the resource's admission request
(`request`) in Kubernetes mode; JSON mode selects every payload.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from assertree.errors import PolicyError
from assertree.languages.base import Explain, Mutator, RuleRunner, ScanContext, reduce_compiled
from assertree.languages.cel.engine import CelCompileError, CelUnavailableError, Program
from assertree.languages.kyverno.cel_policies.environment import environment, uses_authorizer
from assertree.languages.kyverno.cel_policies.evaluate import (
    CompiledSpec,
    Outcome,
    evaluate_mutations,
    evaluate_validations,
)
from assertree.languages.kyverno.cel_policies.matching import matches
from assertree.languages.kyverno.cel_policies.model import CelPolicy, CelRule, PolicySpec
from assertree.languages.kyverno.cel_policies.reading import ReadError, read_policy, read_spec
from assertree.languages.kyverno.cel_policies.request import admission_request
from assertree.languages.kyverno.cel_policies.rewrite import rewrite
from assertree.results import ERROR, FAIL, WARN, Resource, RuleError, RuleResult, Violation

__all__ = ["CompiledCelPolicy", "CompiledCelRule", "compile_expression", "compile_policy", "compile_spec"]


def compile_expression(text: str, path: tuple) -> Program:
    """One CEL text compiled in Kyverno's environment; PolicyError naming `path` when it does not compile."""
    if uses_authorizer(text):
        raise PolicyError("the Kubernetes authorizer needs a cluster: expressions using `authorizer` cannot run "
                          "offline", path=path)
    try:
        return environment().compile(rewrite(text))
    except CelUnavailableError as error:
        raise PolicyError(error.message, path=path) from None
    except CelCompileError as error:
        raise PolicyError(f"invalid CEL expression: {error.message}", path=path) from None


def compile_spec(spec: PolicySpec) -> CompiledSpec:
    """Every expression of `spec`, compiled; PolicyError at the first that does not compile."""
    compiled = CompiledSpec(failure_policy=spec.failure_policy)
    for item in spec.variables:
        compiled.variables.append((item.name, compile_expression(item.text, item.path), item.path))
    for item in spec.match_conditions:
        compiled.match_conditions.append((item.name, compile_expression(item.text, item.path), item.path))
    for validation in spec.validations:
        message = None
        if validation.message_expression:
            message_path = (*validation.path[:-1], "messageExpression")
            message = compile_expression(validation.message_expression, message_path)
        compiled.validations.append((validation, compile_expression(validation.expression, validation.path),
                                     message))
    for mutation in spec.mutations:
        compiled.mutations.append((mutation, compile_expression(mutation.expression, mutation.path)))
    return compiled


def _data(policy: CelPolicy, rule: CelRule, resource: Any, context: ScanContext) -> dict[str, Any] | None:
    """The CEL variables for `resource`, or None when the rule's match constraints do not select it."""
    if rule.spec.mode == "JSON":
        return {"object": resource, "oldObject": None, "request": None, "params": None, "namespaceObject": None}
    if rule.spec.match is None:
        return None
    if policy.kind.startswith("Namespaced") and policy.namespace is not None:
        metadata = resource.get("metadata") if isinstance(resource, dict) else None
        if not isinstance(metadata, dict) or metadata.get("namespace") != policy.namespace:
            return None  # a namespaced policy sees only its own namespace
    request = admission_request(resource, operation=context.operation, values=context.values,
                                user_info=context.user_info)
    if not matches(rule.spec.match, request.attributes):
        return None
    return request.variables()


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

        def run(resource: Resource) -> RuleResult | None:
            try:
                data = _data(self.policy, self.rule, resource.value, context)
            except ValueError as error:  # a label selector Kubernetes would not build
                return RuleResult(resource, self.policy, self.rule, ERROR, message=str(error),
                                  error=RuleError(f"failed to execute matching: {error}", kind="match"))
            if data is None:
                return None
            return self.result(resource, evaluate_validations(self.compiled, data, lookups))

        return run

    def explainer(self, context: ScanContext) -> Explain:
        """How this rule failed or errored on a resource: its variables, conditions and validations
        (`explain.explain_validations`)."""
        from assertree.languages.kyverno.cel_policies.explain import explain_validations

        lookups = _lookups(context)

        def explain(result: RuleResult):
            try:
                data = _data(self.policy, self.rule, result.resource.value, context)
            except ValueError:
                return None  # the match itself failed: the result's error says why
            return explain_validations(self.compiled, data, lookups) if data is not None else None

        return explain


@dataclass(eq=False)
class CompiledCelPolicy:
    """A policy ready to run: validating rules, or a mutator for a MutatingPolicy."""

    policy: CelPolicy
    compiled_rules: list[CompiledCelRule] = field(default_factory=list)

    @property
    def rules(self) -> list[CompiledCelRule]:
        return [] if self.policy.mutating else self.compiled_rules

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
                    data = _data(self.policy, rule.rule, current.value, context)
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
    base = CelRule(name=policy.name, index=0, document=spec_document, spec=policy.spec)
    compiled = CompiledCelPolicy(policy, [CompiledCelRule(policy, base, compile_spec(policy.spec))])
    rules = [base]
    if policy.spec.mode != "JSON":
        for group, kinds, rewritten in variants(spec_document, mutating=policy.mutating):
            name = f"autogen-cronjob-{policy.name}" if group == "cronjobs" else f"autogen-{policy.name}"
            try:
                spec = read_spec(rewritten, policy.kind)
            except ReadError as error:  # a rewrite Kyverno also makes; reported where the original is
                raise PolicyError(f"autogen ({', '.join(kinds)}): {error}", path=error.path) from None
            rule = CelRule(name=name, index=len(rules), document=rewritten, spec=spec, targets=tuple(kinds))
            rules.append(rule)
            compiled.compiled_rules.append(CompiledCelRule(policy, rule, compile_spec(spec)))
    policy.rules = rules
    return compiled
