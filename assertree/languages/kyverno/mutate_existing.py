"""``mutate.targets``: a rule triggered by one resource that patches other, existing resources.

Kyverno's mutate-existing handler (``pkg/engine/handlers/mutation/mutate_existing.go``
and ``load_targets.go``), as ``kyverno test`` runs it outside admission:
after the rule's own match, context and preconditions (`prelude`), each
``targets`` entry is resolved (``{{ }}`` variables substituted in its
apiVersion, kind, name, namespace and selector, against the trigger) and
looked up among the existing resources (`ScanContext.cluster`): a literal name
and namespace is a GET (a missing object is an ERROR: "not found"), anything
else a LIST filtered by wildcard name and namespace and by the label selector;
a namespaced Policy only ever sees its own namespace. Each target found is
set as ``target`` in the rule's context, gets the entry's own context entries
and preconditions (not met: SKIP), and is patched with the rule's patches
(`bridge.mutate`: strategic merge, JSON 6902 or ``foreach``). One result per
target: PASS with the patched target in `RuleResult.target` when it changed,
SKIP when it did not, ERROR when something failed. The trigger itself is never
changed.

Without existing resources (a scan: ``cluster`` is None), the targets cannot
be looked up: the rule gives one SKIP that names them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from assertree.languages.kyverno import bridge
from assertree.languages.kyverno.prelude import check_context_and_preconditions, enter_rule
from assertree.languages.kyverno.wildcard import contains_wildcard
from assertree.languages.kyverno.wildcard import match as wildcard_match
from assertree.languages.selectors import SelectorError
from assertree.results import ERROR, PASS, SKIP, Resource, RuleError, RuleResult

if TYPE_CHECKING:
    from assertree.languages.base import ScanContext
    from assertree.languages.kyverno.compile import CompiledKyvernoRule

__all__ = ["mutate_targets"]


class _TargetError(Exception):
    """A target entry that cannot be resolved or looked up (an ERROR result for the rule)."""


def mutate_targets(compiled: CompiledKyvernoRule, resource: Resource, current: Any,
                   context: ScanContext) -> list[RuleResult]:
    """The results of a ``mutate.targets`` rule triggered by `current` (the trigger, as mutated so far)."""
    policy, rule = compiled.policy, compiled.rule
    document = rule.document

    def result(status: str, message: str, target: Any = None, error: RuleError | None = None) -> RuleResult:
        return RuleResult(resource, policy, rule, status, message=message, error=error, patched=current,
                          target=target, action="mutate existing")

    entered = enter_rule(policy, rule, current, context, context=document.get("context") or [],
                         preconditions=document.get("preconditions"))
    if entered.stop is not None:
        stop = entered.stop
        found = result(stop.status, stop.message, error=stop.error)
        found.exception = stop.exception
        return [found]
    session = entered.session
    if session is None:
        return []
    mutate = document.get("mutate") or {}
    patches = {key: value for key, value in mutate.items() if key != "targets"}
    results: list[RuleResult] = []
    errors: list[str] = []
    for position, entry in enumerate(mutate.get("targets") or []):
        if not isinstance(entry, dict):
            continue
        try:
            spec = _resolve(entry, session, position)
            if context.cluster is None:
                results.append(result(SKIP, f"would mutate existing {_describe(spec)}: the existing resources are "
                                            "not known (give them with --target)"))
                continue
            targets = _lookup(context.cluster, spec, policy)
        except _TargetError as problem:
            errors.append(str(problem))
            continue
        for target in targets:
            results.append(_patch_target(entry, target, patches, session, result))
    if errors:
        text = "; ".join(errors)
        results.insert(0, result(ERROR, text, error=RuleError(text, ("mutate", "targets"))))
    return results


def _resolve(entry: dict, session: Any, position: int) -> dict:
    """The target selector with its variables substituted (``resolveSpec``)."""
    selector = {key: entry[key] for key in ("apiVersion", "kind", "name", "namespace", "selector", "uid")
                if entry.get(key) is not None}
    try:
        resolved = bridge.substitute(selector, session, ("mutate", "targets", position))
    except bridge.EvaluationProblem as problem:
        raise _TargetError(f"failed to substitute variables in target[{position}]: {problem}") from None
    return resolved if isinstance(resolved, dict) else {}


def _describe(spec: dict) -> str:
    where = "/".join(part for part in (str(spec.get("namespace") or ""), str(spec.get("name") or "*")) if part)
    return f"{spec.get('apiVersion', '')} {spec.get('kind', '')} {where}".strip()


def _lookup(cluster: Any, spec: dict, policy: Any) -> list[dict]:
    """The existing objects a resolved target selector names (``getTargets`` over ``dclient.GetResources``).

    apiVersion and kind are read as Kyverno's ``ParseKindSelector`` reads ``apiVersion/kind``: a version
    alone (``v1``) or ``*`` stands for any group, ``*`` for any version; the cluster is asked for any
    version then, and the answer filtered.
    """
    from assertree.languages.kyverno.match import parse_kind_selector

    api_version, kind = str(spec.get("apiVersion") or ""), str(spec.get("kind") or "")
    group, version, kind, _subresource = parse_kind_selector(f"{api_version}/{kind}" if api_version else kind)
    exact = "" if contains_wildcard(group) or contains_wildcard(version) else (
        f"{group}/{version}" if group else version)

    def wanted(item: dict) -> bool:
        their_group, _, their_version = str(item.get("apiVersion") or "").rpartition("/")
        return wildcard_match(group, their_group) and wildcard_match(version, their_version)

    namespace, name = str(spec.get("namespace") or ""), str(spec.get("name") or "")
    if getattr(policy, "namespace", None):
        namespace = policy.namespace
    selector = spec.get("selector") if isinstance(spec.get("selector"), dict) else None
    if namespace and name and not contains_wildcard(namespace) and not contains_wildcard(name):
        found = cluster.find(exact, kind, namespace, name)
        if found is None or not wanted(found):
            raise _TargetError(f'{kind.lower()}s "{name}" not found')
        return [found]
    out = []
    try:
        candidates = cluster.select(exact, kind, None, selector)
    except SelectorError as error:
        raise _TargetError(f"invalid target selector: {error}") from None
    for item in candidates:
        metadata = item.get("metadata") or {}
        their_namespace, their_name = str(metadata.get("namespace") or ""), str(metadata.get("name") or "")
        if not wanted(item):
            continue
        if namespace and not wildcard_match(namespace, their_namespace):
            continue
        if name and not wildcard_match(name, their_name):
            continue
        out.append(item)
    return out


def _patch_target(entry: dict, target: dict, patches: dict, session: Any, result: Any) -> RuleResult:
    from assertree.languages.kyverno.manifests import copy_json, to_float64

    context = session.context
    context.checkpoint()
    try:
        target = to_float64(copy_json(target))
        context.set_target(target)
        stop = check_context_and_preconditions(session, entry.get("context") or [], entry.get("preconditions"))
        if stop is not None:
            return result(stop.status, stop.message, error=stop.error)
        outcome = bridge.mutate(patches, session, target)
    finally:
        context.restore()
    status = str(outcome.status)
    if status == ERROR:
        return result(ERROR, outcome.message, error=RuleError(outcome.message, ("mutate",)))
    if status == PASS:
        return result(PASS, outcome.message, outcome.resource)
    return result(status, outcome.message)
