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
"""

from __future__ import annotations

from dataclasses import dataclass, field

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
        return self.kind == "mutate"


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
                         index: int | None = None, line: int | None = None) -> KyvernoPolicy:
    """The model of a schema-checked policy `document`; `generated` are the autogen rules to append."""
    metadata = document.get("metadata") or {}
    written = document["spec"]["rules"]
    rules = [KyvernoRule(rule["name"], position, rule) for position, rule in enumerate(written)]
    for extra in generated or ():
        name = extra["name"]
        origin = name.removeprefix("autogen-cronjob-").removeprefix("autogen-")
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
    )
