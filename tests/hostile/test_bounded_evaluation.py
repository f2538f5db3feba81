"""Kyverno patches, strategic merges, foreach, ``{{ }}`` substitution and JMESPath functions are bounded,
and running out of memory is never an internal error (issue 21, item 3).

Each hostile input here took gigabytes, minutes or ended in exit 3 before these limits. Complexity is
checked by counting the work done (calls of the element matcher), never by timing.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from assertree import jp
from assertree.jp.limits import MAX_BUILT
from assertree.languages.base import ScanContext
from assertree.languages.kubernetes.jsonpatch import MAX_GROWTH, MAX_OPERATIONS, PatchError
from assertree.languages.kyverno.language import compile_document
from assertree.languages.kyverno.mutate import apply_json6902, apply_patch
from assertree.languages.kyverno.mutate import merge as merge_module
from assertree.languages.kyverno.mutate.foreach import MAX_FOREACH_ELEMENTS, MAX_FOREACH_NESTING
from assertree.languages.kyverno.mutate.merge import MAX_GENERAL_ELEMENTS, MergeError, strategic_merge
from assertree.results import Resource, Status

ROOT = Path(__file__).resolve().parents[2]


def pod(containers: int = 2, **metadata: object) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default", **metadata},
            "spec": {"containers": [{"name": f"c{index}", "image": "nginx"} for index in range(containers)]}}


def cluster_policy(rule: dict) -> dict:
    return {"apiVersion": "kyverno.io/v1", "kind": "ClusterPolicy", "metadata": {"name": "hostile"},
            "spec": {"rules": [{"name": "r", "match": {"any": [{"resources": {"kinds": ["Pod"]}}]}, **rule}]}}


def validate(policy: dict, resource: dict) -> list:
    compiled = compile_document(policy)
    context = ScanContext()
    return [found for rule in compiled.rules if (found := rule.runner(context)(Resource(resource))) is not None]


def mutate(policy: dict, resource: dict) -> list:
    compiled = compile_document(policy)
    mutator = compiled.mutator(ScanContext())
    assert mutator is not None
    return mutator(Resource(resource))[1]


# ------------------------------------------------------------------ JSON patches


def test_forty_copies_that_double_a_list_stop_at_the_copy_limit():
    operations = [{"op": "copy", "from": "/spec/containers", "path": "/spec/containers/-"} for _ in range(40)]
    with pytest.raises(PatchError) as caught:  # 1.5 GB and past 20 s before
        apply_patch(pod(), operations)
    assert str(caught.value).startswith("Unable to complete the copy, the accumulated size increase of copy is ")
    assert str(caught.value).endswith(f"exceeding the limit {MAX_GROWTH}")


def test_a_copy_within_the_limit_still_works():
    patched = apply_patch(pod(), [{"op": "copy", "from": "/spec/containers/0", "path": "/spec/containers/-"}])
    assert patched["spec"]["containers"][-1] == {"name": "c0", "image": "nginx"}
    patched["spec"]["containers"][-1]["image"] = "changed"  # a copy, not a shared value
    assert patched["spec"]["containers"][0]["image"] == "nginx"


@pytest.mark.parametrize("path", ["/spec/tolerations/4000000000/key", "/metadata/x/900000000"])
def test_padding_a_list_to_a_far_index_is_refused(path):
    with pytest.raises(PatchError) as caught:  # [None] * 4,000,000,000 before: MemoryError
        apply_patch(pod(), [{"op": "add", "path": path, "value": "v"}])
    assert "padding" in str(caught.value) and str(MAX_GROWTH) in str(caught.value)


def test_a_patch_of_too_many_operations_is_refused():
    operations = [{"op": "add", "path": "/metadata/labels", "value": {}}] * (MAX_OPERATIONS + 1)
    result = apply_json6902(pod(), operations)
    assert result.status is Status.ERROR
    assert result.message == (f"failed to patch resource: the allowed maximum operations in a JSON patch is "
                               f"{MAX_OPERATIONS}, got {MAX_OPERATIONS + 1}")


def test_a_copy_bomb_in_a_policy_is_the_rules_error():
    patch = json.dumps([{"op": "copy", "from": "/spec/containers", "path": "/spec/containers/-"}] * 40)
    [result] = mutate(cluster_policy({"mutate": {"patchesJson6902": patch}}), pod())
    assert result.status == "error"
    assert "the accumulated size increase of copy" in result.message


# ------------------------------------------------------------------ strategic merge


def counted(monkeypatch) -> list[int]:
    calls = [0]
    original = merge_module._field_matches

    def matcher(*args):
        calls[0] += 1
        return original(*args)

    monkeypatch.setattr(merge_module, "_field_matches", matcher)
    return calls


def test_merging_5000_containers_by_name_takes_linear_work(monkeypatch):
    calls = counted(monkeypatch)
    resource = pod(5000)
    patch = {"spec": {"containers": [{"name": f"c{index}", "image": "patched"} for index in range(0, 5000, 2)]
                      + [{"name": "new", "image": "x"}]}}
    merged = strategic_merge(copy.deepcopy(resource), patch)
    containers = merged["spec"]["containers"]
    assert len(containers) == 5001
    assert containers[0] == {"name": "c0", "image": "patched"}
    assert containers[2500] == {"name": "new", "image": "x"}  # the patch's elements first (kyaml prepends)
    assert containers[2501] == {"name": "c1", "image": "nginx"}
    assert calls[0] == 0  # the element-by-element matcher: 12.5 million calls before (2,000 took 8 s)


def test_a_long_list_whose_keys_repeat_is_refused_rather_than_merged_in_quadratic_time():
    resource = pod(MAX_GENERAL_ELEMENTS)
    resource["spec"]["containers"].append({"name": "c0", "image": "twin"})
    with pytest.raises(MergeError) as caught:
        strategic_merge(resource, {"spec": {"containers": [{"name": "c1", "image": "x"}]}})
    assert str(caught.value).startswith(f"cannot merge a list of more than {MAX_GENERAL_ELEMENTS:,} elements")


# ------------------------------------------------------------------ foreach


def nested(depth: int, leaf: dict) -> dict:
    entry = {"list": "request.object.spec.containers", **leaf}
    for _ in range(depth - 1):
        entry = {"list": "request.object.spec.containers", "foreach": [entry]}
    return entry


DENY = {"deny": {"conditions": {"any": [{"key": "{{ element.name }}", "operator": "Equals", "value": "never"}]}}}
LABEL = {"patchStrategicMerge": {"metadata": {"labels": {"x": "{{ element.name }}"}}}}


def test_a_validate_foreach_nested_12_deep_over_6_items_is_the_rules_error():
    policy = cluster_policy({"validate": {"message": "m", "foreach": [nested(12, DENY)]}})
    [result] = validate(policy, pod(6))  # 6^12 elements before: no end
    assert result.status == "error"
    assert result.message == (f"failed to process foreach: foreach nested more than {MAX_FOREACH_NESTING} levels "
                              "deep, assertree's limit")


def test_a_validate_foreach_over_too_many_elements_is_the_rules_error():
    policy = cluster_policy({"validate": {"message": "m", "foreach": [nested(7, DENY)]}})
    [result] = validate(policy, pod(6))  # 279,936 elements
    assert result.status == "error"
    assert result.message == (f"failed to process foreach: foreach would visit more than {MAX_FOREACH_ELEMENTS:,} "
                              "elements in one rule, assertree's limit")
    [passed] = validate(policy, pod(3))  # 2,187 elements: within the limit
    assert passed.status == "pass"


@pytest.mark.parametrize(("depth", "containers", "limit"), [(12, 6, "nested more than"), (7, 6, "would visit more")])
def test_a_mutate_foreach_past_a_limit_is_the_rules_error(depth, containers, limit):
    [result] = mutate(cluster_policy({"mutate": {"foreach": [nested(depth, LABEL)]}}), pod(containers))
    assert result.status == "error"
    assert result.message.startswith("failed to mutate elements: foreach ")
    assert limit in result.message


# ------------------------------------------------------------------ {{ }} substitution


def test_a_value_that_brings_in_its_own_variable_twice_is_the_rules_error():
    annotation = "a{{ request.object.metadata.annotations.x }}{{ request.object.metadata.annotations.x }}"
    condition = {"key": "k{{ request.object.metadata.annotations.x }}", "operator": "Equals", "value": "never"}
    policy = cluster_policy({"validate": {"message": "m", "deny": {"conditions": {"any": [condition]}}}})
    [result] = validate(policy, pod(annotations={"x": annotation}))  # doubled at every round, forever, before
    assert result.status == "error"
    assert "once its variables are substituted, assertree's limit" in result.message \
        or "would rewrite more than" in result.message


def test_a_value_that_brings_in_its_own_variable_once_stops_after_the_round_limit():
    annotation = "a{{ request.object.metadata.annotations.x }}"
    condition = {"key": "k{{ request.object.metadata.annotations.x }}", "operator": "Equals", "value": "never"}
    policy = cluster_policy({"validate": {"message": "m", "deny": {"conditions": {"any": [condition]}}}})
    [result] = validate(policy, pod(annotations={"x": annotation}))
    assert result.status == "error"
    assert "variables substituted 100 times over in one string" in result.message


# ------------------------------------------------------------------ JMESPath


def test_a_projection_that_builds_a_long_string_per_item_is_stopped():
    text = "length(split(pad_left('', `1000`, ' '), '')[*].pad_left('', `10000000`, 'x'))"
    with pytest.raises(jp.LimitError) as caught:  # 10 GB before: each call is within the per-call limit
        jp.search(text, {})
    assert str(caught.value) == (f"pad_left(): the function calls of this evaluation would build more than "
                                 f"{MAX_BUILT:,} characters and items together, assertree's limit")


def test_only_searches_that_call_functions_open_a_budget(monkeypatch):
    """Fields, filters and comparisons build nothing the budget counts: their searches skip it (most of a scan's)."""
    import assertree.jp

    opened: list[str] = []
    real = assertree.jp.open_budget
    monkeypatch.setattr(assertree.jp, "open_budget", lambda: opened.append("opened") or real())
    data = {"a": [{"c": 2, "d": "x"}, {"c": 0, "d": "y"}]}
    assert jp.compile("a[?c > `1`].d | [0]").search(data) == "x"
    assert opened == []
    assert jp.compile("length(a[?c > `1`])").search(data) == 1
    assert opened == ["opened"]
    with pytest.raises(jp.LimitError):  # a call inside a projection is a call: still counted
        jp.compile("a[*].pad_left(d, `10000000`, 'x') | length(@)").search({"a": [{"d": "x"}] * 1000})


def test_context_entries_of_one_rule_share_the_budget():
    entries = [{"name": f"v{index}", "variable": {"jmesPath": "pad_left('', `9000000`, 'x')"}} for index in range(8)]
    condition = {"key": "{{ length(join('', [" + ", ".join(f"v{index}" for index in range(8)) + "])) }}",
                 "operator": "Equals", "value": 0}
    policy = cluster_policy({"context": entries, "validate": {"message": "m", "deny": {"conditions": {
        "any": [condition]}}}})
    [result] = validate(policy, pod())
    assert result.status == "error"
    assert "would build more than" in result.message


# ------------------------------------------------------------------ out of memory


def test_running_out_of_memory_outside_a_rule_is_one_line_and_exit_2(tmp_path):
    document = tmp_path / "big.yaml"
    document.write_text("items:\n" + "".join(f"- {{name: xxxxxxxxxxxxxxxxxxxx, value: {index}}}\n"
                                             for index in range(300_000)))
    code = textwrap.dedent(f"""
        import resource, sys
        pages = int(open("/proc/self/statm").read().split()[0])
        room = pages * resource.getpagesize() + 150 * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (room, resource.getrlimit(resource.RLIMIT_AS)[1]))
        from assertree.cli import main
        sys.exit(main(["jp", "query", "-i", {str(document)!r}, "length(items)"]))
    """)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=False,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert result.returncode == 2, result.stderr
    assert result.stderr == "assertree: error: out of memory: an input is too large to process here\n"
