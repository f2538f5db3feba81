"""What a ``policies.kyverno.io`` policy says, as plain data: the spec of a ValidatingPolicy, MutatingPolicy,
GeneratingPolicy, DeletingPolicy or ImageValidatingPolicy.

The model is what `reading` builds from a document once it has been checked,
and what `compile` turns into CEL programs. It keeps the field path of every
expression so a compile error names the field it comes from. A policy runs as
one or more *rules*: the policy as written, then one per group of Pod
controllers that autogen derives from it (`autogen`); each rule carries its own
spec because autogen rewrites expressions and match constraints.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from assertree.languages.kubernetes.expressions import Expression, FieldPath, Mutation, Validation
from assertree.languages.kubernetes.matching import MatchConstraints

__all__ = ["DELETING_KINDS", "GENERATING_KINDS", "GROUP", "IMAGE_KINDS", "KINDS", "MUTATING_KINDS", "VALIDATING_KINDS",
           "CelPolicy", "CelRule", "Generation", "ImageReference", "PolicySpec"]

GROUP = "policies.kyverno.io"
VALIDATING_KINDS = frozenset({"ValidatingPolicy", "NamespacedValidatingPolicy"})
MUTATING_KINDS = frozenset({"MutatingPolicy", "NamespacedMutatingPolicy"})
GENERATING_KINDS = frozenset({"GeneratingPolicy", "NamespacedGeneratingPolicy"})
DELETING_KINDS = frozenset({"DeletingPolicy", "NamespacedDeletingPolicy"})
IMAGE_KINDS = frozenset({"ImageValidatingPolicy", "NamespacedImageValidatingPolicy"})
KINDS = VALIDATING_KINDS | MUTATING_KINDS | GENERATING_KINDS | DELETING_KINDS | IMAGE_KINDS
VERSIONS = frozenset({"v1alpha1", "v1beta1", "v1"})


@dataclass(frozen=True, slots=True)
class Generation:
    """One ``generate`` entry of a GeneratingPolicy: a CEL ``expression`` calling ``generator.Apply``, or a YAML
    ``template`` (its ``(( ))`` placeholders evaluated when ``interpolate`` is ``cel``)."""

    path: FieldPath  # of the expression, or of the template's value
    expression: str | None = None
    template: str | None = None
    interpolate: bool = False


@dataclass(frozen=True, slots=True)
class ImageReference:
    """One ``matchImageReferences`` entry of an ImageValidatingPolicy: a ``glob`` or a CEL ``expression`` on
    ``ref``."""

    path: FieldPath
    glob: str | None = None
    expression: str | None = None


@dataclass(frozen=True)
class PolicySpec:
    """The parts of ``spec`` that evaluation reads (autogen makes a rewritten copy per controller group)."""

    match: MatchConstraints | None
    match_conditions: tuple[Expression, ...] = ()
    variables: tuple[Expression, ...] = ()
    validations: tuple[Validation, ...] = ()
    mutations: tuple[Mutation, ...] = ()
    validation_actions: tuple[str, ...] = ("Deny",)
    failure_policy: str = "Fail"
    mode: str = "Kubernetes"  # spec.evaluation.mode: Kubernetes, JSON, or HTTP/Envoy (authorization)
    audit_annotations: tuple[str, ...] = ()  # keys only: the values are not evaluated offline
    generations: tuple[Generation, ...] = ()  # GeneratingPolicy
    conditions: tuple[Expression, ...] = ()  # DeletingPolicy: all true -> the resource would be deleted
    mutate_existing: bool = False  # MutatingPolicy: spec.evaluation.mutateExisting.enabled
    target_match: MatchConstraints | None = None  # MutatingPolicy: spec.targetMatchConstraints (resource rules)
    target_expression: Expression | None = None  # ... or its CEL expression naming the targets
    image_references: tuple[ImageReference, ...] = ()  # ImageValidatingPolicy: matchImageReferences
    image_extractors: tuple[Expression, ...] = ()  # ImageValidatingPolicy: spec.images (name, expression)
    verify_digest: bool = False  # ImageValidatingPolicy: validationConfigurations.verifyDigest
    required: bool = False  # ImageValidatingPolicy: validationConfigurations.required


@dataclass(eq=False)
class CelRule:
    """A rule as results and reports see it (`assertree.results.RuleInfo`): the policy or an autogen variant."""

    name: str
    index: int
    document: dict  # the spec this rule runs, JSON (autogen: the rewritten one)
    spec: PolicySpec
    targets: tuple[str, ...] = ()  # autogen: the controller kinds this variant is for
    autogen_of: str | None = None  # autogen: the rule it was made from (the policy's own), for totals


@dataclass(eq=False)
class CelPolicy:
    """A ``policies.kyverno.io`` policy as results and reports see it (`assertree.results.PolicyInfo`)."""

    name: str
    kind: str
    api_version: str
    document: dict
    spec: PolicySpec
    rules: list[CelRule] = field(default_factory=list)
    refused: list = field(default_factory=list)  # results.RefusedRule: the policy's rule, when it cannot run offline
    namespace: str | None = None
    source: str | None = None
    document_index: int | None = None
    line: int | None = None
    annotations: dict[str, str] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)

    @property
    def mutating(self) -> bool:
        return self.kind in MUTATING_KINDS

    @property
    def generating(self) -> bool:
        return self.kind in GENERATING_KINDS

    @property
    def deleting(self) -> bool:
        return self.kind in DELETING_KINDS

    @property
    def validates_images(self) -> bool:
        return self.kind in IMAGE_KINDS

    @property
    def severity(self) -> str | None:
        return self.annotations.get("policies.kyverno.io/severity")

    @property
    def title(self) -> str | None:
        return self.annotations.get("policies.kyverno.io/title")

    @property
    def description(self) -> str | None:
        return self.annotations.get("policies.kyverno.io/description")
