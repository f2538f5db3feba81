"""What a kyverno-json policy says it reads of a resource, held to what it does.

`assertree.languages.kyverno_json.reads` lets ``scan --terraform`` leave a plan's ``resource_changes``
unbuilt when no policy can read ``change``. It is a short cut on what is checked: the property below
scans random policies (plain and ``(expression)`` keys, ``~`` loops, bindings, expression leaves,
``$payload`` deep inside, messages, identifiers, context entries, feedback) over random resources, and
requires that whenever a policy names the fields it reads, the scan of the resources cut down to those
fields reports exactly what the scan of the whole resources does. The examples name each way a policy
can reach past its keys.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st
from test_fast_paths import outcome

import assertree
from assertree.languages.base import fields_read_by

KEYS = ["kind", "type", "mode", "metadata", "change", "values"]
STRINGS = ["Pod", "managed", "create", "", "x"]

scalars = st.one_of(st.sampled_from(STRINGS), st.integers(-1, 1), st.booleans(), st.none())
json_values = st.recursive(
    scalars, lambda inner: st.one_of(st.lists(inner, max_size=2), st.dictionaries(st.sampled_from(KEYS), inner,
                                                                                   max_size=3)),
    max_leaves=8,
)
objects = st.dictionaries(st.sampled_from(KEYS), json_values, max_size=6)
full = st.fixed_dictionaries({key: json_values for key in KEYS})  # every key a tree may name is there
resources = st.one_of(full, full, objects, json_values)

# what may stand below a top-level key: literals, expressions on the value there, or on the whole resource
# reaching past the key ($payload) is one leaf in eight: else hardly a policy would name its fields
nested_leaves = st.one_of(
    scalars, st.sampled_from(["(@)", "(length(@) > `0`)", "(to_string(@))", "(kind)", "($kind_of)", "($kind_of)"]),
    scalars, st.sampled_from(["($payload.mode)", "($payload.type)"]),
)
nested_trees = st.recursive(
    nested_leaves,
    lambda inner: st.one_of(
        st.dictionaries(st.sampled_from([*KEYS, "(kind)", "~.(@)", "(@) -> seen", "($payload.mode)"]), inner,
                        min_size=1, max_size=2),
        st.lists(inner, max_size=2),
    ),
    max_leaves=3,
)
top_keys = st.sampled_from([*KEYS, *KEYS, "(kind)", "(metadata.name)", "~.values", "(change.actions)", "(values) -> v",
                            "(kind == 'Pod' && mode)", "(`1`)", "(@)", "($payload)"])
maps = st.dictionaries(top_keys, nested_trees, min_size=1, max_size=3)
flat = st.dictionaries(top_keys, nested_leaves, min_size=1, max_size=2)  # leaves every full resource reaches
trees = st.one_of(maps, flat, maps, st.sampled_from([{}, {"kind": "Pod"}, "(kind)", "(@)", "Pod", ["Pod"]]))
messages = st.sampled_from([None, None, "{{ kind }}", "{{ metadata.name }} is {{ change.actions[0] }}",
                            "{{ to_string(mode) }}", "{{ @ }}"])
expressions = st.sampled_from(["kind", "metadata.name", "change.actions", "to_string(values)", "to_string(mode)",
                               "to_string(type)", "@", "$payload.type"])


@st.composite
def policies(draw: st.DrawFn) -> dict:
    rules = []
    for number in range(draw(st.sampled_from([1, 1, 1, 2]))):
        rule: dict[str, Any] = {"name": f"rule-{number}", "assert": {"all": [
            {"check": draw(trees), **({"message": m} if (m := draw(messages)) else {})}
            for _ in range(draw(st.sampled_from([1, 1, 2])))]}}
        if draw(st.booleans()):
            rule["match"] = {"any": [draw(trees)]}
        if draw(st.integers(0, 3)) == 0:
            rule["exclude"] = {"any": [draw(trees)]}
        if draw(st.booleans()):
            rule["identifier"] = draw(expressions)
        if draw(st.integers(0, 2)) == 0:
            rule["context"] = [{"name": "kind_of", "variable": f"({draw(expressions)})"}]
        if draw(st.integers(0, 3)) == 0:
            rule["feedback"] = [{"name": "seen", "value": f"({draw(expressions)})"}]
        rules.append(rule)
    return {"apiVersion": "json.kyverno.io/v1alpha1", "kind": "ValidatingPolicy", "metadata": {"name": "p"},
            "spec": {"rules": rules}}


def cut(value: Any, fields: frozenset[str]) -> Any:
    """`value` with only `fields` (what a reader that builds only those gives)."""
    return {key: item for key, item in value.items() if key in fields} if isinstance(value, dict) else value


def compiled(document: dict) -> Any:
    return assertree.compile_document(document)


@example(policy={"apiVersion": "json.kyverno.io/v1alpha1", "kind": "ValidatingPolicy", "metadata": {"name": "p"},
                 "spec": {"rules": [{"name": "r", "assert": {"all": [{"check": {"kind": "($payload.mode)"}}]}}]}},
         values=[{"kind": "a", "mode": "a"}])  # the whole resource, below a key
@example(policy={"apiVersion": "json.kyverno.io/v1alpha1", "kind": "ValidatingPolicy", "metadata": {"name": "p"},
                 "spec": {"rules": [{"name": "r", "assert": {"all": [{"check": "(kind)"}]}}]}},
         values=[{"type": None}])  # an expression leaf compares the whole resource with its value
@example(policy={"apiVersion": "json.kyverno.io/v1alpha1", "kind": "ValidatingPolicy", "metadata": {"name": "p"},
                 "spec": {"rules": [{"name": "r", "context": [{"name": "kind_of", "variable": "(to_string(mode))"}],
                                     "assert": {"all": [{"check": {"kind": "($kind_of)"}}]}}]}},
         values=[{"kind": "1", "mode": 1}])  # a context entry reads the resource for the leaves that name it
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(policy=policies(), values=st.lists(resources, min_size=1, max_size=4))
def test_a_policy_reads_no_more_than_it_says(policy, values) -> None:
    policies_ = [compiled(policy)]
    fields = fields_read_by(policies_)
    event("reads any field" if fields is None else "names its fields")
    if fields is None:
        return
    whole = assertree.scan(values, policies_)
    partly = assertree.scan([cut(value, fields) for value in values], policies_)
    assert outcome(partly) == outcome(whole)


def rule(**parts: Any) -> dict:
    body = {"name": "r", "assert": {"all": [{"check": {"kind": "Pod"}}]}, **parts}
    return {"apiVersion": "json.kyverno.io/v1alpha1", "kind": "ValidatingPolicy", "metadata": {"name": "p"},
            "spec": {"rules": [body]}}


@pytest.mark.parametrize(("parts", "fields"), [
    ({}, {"kind"}),
    ({"match": {"any": [{"mode": "managed", "type": "aws_instance"}]}}, {"kind", "mode", "type"}),
    ({"assert": {"all": [{"check": {"values": {"(tags.Team)": "x", "~.(rules)": {"(@.port)": 22}}}}]}}, {"values"}),
    ({"assert": {"all": [{"check": {"(change.actions[0])": "create"}}]}}, {"change"}),
    ({"identifier": "address"}, {"kind", "address"}),
    ({"assert": {"all": [{"check": {"kind": "Pod"}, "message": "{{ address }} {{ name }}"}]}},
     {"kind", "address", "name"}),
    ({"context": [{"name": "team", "variable": "(values.tags.Team)"}],
      "assert": {"all": [{"check": {"kind": "($team)"}}]}}, {"kind", "values"}),
    ({"feedback": [{"name": "mode", "value": "(mode)"}]}, {"kind", "mode"}),
    ({"exclude": {"any": [{}]}}, {"kind"}),
])
def test_the_fields_a_policy_reads(parts, fields) -> None:
    assert compiled(rule(**parts)).fields_read() == frozenset(fields)


@pytest.mark.parametrize("parts", [
    {"assert": {"all": [{"check": {"kind": {"(@)": "($payload.change)"}}}]}},  # the whole resource, deep inside
    {"assert": {"all": [{"check": {"(@)": {"kind": "Pod"}}}]}},  # the resource itself as a value
    {"assert": {"all": [{"check": "(kind)"}]}},  # the resource compared with an expression's value
    {"assert": {"all": [{"check": ["Pod"]}]}},  # ... with a list
    {"assert": {"all": [{"check": {"kind": "Pod"}, "message": "{{ to_string(@) }}"}]}},
    {"identifier": "$payload.address"},
    {"context": [{"name": "all", "variable": "(@)"}]},
    {"feedback": [{"name": "all", "value": "(@)"}]},
    {"assert": {"all": [{"check": {"(object.kind)": "Pod"}}], "compiler": "cel"}},  # CEL: bindings reach anything
    {"assert": {"all": [{"check": {"kind": "(cel;bindings.resolve('payload').change)"}}]}},
])
def test_what_may_read_anything(parts) -> None:
    assert compiled(rule(**parts)).fields_read() is None
    assert fields_read_by([compiled(rule()), compiled(rule(**parts))]) is None


def test_a_language_that_does_not_say_may_read_anything() -> None:
    kyverno = assertree.compile_document({
        "apiVersion": "kyverno.io/v1", "kind": "ClusterPolicy", "metadata": {"name": "c"},
        "spec": {"rules": [{"name": "r", "match": {"any": [{"resources": {"kinds": ["Pod"]}}]},
                            "validate": {"pattern": {"metadata": {"name": "?*"}}}}]}})
    assert fields_read_by([compiled(rule()), kyverno]) is None
    assert fields_read_by([compiled(rule()), compiled(rule(identifier="name"))]) == {"kind", "name"}
