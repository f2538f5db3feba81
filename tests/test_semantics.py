"""Each semantic point of DESIGN.md, with a passing and a failing example.

Policies are written inline as YAML (as users write them) and run through the
engine; each test states the rule's status and, for failures, where.
"""

from __future__ import annotations

import textwrap

import pytest
import yaml

from assertree.engine.scan import scan
from assertree.errors import PolicyError
from assertree.languages.kyverno_json.compile import compile_policy
from assertree.languages.kyverno_json.model import policy_from_document


def policy(rule_yaml: str, **spec) -> object:
    rule = yaml.safe_load(textwrap.dedent(rule_yaml))
    document = {
        "apiVersion": "json.kyverno.io/v1alpha1",
        "kind": "ValidatingPolicy",
        "metadata": {"name": "p"},
        "spec": {"rules": [{"name": "r", **rule}], **spec},
    }
    model = policy_from_document(document)
    compile_policy(model)  # a policy error raises here, as when the policy is loaded
    return model


def run(rule_yaml: str, payload, bindings=None, **spec):
    """(status, [(check, field, body)]) of the rule on the payload; status None when skipped."""
    result = scan([payload], [policy(rule_yaml, **spec)], bindings)
    if not result.results:
        return None, []
    only = result.results[0]
    errors = [(v.check, e.field, e.body()) for v in only.violations for e in v.errors]
    return (only.error.message if only.status == "error" else only.status), errors


def check(tree_yaml: str, payload, bindings=None):
    indented = textwrap.indent(textwrap.dedent(tree_yaml), " " * 10)
    return run("assert:\n  all:\n  - check:\n" + indented, payload, bindings)


# -- key syntax ------------------------------------------------------------------------------


def test_plain_key_is_a_lookup():
    assert check("a: 1", {"a": 1}) == ("pass", [])
    assert check("a: 1", {"a": 2})[0] == "fail"


def test_projection_key_is_evaluated():
    assert check("(a + b): 3", {"a": 1, "b": 2}) == ("pass", [])
    assert check("(a + b): 4", {"a": 1, "b": 2})[1] == [
        ("spec.rules[0].assert.all[0]", "(a + b)", "Invalid value: 3: Expected value: 4")
    ]


def test_escaped_key_is_taken_literally():
    assert check("\\(a)\\: 1", {"(a)": 1, "a": 2}) == ("pass", [])
    assert check("\\(a)\\: 2", {"(a)": 1, "a": 2})[0] == "fail"


def test_foreach_binding_then_escape_order():
    """~name. is read first, then ->binding, then the escape: ~i.\\(x)\\->all binds the whole list."""
    tree = """
        ~i.\\(x)\\->all:
          (length($all)): 2
          ($i < `2`): true
    """
    assert check(tree, {"(x)": [1, 2]}) == ("pass", [])
    assert check(tree, {"(x)": [1, 2, 3]})[0] == "fail"


def test_key_that_is_not_a_string_is_a_plain_lookup():
    assert run("assert:\n  all:\n  - check:\n      1: one\n", {"1": "one"})[0] == "fail"  # int key 1 != "1"
    assert run("assert:\n  all:\n  - check:\n      '1': one\n", {"1": "one"}) == ("pass", [])


# -- map, slice and empty nodes -----------------------------------------------------------------


def test_empty_map_asserts_only_not_null():
    assert check("a: {}", {"a": "anything"}) == ("pass", [])
    assert check("a: {}", {"a": None})[1] == [
        ("spec.rules[0].assert.all[0]", "a", "Invalid value: null: invalid value, must not be null")
    ]


def test_missing_key_is_a_violation_not_an_error():
    assert check("a: {b: 1}", {"a": {"b": 1}}) == ("pass", [])
    assert check("a: {b: 1}", {"a": {}}) == (
        "fail", [("spec.rules[0].assert.all[0]", "a.b", "Required value: field not found in the input object")]
    )


def test_lookup_in_a_string_is_an_error():
    assert check("a: {b: 1}", {"a": "text"}) == ("a.b: Internal error: projection not recognized", [])


def test_slice_node_needs_same_length_and_checks_item_by_item():
    assert check("a: [1, {b: 2}]", {"a": [1, {"b": 2, "c": 3}]}) == ("pass", [])
    assert check("a: [1, 2]", {"a": [1, 2, 3]})[1] == [
        ("spec.rules[0].assert.all[0]", "a", "Invalid value: [1,2,3]: lengths of slices don't match")
    ]
    assert check("a: [1, 2]", {"a": [1, 3]})[1] == [
        ("spec.rules[0].assert.all[0]", "a[1]", "Invalid value: 3: Expected value: 2")
    ]


# -- foreach -------------------------------------------------------------------------------------


def test_foreach_over_list_binds_index():
    assert check("~i.a: {($i < `3`): true}", {"a": ["x", "y"]}) == ("pass", [])
    assert check("~i.a: {($i): 0}", {"a": ["x", "y"]})[1] == [
        ("spec.rules[0].assert.all[0]", "~i.a[1].($i)", "Invalid value: 1: Expected value: 0")
    ]


def test_foreach_over_map_binds_key():
    tree = "~k.labels:\n  (starts_with($k, 'app')): true"
    assert check(tree, {"labels": {"app/x": "1"}}) == ("pass", [])
    assert check(tree, {"labels": {"team/x": "1"}})[1] == [
        ("spec.rules[0].assert.all[0]", "~k.labels[team/x].(starts_with($k, 'app'))",
         "Invalid value: false: Expected value: true")
    ]


def test_foreach_over_a_scalar_is_an_error():
    assert check("~.a: 1", {"a": [1, 1]}) == ("pass", [])
    assert check("~.a: 1", {"a": "x"})[0] == '~.a: Invalid value: "x": expected a slice or a map'


# -- leaves ----------------------------------------------------------------------------------------


def test_expected_value_may_be_an_expression():
    """The expression is evaluated against the value at that node (here 1), with the bindings."""
    assert check("a: ($payload.b)", {"a": 1, "b": 1}) == ("pass", [])
    assert check("a: ($payload.b)", {"a": 1, "b": 2})[0] == "fail"
    assert check("a: (@ + `1`)", {"a": 1})[1] == [
        ("spec.rules[0].assert.all[0]", "a", "Invalid value: 1: Expected value: 2")
    ]


def test_expected_map_is_a_subset_match():
    assert check("a: '(`{\"x\": 1}`)'", {"a": {"x": 1, "y": 2}}) == ("pass", [])
    assert check("a: '(`{\"x\": 1}`)'", {"a": {"x": 2, "y": 2}})[0] == "fail"


def test_expected_list_is_element_wise_with_equal_length():
    assert check("a: (`[1, 2]`)", {"a": [1, 2]}) == ("pass", [])
    assert check("a: (`[1, 2]`)", {"a": [1, 2, 3]})[0] == "fail"


def test_numbers_compare_by_value():
    assert check("a: 4", {"a": 4.0}) == ("pass", [])
    assert check("a: 4", {"a": 4.5})[0] == "fail"


def test_booleans_are_not_numbers():
    assert check("a: true", {"a": True}) == ("pass", [])
    assert check("a: 1", {"a": True})[0] == "a: Internal error: types are not comparable, int64 - bool"
    assert check("(a == `1`): false", {"a": True}) == ("pass", [])


# -- bindings ---------------------------------------------------------------------------------------


def test_binding_is_visible_to_descendants():
    assert check("(a + b)->sum: {($sum): 3}", {"a": 1, "b": 2}) == ("pass", [])
    assert check("(a + b)->sum: {($sum): 4}", {"a": 1, "b": 2})[0] == "fail"


def test_descendant_shadows_without_affecting_ancestors():
    tree = """
        (a)->x:
          ($x + $x)->x:
            ($x): 2
          ($x): 1
    """
    assert check(tree, {"a": 1}) == ("pass", [])
    assert check(tree, {"a": 2})[0] == "fail"


def test_binding_does_not_leak_to_siblings():
    """A sibling key never sees a binding, whatever the key order (kyverno-json leaks, randomly)."""
    tree = """
        a->x: {}
        b:
          ($x): 1
    """
    status, _ = check(tree, {"a": 1, "b": 2})
    assert status == "b.($x): Internal error: variable not defined: $x"
    assert check("a->x: {($x): 1}\nb: 2", {"a": 1, "b": 2}) == ("pass", [])


# -- context ----------------------------------------------------------------------------------------


CONTEXT = """
context:
- name: first
  variable: (a)
- name: second
  variable: ($first + `1`)
- name: first
  variable: ($second * `10`)
assert:
  all:
  - check:
      ($first): 20
"""


def test_context_entries_run_in_order_and_may_redefine():
    assert run(CONTEXT, {"a": 1}) == ("pass", [])
    assert run(CONTEXT, {"a": 2})[0] == "fail"


def test_context_entries_are_lazy():
    rule = """
    context:
    - name: broken
      variable: (to_string(`1` / `0`))
    assert:
      all:
      - check:
          a: 1
    """
    assert run(rule, {"a": 1}) == ("pass", [])  # never used, never evaluated
    used = rule.replace("a: 1", "($broken): x")
    status, _ = run(used, {"a": 1})
    assert status.startswith("($broken): Internal error: spec.rules[0].context[0].variable: Internal error:")


def test_context_map_values_are_literals():
    """Only a top-level variable string is an expression; strings inside a map stay text."""
    rule = """
    context:
    - name: expected
      variable: {team: (team)}
    assert:
      all:
      - check:
          ($expected.team): \\(team)\\
    """
    assert run(rule, {"team": "x"}) == ("pass", [])
    top_level = rule.replace("variable: {team: (team)}", "variable: ($payload)")
    assert run(top_level, {"team": "x"})[0] == "fail"


# -- assert any/all, match, exclude --------------------------------------------------------------


ANY_ALL = """
assert:
  any:
  - check: {a: 1}
  - check: {a: 2}
  all:
  - check: {b: 1}
  - check: {c: 1}
"""


def test_assert_any_needs_one_all_reports_every_failure():
    assert run(ANY_ALL, {"a": 2, "b": 1, "c": 1}) == ("pass", [])
    status, errors = run(ANY_ALL, {"a": 2, "b": 2, "c": 2})
    assert status == "fail"
    assert [check_path for check_path, _, _ in errors] == ["spec.rules[0].assert.all[0]", "spec.rules[0].assert.all[1]"]


def test_assert_any_failing_reports_any_only():
    status, errors = run(ANY_ALL, {"a": 3, "b": 2, "c": 2})
    assert status == "fail"
    assert [check_path for check_path, _, _ in errors] == ["spec.rules[0].assert.any[0]", "spec.rules[0].assert.any[1]"]


def test_match_and_exclude_decide_whether_the_rule_applies():
    rule = """
    match:
      any:
      - kind: Pod
    exclude:
      any:
      - metadata: {name: skip-me}
    assert:
      all:
      - check: {ok: true}
    """
    assert run(rule, {"kind": "Pod", "metadata": {"name": "x"}, "ok": True}) == ("pass", [])
    assert run(rule, {"kind": "Pod", "metadata": {"name": "x"}, "ok": False})[0] == "fail"
    assert run(rule, {"kind": "Service", "ok": False}) == (None, [])
    assert run(rule, {"kind": "Pod", "metadata": {"name": "skip-me"}, "ok": False}) == (None, [])


def test_match_with_any_and_all_requires_both():
    rule = """
    match:
      any:
      - kind: Pod
      all:
      - metadata: {namespace: prod}
    assert:
      all:
      - check: {ok: true}
    """
    assert run(rule, {"kind": "Pod", "metadata": {"namespace": "prod"}, "ok": True}) == ("pass", [])
    assert run(rule, {"kind": "Pod", "metadata": {"namespace": "dev"}, "ok": True}) == (None, [])


# -- messages, identifiers, $policy/$rule/$payload, root -------------------------------------------


def test_message_substitutes_expressions_against_the_whole_resource():
    rule = """
    identifier: name
    assert:
      all:
      - message: "{{ name }} has {{ spec.count }}/{{ missing }} items"
        check:
          spec: {count: 1}
    """
    result = scan([{"name": "x", "spec": {"count": 2}}], [policy(rule)])
    violation = result.results[0].violations[0]
    assert violation.message == "x has ERR (spec.count not a string)/ERR (missing not found) items"
    assert result.results[0].identifier == "x"
    passing = scan([{"name": "x", "spec": {"count": 1}}], [policy(rule)])
    assert passing.results[0].violations == []


def test_policy_and_rule_are_json_documents():
    assert check("($policy.metadata.name): p\n($rule.name): r\n($payload.a): 1", {"a": 1}) == ("pass", [])
    assert check("($policy.metadata.name): q", {"a": 1})[0] == "fail"


def test_user_bindings_and_payload_builtin():
    assert check("($env): prod", {"a": 1}, bindings={"env": "prod"}) == ("pass", [])
    assert check("($env): prod", {"a": 1}, bindings={"env": "dev"})[0] == "fail"
    assert check("($payload.a): 1", {"a": 1}, bindings={"payload": "overridden"}) == ("pass", [])


def test_root_reference_is_the_value_being_evaluated():
    assert check("a: {($.b): 1}", {"a": {"b": 1}}) == ("pass", [])
    assert check("a: {($.b): 1}", {"a": {"b": 2}})[0] == "fail"


def test_numbers_are_numbers_everywhere():
    """kyverno-json's Go integers make (replicas == `3`) false; assertree compares by value."""
    assert check("(replicas == `3`): true", {"replicas": 3}) == ("pass", [])
    assert check("~i.items:\n  (add($i, `1`) > `0`): true", {"items": ["a"]}) == ("pass", [])
    assert check("(replicas == `3`): true", {"replicas": 4})[0] == "fail"


# -- load-time errors ---------------------------------------------------------------------------------


def test_invalid_expression_is_a_load_error_with_its_field_path():
    with pytest.raises(PolicyError) as caught:
        policy("assert:\n  all:\n  - check:\n      (foo[): 1\n")
    assert str(caught.value).startswith("spec.rules[0].assert.all[0].check.(foo[): invalid expression 'foo['")


def test_unknown_function_and_wrong_arity_are_load_errors():
    with pytest.raises(PolicyError, match=r"unknown function: nope\(\)"):
        policy("assert:\n  all:\n  - check:\n      (nope(@)): 1\n")
    with pytest.raises(PolicyError, match="expects 1 argument but 2 were supplied"):
        policy("assert:\n  all:\n  - check:\n      (length(@, @)): 1\n")


def test_results_follow_document_order():
    rule = """
    assert:
      all:
      - check: {z: 1, a: 1, m: 1}
    """
    _, errors = run(rule, {"z": 0, "a": 0, "m": 0})
    assert [field for _, field, _ in errors] == ["z", "a", "m"]
