"""Compiling an admission policy once into the engine's interface (`languages.base`).

A ValidatingAdmissionPolicy is one rule, the policy itself (`validating`); a
MutatingAdmissionPolicy is a mutator (`mutating`). Every expression is
compiled here, with the field path it is written at, so a policy that does not
compile fails at load time. A compiled policy pickles as its `bundle` (its
document and its bindings'), compiled again where it is unpickled.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from assertree.errors import PolicyError, Problem
from assertree.languages.admission.environment import compile_expression
from assertree.languages.admission.evaluate import CompiledSpec
from assertree.languages.admission.model import AdmissionPolicy, AdmissionRule
from assertree.languages.admission.mutating import mutating_mutator
from assertree.languages.admission.reading import read_binding, read_policy
from assertree.languages.admission.validating import validating_runner
from assertree.languages.base import Explain, Mutator, RuleRunner, ScanContext, recompile
from assertree.languages.cel.engine import Program

__all__ = ["CompiledAdmissionPolicy", "bundle", "compile_bundle", "compile_policy", "compile_spec"]


def compile_spec(policy: AdmissionPolicy, problems: list[Problem] | None = None) -> CompiledSpec:
    """Every expression of `policy`, compiled; PolicyError at the first that does not compile, or, with
    `problems`, each one's problem added there (lint reports them all)."""
    params = policy.param_kind is not None

    def compiled_text(text: str, path: tuple, authorizer: bool = True) -> Program | None:
        try:
            return compile_expression(text, path, params=params, authorizer=authorizer)
        except PolicyError as error:
            if problems is None:
                raise
            problems.append(error.problem)
            return None

    spec = CompiledSpec(failure_policy=policy.failure_policy)
    for item in policy.variables:
        if (program := compiled_text(item.text, item.path)) is not None:
            spec.variables.append((item.name, program, item.path))
    for item in policy.match_conditions:
        if (program := compiled_text(item.text, item.path)) is not None:
            spec.match_conditions.append((item.name, program, item.path))
    for validation in policy.validations:
        message = None
        if validation.message_expression:
            message = compiled_text(validation.message_expression, (*validation.path[:-1], "messageExpression"),
                                    authorizer=False)
        if (program := compiled_text(validation.expression, validation.path)) is not None:
            spec.validations.append((validation, program, message))
    for annotation in policy.audit_annotations:
        if (program := compiled_text(annotation.expression, annotation.path)) is not None:
            spec.audit_annotations.append((annotation, program))
    for mutation in policy.mutations:
        if (program := compiled_text(mutation.expression, mutation.path)) is not None:
            spec.mutations.append((mutation, program))
    return spec


@dataclass(eq=False)
class CompiledAdmissionPolicy:
    """A policy ready to run: a validating rule (itself), or a mutator."""

    policy: AdmissionPolicy
    spec: CompiledSpec

    @property
    def rule(self) -> AdmissionRule:
        return self.policy.rules[0]

    @property
    def rules(self) -> list[CompiledAdmissionPolicy]:
        return [] if self.policy.mutating else [self]

    def runner(self, context: ScanContext) -> RuleRunner:
        return validating_runner(self.policy, self.rule, self.spec, context)

    def explainer(self, context: ScanContext) -> Explain:
        """How a result of this policy was reached (``--explain``; `admission.explain`)."""
        from assertree.languages.admission.explain import admission_explainer

        return admission_explainer(self.policy, self.spec, context)

    def mutator(self, context: ScanContext) -> Mutator | None:
        return mutating_mutator(self, self.policy, self.rule, self.spec, context) if self.policy.mutating else None

    def __reduce__(self) -> tuple[Any, tuple]:
        """Pickles as its document and its bindings' documents, compiled again where it is unpickled."""
        policy = self.policy
        return recompile, (compile_bundle, bundle(policy), policy.source, policy.document_index, policy.line)


def compile_policy(policy: AdmissionPolicy) -> CompiledAdmissionPolicy:
    """`policy` with every expression compiled; PolicyError at the first problem."""
    return CompiledAdmissionPolicy(policy, compile_spec(policy))


def bundle(policy: AdmissionPolicy) -> dict:
    """The documents that make `policy` as it runs: its own and its bindings' (with where they were read)."""
    return {"policy": policy.document,
            "bindings": [{"document": binding.document, "source": binding.source, "line": binding.line}
                         for binding in policy.bindings if not binding.implicit]}


def compile_bundle(documents: dict, *, source: str | None = None, index: int | None = None,
                   line: int | None = None) -> CompiledAdmissionPolicy:
    """A `bundle` compiled again (unpickling a compiled policy)."""
    compiled = compile_policy(read_policy(documents["policy"], source=source, index=index, line=line))
    compiled.policy.bindings = tuple(read_binding(item["document"], source=item["source"], line=item["line"])
                                     for item in documents["bindings"])
    return compiled
