"""Admission policies are bounded as the apiserver bounds them (k8s.io/apiserver/pkg/apis/cel/config.go).

The apiserver stores a ValidatingAdmissionPolicy whatever its expressions cost (it has no estimated limit for
them) and cancels an evaluation past ``PerCallLimit``; the invocation's expressions share
``RuntimeCELCostBudget``, and running out of it is one error decision. Each error is then the policy's
``failurePolicy``'s to decide. A MutatingAdmissionPolicy's patches are held to the patch limits.
"""

from __future__ import annotations

import pytest
from admission_helpers import binding, compiled, map_, one, pod, run, vap
from hypothesis import given
from hypothesis import strategies as st

from assertree.engine.scan import scan
from assertree.languages.kubernetes import patches
from assertree.languages.kubernetes.defaults import _counterpart, _first_names
from assertree.languages.kubernetes.jsonpatch import MAX_GROWTH, MAX_OPERATIONS

HUNDRED = "[" + ",".join(str(i) for i in range(100)) + "]"
BILLIONS = f"{HUNDRED}.all(a, {HUNDRED}.all(b, {HUNDRED}.all(c, {HUNDRED}.all(d, true))))"  # 10^8 iterations
MILLIONS = f"true || {HUNDRED}.all(a, {HUNDRED}.all(b, {HUNDRED}.all(c, true)))"  # estimated at about 4 million


def test_an_expression_past_the_limit_on_any_input_loads_and_each_evaluation_is_its_error() -> None:
    result = one([vap(validations=[{"expression": BILLIONS}]), binding()], pod())
    assert result.status == "error"
    assert "CEL cost limit: the expression costs at least" in result.message
    assert result.message.startswith(f"expression '{BILLIONS}' resulted in error: ")
    assert result.error.path == ("spec", "validations", 0, "expression")
    ignored = one([vap(validations=[{"expression": BILLIONS}], failurePolicy="Ignore"), binding()], pod())
    assert ignored.status == "pass"


def test_the_expressions_of_one_invocation_share_a_budget_and_stop_when_it_is_spent() -> None:
    validations = [{"expression": MILLIONS} for _ in range(30)]
    result = one([vap(validations=validations), binding()], pod())
    assert result.status == "error"
    assert "CEL cost budget" in result.message
    assert result.message.endswith("no further expressions of this invocation were run")
    assert result.error.path[:2] == ("spec", "validations")  # one error: where the budget ran out
    fewer = one([vap(validations=validations[:5]), binding()], pod())
    assert fewer.status == "pass"  # each invocation has a budget of its own: this one is within it
    ignored = one([vap(validations=validations, failurePolicy="Ignore"), binding()], pod())
    assert ignored.status == "pass"


def test_match_conditions_have_a_budget_of_their_own() -> None:
    conditions = [{"name": f"c{i}", "expression": MILLIONS} for i in range(30)]
    result = one([vap(matchConditions=conditions, validations=[{"expression": "true"}]), binding()], pod())
    assert result.status == "error"
    assert "CEL cost budget" in result.message


def patch_mutation(operations: list[str]) -> dict:
    return {"patchType": "JSONPatch", "jsonPatch": {"expression": "[" + ", ".join(operations) + "]"}}


def test_a_mutating_policy_whose_copies_double_a_list_is_stopped_at_the_copy_limit() -> None:
    doubling = ["JSONPatch{op: 'copy', from: '/spec/containers', path: '/spec/containers/-'}"] * 40
    results = run([map_(mutations=[patch_mutation(doubling)]), binding("m", mutating=True)], [pod()])
    assert [str(found.status) for found in results] == ["error"]
    assert f"exceeding the limit {MAX_GROWTH}" in results[0].message


def test_a_json_patch_of_too_many_operations_is_refused() -> None:
    operations = [{"op": "test", "path": "/kind", "value": "Pod"}] * (MAX_OPERATIONS + 1)
    with pytest.raises(patches.MutationError, match="maximum operations"):
        patches.apply_json_patch(pod(), operations, strict=True)


def test_a_keyed_list_of_thousands_merges_by_key() -> None:
    containers = [{"name": f"c{i}", "image": "old"} for i in range(5000)]
    configuration = {"spec": {"containers": [{"name": f"c{i}", "image": "new"} for i in range(4999, -1, -1)]
                              + [{"name": "extra", "image": "new"}]}}
    merged = patches.apply_configuration(pod(containers=containers), configuration)
    assert [c["name"] for c in merged["spec"]["containers"]] == [f"c{i}" for i in range(5000)] + ["extra"]
    assert {c["image"] for c in merged["spec"]["containers"]} == {"new"}


def test_a_merge_too_deep_to_build_is_the_mutations_error() -> None:
    deep: dict = {}
    for _ in range(100_000):
        deep = {"a": deep}
    with pytest.raises(patches.MutationError, match="too large or too deeply nested"):
        patches.apply_configuration({"apiVersion": "v1", "kind": "ConfigMap", "data": deep}, {"data": deep})


KEYS = st.one_of(st.none(), st.integers(0, 3), st.sampled_from(["a", "b"]), st.booleans(),
                 st.lists(st.integers(0, 1), max_size=1))
ELEMENTS = st.lists(st.fixed_dictionaries({"name": KEYS}, optional={"v": st.integers(0, 3)}), max_size=8)


@given(ELEMENTS, ELEMENTS)
def test_the_keyed_index_finds_what_the_scan_finds(target: list, patch: list) -> None:
    """The fast path (an index of the keys) against the general one (each element looked for from the start),
    with keys that repeat, are missing, compare equal across types (1 and True) or cannot be hashed."""
    by_index = patches._keyed(target, patch, ("name",), None)
    by_scan = patches._keyed_by_scan(list(target), patch, ("name",), None)
    assert by_index == by_scan


NAMED = st.lists(st.one_of(st.fixed_dictionaries({}, optional={"name": KEYS, "v": st.integers(0, 3)}),
                           st.integers(0, 3)), max_size=8)


@given(NAMED, NAMED)
def test_the_counterpart_index_finds_what_the_scan_finds(defaulted: list, patched: list) -> None:
    """Taking a mutation's defaults out again finds each element's counterpart through an index of the names
    (a scan per element took minutes over a list of 20,000, found by the CEL fuzzer), held to the scan."""
    for index in range(len(patched)):
        assert _counterpart(defaulted, defaulted, patched, index, _first_names(defaulted)) == \
            _counterpart(defaulted, defaulted, patched, index, None)


def test_a_mutation_of_an_object_with_a_long_list_keeps_its_elements() -> None:
    """The fuzzer's case: a MutatingAdmissionPolicy on an object holding 20,000 items."""
    label = {"patchType": "JSONPatch", "jsonPatch": {"expression": (
        "[JSONPatch{op: 'add', path: '/metadata/labels', value: {'x': 'y'}}]")}}
    many = pod(containers=[{"name": f"c{i}", "image": "nginx"} for i in range(3)])
    many["items"] = [{"name": f"i{i}"} for i in range(20_000)]

    result = scan([many], compiled(map_(mutations=[label]), binding("m", mutating=True)))
    value = result.resources[0].value
    assert value["metadata"]["labels"] == {"x": "y"}
    assert value["items"] == many["items"]
