"""Explanations as data: what each language records for a failing or erroring result, and the bounds on it."""

from __future__ import annotations

import pytest
import yaml

from assertree.engine.explain import Explainer, reaches
from assertree.engine.scan import Scanner, scan
from assertree.explanation import ABSENT, MAX_ITEMS, MAX_STEPS, MAX_STRING, Step, Trace, active, bounded
from assertree.jp.values import to_display
from assertree.languages.base import ScanContext
from assertree.languages.cel.clauses import split_clauses
from assertree.languages.load import compile_document
from assertree.report.explain import explanation_lines, step_text
from assertree.results import Resource


def explained(policy: str, *resources: dict, context: ScanContext | None = None) -> list:
    """The results of scanning `resources` with the policy (YAML text), explained."""
    compiled = compile_document(yaml.safe_load(policy))
    context = context or ScanContext()
    context.explain = True
    return scan(list(resources), [compiled], context=context).results


def json_rule(rule: str) -> str:
    """A kyverno-json policy ``p`` with one rule ``r``, whose fields (after its name) are `rule`."""
    head = "apiVersion: json.kyverno.io/v1alpha1\nkind: ValidatingPolicy\nmetadata: {name: p}\nspec:\n  rules:\n"
    return f"{head}  - name: r\n{rule}"


def steps(result) -> list[tuple]:
    """(depth, what, outcome) of each step."""
    return [(step.depth, step.what, step.outcome) for step in result.explanation.steps]


# -- bounds ------------------------------------------------------------------------------------------------------


def test_small_values_are_kept_as_they_are():
    value = {"a": [1, 2.5, True, None, "x"], "b": {"c": "d"}}
    assert bounded(value) == value
    assert bounded(ABSENT) is ABSENT


def test_long_strings_and_large_containers_are_cut_down():
    assert bounded("x" * 1000) == "x" * MAX_STRING + f"... ({1000 - MAX_STRING} more characters)"
    items = bounded(list(range(1000)))
    assert items[:MAX_ITEMS] == list(range(MAX_ITEMS)) and items[-1] == f"... {1000 - MAX_ITEMS} more items"
    keys = bounded({f"k{n}": n for n in range(100)})
    assert len(keys) == MAX_ITEMS + 1 and keys["..."] == f"{100 - MAX_ITEMS} more keys"


def test_a_bounded_value_is_small_however_large_the_input():
    huge = {"spec": {"containers": [{"name": f"c{n}", "env": [{"name": f"E{m}", "value": "v" * 500}
                                                              for m in range(200)]} for n in range(200)]}}
    nested: dict = {}
    level = nested
    for _ in range(500):
        level["a"] = {}
        level = level["a"]
    for value in (huge, nested):
        assert len(to_display(bounded(value))) < 15_000


def test_a_value_that_is_not_json_becomes_its_text():
    assert bounded({1, 2}) in ("{1, 2}", "{2, 1}")


def test_a_trace_keeps_at_most_max_steps_and_counts_the_rest():
    trace = Trace()
    for number in range(MAX_STEPS + 7):
        trace.add(f"step {number}")
    assert len(trace.explanation.steps) == MAX_STEPS and trace.explanation.truncated and trace.full
    last = explanation_lines(trace.explanation)[-1]
    assert last == f"... (more steps left out: an explanation keeps at most {MAX_STEPS})"
    assert trace.explanation.as_dict()["truncated"] is True


def test_step_text():
    assert step_text(Step("image", "fail", value="nginx:latest", expected="*:*")) == \
        'image = "nginx:latest", expected "*:*" -> fail'
    assert step_text(Step("{{ a }} Equals b", "false", value="x", expected="b", operator="Equals")) == \
        '{{ a }} Equals b: "x" Equals "b" -> false'
    assert step_text(Step("team", "fail", detail="field not found")) == "team -> fail (field not found)"
    assert len(step_text(Step("v", value="y" * 10_000))) < 200


# -- kyverno-json trees --------------------------------------------------------------------------------------------

JSON_POLICY = """
apiVersion: json.kyverno.io/v1alpha1
kind: ValidatingPolicy
metadata: {name: pinned}
spec:
  rules:
  - name: images
    context:
    - name: limit
      variable: (`3`)
    - name: unused
      variable: (`4`)
    assert:
      all:
      - check:
          spec:
            replicas: ($limit)
            ~.containers:
              image:
                (ends_with(@, ':latest')): false
      - check:
          metadata:
            labels:
              team: {}
"""


def test_each_node_on_the_failing_path_with_its_value_and_what_it_expected():
    resource = {"metadata": {"labels": {"team": None}},
                "spec": {"replicas": 4, "containers": [{"image": "a:1"}, {"image": "b:latest"}]}}
    [result] = explained(JSON_POLICY, resource)
    assert steps(result) == [
        (0, "assert.all[0]", "fail"),
        (1, "spec", ""),
        (2, "replicas", "fail"),
        (2, "~.containers", ""),
        (3, "[1]", ""),
        (4, "image", ""),
        (5, "(ends_with(@, ':latest'))", "fail"),
        (0, "assert.all[1]", "fail"),
        (1, "metadata", ""),
        (2, "labels", ""),
        (3, "team", "fail"),
        (0, "context", ""),
        (1, "$limit", ""),
    ]
    by_what = {step.what: step for step in result.explanation.steps}
    assert (by_what["replicas"].value, by_what["replicas"].expected) == (4, 3)
    assert by_what["replicas"].detail == "expected is ($limit)"
    assert by_what["(ends_with(@, ':latest'))"].value is True and by_what["(ends_with(@, ':latest'))"].expected is False
    assert by_what["[1]"].resource_path == ("spec", "containers", 1)
    assert by_what["team"].detail == "must not be null" and by_what["team"].resource_path == (
        "metadata", "labels", "team")
    assert by_what["$limit"].value == 3  # `unused` was never computed: not listed
    assert by_what["spec"].policy_path == "spec.rules[0].assert.all[0].check.spec"
    assert [step.what for step in result.explanation.for_check("spec.rules[0].assert.all[1]")] == [
        "assert.all[1]", "metadata", "labels", "team"]


def test_missing_fields_slices_and_maps_traced_through_foreach():
    policy = json_rule("""
    assert:
      all:
      - check:
          ~.tags:
            (length(@)): 2
          ports: [80, 443]
          owner: {}
""")
    [result] = explained(policy, {"tags": {"a": "xy", "b": "xyz"}, "ports": [80]})
    assert steps(result) == [(0, "assert.all[0]", "fail"), (1, "~.tags", ""), (2, "[b]", ""),
                             (3, "(length(@))", "fail"), (1, "ports", "fail"), (1, "owner", "fail")]
    found = {step.what: step for step in result.explanation.steps}
    assert found["ports"].detail == "lengths of slices don't match: the tree has 2 items, the value 1"
    assert found["owner"].detail == "field not found in the input object"


def test_an_error_is_traced_to_the_node_that_raised_it_and_the_walk_stops():
    policy = json_rule("""
    assert:
      all:
      - check:
          a:
            (length(@)): 1
      - check:
          b: 1
""")
    [result] = explained(policy, {"a": 5, "b": 2})
    assert result.status == "error"
    assert steps(result) == [(0, "assert.all[0]", "error"), (1, "a", ""), (2, "(length(@))", "error")]
    assert reaches(result.explanation, "error")


def test_assert_any_traces_every_assertion_when_none_passed():
    policy = json_rule("""
    assert:
      any:
      - check: {a: 1}
      - check: {a: 2}
""")
    [result] = explained(policy, {"a": 3})
    assert steps(result) == [(0, "assert.any[0]", "fail"), (1, "a", "fail"), (0, "assert.any[1]", "fail"),
                             (1, "a", "fail")]


def test_an_error_in_a_match_tree_is_traced_there():
    policy = json_rule("""
    match:
      any:
      - ~.items: {kind: x}
    assert:
      all:
      - check: {a: 1}
""")
    [result] = explained(policy, {"items": 5, "a": 1})
    assert result.status == "error"
    assert steps(result) == [(0, "match.any[0]", "error"), (1, "~.items", "error")]
    assert result.explanation.steps[0].policy_path == "spec.rules[0].match.any[0]"


def test_cel_keys_are_split_into_their_clauses():
    pytest.importorskip("cel_expr_python")
    policy = """
apiVersion: json.kyverno.io/v1alpha1
kind: ValidatingPolicy
metadata: {name: p}
spec:
  compiler: cel
  rules:
  - name: r
    assert:
      all:
      - check:
          (object.replicas > 1 && object.replicas < 3 && object.name == 'x'): true
"""
    [result] = explained(policy, {"replicas": 5, "name": "x"})
    assert steps(result)[1:] == [(1, "(object.replicas > 1 && object.replicas < 3 && object.name == 'x')", "fail"),
                                 (2, "object.replicas > 1", "true"), (2, "&& object.replicas < 3", "false"),
                                 (2, "&& object.name == 'x'", "true")]


def test_an_explanation_of_a_huge_resource_is_bounded():
    resource = {"spec": {"replicas": 4, "containers": [{"image": f"img{n}:latest", "blob": "z" * 5000}
                                                       for n in range(5000)]},
                "metadata": {"labels": {}}}
    [result] = explained(JSON_POLICY, resource)
    explanation = result.explanation
    assert len(explanation.steps) == MAX_STEPS and explanation.truncated
    assert sum(len(to_display(step.value)) for step in explanation.steps) < MAX_STEPS * 15_000
    assert all(len(line) < 500 for line in explanation_lines(explanation))


# -- CEL clauses ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "split"), [
    ("a && b", ("&&", ["a", "b"])),
    ("a || b && c", ("||", ["a", "b && c"])),
    ("f(a && b) && 'x && y' == z", ("&&", ["f(a && b)", "'x && y' == z"])),
    ("object.?spec.orValue(1) > 2 && x", ("&&", ["object.?spec.orValue(1) > 2", "x"])),
    ("r'\\\\' == a || b", ("||", ["r'\\\\' == a", "b"])),
    ("'''x &&\n y''' == a && b", ("&&", ["'''x &&\n y''' == a", "b"])),
    ("a // and && b\n&& c", ("&&", ["a // and && b", "c"])),
    ("a ? b && c : d", None),
    ("a || b ? c : d", None),
    ("(a && b)", None),
    ("a", None),
    ("a && ", None),
    ("(a && b", None),
    ("'a && b", None),
])
def test_split_clauses(text, split):
    assert split_clauses(text) == split


# -- Kyverno ClusterPolicy -------------------------------------------------------------------------------------------

CLUSTER_POLICY = """
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: k}
spec:
  validationFailureAction: Enforce
  rules:
  - name: deny-big
    match: {any: [{resources: {kinds: [Deployment]}}]}
    preconditions:
      all:
      - key: "{{ request.operation }}"
        operator: NotEquals
        value: DELETE
    validate:
      message: too many replicas
      deny:
        conditions:
          any:
          - key: "{{ request.object.spec.replicas }}"
            operator: GreaterThan
            value: 3
          - key: "{{ request.object.metadata.name }}"
            operator: Equals
            value: forbidden
  - name: non-root
    match: {any: [{resources: {kinds: [Pod]}}]}
    validate:
      message: run as non-root
      pattern:
        spec:
          =(securityContext):
            runAsNonRoot: true
  - name: images
    match: {any: [{resources: {kinds: [Pod]}}]}
    validate:
      message: pin images
      foreach:
      - list: request.object.spec.containers
        pattern:
          image: "*:*"
  - name: any-of
    match: {any: [{resources: {kinds: [Pod]}}]}
    validate:
      message: name or label
      anyPattern:
      - metadata: {name: allowed}
      - metadata: {labels: {ok: "true"}}
"""

DEPLOYMENT = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "default"},
              "spec": {"replicas": 5}}
POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "namespace": "default"},
       "spec": {"securityContext": {"runAsNonRoot": False},
                "containers": [{"name": "a", "image": "a:1"}, {"name": "b", "image": "b"},
                               {"name": "c", "image": "c:2"}]}}


def kyverno_results(*resources: dict) -> dict:
    return {result.rule.name: result for result in explained(CLUSTER_POLICY, *resources)}


def test_conditions_with_their_key_and_value_after_substitution():
    result = kyverno_results(DEPLOYMENT)["deny-big"]
    assert result.status == "fail"
    assert steps(result) == [
        (0, "preconditions", "pass"),
        (1, "{{ request.operation }} NotEquals DELETE", "true"),
        (0, "deny.conditions", "fail"),
        (1, "{{ request.object.spec.replicas }} GreaterThan 3", "true"),
        (1, "{{ request.object.metadata.name }} Equals forbidden", "not evaluated"),
    ]
    [_, operation, deny, replicas, name] = result.explanation.steps
    assert (operation.value, operation.operator, operation.expected) == ("CREATE", "NotEquals", "DELETE")
    assert (replicas.value, replicas.operator, replicas.expected) == (5.0, "GreaterThan", 3)
    assert operation.policy_path == "spec.rules[0].preconditions.all[0]"
    assert deny.policy_path == "spec.rules[0].validate.deny.conditions"
    assert name.policy_path == "spec.rules[0].validate.deny.conditions.any[1]"


def test_a_pattern_gives_the_anchor_path_the_value_and_the_pattern():
    result = kyverno_results(POD)["non-root"]
    assert steps(result) == [(0, "pattern", "fail"), (1, "spec.=(securityContext).runAsNonRoot", "fail")]
    field = result.explanation.steps[1]
    assert (field.value, field.expected) == (False, True)
    assert field.resource_path == ("spec", "securityContext", "runAsNonRoot")
    assert field.detail == "at /spec/securityContext/runAsNonRoot/"


def test_a_foreach_keeps_only_the_element_that_decided():
    result = kyverno_results(POD)["images"]
    assert steps(result) == [(0, "foreach request.object.spec.containers", ""), (1, "element [1]", ""),
                             (2, "pattern", "fail"), (3, "image", "fail")]
    assert result.explanation.steps[3].resource_path is None  # the element's path, not the resource's


def test_any_pattern_gives_each_pattern_tried():
    result = kyverno_results(POD)["any-of"]
    assert steps(result) == [(0, "anyPattern", "fail"), (1, "anyPattern[0]", "fail"), (2, "metadata.name", "fail"),
                             (1, "anyPattern[1]", "fail"), (2, "metadata.labels", "fail")]
    name = result.explanation.steps[2]
    assert (name.value, name.expected) == ("web", "allowed")


def test_a_deny_without_conditions_says_it_denies_everything():
    policy = """
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: k}
spec:
  rules:
  - name: never
    match: {any: [{resources: {kinds: [Pod]}}]}
    validate:
      message: no pods
      deny: {}
"""
    [result] = explained(policy, POD)
    assert steps(result) == [(0, "deny", "fail")]
    assert result.explanation.steps[0].detail == "no conditions: every resource the rule selects is denied"


def test_a_variable_that_fails_before_any_condition_closes_with_the_result():
    policy = """
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: k}
spec:
  rules:
  - name: broken
    match: {any: [{resources: {kinds: [Pod]}}]}
    validate:
      message: "{{ nothing.here }}"
      pattern:
        metadata:
          name: "{{ nothing.here }}"
"""
    [result] = explained(policy, POD)
    assert result.status == "error"
    assert steps(result)[-1] == (0, "result", "error") and "variable substitution failed" in \
        result.explanation.steps[-1].detail


def test_hooks_record_nothing_during_a_scan():
    assert active() is None
    plain = scan([POD, DEPLOYMENT], [compile_document(yaml.safe_load(CLUSTER_POLICY))]).results
    assert [result.explanation for result in plain] == [None] * len(plain)


def test_validate_cel_variables_and_the_failing_expression_in_clauses():
    pytest.importorskip("cel_expr_python")
    policy = """
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: k}
spec:
  rules:
  - name: cel
    match: {any: [{resources: {kinds: [Deployment]}}]}
    validate:
      cel:
        variables:
        - name: replicas
          expression: object.spec.replicas
        expressions:
        - expression: variables.replicas >= 1
        - expression: variables.replicas <= 3 && object.metadata.name != 'web'
          message: at most three
"""
    [result] = explained(policy, DEPLOYMENT)
    assert steps(result) == [(0, "variables", ""), (1, "variables.replicas", ""),
                             (0, "expressions[0]: variables.replicas >= 1", "true"),
                             (0, "expressions[1]: variables.replicas <= 3 && object.metadata.name != 'web'", "false"),
                             (1, "variables.replicas <= 3", "false"), (1, "&& object.metadata.name != 'web'", "false")]
    assert result.explanation.steps[1].value == 5


def test_a_cel_validating_policy_variables_conditions_and_validations():
    pytest.importorskip("cel_expr_python")
    policy = """
apiVersion: policies.kyverno.io/v1
kind: ValidatingPolicy
metadata: {name: v}
spec:
  matchConstraints:
    resourceRules:
    - apiGroups: [apps]
      apiVersions: [v1]
      operations: [CREATE]
      resources: [deployments]
  matchConditions:
  - name: not-system
    expression: object.metadata.namespace != 'kube-system'
  variables:
  - name: count
    expression: object.spec.replicas
  validations:
  - expression: has(object.metadata.name)
  - expression: variables.count < 3 || object.metadata.name == 'big'
    message: too many
"""
    [result] = explained(policy, DEPLOYMENT)
    assert result.status == "fail"
    assert steps(result) == [(0, "variables", ""), (1, "variables.count", ""),
                             (0, "matchConditions not-system", "true"),
                             (0, "validations[0]: has(object.metadata.name)", "true"),
                             (0, "validations[1]: variables.count < 3 || object.metadata.name == 'big'", "false"),
                             (1, "variables.count < 3", "false"), (1, "|| object.metadata.name == 'big'", "false")]
    assert result.explanation.steps[-3].policy_path == "spec.validations[1].expression"


def test_pod_security_names_the_failing_checks():
    policy = """
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: psa}
spec:
  rules:
  - name: baseline
    match: {any: [{resources: {kinds: [Pod]}}]}
    validate:
      podSecurity: {level: baseline, version: latest}
"""
    pod = {**POD, "spec": {"hostNetwork": True, "containers": [{"name": "a", "image": "a:1"}]}}
    [result] = explained(policy, pod)
    assert steps(result) == [(0, "podSecurity baseline:latest", "fail")]
    assert "hostNetwork" in result.explanation.steps[0].detail


# -- the explainer ----------------------------------------------------------------------------------------------------


def test_a_scan_that_explains_nothing_runs_check_as_it_is():
    compiled = compile_document(yaml.safe_load(JSON_POLICY))
    assert Scanner([compiled]).check.__func__ is Scanner.check
    assert Scanner([compiled], context=ScanContext(explain=True)).check.__func__ is Scanner._check_explained


def test_an_explainer_that_fails_says_so_and_the_result_stands(monkeypatch):
    from assertree.languages.kyverno_json import explain as module

    def broken(rule, context):
        def explain(result):
            raise ValueError("boom")
        return explain

    monkeypatch.setattr(module, "explainer", broken)
    [result] = explained(JSON_POLICY, {"spec": {"replicas": 1, "containers": []}, "metadata": {"labels": {}}})
    assert result.status == "fail"
    text = step_text(result.explanation.steps[0])
    assert text == "explain -> error (could not explain this result: ValueError: boom)"


def test_only_failing_and_erroring_results_are_explained():
    resource = {"spec": {"replicas": 3, "containers": [{"image": "a:1"}]}, "metadata": {"labels": {"team": "x"}}}
    [result] = explained(JSON_POLICY, resource)
    assert result.status == "pass" and result.explanation is None


def test_the_explainer_can_be_used_on_results_after_a_scan():
    compiled = compile_document(yaml.safe_load(JSON_POLICY))
    [result] = scan([Resource({"spec": {"replicas": 1, "containers": []}, "metadata": {}})], [compiled]).results
    assert result.explanation is None
    Explainer(compiled.rules, ScanContext()).apply([result])
    assert steps(result)[0] == (0, "assert.all[0]", "fail")
