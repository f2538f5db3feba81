"""Compiling a read policy into runners: every CEL text compiled once, with the field path it came from.

`compile_policy` builds the policy's rules (the policy as written, then its
autogen variants), compiles each rule's expressions in the Kyverno
environment (`environment`), and wires them to the engine's interface
(`assertree.languages.base`): a ValidatingPolicy, ImageValidatingPolicy
(`images`) or DeletingPolicy (`deleting`) gives rules whose runners return
one `RuleResult` per selected resource; a MutatingPolicy gives a mutator
(which also patches the existing resources of ``context.cluster`` its
``mutateExisting`` targets: `existing`); a GeneratingPolicy (`generating`)
gives rules and a generator. Selection is `selection`'s. A policy with an
expression that cannot run offline (one that needs a cluster, or an
ImageValidatingPolicy that reads signatures, attestations or image data from
a registry) is refused (``policy.refused``: a warning naming the field), and
the other policies run.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import assertree.languages.cel as cel_package
from assertree.errors import PolicyError, Problem, Severity
from assertree.languages.base import Explain, Generator, Mutator, RuleRunner, ScanContext, reduce_compiled
from assertree.languages.cel.conversions import opaque_string_conversions
from assertree.languages.cel.engine import CelCompileError, CelUnavailableError, Program
from assertree.languages.cel.fallback import Fallback, Runnable
from assertree.languages.cel.functions.kyverno import GZIP_BASE64, ROUND_DIGITS
from assertree.languages.cel.lexer import rename_calls
from assertree.languages.cel.limits import budgeted
from assertree.languages.cel.or_value import or_value_compat
from assertree.languages.cel.presence import null_safe_presence
from assertree.languages.cel.rewrite import rewrite
from assertree.languages.cel.text_facts import TextFacts
from assertree.languages.cel.variables import VariableReferenceError, inline_variables
from assertree.languages.kyverno.cel_policies.authz import MODES as AUTHZ_MODES
from assertree.languages.kyverno.cel_policies.authz import authz_environment, check_request, evaluate_request
from assertree.languages.kyverno.cel_policies.environment import (
    GENERATING,
    IMAGES,
    Lookups,
    environment,
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
from assertree.languages.kyverno.cel_policies.exceptions import CompiledException, compile_exceptions
from assertree.languages.kyverno.cel_policies.model import CelPolicy, CelRule, PolicySpec
from assertree.languages.kyverno.cel_policies.reading import ReadError, build_policy, read_spec
from assertree.languages.kyverno.cel_policies.selection import selected_data
from assertree.results import ERROR, FAIL, PASS, SKIP, WARN, RefusedRule, Resource, RuleError, RuleResult, Violation

__all__ = ["CompiledCelPolicy", "CompiledCelRule", "compile_expression", "compile_forms", "compile_policy",
           "compile_problems", "compile_reading_variables", "compile_spec", "source_text", "written_text"]


def written_text(text: str) -> str:
    """What the CEL library compiles for Kyverno's `text` as written: typed constructors, list ``indexOf``,
    ``math.round(x, digits)`` and ``gzip.compress`` adapted to it (`rewrite`, `.lexer.rename_calls`)."""
    text = rename_calls(rewrite(text), "math.round", f"{ROUND_DIGITS}({{args}})", 2)
    return rename_calls(text, "gzip.compress", f"base64.decode({GZIP_BASE64}({{args}}))", 1)


def source_text(text: str) -> str:
    """`written_text` read as Kyverno's cel-go reads it: ``orValue`` on any value, presence tests on null
    and ``string(ip)`` rewritten (`assertree.languages.cel.or_value`, `.presence`, `.conversions`)."""
    return _read_as_cel_go(written_text(text))


def _read_as_cel_go(written: str) -> str:
    return opaque_string_conversions(null_safe_presence(or_value_compat(written)))


_FORMS_KEPT = 16_384
_forms_kept: dict[str, tuple[str, str]] = {}
_REWRITES = TextFacts("cel-rewrites", lambda: (str(Path(cel_package.__file__).parent), __file__))
"""The forms of texts rewritten before: decided by the CEL package's rewriters and this module."""


def compile_forms(text: str) -> tuple[str, str]:
    """(`written_text`, `source_text`) of `text`.

    Memo: both are pure functions of the text (and of the code of the CEL
    package's rewriters and of this module, which name the folder they are kept
    in between runs: `text_facts`), so a text rewritten before, in this process
    or an earlier run, is not rewritten again. `tests/cel/test_compile_memo.py`
    holds the memo to rewriting afresh.
    """
    kept = _forms_kept.get(text)
    if kept is None:
        stored = _REWRITES.get(text)
        if type(stored) is tuple and len(stored) == 2 and all(type(form) is str for form in stored):
            kept = stored
        else:
            written = written_text(text)
            kept = (written, _read_as_cel_go(written))
            _REWRITES.put(text, kept)
        if len(_forms_kept) >= _FORMS_KEPT:
            _forms_kept.pop(next(iter(_forms_kept)))
        _forms_kept[text] = kept
    return kept


def compile_expression(text: str, path: tuple, *, namespaced: bool = False, mode: str = "Kubernetes",
                       purpose: str = "") -> Runnable:
    """One CEL text compiled in Kyverno's environment; PolicyError naming `path` when it does not compile.

    `namespaced`: the environment of a namespaced policy (its resource lookups take no namespace); `mode`
    HTTP or Envoy: an authorization policy's (`authz`); `purpose`: a GeneratingPolicy's or an
    ImageValidatingPolicy's (`environment.environment`). The text is compiled as written and as cel-go
    reads it, the second used where the first fails (`assertree.languages.cel.fallback`).
    """
    if uses_authorizer(text):
        raise PolicyError("the Kubernetes authorizer needs a cluster: expressions using `authorizer` cannot run "
                          "offline", path=path)
    chosen = authz_environment(mode) if mode in AUTHZ_MODES else environment(namespaced, purpose)
    written, read = compile_forms(text)
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
                              namespaced: bool = False, mode: str = "Kubernetes",
                              purpose: str = "") -> tuple[Runnable, bool]:
    """`text` compiled with the variables it reads (of `declared`: name, expression) bound in it, and whether
    it reads ``variables`` as a whole instead (it then needs their values precomputed, `prepare_variables`)."""
    try:
        inlined = inline_variables(text, declared)
    except VariableReferenceError as error:
        raise PolicyError(f"invalid CEL expression: {error}", path=path) from None
    if inlined is not None:
        try:
            return compile_expression(inlined, path, namespaced=namespaced, mode=mode, purpose=purpose), False
        except PolicyError:
            pass  # the text itself says why (below), or binding its variables took it past the CEL library's
            # limits (32 levels of nesting, 100,000 characters): it then reads precomputed values
    return compile_expression(text, path, namespaced=namespaced, mode=mode, purpose=purpose), True


def compile_spec(spec: PolicySpec, *, namespaced: bool = False, mutating: bool = False,
                 purpose: str = "", problems: list[Problem] | None = None) -> CompiledSpec:
    """Every expression of `spec`, compiled, the variables each reads bound in it; PolicyError at the first
    that does not compile. A variable may read only the variables declared before it, as in Kyverno.
    `purpose`: the environment of a GeneratingPolicy or ImageValidatingPolicy (`environment.environment`).

    Given `problems` (``assertree lint``), every expression that does not compile is added to it instead, and
    left out of the result; a variable that does not compile is bound as ``null``, so the expressions that read
    it are still checked for their own mistakes."""
    compiled = CompiledSpec(failure_policy=spec.failure_policy, variables_in_match=mutating,
                            verify_digest=spec.verify_digest, required=spec.required)
    declared = [(item.name, item.text) for item in spec.variables]
    mode = spec.mode

    def attempt(make: Callable[..., Any], *arguments: Any) -> Any:
        """`make(*arguments)`, or None once its PolicyError is added to `problems` (raised without them)."""
        if problems is None:
            return make(*arguments)
        try:
            return make(*arguments)
        except PolicyError as error:
            problems.append(error.problem)
            return None

    def bound(text: str, path: tuple, visible: list[tuple[str, str]] | None = None) -> Runnable:
        program, whole = compile_reading_variables(text, path, declared if visible is None else visible,
                                                   namespaced=namespaced, mode=mode, purpose=purpose)
        compiled.needs_values |= whole
        return program

    def plain(text: str, path: tuple) -> Runnable:
        return compile_expression(text, path, namespaced=namespaced, mode=mode, purpose=purpose)

    for position, item in enumerate(spec.variables):
        program = attempt(bound, item.text, item.path, declared[:position])
        if program is None:
            declared[position] = (item.name, "null")
            continue
        compiled.variables.append((item.name, program, item.path))
    for item in spec.match_conditions:
        program = attempt(bound if mutating else plain, item.text, item.path)
        if program is not None:
            compiled.match_conditions.append((item.name, program, item.path))
    for item in spec.conditions:  # a DeletingPolicy's: they see its variables
        program = attempt(bound, item.text, item.path)
        if program is not None:
            compiled.conditions.append((item.name, program, item.path))
    for validation in spec.validations:
        message = None
        if validation.message_expression and mode not in AUTHZ_MODES:  # a response says it all
            message_path = (*validation.path[:-1], "messageExpression")
            message = attempt(bound, validation.message_expression, message_path, declared)
        program = attempt(bound, validation.expression, validation.path, declared)
        if program is not None:
            compiled.validations.append((validation, program, message))
    for mutation in spec.mutations:
        program = attempt(bound, mutation.expression, mutation.path, declared)
        if program is not None:
            compiled.mutations.append((mutation, program))
    if spec.generations:
        from assertree.languages.kyverno.cel_policies.generating import compile_generation

        compiled.generations = [found for generation in spec.generations
                                if (found := attempt(compile_generation, generation, bound)) is not None]
    for reference in spec.image_references:  # they read only `ref`
        if reference.expression is None:
            compiled.image_references.append((reference, None))
        elif (program := attempt(plain, reference.expression, reference.path)) is not None:
            compiled.image_references.append((reference, program))
    for item in spec.image_extractors:
        program = attempt(bound, item.text, item.path)
        if program is not None:
            compiled.image_extractors.append((item.name, program, item.path))
    if spec.target_expression is not None:
        compiled.target_expression = attempt(bound, spec.target_expression.text, spec.target_expression.path)
    return compiled


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
                return self._generate(resource, data, lookups, exceptions)
            if policy.deleting:
                from assertree.languages.kyverno.cel_policies.deleting import evaluate_conditions
                from assertree.languages.kyverno.generate import describe

                outcome = evaluate_conditions(self.compiled, data, lookups, describe(resource.value), exceptions)
                found = self.result(resource, outcome)
                found.action = "delete" if outcome.status == PASS else None
                return found
            if policy.validates_images:
                from assertree.languages.kubernetes.resources import plural_of
                from assertree.languages.kyverno.cel_policies.images import evaluate_images

                kind = str(resource.value.get("kind") or "") if isinstance(resource.value, dict) else ""
                return self.result(resource, evaluate_images(self.compiled, data, lookups, plural_of(kind),
                                                             exceptions))
            return self.result(resource, evaluate_validations(self.compiled, data, lookups, exceptions))

        return run

    @budgeted  # the policy's expressions share one cost budget, as in Kubernetes
    def _generate(self, resource: Resource, data: dict[str, Any], lookups: Lookups,
                  exceptions: list[CompiledException]) -> RuleResult | None:
        """A GeneratingPolicy on one selected trigger: no result when its match conditions are false."""
        from assertree.languages.kyverno.cel_policies.evaluate import begin, noted
        from assertree.languages.kyverno.cel_policies.generating import evaluate_generations
        from assertree.languages.kyverno.generate import describe

        scope, stopped, note = begin(self.compiled, data, lookups, exceptions)
        if stopped is not None:
            if stopped.status == SKIP and not stopped.exception:
                return None  # a match condition is false (or failed under failurePolicy Ignore)
            return self.result(resource, noted(stopped, note))
        outcome = evaluate_generations(self.compiled.generations, scope, lookups, self.policy.namespace)
        result = self.result(resource, noted(Outcome(outcome.status, outcome.message, error=outcome.error), note))
        if outcome.status == PASS:
            result.generated = outcome.generated
            result.action = "generate"
            result.message = ("would generate " + ", ".join(describe(item) for item in outcome.generated)
                              if outcome.generated else "would generate nothing")
        return result

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
                data = selected_data(self.policy, self.rule, result.resource.value, context,
                                     any_operation=self.policy.deleting)
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
        lookups = _lookups(self.policy, context)
        rules = self.compiled_rules
        exceptions = {id(rule): _exceptions(self.policy, rule.rule, context) for rule in rules}

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
                outcome = evaluate_mutations(rule.compiled, data, lookups, exceptions[id(rule)])
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
    """A document that was read and compiled once, compiled again (unpickling a `CompiledCelPolicy`): checked
    then, so not checked again."""
    policy = build_policy(document, source=source, index=index, line=line)
    assert policy is not None  # it was read once
    return compile_policy(policy)


def compile_policy(policy: CelPolicy) -> CompiledCelPolicy:
    """`policy` with its rules (as written, then autogen variants) compiled; PolicyError at the first problem."""
    from assertree.languages.kyverno.cel_policies.autogen import variants

    spec_document = policy.document.get("spec") or {}
    refusal = _refusal(policy)
    if refusal is not None:
        policy.refused = [RefusedRule(policy.name, refusal)]
        policy.rules = []
        return CompiledCelPolicy(policy, [])

    def compiled_spec(spec: PolicySpec) -> CompiledSpec:
        return compile_spec(spec, namespaced=_namespaced(policy), mutating=policy.mutating, purpose=_purpose(policy))

    base = CelRule(name=policy.name, index=0, document=spec_document, spec=policy.spec)
    compiled = CompiledCelPolicy(policy, [CompiledCelRule(policy, base, compiled_spec(policy.spec))])
    rules = [base]
    if policy.spec.mode == "Kubernetes" and not (policy.generating or policy.deleting):
        for group, kinds, rewritten in variants(spec_document, mutating=policy.mutating):
            name = f"autogen-cronjob-{policy.name}" if group == "cronjobs" else f"autogen-{policy.name}"
            try:
                spec = read_spec(rewritten, policy.kind)
            except ReadError as error:  # a rewrite Kyverno also makes; reported where the original is
                raise PolicyError(f"autogen ({', '.join(kinds)}): {error}", path=error.path) from None
            rule = CelRule(name=name, index=len(rules), document=rewritten, spec=spec, targets=tuple(kinds),
                           autogen_of=base.name)
            rules.append(rule)
            compiled.compiled_rules.append(CompiledCelRule(policy, rule, compiled_spec(spec)))
    policy.rules = rules
    return compiled


def compile_problems(policy: CelPolicy) -> list[Problem]:
    """What compiling `policy` finds (``assertree lint``): the warning that it is not run offline, or every
    expression of the policy as written that does not compile (its autogen variants repeat them)."""
    refusal = _refusal(policy)
    if refusal is not None:
        return [refusal]
    found: list[Problem] = []
    compile_spec(policy.spec, namespaced=_namespaced(policy), mutating=policy.mutating, purpose=_purpose(policy),
                 problems=found)
    return found


def _purpose(policy: CelPolicy) -> str:
    """The environment `policy`'s expressions compile in (`environment.environment`)."""
    return GENERATING if policy.generating else IMAGES if policy.validates_images else ""


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
