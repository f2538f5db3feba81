"""CleanupPolicy and ClusterCleanupPolicy (``kyverno.io/v2``): which existing resources Kyverno would delete.

A cleanup policy runs on a schedule over the cluster's resources. As ``kyverno
apply`` evaluates one (``commands/apply/command.go``, ``applyCleanupPolicies``):
a namespaced CleanupPolicy only sees its own namespace; ``match`` must select
the resource and ``exclude`` must not (as a rule's match does, without an
admission request: no user info); then the ``context`` entries are loaded and
the ``conditions`` (``any``/``all``, JMESPath, the resource as ``target``)
decide: true, or no conditions, the resource would be deleted.

Results, as for a DeletingPolicy: PASS "would delete KIND/ns/name" (an action,
`RuleResult.action`), SKIP when the conditions keep it, ERROR when they cannot
be evaluated; a resource the policy does not select gives no result.
``schedule`` and ``deletionPropagationPolicy`` only say when and how a cluster
deletes; what Kyverno's webhook refuses in the policy is refused at load time
(`_check_spec`: a schedule robfig/cron does not parse, `cron`; user info in
match/exclude; ``configMap``/``imageRegistry`` context entries; an exclude
that leaves nothing to match).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from assertree.errors import PolicyError
from assertree.languages.base import reduce_compiled
from assertree.languages.kubernetes.resources import resource_key
from assertree.languages.kyverno import bridge
from assertree.languages.kyverno.manifests import to_float64
from assertree.languages.kyverno.model import KyvernoPolicy, KyvernoRule
from assertree.results import ERROR, PASS, SKIP, Resource, RuleError, RuleResult

if TYPE_CHECKING:
    from assertree.languages.base import Mutator, RuleRunner, ScanContext

__all__ = ["CLEANUP_KINDS", "CLEANUP_VERSIONS", "CompiledCleanupPolicy", "compile_cleanup"]

CLEANUP_KINDS = ("CleanupPolicy", "ClusterCleanupPolicy")
CLEANUP_VERSIONS = ("kyverno.io/v2", "kyverno.io/v2beta1", "kyverno.io/v2alpha1")


@dataclass(eq=False)
class CompiledCleanupRule:
    """The policy's one rule: its match, exclude, context and conditions (`base.CompiledRule`)."""

    policy: KyvernoPolicy
    rule: KyvernoRule
    conditions: Any = None

    def runner(self, context: ScanContext) -> RuleRunner:
        from assertree.languages.kyverno.generate import describe

        def run(resource: Resource) -> RuleResult | None:
            if not isinstance(resource.value, dict):
                return None
            value = to_float64(resource.value)
            namespace = self.policy.namespace
            if namespace and (value.get("metadata") or {}).get("namespace") != namespace:
                return None

            def result(status: str, message: str, error: RuleError | None = None) -> RuleResult:
                return RuleResult(resource, self.policy, self.rule, status, identifier=resource_key(value),
                                  message=message, error=error, action="delete" if status == PASS else None)

            try:
                session = bridge.session(self.policy, self.rule, value, context)
                if not bridge.selects(session):
                    return None
                session.context.set_target(value)
                bridge.load_context(session, self.rule.document.get("context") or [])
                met, why = bridge.conditions_met(self.conditions, session)
            except bridge.EvaluationProblem as problem:
                return result(ERROR, str(problem), RuleError(str(problem), problem.path, problem.kind))
            if met:
                return result(PASS, f"would delete {describe(value)}")
            reason = "; ".join(part for part in ("conditions not met", why) if part)
            return result(SKIP, f"would not delete {describe(value)}: {reason}")

        return run


@dataclass(eq=False)
class CompiledCleanupPolicy:
    """A cleanup policy ready to run (`base.CompiledPolicy`): one rule, no mutation."""

    policy: KyvernoPolicy
    rules: list[CompiledCleanupRule] = field(default_factory=list)

    def mutator(self, context: ScanContext) -> Mutator | None:
        return None

    def __reduce__(self) -> tuple[Any, tuple]:
        return reduce_compiled(compile_cleanup, self.policy)


def compile_cleanup(document: dict, *, source: str | None = None, index: int | None = None,
                    line: int | None = None) -> CompiledCleanupPolicy:
    """Check and model a cleanup policy document; PolicyError naming the field at fault."""
    if document.get("apiVersion") not in CLEANUP_VERSIONS:
        raise PolicyError(f"must be one of: {', '.join(CLEANUP_VERSIONS)}", path=("apiVersion",))
    metadata = document.get("metadata")
    if not isinstance(metadata, dict) or not isinstance(metadata.get("name"), str) or not metadata["name"]:
        raise PolicyError("required field is missing", path=("metadata", "name"))
    spec = document.get("spec")
    if not isinstance(spec, dict):
        raise PolicyError("required field is missing", path=("spec",))
    for key in ("match", "exclude", "conditions"):
        if spec.get(key) is not None and not isinstance(spec[key], dict):
            raise PolicyError("must be a mapping", path=("spec", key))
    if not spec.get("match"):
        raise PolicyError("required field is missing", path=("spec", "match"))
    if spec.get("context") is not None and not isinstance(spec["context"], list):
        raise PolicyError("must be a list", path=("spec", "context"))
    _check_spec(spec)
    rule_document = {"name": metadata["name"], "match": spec["match"]}
    for key in ("exclude", "context"):
        if spec.get(key) is not None:
            rule_document[key] = spec[key]
    rule = KyvernoRule(metadata["name"], 0, rule_document)
    policy = KyvernoPolicy(
        name=metadata["name"], kind=document["kind"], api_version=document["apiVersion"],
        namespace=metadata.get("namespace") if document["kind"] == "CleanupPolicy" else None, rules=[rule],
        annotations={str(k): str(v) for k, v in (metadata.get("annotations") or {}).items()},
        labels={str(k): str(v) for k, v in (metadata.get("labels") or {}).items()},
        document=document, source=source, document_index=index, line=line)
    return CompiledCleanupPolicy(policy, [CompiledCleanupRule(policy, rule, spec.get("conditions"))])


def _check_spec(spec: dict) -> None:
    """What Kyverno's webhook refuses in a cleanup policy (``api/kyverno/v2``, ``CleanupPolicySpec.Validate``):
    a ``schedule`` cron does not parse, user info in ``match``/``exclude``, a ``configMap`` or
    ``imageRegistry`` context entry, an ``exclude`` that leaves ``match`` nothing to select."""
    from assertree.languages.kyverno.cron import schedule_problem

    for index, entry in enumerate(spec.get("context") or []):
        for key, name in (("imageRegistry", "ImageRegistry"), ("configMap", "ConfigMap")):
            if isinstance(entry, dict) and entry.get(key) is not None:
                raise PolicyError(f"{name} is not allowed in a cleanup policy", path=("spec", "context", index, key))
    problem = schedule_problem(spec.get("schedule"))
    if problem is not None:
        raise PolicyError(f"schedule spec in the cleanupPolicy is not in proper cron format ({problem})",
                          path=("spec", "schedule"))
    for block in ("match", "exclude"):
        filters = spec.get(block) or {}
        for group in ("any", "all"):
            for index, item in enumerate(filters.get(group) or []):
                for key in ("roles", "clusterRoles", "subjects"):
                    if isinstance(item, dict) and item.get(key):
                        raise PolicyError("usage of user info is forbidden", path=("spec", block, group, index, key))
    if _matches_nothing(spec["match"], spec.get("exclude")):
        raise PolicyError("CleanupPolicy is matching an empty set", path=("spec", "exclude"))


def _matches_nothing(match: dict, exclude: dict | None) -> bool:
    """``ValidateMatchExcludeConflict``: an ``any`` exclude entry equal to an ``any`` match entry, or an
    ``exclude`` with content when neither block uses ``all``."""
    if exclude is None or exclude.get("all") or match.get("all"):
        return False
    if match.get("any") and exclude.get("any"):
        return any(entry == other for entry in match["any"] for other in exclude["any"])
    return any(value not in (None, [], {}, "") for value in exclude.values())
