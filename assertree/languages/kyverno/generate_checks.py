"""What Kyverno refuses in a ``generate`` rule when the policy is created (``api/kyverno/v1/common_types.go``).

``Generation.Validate`` and ``GeneratePattern.Validate``, per rule (and per
``foreach`` entry):

- one of ``data``, ``clone``, ``cloneList`` and ``foreach``;
- without ``cloneList``: ``apiVersion``, ``kind`` and ``name`` set;
- a namespaced kind needs ``namespace``, a cluster-scoped one must not have it;
- in a namespaced Policy: a namespaced kind, generated into (and cloned from)
  the policy's own namespace, literally (a ``{{ }}`` namespace is refused);
- ``cloneList``: kinds all namespaced or all cluster-scoped; a namespace for
  namespaced kinds, none for cluster-scoped ones (in a ClusterPolicy); in a
  Policy, namespaced kinds from its own namespace.

Kyverno asks the cluster which kinds are cluster-scoped. Offline,
`assertree.languages.kubernetes.resources.CLUSTER_SCOPED` knows the built-in
ones; a kind of another API group (a CRD) may be either, so the scope checks
leave it alone rather than refuse a policy a cluster would take. A Policy
written without ``metadata.namespace`` goes wherever it is applied, so the
checks against its namespace are skipped too. The spec-level
``generateExistingOnPolicyUpdate`` is refused as Kyverno refuses it
(``spec_types.go``: use ``generate.generateExisting``).

Kyverno refuses the whole policy. Public repositories still hold such rules
(a ``generate`` without ``apiVersion`` in open-cluster-management's policy
collection, written for an older release), so here each is a refusal of its own
rule (``policy.refused``: a warning naming the field, as for rules that cannot
run offline, `refusals`) and the other rules run.
"""

from __future__ import annotations

from typing import Any

from assertree.errors import Problem, Severity

__all__ = ["generate_problems"]

# API groups whose kinds are all known: those not in CLUSTER_SCOPED are namespaced
_BUILT_IN_GROUPS = frozenset({
    "", "admissionregistration.k8s.io", "apiextensions.k8s.io", "apiregistration.k8s.io", "apps",
    "authentication.k8s.io", "authorization.k8s.io", "autoscaling", "batch", "certificates.k8s.io",
    "coordination.k8s.io", "discovery.k8s.io", "events.k8s.io", "flowcontrol.apiserver.k8s.io",
    "networking.k8s.io", "node.k8s.io", "policy", "rbac.authorization.k8s.io", "resource.k8s.io",
    "scheduling.k8s.io", "storage.k8s.io",
})
CLUSTER, NAMESPACED = "cluster", "namespaced"


def generate_problems(document: dict) -> dict[int, Problem]:
    """For each generate rule of a ClusterPolicy/Policy `document` (schema-checked already) that Kyverno would
    refuse, by rule index: the first reason, a warning naming the field, the rule to be left out."""
    spec = document.get("spec") or {}
    namespaced = document.get("kind") == "Policy"
    metadata = _mapping(document.get("metadata"))
    namespace = metadata.get("namespace") if namespaced and isinstance(metadata.get("namespace"), str) else None
    out = {}
    for index, rule in enumerate(spec.get("rules") or []):
        generate = rule.get("generate") if isinstance(rule, dict) else None
        if not isinstance(generate, dict):
            continue
        found = _generation(generate, ("spec", "rules", index, "generate"), namespaced, namespace)
        if spec.get("generateExistingOnPolicyUpdate") is not None:
            found.insert(0, Problem("the deprecated spec.generateExistingOnPolicyUpdate (use "
                                    "generate.generateExisting)", path=("spec", "generateExistingOnPolicyUpdate")))
        if found:
            out[index] = Problem(f"rule {rule.get('name')!r} is not run: Kyverno refuses it: {found[0].message}",
                                 path=found[0].path, severity=Severity.WARNING)
    return out


def _generation(generate: dict, path: tuple, namespaced: bool, namespace: str | None) -> list[Problem]:
    present = [key for key in ("data", "clone", "cloneList", "foreach") if generate.get(key)]
    if len(present) > 1:
        return [Problem("only one of generate patterns(data, clone, cloneList and foreach) can be specified",
                        path=path)]
    if isinstance(generate.get("foreach"), list):
        return [problem for position, entry in enumerate(generate["foreach"]) if isinstance(entry, dict)
                for problem in _pattern(entry, (*path, "foreach", position), namespaced, namespace)]
    return _pattern(generate, path, namespaced, namespace)


def _pattern(pattern: dict, path: tuple, namespaced: bool, namespace: str | None) -> list[Problem]:
    out = []
    api_version, kind = _text(pattern.get("apiVersion")), _text(pattern.get("kind"))
    target_namespace = _text(pattern.get("namespace"))
    clone, clone_list = _mapping(pattern.get("clone")), _mapping(pattern.get("cloneList"))
    scope = _scope(api_version, kind)
    if namespaced:
        why = None
        if scope == CLUSTER:
            why = f"the target must be a namespaced resource: {api_version}/{kind}"
        elif namespace is not None and target_namespace != namespace:
            why = (f"a namespaced policy cannot generate resources in other namespaces, expected: {namespace}, "
                   f"received: {target_namespace}")
        elif namespace is not None and clone.get("name") and _text(clone.get("namespace")) != namespace:
            why = (f"a namespaced policy cannot clone resources from other namespaces, expected: {namespace}, "
                   f"received: {_text(clone.get('namespace'))}")
        if why is not None:
            out.append(Problem(f"target resource scope mismatched: {why}", path=(*path, "namespace")))
    if kind and scope == NAMESPACED and not target_namespace:
        out.append(Problem("target namespace must be set for a namespaced resource", path=(*path, "namespace")))
    if kind and scope == CLUSTER and target_namespace:
        out.append(Problem("target namespace must not be set for a cluster-wide resource", path=(*path, "namespace")))
    kinds = clone_list.get("kinds") if isinstance(clone_list.get("kinds"), list) else []
    if not kinds:
        for key in ("kind", "name", "apiVersion"):
            if not _text(pattern.get(key)):
                out.append(Problem(f"{key} can not be empty", path=(*path, key)))
        return out
    return out + _clone_list(clone_list, [_text(item) for item in kinds], (*path, "cloneList"), namespaced,
                             namespace)


def _clone_list(clone_list: dict, kinds: list[str], path: tuple, namespaced: bool,
                namespace: str | None) -> list[Problem]:
    out = []
    source_namespace = _text(clone_list.get("namespace"))
    scopes = [_selector_scope(kind) for kind in kinds]
    if namespaced:
        for kind, scope in zip(kinds, scopes, strict=True):
            if scope == CLUSTER:
                out.append(Problem(f"the source in cloneList must be a namespaced resource: {kind}",
                                   path=(*path, "kinds")))
        if namespace is not None and source_namespace != namespace:
            out.append(Problem(f"a namespaced policy cannot clone resources from other namespace, expected: "
                               f"{namespace}, received: {source_namespace}", path=(*path, "namespace")))
    if None in scopes:
        return out
    if len(set(scopes)) > 1:
        out.append(Problem("mixed scope of target resources is forbidden", path=(*path, "kinds")))
    elif scopes[0] == NAMESPACED and not source_namespace:
        out.append(Problem("namespace is required for namespaced target resources", path=(*path, "namespace")))
    elif scopes[0] == CLUSTER and not namespaced and source_namespace:
        out.append(Problem("namespace is forbidden for cluster-wide target resources", path=(*path, "namespace")))
    return out


def _scope(api_version: str, kind: str) -> str | None:
    """CLUSTER or NAMESPACED for a built-in kind; None when it cannot be known offline."""
    from assertree.languages.kubernetes.resources import CLUSTER_SCOPED

    group = api_version.rpartition("/")[0] if "/" in api_version else ""
    if not kind or "{{" in api_version or "{{" in kind or group not in _BUILT_IN_GROUPS:
        return None
    return CLUSTER if (group, kind) in CLUSTER_SCOPED else NAMESPACED


def _selector_scope(selector: str) -> str | None:
    """The scope of a ``cloneList.kinds`` entry (``v1/Secret``, ``rbac.authorization.k8s.io/v1/ClusterRole``,
    ``Secret``): a bare kind is cluster-scoped when a built-in kind of that name is (Kyverno's set holds bare
    kinds too)."""
    from assertree.languages.kubernetes.resources import CLUSTER_SCOPED
    from assertree.languages.kyverno.match import parse_kind_selector

    if "{{" in selector:
        return None
    group, _version, kind, _subresource = parse_kind_selector(selector)
    if group == "*":
        return CLUSTER if any(kind == known for _, known in CLUSTER_SCOPED) else NAMESPACED
    return _scope(f"{group}/v", kind)


def _mapping(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""
