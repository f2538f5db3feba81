"""A whole ClusterPolicy/Policy: one converted document per rule, and what is left.

Kyverno's guide converts one rule to one policy (a CEL policy has no rules,
and a rule's match, preconditions and failure action are its own). A policy
of one rule keeps its name; the others are ``<policy>-<rule>``. Policy-level
settings follow:

- ``validationFailureAction`` (or the rule's ``failureAction``): ``Enforce``
  is ``validationActions: [Deny]``, ``Audit`` is ``[Audit]``; per-namespace
  overrides split the rule into one policy per action, each selecting its
  namespaces by a match condition;
- ``background: false`` and ``admission: false``: ``spec.evaluation``;
- ``failurePolicy``, ``webhookTimeoutSeconds``: their ValidatingPolicy fields;
- autogen: the Pod controllers Kyverno derives for the rule (its
  ``pod-policies.kyverno.io/autogen-controllers`` annotation included) are
  ``spec.autogen.podControllers.controllers``; ReplicationControllers, which
  the CEL autogen does not cover, get a companion policy of their own
  (``<name>-replicationcontrollers``) with the expressions moved under
  ``spec.template`` as the autogen moves them;
- ``metadata.labels`` and ``annotations`` are kept (the autogen annotation
  is replaced by ``spec.autogen``); a ``Policy`` becomes a
  ``NamespacedValidatingPolicy`` in its namespace.

Rules that cannot be converted stay in a copy of the source policy holding
only them (the *remainder*), so nothing a policy checked is lost, and the
report says why each one stayed.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field
from typing import Any

from assertree.migrate.convert import cel
from assertree.migrate.convert.matching import selection
from assertree.migrate.convert.refusal import NotConvertible
from assertree.migrate.convert.validate import validate_spec

__all__ = ["API_VERSION", "ConvertedRule", "PolicyConversion", "checks_delete", "convert_policy", "selects_delete"]

API_VERSION = "policies.kyverno.io/v1"
_AUTOGEN_ANNOTATION = "pod-policies.kyverno.io/autogen-controllers"
_CEL_CONTROLLERS = {"DaemonSet": "daemonsets", "Deployment": "deployments", "Job": "jobs",
                    "StatefulSet": "statefulsets", "ReplicaSet": "replicasets", "CronJob": "cronjobs"}
_DEFAULT_OPERATIONS = ["CREATE", "UPDATE"]
_OTHER_RULES = {
    "generate": "generate rules convert to a GeneratingPolicy, which this migration does not write yet",
    "verifyImages": "verifyImages rules convert to an ImageValidatingPolicy, which this migration does not write yet",
}
_WITH_DELETE = ["CREATE", "UPDATE", "DELETE"]


@dataclass
class ConvertedRule:
    """One source rule: the documents it became, or why it could not be converted."""

    name: str
    index: int
    documents: list[dict] = field(default_factory=list)
    refusal: NotConvertible | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def converted(self) -> bool:
        return self.refusal is None


@dataclass
class PolicyConversion:
    """A source policy's rules, converted or not, and the remainder policy (None when every rule converted)."""

    source: dict
    rules: list[ConvertedRule]
    remainder: dict | None = None


def convert_policy(document: dict, compiled: Any = None, taken: set[str] | None = None) -> PolicyConversion:
    """Convert each rule of a ClusterPolicy/Policy `document`; `compiled` is its `CompiledKyvernoPolicy`
    (for the autogen rules Kyverno derives), `taken` the document names already used (kept unique)."""
    taken = taken if taken is not None else set()
    spec = document.get("spec") or {}
    rules = spec.get("rules") or []
    out = PolicyConversion(document, [])
    for index, rule in enumerate(rules):
        name = str(rule.get("name") or f"rule-{index}")
        converted = ConvertedRule(name, index)
        try:
            converted.documents = _convert_rule(document, rule, index, compiled, taken, converted.notes)
        except NotConvertible as refusal:
            converted.refusal = refusal if refusal.path else refusal.at(("spec", "rules", index))
        out.rules.append(converted)
    left = [rule for rule, converted in zip(rules, out.rules) if not converted.converted]
    if left:
        remainder = copy.deepcopy(document)
        remainder["spec"]["rules"] = copy.deepcopy(left)
        out.remainder = remainder
    return out


def _convert_rule(document: dict, rule: dict, index: int, compiled: Any, taken: set[str],
                  notes: list[str]) -> list[dict]:
    path = ("spec", "rules", index)
    spec = document.get("spec") or {}
    for key, why in _OTHER_RULES.items():
        if rule.get(key) is not None:
            raise NotConvertible(why, (*path, key))
    if spec.get("applyRules") == "One":
        raise NotConvertible("applyRules: One (the first rule that applies wins) has no CEL equivalent: each "
                             "rule becomes its own policy", ("spec", "applyRules"))
    annotations = (document.get("metadata") or {}).get("annotations") or {}
    if str(annotations.get("policies.kyverno.io/scored", "true")).strip().lower() == "false":
        raise NotConvertible("policies.kyverno.io/scored: \"false\" turns failures into warnings in reports "
                             "only; a ValidatingPolicy's Warn action would stop enforcing",
                             ("metadata", "annotations", "policies.kyverno.io/scored"))
    validate = rule.get("validate") or {}
    mutating = rule.get("mutate") is not None
    operations = _WITH_DELETE if _reads_delete(rule) else _DEFAULT_OPERATIONS
    if checks_delete(rule) and operations is _DEFAULT_OPERATIONS:
        notes.append("Kyverno also checks this rule on DELETE requests (against the object being deleted); "
                     "the converted policy, as Kyverno's migration guide converts, selects CREATE and UPDATE")
    namespace = (document.get("metadata") or {}).get("namespace") if document.get("kind") == "Policy" else None
    chosen = selection(rule, path, operations, namespace)
    parts: Any
    if mutating:
        from assertree.migrate.convert.jmespath import Names
        from assertree.migrate.convert.mutate import mutate_spec
        from assertree.migrate.convert.validate import bind_context

        parts = mutate_spec(rule, path, Names.request(), bind_context, pods=chosen.pods_only)
        body: dict[str, Any] = {}
    else:
        parts = validate_spec(rule, path)
        body = {"validationActions": _actions(spec, validate, path)}
    notes.extend(parts.notes)
    evaluation = _evaluation(spec)
    if evaluation:
        body["evaluation"] = evaluation
    if spec.get("failurePolicy") in ("Fail", "Ignore"):
        body["failurePolicy"] = spec["failurePolicy"]
    if spec.get("webhookTimeoutSeconds") is not None:
        body["webhookConfiguration"] = {"timeoutSeconds": spec["webhookTimeoutSeconds"]}
    controllers, needs_companion = _autogen(document, rule, compiled, chosen.pods_only)
    if mutating and parts.json_patch and chosen.pods_only:
        controllers, needs_companion = [], False  # Kyverno derives no controller rules from JSON patches
    if controllers is not None:
        body["autogen"] = {"podControllers": {"controllers": controllers}}
    body["matchConstraints"] = chosen.constraints()
    conditions = [{"name": name, "expression": expression} for name, expression in chosen.conditions]
    conditions.extend(parts.match_conditions)
    if not mutating:  # a MutatingPolicy binds its variables before matching, a ValidatingPolicy after
        conditions = _inline_variables(conditions, parts.variables)
    conditions = _after_preconditions(conditions)
    if conditions:
        body["matchConditions"] = _unique_names(conditions)
    if parts.variables:
        body["variables"] = parts.variables
    if mutating:
        body["mutations"] = parts.mutations
    else:
        body["validations"] = parts.validations
    if "DELETE" in operations:
        _read_old_object_on_delete(body)
    name = _name(document, rule, taken)
    kind = ("NamespacedMutatingPolicy" if namespace else "MutatingPolicy") if mutating else (
        "NamespacedValidatingPolicy" if namespace else "ValidatingPolicy")
    documents = [_document(document, kind, name, namespace, body)]
    if needs_companion:
        documents.append(companion(documents[0], taken))
        notes.append("ReplicationController: Kyverno's CEL autogen does not cover it, so a companion policy "
                     f"{documents[1]['metadata']['name']} does")
    return documents


_OBJECT = re.compile(r"(?<![\w.?'\"])object\b")


def _read_old_object_on_delete(body: dict) -> None:
    """On DELETE, Kyverno reads the object being deleted as ``request.object``; CEL has it as ``oldObject``
    (``object`` is null): each expression reading ``object`` reads ``oldObject`` on DELETE."""
    for key in ("matchConditions", "variables", "validations"):
        for item in body.get(key) or []:
            expression = item.get("expression")
            if isinstance(expression, str) and _OBJECT.search(expression):
                old = _OBJECT.sub("oldObject", expression)
                item["expression"] = f"request.operation == 'DELETE' ? ({old}) : ({expression})"


def _reads_delete(rule: dict) -> bool:
    """Whether the rule names the DELETE operation (a condition on it, or match operations): then its
    converted policy selects DELETE requests too."""
    return "DELETE" in repr({key: rule.get(key) for key in ("match", "exclude", "preconditions", "validate")})


def selects_delete(rule: dict) -> bool:
    """Whether the converted policy of `rule` selects DELETE requests."""
    return _reads_delete(rule)


def checks_delete(rule: dict) -> bool:
    """Whether Kyverno gives the rule a result on DELETE requests (deny and foreach rules; a pattern is not
    checked against a resource being deleted)."""
    validate = rule.get("validate") or {}
    return isinstance(validate, dict) and (validate.get("deny") is not None or bool(validate.get("foreach"))
                                           or validate.get("cel") is not None) and not _skips_delete(rule)


def _skips_delete(rule: dict) -> bool:
    """Whether one of the rule's ``all`` preconditions leaves DELETE requests out (``request.operation`` in a
    list without DELETE, or not DELETE)."""
    block = rule.get("preconditions")
    conditions = block.get("all") if isinstance(block, dict) else block if isinstance(block, list) else None
    for condition in conditions or []:
        if not isinstance(condition, dict) or "request.operation" not in str(condition.get("key")):
            continue
        operator = str(condition.get("operator") or "").lower()
        value = condition.get("value")
        values = [str(item) for item in value] if isinstance(value, list) else [str(value)]
        if operator in ("anyin", "allin", "in", "equals", "equal") and "DELETE" not in values and \
                not any("*" in item or "?" in item for item in values):
            return True
        if operator in ("notequals", "notequal", "anynotin", "allnotin", "notin") and values == ["DELETE"]:
            return True
    return False


def _actions(spec: dict, validate: dict, path: tuple) -> list[str]:
    overrides_at = ((("spec", "validationFailureActionOverrides"), spec.get("validationFailureActionOverrides")),
                    ((*path, "validate", "failureActionOverrides"), validate.get("failureActionOverrides")))
    for where, overrides in overrides_at:
        if overrides:
            raise NotConvertible("per-namespace failure actions are not converted yet (Kyverno's guide: "
                                 "PolicyExceptions, or one policy per action)", where)
    action = validate.get("failureAction") or spec.get("validationFailureAction") or "Audit"
    actions = ["Deny"] if str(action).lower() == "enforce" else ["Audit"]
    if spec.get("emitWarning") and actions == ["Audit"]:
        actions.append("Warn")
    return actions


def _evaluation(spec: dict) -> dict:
    out: dict[str, Any] = {}
    if spec.get("background") is False:
        out["background"] = {"enabled": False}
    if spec.get("admission") is False:
        out["admission"] = {"enabled": False}
    return out


def _autogen(document: dict, rule: dict, compiled: Any, pods_only: bool) -> tuple[list[str] | None, bool]:
    """(the ``podControllers.controllers`` to write, or None for Kyverno's default; whether the rule needs a
    ReplicationController companion), from the autogen rules Kyverno derives for `rule`."""
    kinds = autogen_kinds(rule, compiled)
    if not pods_only:
        if kinds:
            raise NotConvertible("Kyverno derives Pod controller rules here, but the converted match does not "
                                 "select exactly Pods, which CEL autogen needs", ("spec", "rules"))
        return None, False
    wanted = [_CEL_CONTROLLERS[kind] for kind in _CEL_CONTROLLERS if kind in kinds]
    companion = "ReplicationController" in kinds
    if set(wanted) == set(_CEL_CONTROLLERS.values()):
        return None, companion
    return wanted, companion


def autogen_kinds(rule: dict, compiled: Any) -> set[str]:
    """The controller kinds of the autogen rules Kyverno derives from `rule`."""
    if compiled is None:
        return set()
    from assertree.languages.kyverno.match import parse_kind_selector

    name = rule.get("name")
    kinds: set[str] = set()
    for derived in compiled.policy.rules:
        if derived.autogen_of != name:
            continue
        match = derived.document.get("match") or {}
        for block in (match.get("any") or []) + (match.get("all") or []) + [match]:
            for kind in (block.get("resources") or {}).get("kinds") or []:
                kinds.add(parse_kind_selector(kind)[2])
    return kinds


def companion(policy: dict, taken: set[str]) -> dict:
    """A policy for ReplicationControllers: the spec moved under ``spec.template`` as CEL autogen moves it."""
    from assertree.languages.kyverno.cel_policies.autogen import variants

    spec = copy.deepcopy(policy["spec"])
    operations = spec["matchConstraints"]["resourceRules"][0].get("operations") or _DEFAULT_OPERATIONS
    spec["autogen"] = {"podControllers": {"controllers": ["deployments"]}}
    _group, _kinds, rewritten = variants(spec, mutating="mutations" in spec)[0]
    rewritten.pop("autogen", None)
    rewritten["matchConstraints"] = {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"],
                                                        "resources": ["replicationcontrollers"],
                                                        "operations": list(operations)}]}
    if "namespaceSelector" in spec["matchConstraints"]:
        rewritten["matchConstraints"]["namespaceSelector"] = spec["matchConstraints"]["namespaceSelector"]
    if "mutations" in spec:  # a MutatingPolicy's variant moves only match conditions and apply configurations
        rewritten = _mutating_variant(spec, rewritten)
    ordered = {key: rewritten[key] for key in policy["spec"] if key in rewritten and key != "autogen"}
    name = _unique(f"{policy['metadata']['name']}-replicationcontrollers", taken)
    out = copy.deepcopy(policy)
    out["metadata"]["name"] = name
    out["spec"] = ordered
    return out


def _mutating_variant(spec: dict, rewritten: dict) -> dict:
    return rewritten


def _document(source: dict, kind: str, name: str, namespace: str | None, spec: dict) -> dict:
    metadata: dict[str, Any] = {"name": name}
    if namespace:
        metadata["namespace"] = namespace
    source_metadata = source.get("metadata") or {}
    annotations = {key: value for key, value in (source_metadata.get("annotations") or {}).items()
                   if key != _AUTOGEN_ANNOTATION}
    if source_metadata.get("labels"):
        metadata["labels"] = copy.deepcopy(source_metadata["labels"])
    if annotations:
        metadata["annotations"] = annotations
    return {"apiVersion": API_VERSION, "kind": kind, "metadata": metadata, "spec": spec}


_DNS = re.compile(r"[^a-z0-9.-]+")


def _name(document: dict, rule: dict, taken: set[str]) -> str:
    policy = str((document.get("metadata") or {}).get("name") or "policy")
    rules = (document.get("spec") or {}).get("rules") or []
    base = policy if len(rules) == 1 else f"{policy}-{rule.get('name')}"
    base = _DNS.sub("-", base.lower()).strip("-.")[:253] or "policy"
    return _unique(base, taken)


def unique_name(base: str, taken: set[str]) -> str:
    """`base` as a document name (DNS characters), made unique among `taken` (which it joins)."""
    return _unique(_DNS.sub("-", base.lower()).strip("-.")[:253] or "policy", taken)


def _unique(base: str, taken: set[str]) -> str:
    name = base
    number = 2
    while name in taken:
        suffix = f"-{number}"
        name = base[:253 - len(suffix)] + suffix
        number += 1
    taken.add(name)
    return name


_VARIABLE = re.compile(r"\bvariables\.([A-Za-z_][A-Za-z0-9_]*)")


def _inline_variables(conditions: list[dict], variables: list[dict]) -> list[dict]:
    """A ValidatingPolicy's match conditions run before its variables exist (Kyverno's vpol compiler binds
    ``variables`` after matching): each ``variables.x`` a condition reads is written out."""
    defined = {variable["name"]: variable["expression"] for variable in variables}

    def inline(text: str, depth: int = 0) -> str:
        if depth > 8:
            raise NotConvertible("variables defined in terms of each other too deeply to read in a match "
                                 "condition", ("spec", "rules"))
        return _VARIABLE.sub(lambda found: f"({inline(defined[found.group(1)], depth + 1)})"
                             if found.group(1) in defined else found.group(0), text)

    return [{**condition, "expression": inline(condition["expression"])} for condition in conditions]


def _after_preconditions(conditions: list[dict]) -> list[dict]:
    """The conditions after ``preconditions`` folded into it (``pre ? rest : false``): Kyverno checks a rule's
    preconditions first, and an error there is the rule's error, where separate match conditions would let a
    later false one skip the rule."""
    names = [condition["name"] for condition in conditions]
    if "preconditions" not in names or names[-1] == "preconditions":
        return conditions
    index = names.index("preconditions")
    rest = cel.and_([condition["expression"] for condition in conditions[index + 1:]])
    folded = f"{cel.paren(conditions[index]['expression'])} ? {cel.paren(rest)} : false"
    return [*conditions[:index], {"name": "preconditions", "expression": folded}]


def _unique_names(conditions: list[dict]) -> list[dict]:
    seen: dict[str, int] = {}
    out = []
    for condition in conditions:
        name = condition["name"]
        seen[name] = seen.get(name, 0) + 1
        if seen[name] > 1:
            name = f"{name}-{seen[name]}"
        out.append({"name": name, "expression": condition["expression"]})
    return out


def condition_names() -> tuple[str, ...]:
    return ("match", "exclude", "preconditions", "anchors-met", "some-element-applies")


def is_true(expression: str) -> bool:
    return expression == cel.TRUE
