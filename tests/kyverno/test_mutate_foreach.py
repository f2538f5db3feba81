"""mutate.foreach: Kyverno's loop (order, nesting, bindings, request.object updates) and its statuses.

The hooks here are stand-ins for the variables engine: ``list`` and ``{{ }}`` are evaluated with
assertree.jp against ``{"request": {"object": resource}}`` plus the loop bindings.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from assertree import jp
from assertree.languages.kyverno.mutate import ForEachHooks, apply_foreach
from assertree.results import Status

_VARIABLE = re.compile(r"\{\{\s*(.*?)\s*\}\}")


def _context(resource: dict, bindings: Any) -> dict:
    return {"request": {"object": resource}, **bindings}


def _evaluate_list(expression: str, resource: dict, bindings: Any) -> Any:
    return jp.compile(expression).search(_context(resource, bindings))


def _substitute(value: Any, resource: dict, bindings: Any) -> Any:
    if isinstance(value, dict):
        return {
            _substitute(key, resource, bindings): _substitute(item, resource, bindings) for key, item in value.items()
        }
    if isinstance(value, list):
        return [_substitute(item, resource, bindings) for item in value]
    if not isinstance(value, str):
        return value

    def replace(found: re.Match[str]) -> str:
        result = jp.compile(found.group(1)).search(_context(resource, bindings))
        if result is None:
            raise ValueError(f"variable {found.group(1)} could not be resolved")
        return str(result)

    return _VARIABLE.sub(replace, value)


def _preconditions(conditions: Any, resource: dict, bindings: Any) -> tuple[bool, str]:
    # stand-in: {"all": [{"key": "{{ expr }}", "operator": "Equals"|"NotEquals", "value": v}]}
    for condition in conditions.get("all", []):
        key = _substitute(condition["key"], resource, bindings)
        equal = key == condition["value"]
        if equal != (condition["operator"] == "Equals"):
            return False, "condition not met"
    return True, ""


HOOKS = ForEachHooks(evaluate_list=_evaluate_list, substitute=_substitute, preconditions=_preconditions)


def pod(*containers: dict) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "ns"},
        "spec": {"containers": list(containers)},
    }


A = {"name": "a", "image": "nginx"}
B = {"name": "b", "image": "busybox"}


def test_seed_json_patch_per_container_with_element_index() -> None:
    foreach = [
        {
            "list": "request.object.spec.containers",
            "patchesJson6902": (
                "- path: /spec/containers/{{elementIndex}}/securityContext\n  op: add\n"
                '  value: {"runAsNonRoot" : true}'
            ),
        }
    ]
    result = apply_foreach(foreach, pod(A, B), HOOKS)
    assert (result.status, result.message) == (Status.PASS, "mutated Pod/p in namespace ns")
    assert [c.get("securityContext") for c in result.resource["spec"]["containers"]] == [{"runAsNonRoot": True}] * 2


def test_seed_prepend_registry_keeps_container_order() -> None:
    # strategic merge patches run in reverse by default, so kyaml's "patched element first" restores the order
    foreach = [
        {
            "list": "request.object.spec.containers",
            "patchStrategicMerge": {
                "spec": {"containers": [{"name": "{{ element.name }}", "image": "registry.io/{{ element.image }}"}]}
            },
        }
    ]
    containers = apply_foreach(foreach, pod(A, B), HOOKS).resource["spec"]["containers"]
    assert containers == [{"name": "a", "image": "registry.io/nginx"}, {"name": "b", "image": "registry.io/busybox"}]


def test_ascending_order_with_strategic_merge_reverses_the_list() -> None:
    foreach = [
        {
            "list": "request.object.spec.containers",
            "order": "Ascending",
            "patchStrategicMerge": {"spec": {"containers": [{"name": "{{ element.name }}", "tty": True}]}},
        }
    ]
    containers = apply_foreach(foreach, pod(A, B), HOOKS).resource["spec"]["containers"]
    assert [c["name"] for c in containers] == ["b", "a"]


def test_descending_order_keeps_the_original_element_index() -> None:
    foreach = [
        {
            "list": "request.object.spec.containers",
            "order": "Descending",
            "patchesJson6902": (
                "- op: add\n  path: /metadata/annotations/order\n  value: '{{ element.name }}{{ elementIndex }}'"
            ),
        }
    ]
    result = apply_foreach(foreach, pod(A, B), HOOKS)
    assert result.resource["metadata"]["annotations"] == {"order": "a0"}  # a (index 0) is visited last


def test_nested_foreach_binds_outer_and_inner_elements() -> None:
    ports = [{"containerPort": 80}, {"containerPort": 443}]
    foreach = [
        {
            "list": "request.object.spec.containers",
            "foreach": [
                {
                    "list": "element.ports",
                    "patchesJson6902": (
                        "- op: add\n  path: /spec/containers/{{elementIndex0}}/ports/{{elementIndex1}}/name\n"
                        "  value: '{{ element0.name }}-{{ element1.containerPort }}'"
                    ),
                }
            ],
        }
    ]
    result = apply_foreach(foreach, pod({**A, "ports": ports}, B), HOOKS)
    assert result.status is Status.PASS
    assert [p["name"] for p in result.resource["spec"]["containers"][0]["ports"]] == ["a-80", "a-443"]


def test_preconditions_skip_elements() -> None:
    foreach = [
        {
            "list": "request.object.spec.containers",
            "preconditions": {"all": [{"key": "{{ element.image }}", "operator": "Equals", "value": "nginx"}]},
            "patchStrategicMerge": {
                "spec": {"containers": [{"name": "{{ element.name }}", "imagePullPolicy": "Always"}]}
            },
        }
    ]
    containers = apply_foreach(foreach, pod(A, B), HOOKS).resource["spec"]["containers"]
    assert containers == [{**A, "imagePullPolicy": "Always"}, B]


def test_nothing_to_do_is_a_skip() -> None:
    foreach = [
        {
            "list": "request.object.spec.containers",
            "preconditions": {"all": [{"key": "{{ element.image }}", "operator": "Equals", "value": "redis"}]},
            "patchesJson6902": "- op: add\n  path: /metadata/labels\n  value: {}",
        }
    ]
    result = apply_foreach(foreach, pod(A, B), HOOKS)
    assert (result.status, result.message, result.resource) == (Status.SKIP, "0 elements processed", pod(A, B))


def test_null_elements_are_skipped_and_a_single_value_is_one_element() -> None:
    foreach = [
        {
            "list": "[`null`, 'x']",
            "patchesJson6902": "- op: add\n  path: /metadata/labels/i{{elementIndex}}\n  value: '{{element}}'",
        },
        {"list": "'y'", "patchesJson6902": "- op: add\n  path: /metadata/labels/single\n  value: '{{element}}'"},
    ]
    assert apply_foreach(foreach, pod(A), HOOKS).resource["metadata"]["labels"] == {"i1": "x", "single": "y"}


def test_later_entries_see_the_resource_patched_by_earlier_ones() -> None:
    foreach = [
        {"list": "['c']", "patchesJson6902": "- op: add\n  path: /spec/containers/-\n  value: {name: c, image: redis}"},
        {
            "list": "request.object.spec.containers",
            "patchesJson6902": "- op: add\n  path: /metadata/labels/{{element.name}}\n  value: seen",
        },
    ]
    assert apply_foreach(foreach, pod(A), HOOKS).resource["metadata"]["labels"] == {"a": "seen", "c": "seen"}


def test_elements_of_one_entry_see_the_resource_as_it_was() -> None:
    # Kyverno resets the context per element: request.object is not updated between elements
    foreach = [
        {
            "list": "request.object.spec.containers",
            "patchesJson6902": (
                "- op: add\n  path: /metadata/labels/n\n"
                "  value: '{{ length(request.object.metadata.labels || `{}`) }}'"
            ),
        }
    ]
    assert apply_foreach(foreach, pod(A, B), HOOKS).resource["metadata"]["labels"] == {"n": "0"}


def test_list_errors() -> None:
    def broken(expression: str, resource: dict, bindings: Any) -> Any:
        raise ValueError("Unknown key")

    result = apply_foreach([{"list": "nope", "patchesJson6902": "[]"}], pod(A), ForEachHooks(evaluate_list=broken))
    assert (result.status, result.message) == (Status.ERROR, "failed to evaluate list nope: Unknown key: Unknown key")


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        (
            {"patchesJson6902": "- op: replace\n  path: /spec/nodeName\n  value: n"},
            (
                "failed to mutate elements: failed to patch resource: replace operation does not apply: "
                "doc is missing key: /spec/nodeName: missing value"
            ),
        ),
        (
            {"patchStrategicMerge": {"metadata": {"labels": {"x": "{{ element.missing }}"}}}},
            "failed to mutate elements: variable substitution failed: variable element.missing could not be resolved",
        ),
        ({}, "failed to mutate elements: empty mutate rule"),
        (
            {"foreach": [{"list": "['x']", "patchesJson6902": "- op: test\n  path: /kind\n  value: Job"}]},
            (
                "failed to mutate elements: failed to mutate elements: failed to patch resource: "
                "testing value /kind failed: test failed"
            ),
        ),
    ],
)
def test_element_errors_are_rule_errors(entry: dict, message: str) -> None:
    result = apply_foreach([{"list": "request.object.spec.containers", **entry}], pod(A), HOOKS)
    assert (result.status, result.message, result.resource) == (Status.ERROR, message, pod(A))


def test_preconditions_without_an_evaluator_are_an_error() -> None:
    hooks = ForEachHooks(evaluate_list=_evaluate_list)
    entry = {"list": "request.object.spec.containers", "preconditions": {"all": []}, "patchesJson6902": "[]"}
    assert apply_foreach([entry], pod(A), hooks).status is Status.ERROR


def test_context_entries_are_loaded_per_element() -> None:
    def load(entries: list, resource: dict, bindings: Any) -> dict:
        return {entry["name"]: f"{entry['variable']['value']}-{bindings['elementIndex']}" for entry in entries}

    hooks = ForEachHooks(evaluate_list=_evaluate_list, substitute=_substitute, load_context=load)
    foreach = [
        {
            "list": "request.object.spec.containers",
            "context": [{"name": "tag", "variable": {"value": "v"}}],
            "patchesJson6902": "- op: add\n  path: /metadata/labels/{{element.name}}\n  value: '{{tag}}'",
        }
    ]
    assert apply_foreach(foreach, pod(A, B), hooks).resource["metadata"]["labels"] == {"a": "v-0", "b": "v-1"}
