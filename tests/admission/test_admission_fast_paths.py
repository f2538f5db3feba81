"""The admission fast path gives exactly what the general path gives.

`request_for` (assertree/languages/admission/activation.py) keeps the last requests it built, keyed by the
identity of the resource and of the context's inputs, and promises it "must never change a result". The
property holds it to `build_request` on random objects (Kubernetes kinds or not, with and without namespaces,
defaulted or not), checked repeatedly and interleaved, and a whole scan to the same scan with the cache
emptied before every request.
"""

from __future__ import annotations

from unittest.mock import patch

from admission_helpers import binding, compiled, vap
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assertree.engine.scan import scan
from assertree.languages.admission import activation, validating
from assertree.languages.base import ScanContext

KINDS = st.sampled_from([("v1", "Pod"), ("apps/v1", "Deployment"), ("v1", "Namespace"), ("v1", "Service"),
                         ("example.com/v1", "Widget"), (None, None)])
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.text(max_size=4))
OBJECTS = st.builds(
    lambda kind, name, namespace, extra: {
        **({"apiVersion": kind[0], "kind": kind[1]} if kind[1] else {}),
        "metadata": {"name": name, **({"namespace": namespace} if namespace else {})},
        "spec": {"containers": [{"name": "a", "image": "nginx"}], **extra}},
    KINDS, st.text("abc", min_size=1, max_size=3), st.one_of(st.none(), st.sampled_from(["default", "prod"])),
    st.dictionaries(st.sampled_from(["replicas", "ports", "x"]), SCALARS, max_size=2))
CONTEXTS = st.builds(lambda operation, defaults: ScanContext(operation=operation, kubernetes_defaults=defaults),
                     st.sampled_from(["CREATE", "UPDATE", "DELETE"]), st.booleans())
SETTINGS = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(st.lists(st.tuples(OBJECTS, CONTEXTS), min_size=1, max_size=4), st.integers(1, 3))
def test_kept_requests_are_the_built_ones(cases, rounds) -> None:
    for _ in range(rounds):
        for resource, context in cases:
            assert activation.request_for(resource, context) == activation.build_request(resource, context)


@SETTINGS
@given(st.lists(OBJECTS, min_size=1, max_size=5), CONTEXTS)
def test_a_scan_gives_the_same_results_without_the_kept_requests(resources, context) -> None:
    policies = compiled(
        vap("names", validations=[{"expression": "object.metadata.name != 'a'"}],
            matchConstraints={"resourceRules": [{"apiGroups": ["*"], "apiVersions": ["*"], "operations": ["*"],
                                                 "resources": ["*"]}]}), binding("names"),
        vap("namespaces", validations=[{"expression": "request.namespace == 'default'"}]), binding("namespaces"))

    def outcome(result) -> list:
        return [(result.policy.name, str(result.status), result.message) for result in result.results]

    fast = outcome(scan(resources, policies, context=context))
    with patch.object(validating, "request_for", activation.build_request):
        general = outcome(scan(resources, policies, context=context))
    assert fast == general
