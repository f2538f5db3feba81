"""A rule whose ``match`` reads only kinds selects exactly what its kind gate admits (`bridge.selects`' short cut).

`match.selects_by_kinds_alone` says when `rule_matches` can be answered from kinds alone; these hold that
to `rule_matches` itself, for any operation, name, namespace, labels, annotations and user info:

* on every ClusterPolicy/Policy rule of the vendored kyverno/policies and kyverno-cli data (and the rules
  autogen adds to them) and every kind they name, spelled as resources spell them;
* on random ``match`` and ``exclude`` blocks (any, all or the direct form; kinds with wildcards and
  subresources; names, namespaces, selectors, operations and subjects beside them);
* through `bridge.selects`, against the same session answered by `rule_matches`.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_kind_gate import KIND_ENTRIES, RULES, _filters, _spellings

from assertree.languages.kyverno import bridge
from assertree.languages.kyverno.kind_gate import kind_gate
from assertree.languages.kyverno.match import rule_matches, selects_by_kinds_alone
from assertree.languages.kyverno.model import KyvernoRule

REQUESTS = [None, {"roles": ["ns:admin"], "userInfo": {"username": "system:serviceaccount:ns:sa", "groups": ["g"]}}]
OPERATIONS = ("CREATE", "UPDATE")


def agrees(rule: dict, resource: dict) -> None:
    """When kinds alone decide, the gate's answer is `rule_matches`' for every operation and request."""
    if not selects_by_kinds_alone(rule):
        return
    gate = kind_gate(rule)
    assert gate is not None
    for operation in OPERATIONS:
        for request in REQUESTS:
            matched = rule_matches(rule, resource, operation=operation, request_info=request,
                                   old_resource=resource if operation == "UPDATE" else None).matched
            assert gate.admits(resource) == matched, (rule, resource, operation, request)


def _resource(api_version: str, kind: str, **metadata: Any) -> dict:
    return {"apiVersion": api_version, "kind": kind, "metadata": {"name": "a", "namespace": "default", **metadata}}


def test_kinds_alone_on_the_conformance_rules():
    kinds = {kind for rule in RULES for item in _filters(rule) for kind in item}
    alone = [rule for rule in RULES if selects_by_kinds_alone(rule)]
    assert len(alone) > 400 and len(alone) < len(RULES)  # the common case, and not every rule
    for rule in alone:
        for api_version, kind in _spellings(kinds):
            agrees(rule, _resource(api_version, kind, labels={"app": "x"}, annotations={"a": "b"}))


CRITERIA = st.fixed_dictionaries({}, optional={
    "kinds": st.lists(KIND_ENTRIES, max_size=3),
    "names": st.lists(st.sampled_from(["a", "b*"]), max_size=1),
    "name": st.sampled_from(["", "a", "z"]),
    "namespaces": st.lists(st.sampled_from(["default", "kube-*"]), max_size=1),
    "operations": st.sampled_from([[], ["CREATE"], ["UPDATE", "DELETE"]]),
    "selector": st.sampled_from([{}, {"matchLabels": {"app": "x"}}, {"matchLabels": {"app": "y"}}]),
    "annotations": st.sampled_from([{}, {"a": "*"}, {"a": "c"}]),
})
FILTER = st.fixed_dictionaries({}, optional={
    "resources": CRITERIA,
    "subjects": st.sampled_from([[], [{"kind": "Group", "name": "h"}], [{"kind": "Group", "name": "g"}]]),
    "roles": st.sampled_from([[], ["ns:admin"], ["ns:view"]]),
})
KINDS_FILTER = st.builds(lambda kinds, extra: {"resources": {"kinds": kinds, **extra}},
                        st.lists(KIND_ENTRIES, min_size=1, max_size=3),
                        st.sampled_from([{}, {"names": []}, {"selector": None}, {"operations": []}]))


def blocks(filters: st.SearchStrategy) -> st.SearchStrategy:
    return st.one_of(st.builds(lambda f: {"any": f}, st.lists(filters, max_size=3)),
                     st.builds(lambda f: {"all": f}, st.lists(filters, max_size=3)),
                     filters, st.just({}))


BLOCK = st.one_of(blocks(KINDS_FILTER), blocks(FILTER), blocks(st.one_of(KINDS_FILTER, FILTER)))
API_VERSIONS = st.sampled_from(["v1", "apps/v1", "batch/v1", "example.io/v1alpha1", "a/b/c", ""])
KINDS = st.sampled_from(["Pod", "Deployment", "CronJob", "Namespace", "Pox", ""])


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(BLOCK, st.one_of(st.none(), BLOCK), API_VERSIONS, KINDS, st.sampled_from(["a", "b", "kube-system"]))
def test_kinds_alone_on_random_blocks(match, exclude, api_version, kind, name):
    rule = {"name": "r", "match": match, **({} if exclude is None else {"exclude": exclude})}
    agrees(rule, _resource(api_version, kind, labels={"app": "x"}, annotations={"a": "b"}))
    agrees(rule, {**_resource(api_version, kind), "metadata": {"name": name, "namespace": name}})


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(BLOCK, API_VERSIONS, KINDS, st.sampled_from(["", "team"]), st.sampled_from(OPERATIONS))
def test_selects_answers_as_rule_matches(match, api_version, kind, policy_namespace, operation):
    """The short cut inside `bridge.selects`, against the general path on the same session."""
    rule = KyvernoRule("r", 0, {"name": "r", "match": match})
    resource = _resource(api_version, kind)
    scan = SimpleNamespace(values=None, operation=operation, user_info=None)
    policy = SimpleNamespace(name="p", namespace=policy_namespace)
    current = bridge.session(policy, rule, resource, scan)
    expected = rule_matches(rule.document, current.resource, operation=current.operation,
                            old_resource=current.old_resource, policy_namespace=policy_namespace).matched
    assert bridge.selects(current) == expected
