"""Typed view of a ``kyverno.io`` ClusterPolicy/Policy document, as results and reports see it.

`KyvernoPolicy` and `KyvernoRule` implement `assertree.languages.base.PolicyInfo`
and `RuleInfo`. The rule list is the one Kyverno's engine runs: the rules as
written, then the rules autogen generates for Pod controllers
(``autogen-<rule>``) and CronJobs (``autogen-cronjob-<rule>``), which
`compile` supplies. The model holds no compiled state and never evaluates.

Policy-level settings read by the engine:

- severity, title, description: the ``policies.kyverno.io/*`` annotations;
- scored: ``policies.kyverno.io/scored: "false"`` makes failures warnings;
- failure action per rule: ``validate.failureAction``, else the policy's
  ``validationFailureAction``, else Audit (Kyverno's default);
- applyRules: ``One`` stops at the first rule that gives a result.

Rules assertree cannot run offline (`refusals`) are not in ``rules``: each is
kept in ``refused`` as a located warning, reported once.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from assertree.errors import Problem
from assertree.results import RefusedRule

SEVERITY = "policies.kyverno.io/severity"
TITLE = "policies.kyverno.io/title"
DESCRIPTION = "policies.kyverno.io/description"
SCORED = "policies.kyverno.io/scored"


@dataclass(eq=False)
class KyvernoRule:
    """One rule (written or generated); `document` is its JSON."""

    name: str
    index: int
    document: dict
    autogen_of: str | None = None  # the written rule this one was generated from

    @property
    def kind(self) -> str:
        """What the rule does: validate, mutate, generate or verifyImages."""
        for kind in ("validate", "mutate", "generate", "verifyImages"):
            if self.document.get(kind) is not None:
                return kind
        return "unknown"

    @property
    def validates(self) -> bool:
        return self.kind == "validate"

    @property
    def mutates(self) -> bool:
        """A mutate rule that patches the resource being admitted (not existing resources: `mutates_existing`)."""
        return self.kind == "mutate" and not self.mutates_existing

    @property
    def mutates_existing(self) -> bool:
        """A mutate rule with ``targets``: it patches other (existing) resources, never the trigger."""
        mutate = self.document.get("mutate")
        return isinstance(mutate, dict) and bool(mutate.get("targets"))

    @property
    def generates(self) -> bool:
        return self.kind == "generate"

    @property
    def verifies_images(self) -> bool:
        return self.kind == "verifyImages"


@dataclass(eq=False)
class KyvernoPolicy:
    """A ClusterPolicy or Policy: the `PolicyInfo` reports read."""

    name: str
    kind: str
    api_version: str
    namespace: str | None
    rules: list[KyvernoRule]
    annotations: dict[str, str]
    document: dict
    source: str | None = None
    document_index: int | None = None
    line: int | None = None
    labels: dict[str, str] = field(default_factory=dict)
    refused: list[RefusedRule] = field(default_factory=list)  # rules not run (`refusals`), one warning each

    @property
    def severity(self) -> str | None:
        value = self.annotations.get(SEVERITY)
        return value.strip().lower() or None if isinstance(value, str) else None

    @property
    def title(self) -> str | None:
        return self.annotations.get(TITLE)

    @property
    def description(self) -> str | None:
        return self.annotations.get(DESCRIPTION)

    @property
    def scored(self) -> bool:
        """False when annotated ``policies.kyverno.io/scored: "false"``: failures become warnings."""
        return str(self.annotations.get(SCORED, "true")).strip().lower() != "false"

    @property
    def spec(self) -> dict:
        return self.document.get("spec") or {}

    @property
    def apply_one(self) -> bool:
        """``spec.applyRules: One``: only the first rule that gives a result counts."""
        return self.spec.get("applyRules") == "One"

    @property
    def background(self) -> bool:
        return self.spec.get("background", True) is not False

    @property
    def mutates(self) -> bool:
        return any(rule.mutates for rule in self.rules)

    @property
    def validates(self) -> bool:
        return any(rule.validates for rule in self.rules)

    def failure_action(self, rule: KyvernoRule) -> str:
        """``Enforce`` or ``Audit`` for `rule` (the rule's own setting wins over the policy's)."""
        validate = rule.document.get("validate") or {}
        action = validate.get("failureAction") or self.spec.get("validationFailureAction") or "Audit"
        return "Enforce" if str(action).lower() == "enforce" else "Audit"

    def rule(self, name: str) -> KyvernoRule | None:
        return next((rule for rule in self.rules if rule.name == name), None)


def policy_from_document(document: dict, *, generated: list[dict] | None = None, source: str | None = None,
                         index: int | None = None, line: int | None = None,
                         refused: dict[str, Problem] | None = None) -> KyvernoPolicy:
    """The model of a schema-checked policy `document`; `generated` are the autogen rules to append;
    `refused` (rule name -> why) are the written rules left out, with their autogen copies."""
    metadata = document.get("metadata") or {}
    written = document["spec"]["rules"]
    refused = refused or {}
    rules = [KyvernoRule(rule["name"], position, rule) for position, rule in enumerate(written)
             if rule["name"] not in refused]
    for extra in generated or ():
        name = extra["name"]
        origin = name.removeprefix("autogen-cronjob-").removeprefix("autogen-")
        if origin not in refused:
            rules.append(KyvernoRule(name, len(rules), extra, autogen_of=origin))
    return KyvernoPolicy(
        name=metadata["name"],
        kind=document["kind"],
        api_version=document["apiVersion"],
        namespace=metadata.get("namespace") if document["kind"] == "Policy" else None,
        rules=rules,
        annotations={str(k): str(v) for k, v in (metadata.get("annotations") or {}).items()},
        labels={str(k): str(v) for k, v in (metadata.get("labels") or {}).items()},
        document=document,
        source=source,
        document_index=index,
        line=line,
        refused=[RefusedRule(name, problem) for name, problem in refused.items()],
    )
