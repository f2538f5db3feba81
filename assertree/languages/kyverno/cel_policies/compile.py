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

from dataclasses import dataclass, field, replace
from typing import Any

from assertree.errors import PolicyError
from assertree.languages.base import Explain, Mutator, RuleRunner, ScanContext, reduce_compiled
from assertree.languages.cel.conversions import opaque_string_conversions
from assertree.languages.cel.engine import CelCompileError, CelUnavailableError, Program
from assertree.languages.cel.fallback import Fallback, Runnable
from assertree.languages.cel.functions.kyverno import GZIP_BASE64, ROUND_DIGITS
from assertree.languages.cel.lexer import rename_calls
from assertree.languages.cel.or_value import or_value_compat
from assertree.languages.cel.presence import null_safe_presence
from assertree.languages.cel.rewrite import rewrite
from assertree.languages.cel.variables import VariableReferenceError, inline_variables
from assertree.languages.kubernetes.matching import matches
from assertree.languages.kubernetes.request import admission_request
from assertree.languages.kyverno.cel_policies.authz import MODES as AUTHZ_MODES
from assertree.languages.kyverno.cel_policies.authz import authz_environment, check_request, evaluate_request
from assertree.languages.kyverno.cel_policies.environment import Lookups, environment, uses_authorizer
from assertree.languages.kyverno.cel_policies.evaluate import (
    CompiledSpec,
    Outcome,
    evaluate_mutations,
    evaluate_validations,
)
from assertree.languages.kyverno.cel_policies.exceptions import CompiledException, compile_exceptions
from assertree.languages.kyverno.cel_policies.model import CelPolicy, CelRule, PolicySpec
from assertree.languages.kyverno.cel_policies.reading import ReadError, read_policy, read_spec
from assertree.languages.kyverno.manifests import with_default_namespace
from assertree.results import ERROR, FAIL, WARN, Resource, RuleError, RuleResult, Violation

__all__ = ["CompiledCelPolicy", "CompiledCelRule", "compile_expression", "compile_policy",
           "compile_reading_variables", "compile_spec", "source_text", "written_text"]


def written_text(text: str) -> str:
    """What the CEL library compiles for Kyverno's `text` as written: typed constructors, list ``indexOf``,
    ``math.round(x, digits)`` and ``gzip.compress`` adapted to it (`rewrite`, `.lexer.rename_calls`)."""
    text = rename_calls(rewrite(text), "math.round", f"{ROUND_DIGITS}({{args}})", 2)
    return rename_calls(text, "gzip.compress", f"base64.decode({GZIP_BASE64}({{args}}))", 1)


def source_text(text: str) -> str:
    """`written_text` read as Kyverno's cel-go reads it: ``orValue`` on any value, presence tests on null
    and ``string(ip)`` rewritten (`assertree.languages.cel.or_value`, `.presence`, `.conversions`)."""
    return opaque_string_conversions(null_safe_presence(or_value_compat(written_text(text))))


def compile_expression(text: str, path: tuple, *, namespaced: bool = False,
                       mode: str = "Kubernetes") -> Runnable:
    """One CEL text compiled in Kyverno's environment; PolicyError naming `path` when it does not compile.

    `namespaced`: the environment of a namespaced policy (its resource lookups take no namespace); `mode`
    HTTP or Envoy: an authorization policy's (`authz`). The text is compiled as written and as cel-go
    reads it, the second used where the first fails (`assertree.languages.cel.fallback`).
    """
    if uses_authorizer(text):
        raise PolicyError("the Kubernetes authorizer needs a cluster: expressions using `authorizer` cannot run "
                          "offline", path=path)
    chosen = authz_environment(mode) if mode in AUTHZ_MODES else environment(namespaced)
    written, read = written_text(text), source_text(text)
    try:
        try:
            plain: Program | None = chosen.compile(written)
            first_error: CelCompileError | None = None
        except CelCompileError as error:
            plain, first_error = None, error
        if read != written:
            try:
                return Fallback(text, plain, chosen.compile(read))
            except CelCompileError:
                pass
        if plain is None:
            assert first_error is not None
            raise first_error
        return plain
    except CelUnavailableError as error:
        raise PolicyError(error.message, path=path) from None
    except CelCompileError as error:
        raise PolicyError(f"invalid CEL expression: {error.message}", path=path) from None


def compile_reading_variables(text: str, path: tuple, declared: list[tuple[str, str]], *,
                              namespaced: bool = False, mode: str = "Kubernetes") -> tuple[Runnable, bool]:
    """`text` compiled with the variables it reads (of `declared`: name, expression) bound in it, and whether
    it reads ``variables`` as a whole instead (it then needs their values precomputed, `prepare_variables`)."""
    try:
        inlined = inline_variables(text, declared)
    except VariableReferenceError as error:
        raise PolicyError(f"invalid CEL expression: {error}", path=path) from None
    if inlined is not None:
        try:
            return compile_expression(inlined, path, namespaced=namespaced, mode=mode), False
        except PolicyError:
            pass  # the text itself says why (below), or binding its variables took it past the CEL library's
            # limits (32 levels of nesting, 100,000 characters): it then reads precomputed values
    return compile_expression(text, path, namespaced=namespaced, mode=mode), True


def compile_spec(spec: PolicySpec, *, namespaced: bool = False, mutating: bool = False) -> CompiledSpec:
    """Every expression of `spec`, compiled, the variables each reads bound in it; PolicyError at the first
    that does not compile. A variable may read only the variables declared before it, as in Kyverno."""
    compiled = CompiledSpec(failure_policy=spec.failure_policy, variables_in_match=mutating)
    declared = [(item.name, item.text) for item in spec.variables]
    mode = spec.mode

    def bound(text: str, path: tuple, visible: list[tuple[str, str]]) -> Runnable:
        program, whole = compile_reading_variables(text, path, visible, namespaced=namespaced, mode=mode)
        compiled.needs_values |= whole
        return program

    for position, item in enumerate(spec.variables):
        compiled.variables.append((item.name, bound(item.text, item.path, declared[:position]), item.path))
    for item in spec.match_conditions:
        program = (bound(item.text, item.path, declared) if mutating
                   else compile_expression(item.text, item.path, namespaced=namespaced, mode=mode))
        compiled.match_conditions.append((item.name, program, item.path))
    for validation in spec.validations:
        message = None
        if validation.message_expression and mode not in AUTHZ_MODES:  # a response says it all
            message_path = (*validation.path[:-1], "messageExpression")
            message = bound(validation.message_expression, message_path, declared)
        compiled.validations.append((validation, bound(validation.expression, validation.path, declared), message))
    for mutation in spec.mutations:
        compiled.mutations.append((mutation, bound(mutation.expression, mutation.path, declared)))
    return compiled


def _data(policy: CelPolicy, rule: CelRule, resource: Any, context: ScanContext) -> dict[str, Any] | None:
    """The CEL variables for `resource`, or None when the rule's match constraints do not select it."""
    if rule.spec.mode == "JSON":
        return {"object": resource, "oldObject": None, "request": None, "params": None, "namespaceObject": None}
    if rule.spec.mode in AUTHZ_MODES:
        return None  # checks requests, not resources (`CompiledCelPolicy.check_request`)
    if rule.spec.match is None:
        return None
    resource = with_default_namespace(resource, context.cluster_scoped)  # as kyverno apply reads resources
    if policy.kind.startswith("Namespaced") and policy.namespace is not None:
        metadata = resource.get("metadata") if isinstance(resource, dict) else None
        if not isinstance(metadata, dict) or metadata.get("namespace") != policy.namespace:
            return None  # a namespaced policy sees only its own namespace
    lookups = getattr(context, "lookups", None)
    request = admission_request(resource, operation=context.operation, values=context.values,
                                user_info=context.user_info, types=getattr(lookups, "cluster", None))
    if not matches(rule.spec.match, request.attributes, generate_name=True):
        return None
    return request.variables()


def _namespaced(policy: CelPolicy) -> bool:
    """Whether `policy` compiles in the namespaced environment (a Namespaced* kind with its namespace)."""
    return policy.kind.startswith("Namespaced") and bool(policy.namespace)


def _lookups(policy: CelPolicy, context: ScanContext) -> Lookups:
    """The scan's lookups (an empty set without a context file), in the policy's namespace."""
    found = getattr(context, "lookups", None)
    lookups = found if isinstance(found, Lookups) else Lookups()
    namespace = (policy.namespace or "") if _namespaced(policy) else ""
    return lookups if lookups.namespace == namespace else replace(lookups, namespace=namespace)


def _exceptions(policy: CelPolicy, rule: CelRule, context: ScanContext) -> list[CompiledException]:
    """The scan's ``policies.kyverno.io`` exceptions that name `policy`, compiled in its environment (once per
    scan and rule: the scan's memo keeps them)."""
    if not context.exceptions:
        return []
    key = ("cel-exceptions", id(policy), rule.index)
    memo = context.memo
    if key not in memo:
        namespaced = _namespaced(policy)
        memo[key] = compile_exceptions(
            context.exceptions, policy.kind, policy.name,
            lambda text, path: compile_expression(text, path, namespaced=namespaced))
    return memo[key]


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
        message = f"{outcome.message} ({outcome.note})" if outcome.note else outcome.message
        violations = []
        if status in (FAIL, WARN):
            from assertree.errors import field_path_text

            violations.append(Violation(field_path_text(outcome.check), message, []))
        from assertree.languages.kubernetes.resources import resource_key

        return RuleResult(resource=resource, policy=self.policy, rule=self.rule, status=status,
                          identifier=resource_key(resource.value), message=message, violations=violations,
                          error=outcome.error if status == ERROR else None, patched=outcome.patched,
                          exception=outcome.exception)

    def runner(self, context: ScanContext) -> RuleRunner:
        lookups = _lookups(self.policy, context)
        exceptions = _exceptions(self.policy, self.rule, context)

        def run(resource: Resource) -> RuleResult | None:
            try:
                data = _data(self.policy, self.rule, resource.value, context)
            except ValueError as error:  # a label selector Kubernetes would not build
                return RuleResult(resource, self.policy, self.rule, ERROR, message=str(error),
                                  error=RuleError(f"failed to execute matching: {error}", kind="match"))
            if data is None:
                return None
            return self.result(resource, evaluate_validations(self.compiled, data, lookups, exceptions))

        return run

    def explainer(self, context: ScanContext) -> Explain:
        """How this rule failed or errored on a resource: its variables, conditions and validations
        (`explain.explain_validations`)."""
        from assertree.languages.kyverno.cel_policies.explain import explain_validations

        lookups = _lookups(self.policy, context)

        def explain(result: RuleResult):
            mode = self.policy.spec.mode
            if mode in AUTHZ_MODES:  # an authorization policy: the check request's variables
                try:
                    return explain_validations(self.compiled, check_request(mode, result.resource.value), lookups)
                except ValueError:
                    return None  # an unusable request: the result's error says why
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
        lookups = _lookups(self.policy, context)
        rules = self.compiled_rules
        exceptions = {id(rule): _exceptions(self.policy, rule.rule, context) for rule in rules}

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
                outcome = evaluate_mutations(rule.compiled, data, lookups, exceptions[id(rule)])
                result = rule.result(current, outcome)
                if outcome.patched is not None:
                    current = Resource(outcome.patched, source=current.source, document=current.document,
                                       root=current.root, origin=current.origin,
                                       default_identifier=current.default_identifier, file=current.file)
                    result.patched = outcome.patched
                results.append(result)
            return current, results

        return mutate

    def check_request(self, mode: str, request: Resource, context: ScanContext) -> RuleResult | None:
        """An authorization policy in `mode` (HTTP, Envoy) on one check request (a payload file's JSON);
        None for a policy of another mode. An unusable request is an ERROR result."""
        if self.policy.spec.mode != mode or not self.compiled_rules:
            return None
        rule = self.compiled_rules[0]
        try:
            status, message = evaluate_request(rule.compiled, check_request(mode, request.value),
                                               _lookups(self.policy, context))
        except ValueError as error:
            status, message = ERROR, str(error)
        return RuleResult(request, self.policy, rule.rule, status, message=message,
                          error=RuleError(message) if status == ERROR else None)

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
    options = {"namespaced": _namespaced(policy), "mutating": policy.mutating}
    base = CelRule(name=policy.name, index=0, document=spec_document, spec=policy.spec)
    compiled = CompiledCelPolicy(policy, [CompiledCelRule(policy, base, compile_spec(policy.spec, **options))])
    rules = [base]
    if policy.spec.mode == "Kubernetes":
        for group, kinds, rewritten in variants(spec_document, mutating=policy.mutating):
            name = f"autogen-cronjob-{policy.name}" if group == "cronjobs" else f"autogen-{policy.name}"
            try:
                spec = read_spec(rewritten, policy.kind)
            except ReadError as error:  # a rewrite Kyverno also makes; reported where the original is
                raise PolicyError(f"autogen ({', '.join(kinds)}): {error}", path=error.path) from None
            rule = CelRule(name=name, index=len(rules), document=rewritten, spec=spec, targets=tuple(kinds),
                           autogen_of=base.name)
            rules.append(rule)
            compiled.compiled_rules.append(CompiledCelRule(policy, rule, compile_spec(spec, **options)))
    policy.rules = rules
    return compiled
