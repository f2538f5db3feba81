"""``generate`` rules: which resources a trigger would make Kyverno create, and what they would hold.

Two stages, as in Kyverno:

1. whether the rule applies (``pkg/engine/background.go``, ``filterRule``):
   match/exclude (a resource it does not select gives no result; on a DELETE
   of one it selects, FAIL: Kyverno deletes what it generated), a PolicyException (SKIP), the rule's
   context (an entry that fails: no result), its preconditions (an error:
   ERROR; not met: SKIP, or FAIL when they held for the old object of an
   UPDATE); otherwise PASS;
2. what it generates (``pkg/background/generate``: ``generator.go``,
   ``data.go``, ``clone.go``), for a PASS: the rule's ``generate`` block (or
   each element of its ``foreach``, with the element's own context and
   preconditions) with ``{{ }}`` variables substituted, then
   - ``data``: that object, named and placed by ``name``/``namespace``;
   - ``clone``: a copy of the source object (``clone.namespace``/``name``,
     same kind) without its uid, resourceVersion, creationTimestamp,
     managedFields, and without ownerReferences when it changes namespace;
   - ``cloneList``: a copy of every source of the listed ``kinds`` in
     ``cloneList.namespace`` (matching ``selector``) into ``namespace``;
   with Kyverno's labels (``app.kubernetes.io/managed-by: kyverno``,
   ``generate.kyverno.io/policy-name`` ...). An object that already exists is
   left alone unless ``synchronize`` is set (then it is generated again), and
   a self-clone is skipped. Sources and existing objects are looked up in
   `ScanContext.cluster` (`assertree.languages.kubernetes.cluster`).

If stage 2 fails (a clone source that does not exist, a variable that does
not resolve), Kyverno logs it and the rule stays PASS with nothing generated;
so does this, and the result's message says why. ``synchronize``,
``orphanDownstreamOnPolicyDelete`` and ``generateExisting`` only change what a
cluster does later (keep the copy in step, delete it with the policy, run on
existing triggers): they do not change what one trigger generates.

The result: PASS whose message lists what would be generated
(``would generate NetworkPolicy/team-a/default-deny``) and whose
`RuleResult.generated` holds the objects.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from assertree.languages.kubernetes.resources import resource_key
from assertree.languages.kyverno import bridge
from assertree.languages.kyverno.manifests import copy_json, to_float64
from assertree.languages.selectors import SelectorError
from assertree.results import ERROR, FAIL, PASS, SKIP, Resource, RuleError, RuleResult

if TYPE_CHECKING:
    from assertree.languages.base import RuleRunner, ScanContext
    from assertree.languages.kyverno.compile import CompiledKyvernoRule

__all__ = ["Generation", "describe", "generate_runner", "generated_resources"]

MANAGED_BY = ("app.kubernetes.io/managed-by", "kyverno")
_REMOVED_METADATA = ("uid", "selfLink", "creationTimestamp", "managedFields", "resourceVersion")


class GenerateProblem(Exception):
    """Why a rule that applies generates nothing (Kyverno logs it; the rule stays PASS)."""


@dataclass
class Generation:
    """What one trigger makes a rule generate; `skipped` are targets left alone, `problem` why nothing is."""

    resources: list[dict] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    problem: str | None = None
    unknown: list[str] = field(default_factory=list)  # clones whose source is not among the given resources

    def message(self) -> str:
        """``would generate KIND/ns/name, ...``, or why nothing would be."""
        if self.problem is not None:
            return f"would generate nothing: {self.problem}"
        parts = []
        if self.resources or self.unknown:
            parts.append("would generate " + ", ".join([*(describe(item) for item in self.resources),
                                                         *self.unknown]))
        if self.skipped:
            parts.append("would leave " + ", ".join(self.skipped) + " as it is (it exists; synchronize is off)")
        return "; ".join(parts) or "would generate nothing"


def describe(resource: Any) -> str:
    """``KIND/namespace/name`` (``KIND/name`` without a namespace) of a generated resource; a cluster-scoped
    kind is named without one, as the cluster stores it (Kyverno's CLI may set one: ``generator.Apply(ns, ...)``)."""
    from assertree.languages.kubernetes.resources import is_namespaced

    if not isinstance(resource, dict):
        return "?"
    metadata = _dict(resource.get("metadata"))
    namespace = metadata.get("namespace") if is_namespaced(resource.get("apiVersion"), resource.get("kind")) else None
    return "/".join(str(part) for part in (resource.get("kind"), namespace, metadata.get("name")) if part)


def generate_runner(compiled: CompiledKyvernoRule, context: ScanContext) -> RuleRunner:
    """The function that runs a ``generate`` rule on one trigger (see the module docstring)."""

    def run(resource: Resource) -> RuleResult | None:
        if not isinstance(resource.value, dict):
            return None
        value = to_float64(resource.value)
        applied = _applies(compiled, value, context)
        if applied is None or isinstance(applied, RuleResult):
            if applied is not None:
                applied.resource = resource
            return applied
        generation = generated_resources(compiled, applied, context.cluster)
        return RuleResult(resource, compiled.policy, compiled.rule, PASS, identifier=resource_key(value),
                          message=generation.message(), generated=generation.resources, action="generate")

    return run


def _applies(compiled: CompiledKyvernoRule, value: dict, context: ScanContext) -> RuleResult | bridge.Session | None:
    """Stage 1: the session to generate in, a RuleResult that ends the rule here, or None (no result)."""
    policy, rule = compiled.policy, compiled.rule
    document = rule.document

    def stop(status: str, message: str, error: RuleError | None = None, exception: str | None = None) -> RuleResult:
        return RuleResult(Resource(value), policy, rule, status, identifier=resource_key(value), message=message,
                          error=error, exception=exception)

    try:
        session = bridge.session(policy, rule, value, context)
        if not bridge.selects(session):
            return None
        if session.operation == "DELETE":  # no new object to match; the old one matched: "delete the downstream"
            return stop(FAIL, "the trigger is deleted")
    except bridge.EvaluationProblem as problem:
        return stop(ERROR, str(problem), RuleError(str(problem), problem.path, problem.kind))
    exception = bridge.exception_for(policy, rule, session, context)
    if exception is not None:
        return stop(SKIP, f"rule is skipped due to policy exception {exception}", exception=exception)
    try:
        bridge.load_context(session, document.get("context") or [])
    except bridge.EvaluationProblem:
        return None  # Kyverno: "cannot add external data to the context", and no rule response
    try:
        met, why = bridge.conditions_met(document.get("preconditions"), session)
    except bridge.EvaluationProblem as problem:
        text = f"failed to evaluate conditions: {problem}"
        return stop(ERROR, text, RuleError(text, problem.path, problem.kind))
    if met:
        return session
    return stop(SKIP, "; ".join(part for part in ("preconditions not met", why) if part))


def generated_resources(compiled: CompiledKyvernoRule, session: bridge.Session, cluster: Any) -> Generation:
    """Stage 2: what the rule generates for the trigger of `session` (never raises for the rule's own faults)."""
    block = compiled.rule.document.get("generate") or {}
    generation = Generation()
    try:
        if block.get("foreach"):
            _foreach(compiled, session, block, cluster, generation)
        else:
            _generate(compiled, session, block, ("generate",), cluster, generation)
    except GenerateProblem as problem:
        return Generation(problem=str(problem))
    return generation


def _foreach(compiled: CompiledKyvernoRule, session: bridge.Session, block: dict, cluster: Any,
             generation: Generation) -> None:
    problems = []
    for position, loop in enumerate(block.get("foreach") or []):
        if not isinstance(loop, dict):
            continue
        try:
            elements = bridge.evaluate_list(str(loop.get("list") or ""), session)
        except bridge.EvaluationProblem as problem:
            problems.append(f"failed to evaluate {position} foreach list: {problem}")
            continue
        bridge.begin_elements(session)
        try:
            for index, element in enumerate(elements):
                if element is None:
                    continue
                bridge.enter_element(session, element, index, 0, None)
                try:
                    bridge.load_context(session, loop.get("context") or [])
                    met, _ = bridge.conditions_met(loop.get("preconditions"), session)
                except bridge.EvaluationProblem as problem:
                    problems.append(f"failed to process {index} element: {problem}")
                    continue
                if not met:
                    continue
                try:
                    _generate(compiled, session, loop, ("generate", "foreach", position), cluster, generation)
                except GenerateProblem as problem:
                    problems.append(f"failed to process {index} element: {problem}")
        finally:
            bridge.end_elements(session)
    if problems:
        raise GenerateProblem("; ".join(problems))


def _generate(compiled: CompiledKyvernoRule, session: bridge.Session, block: dict, path: tuple, cluster: Any,
              generation: Generation) -> None:
    """One generate pattern (the rule's, or a foreach element's): substituted, then data, clone or cloneList."""
    pattern = {key: value for key, value in block.items()
               if key in ("apiVersion", "kind", "name", "namespace", "data", "clone", "cloneList")}
    try:
        pattern = bridge.substitute(pattern, session, path)
    except bridge.EvaluationProblem as problem:
        raise GenerateProblem(f"variable substitution failed: {problem}") from None
    if not isinstance(pattern, dict):
        raise GenerateProblem("the generate pattern is not a mapping")
    target = _spec(pattern.get("apiVersion"), pattern.get("kind"), pattern.get("namespace"), pattern.get("name"))
    synchronize = bool((compiled.rule.document.get("generate") or {}).get("synchronize"))
    clone = _dict(pattern.get("clone"))
    clone_list = _dict(pattern.get("cloneList"))
    if clone.get("name"):
        source = _spec(target[0], target[1], clone.get("namespace"), clone.get("name"))
        pairs = [(target, source)]
    elif clone_list.get("kinds"):
        pairs = _clone_list(clone_list, target[2], cluster)
    else:
        data = pattern.get("data")
        if data is None:
            return  # Kyverno: "data is nil - skipping update"
        if not isinstance(data, dict):
            raise GenerateProblem("generate.data must be a mapping")
        _add(compiled, session, target, copy_json(data), synchronize, cluster, generation)
        return
    for target_spec, source_spec in pairs:
        if source_spec[2] == target_spec[2] and source_spec[3] == target_spec[3]:
            continue  # Kyverno: "skip resource self-clone"
        if cluster is None:  # a scan: what would be cloned is known, not what it holds
            generation.unknown.append(f"{_text(target_spec)} (a clone of {_text(source_spec)}, not among the "
                                      "given resources)")
            continue
        found = cluster.find(*source_spec)
        if found is None:
            raise GenerateProblem(f"source resource {_text(source_spec)} not found")
        _add(compiled, session, target_spec, _cloned(found, target_spec[2]), synchronize, cluster, generation)


def _spec(api_version: Any, kind: Any, namespace: Any, name: Any) -> tuple[str, str, str, str]:
    return (str(api_version or ""), str(kind or ""), str(namespace or ""), str(name or ""))


def _text(spec: tuple[str, str, str, str]) -> str:
    return "/".join(part for part in (spec[1], spec[2], spec[3]) if part)


def _clone_list(clone_list: dict, namespace: str, cluster: Any) -> list[tuple[tuple, tuple]]:
    """(target, source) for every source a ``cloneList`` names (``manageCloneList``)."""
    if cluster is None:
        kinds = ", ".join(str(kind) for kind in clone_list.get("kinds") or [])
        raise GenerateProblem(f"cloneList copies the existing {kinds} of namespace "
                              f"{clone_list.get('namespace') or '(all)'} into {namespace or '(cluster)'}, and no "
                              "existing resources were given")
    source_namespace = str(clone_list.get("namespace") or "")
    selector = _dict(clone_list.get("selector")) or None
    pairs = []
    for entry in clone_list.get("kinds") or []:
        api_version, _, kind = str(entry).rpartition("/")
        try:
            sources = cluster.select(api_version, kind, source_namespace, selector)
        except SelectorError as error:
            raise GenerateProblem(f"cloneList.selector: {error}") from None
        for source in sources:
            metadata = source.get("metadata") or {}
            name = str(metadata.get("name") or "")
            source_spec = _spec(source.get("apiVersion"), source.get("kind"), metadata.get("namespace"), name)
            pairs.append((_spec(source.get("apiVersion"), source.get("kind"), namespace, name), source_spec))
    return pairs


def _cloned(source: dict, namespace: str) -> dict:
    """A copy of a clone source as Kyverno makes it (source labels added, server fields removed)."""
    copy = copy_json(source)
    metadata = copy.setdefault("metadata", {})
    group, _, version = str(copy.get("apiVersion") or "").rpartition("/")
    labels = dict(metadata.get("labels") or {})
    labels.update({"generate.kyverno.io/source-group": group, "generate.kyverno.io/source-version": version,
                   "generate.kyverno.io/source-kind": str(copy.get("kind") or ""),
                   "generate.kyverno.io/source-namespace": str(metadata.get("namespace") or ""),
                   "generate.kyverno.io/source-uid": str(metadata.get("uid") or "")})
    metadata["labels"] = labels
    if metadata.get("namespace", "") != namespace:
        metadata.pop("ownerReferences", None)
    for key in _REMOVED_METADATA:
        metadata.pop(key, None)
    return copy


def _add(compiled: CompiledKyvernoRule, session: bridge.Session, target: tuple[str, str, str, str], data: dict,
         synchronize: bool, cluster: Any, generation: Generation) -> None:
    """The object for `target` made from `data`, unless it exists and synchronize is off (``generate``)."""
    api_version, kind, namespace, name = target
    if cluster is not None and cluster.find(api_version, kind, namespace, name) is not None and not synchronize:
        generation.skipped.append(_text(target))
        return
    resource = data
    metadata = dict(_dict(resource.get("metadata")))
    metadata["name"] = name
    if namespace:
        metadata["namespace"] = namespace
    else:
        metadata.pop("namespace", None)
    if not resource.get("kind"):
        resource["kind"] = kind
    resource["apiVersion"] = api_version
    metadata["labels"] = _labels(metadata.get("labels"), compiled, session)
    resource["metadata"] = metadata
    generation.resources.append(_whole_numbers(resource))


def _labels(labels: Any, compiled: CompiledKyvernoRule, session: bridge.Session) -> dict:
    """The labels Kyverno puts on what it generates (``common.ManageLabels``)."""
    out = dict(labels) if isinstance(labels, dict) else {}
    trigger = _dict(session.request_resource)
    group, _, version = str(trigger.get("apiVersion") or "").rpartition("/")
    trigger_metadata = _dict(trigger.get("metadata"))
    out[MANAGED_BY[0]] = MANAGED_BY[1]
    out.update({
        "generate.kyverno.io/policy-name": compiled.policy.name,
        "generate.kyverno.io/policy-namespace": compiled.policy.namespace or "",
        "generate.kyverno.io/rule-name": compiled.rule.name,
        "generate.kyverno.io/trigger-version": version,
        "generate.kyverno.io/trigger-group": group,
        "generate.kyverno.io/trigger-kind": str(trigger.get("kind") or ""),
        "generate.kyverno.io/trigger-namespace": str(trigger_metadata.get("namespace") or ""),
        "generate.kyverno.io/trigger-uid": str(trigger_metadata.get("uid") or ""),
    })
    return out


def _dict(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def _whole_numbers(value: Any) -> Any:
    """`value` with whole floats as ints: Kyverno reads the trigger's numbers as float64, but writes ``3``."""
    convert: Callable[[Any], Any] = _whole_numbers
    if isinstance(value, dict):
        return {key: convert(item) for key, item in value.items()}
    if isinstance(value, list):
        return [convert(item) for item in value]
    if isinstance(value, float) and value.is_integer() and abs(value) < 2 ** 53:
        return int(value)
    return value
