"""What an admission policy and its bindings say, as plain data.

`reading` builds these from documents the schema has accepted; `compile` turns
them into CEL programs and runners. Every expression keeps its field path, so
a compile error names the field it comes from. A policy carries the bindings
that name it (`Binding`); a policy without one is *unbound*.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from assertree.languages.kubernetes.expressions import Expression, FieldPath, Mutation, Validation
from assertree.languages.kubernetes.matching import MatchConstraints

__all__ = [
    "GROUP", "KINDS", "MUTATING", "VALIDATING", "AdmissionPolicy", "AdmissionRule", "AuditAnnotation", "Binding",
    "ParamRef",
]

GROUP = "admissionregistration.k8s.io"
VERSIONS = ("v1", "v1beta1", "v1alpha1")
VALIDATING = "ValidatingAdmissionPolicy"
MUTATING = "MutatingAdmissionPolicy"
BINDING_OF = {VALIDATING: f"{VALIDATING}Binding", MUTATING: f"{MUTATING}Binding"}
KINDS = frozenset({VALIDATING, MUTATING, *BINDING_OF.values()})

@dataclass(frozen=True, slots=True)
class AuditAnnotation:
    """One ``auditAnnotations`` entry: a key, and the expression that gives its value (a string or null)."""

    key: str
    expression: str
    path: FieldPath


@dataclass(frozen=True, slots=True)
class ParamRef:
    """A binding's ``paramRef``: which parameter resources the policy runs with."""

    name: str = ""
    namespace: str = ""
    selector: dict | None = None
    not_found_action: str | None = None  # parameterNotFoundAction: Allow or Deny


@dataclass(frozen=True)
class Binding:
    """A ValidatingAdmissionPolicyBinding or MutatingAdmissionPolicyBinding, read."""

    name: str
    kind: str
    policy_name: str
    document: dict
    param_ref: ParamRef | None = None
    match: MatchConstraints | None = None  # matchResources
    actions: tuple[str, ...] = ("Deny",)  # validationActions (a MAP binding has none)
    source: str | None = None
    line: int | None = None
    implicit: bool = False  # stands for "run as if bound" (no document says so)


@dataclass(eq=False)
class AdmissionRule:
    """The policy as the one rule results and reports see (`assertree.results.RuleInfo`)."""

    name: str
    document: dict  # the spec
    index: int = 0


@dataclass(eq=False)
class AdmissionPolicy:
    """A ValidatingAdmissionPolicy or MutatingAdmissionPolicy as results and reports see it (`PolicyInfo`)."""

    name: str
    kind: str
    api_version: str
    document: dict
    match: MatchConstraints | None
    param_kind: tuple[str, str] | None = None  # (apiVersion, kind)
    match_conditions: tuple[Expression, ...] = ()
    variables: tuple[Expression, ...] = ()
    validations: tuple[Validation, ...] = ()
    audit_annotations: tuple[AuditAnnotation, ...] = ()
    mutations: tuple[Mutation, ...] = ()
    failure_policy: str = "Fail"
    reinvocation_policy: str = "Never"
    bindings: tuple[Binding, ...] = ()
    rules: list[AdmissionRule] = field(default_factory=list)
    source: str | None = None
    document_index: int | None = None
    line: int | None = None
    annotations: dict[str, str] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)

    @property
    def mutating(self) -> bool:
        return self.kind == MUTATING

    @property
    def binding_kind(self) -> str:
        return BINDING_OF[self.kind]

    @property
    def severity(self) -> str | None:
        return None

    @property
    def title(self) -> str | None:
        return None

    @property
    def description(self) -> str | None:
        return self.annotations.get("description")
