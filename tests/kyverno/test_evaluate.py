"""The Kyverno rule runner and mutator: statuses, messages and order, one behaviour per test."""

from __future__ import annotations

import copy

import pytest

from assertree.languages.base import PolicyInfo, RuleInfo, ScanContext
from assertree.languages.kyverno.language import compile_document
from assertree.results import ERROR, FAIL, PASS, SKIP, WARN, Resource

POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "namespace": "default",
                                                       "labels": {"app": "web"}},
       "spec": {"containers": [{"name": "nginx", "image": "nginx:latest"},
                               {"name": "side", "image": "busybox:1.36"}]}}


def policy(*rules, annotations=None, spec=None):
    document = {"apiVersion": "kyverno.io/v1", "kind": "ClusterPolicy",
                "metadata": {"name": "p", "annotations": annotations or {}},
                "spec": {"rules": list(rules), **(spec or {})}}
    return compile_document(document)


def rule(name="r", kinds=("Pod",), **parts):
    return {"name": name, "match": {"any": [{"resources": {"kinds": list(kinds)}}]}, **parts}


def run(compiled, resource=POD, context=None, *, generated=False):
    """Results of the written rules (and of the autogen rules with `generated`), in rule order."""
    context = context or ScanContext()
    rules = [r for r in compiled.rules if generated or r.rule.autogen_of is None]
    return [r.runner(context)(Resource(copy.deepcopy(resource))) for r in rules]


def test_compiled_policy_is_the_engine_interface():
    compiled = policy(rule(validate={"pattern": {"metadata": {"name": "?*"}}}))
    assert isinstance(compiled.policy, PolicyInfo)
    assert all(isinstance(r.rule, RuleInfo) and callable(r.runner(ScanContext())) for r in compiled.rules)
    assert compiled.mutator(ScanContext()) is None


def test_pattern_pass_and_fail_with_kyverno_message():
    ok = policy(rule(validate={"message": "name required", "pattern": {"metadata": {"name": "?*"}}}))
    [result] = run(ok)
    assert (result.status, result.message) == (PASS, "validation rule 'r' passed.")
    bad = policy(rule(validate={"message": "no latest for {{ request.object.metadata.name }}",
                                "pattern": {"spec": {"containers": [{"image": "!*:latest"}]}}}))
    [result] = run(bad)
    assert result.status == FAIL
    assert result.message == ("validation error: no latest for web. rule r failed at path "
                              "/spec/containers/0/image/")


def test_rule_that_does_not_match_gives_no_result():
    compiled = policy(rule(kinds=("Deployment",), validate={"pattern": {"metadata": {"name": "?*"}}}))
    assert run(compiled) == [None]


def test_exclude_removes_the_resource():
    compiled = policy(rule(exclude={"any": [{"resources": {"names": ["web"]}}]},
                           validate={"pattern": {"metadata": {"name": "?*"}}}))
    assert run(compiled) == [None]


def test_preconditions_not_met_skip():
    compiled = policy(rule(preconditions={"all": [{"key": "{{ request.object.metadata.name }}",
                                                   "operator": "Equals", "value": "other"}]},
                           validate={"pattern": {"metadata": {"name": "?*"}}}))
    [result] = run(compiled)
    assert result.status == SKIP
    assert result.message.startswith("preconditions not met")


def test_conditional_anchor_not_met_skips():
    compiled = policy(rule(validate={"pattern": {"metadata": {"(name)": "other", "labels": {"team": "?*"}}}}))
    assert run(compiled)[0].status == SKIP


def test_deny_conditions_fail_with_substituted_message():
    compiled = policy(rule(validate={"message": "{{ request.object.metadata.name }} uses latest",
                                     "deny": {"conditions": {"any": [{
                                         "key": "{{ request.object.spec.containers[0].image }}",
                                         "operator": "Equals", "value": "*:latest"}]}}}))
    [result] = run(compiled)
    assert (result.status, result.message) == (FAIL, "web uses latest")


def test_empty_deny_denies():
    compiled = policy(rule(validate={"message": "always", "deny": {}}))
    assert run(compiled)[0].status == FAIL


def test_unresolved_variable_is_an_error():
    compiled = policy(rule(validate={"pattern": {"metadata": {"name": "{{ request.object.spec.missing }}"}}}))
    [result] = run(compiled)
    assert result.status == ERROR
    assert result.error is not None and result.error.kind == "variable"
    assert "variable substitution failed" in result.message


def test_any_pattern_passes_when_one_pattern_passes():
    compiled = policy(rule(validate={"anyPattern": [{"metadata": {"name": "x"}},
                                                    {"metadata": {"labels": {"app": "web"}}}]}))
    assert run(compiled)[0].status == PASS
    failing = policy(rule(validate={"message": "m", "anyPattern": [{"metadata": {"name": "x"}}]}))
    [result] = run(failing)
    assert result.status == FAIL
    assert result.message == "validation error: m. rule r[0] failed at path /metadata/name/"


def test_foreach_fails_on_the_first_failing_element():
    compiled = policy(rule(validate={"message": "no latest", "foreach": [{
        "list": "request.object.spec.containers",
        "deny": {"conditions": {"any": [{"key": "{{ element.image }}", "operator": "Equals",
                                         "value": "*:latest"}]}}}]}))
    [result] = run(compiled)
    assert result.status == FAIL
    assert result.message.startswith("validation failure: ")


def test_foreach_element_preconditions_and_pattern_on_the_element():
    compiled = policy(rule(validate={"foreach": [{
        "list": "request.object.spec.containers",
        "preconditions": {"all": [{"key": "{{ element.name }}", "operator": "Equals", "value": "side"}]},
        "pattern": {"image": "busybox:*"}}]}))
    assert run(compiled)[0].status == PASS


def test_foreach_with_no_applied_element_gives_no_result():
    compiled = policy(rule(validate={"foreach": [{
        "list": "request.object.spec.containers",
        "preconditions": {"all": [{"key": "{{ element.name }}", "operator": "Equals", "value": "none"}]},
        "pattern": {"image": "busybox:*"}}]}))
    assert run(compiled) == [None]


def test_context_variable_entries():
    entry = {"name": "count", "variable": {"jmesPath": "length(request.object.spec.containers)"}}
    deny = {"conditions": {"any": [{"key": "{{ count }}", "operator": "GreaterThan", "value": 1}]}}
    compiled = policy(rule(context=[entry], validate={"deny": deny}))
    assert run(compiled)[0].status == FAIL


def test_unscored_policy_failures_are_warnings():
    compiled = policy(rule(validate={"pattern": {"metadata": {"name": "other"}}}),
                      annotations={"policies.kyverno.io/scored": "false"})
    assert run(compiled)[0].status == WARN


def test_apply_rules_one_stops_after_the_first_result():
    compiled = policy(rule("a", validate={"pattern": {"metadata": {"name": "?*"}}}),
                      rule("b", validate={"pattern": {"metadata": {"name": "?*"}}}), spec={"applyRules": "One"})
    first, second = run(compiled)
    assert first.status == PASS and second is None


def test_autogen_rules_check_controllers():
    compiled = policy(rule(validate={"pattern": {"spec": {"containers": [{"image": "!*:latest"}]}}}))
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "namespace": "default"},
                  "spec": {"template": {"spec": {"containers": [{"name": "c", "image": "nginx:latest"}]}}}}
    results = {r.rule.name: r.status for r in run(compiled, deployment, generated=True) if r is not None}
    assert results == {"autogen-r": FAIL}


def test_policy_exception_skips_with_its_name():
    from assertree.languages.kyverno.bridge import parse_exceptions

    exception = {"apiVersion": "kyverno.io/v2", "kind": "PolicyException",
                 "metadata": {"name": "allow-web", "namespace": "ops"},
                 "spec": {"exceptions": [{"policyName": "p", "ruleNames": ["r"]}],
                          "match": {"any": [{"resources": {"kinds": ["Pod"], "names": ["web"]}}]}}}
    compiled = policy(rule(validate={"pattern": {"metadata": {"name": "other"}}}))
    [result] = run(compiled, context=ScanContext(exceptions=parse_exceptions([exception])))
    assert (result.status, result.exception) == (SKIP, "ops/allow-web")


@pytest.mark.parametrize(("patch", "status", "label"), [
    ({"patchStrategicMerge": {"metadata": {"labels": {"+(team)": "core"}}}}, PASS, "core"),
    ({"patchStrategicMerge": {"metadata": {"labels": {"+(app)": "other"}}}}, SKIP, None),
    ({"patchesJson6902": "- op: add\n  path: /metadata/labels/team\n  value: json"}, PASS, "json"),
])
def test_mutator_patches_and_reports_each_rule(patch, status, label):
    compiled = policy(rule("m", mutate=patch))
    mutator = compiled.mutator(ScanContext())
    patched, results = mutator(Resource(copy.deepcopy(POD)))
    assert [(r.rule.name, r.status) for r in results] == [("m", status)]  # autogen rules do not select Pods
    assert patched.value["metadata"]["labels"].get("team") == label
    assert results[0].patched == patched.value
    assert POD["metadata"]["labels"] == {"app": "web"}


def test_mutate_foreach_patches_every_element():
    compiled = policy(rule("m", mutate={"foreach": [{
        "list": "request.object.spec.containers",
        "patchStrategicMerge": {"spec": {"containers": [{"name": "{{ element.name }}",
                                                         "imagePullPolicy": "Always"}]}}}]}))
    patched, [result] = compiled.mutator(ScanContext())(Resource(copy.deepcopy(POD)))
    assert result.status == PASS
    assert [c.get("imagePullPolicy") for c in patched.value["spec"]["containers"]] == ["Always", "Always"]


def test_mutate_foreach_element_context_and_preconditions():
    compiled = policy(rule("m", mutate={"foreach": [{
        "list": "request.object.spec.containers",
        "context": [{"name": "tag", "variable": {"jmesPath": "split(element.image, ':')[1]"}}],
        "preconditions": {"all": [{"key": "{{ tag }}", "operator": "Equals", "value": "latest"}]},
        "patchesJson6902": "- op: add\n  path: /spec/containers/{{ elementIndex }}/imagePullPolicy\n"
                           "  value: Always"}]}))
    patched, [result] = compiled.mutator(ScanContext())(Resource(copy.deepcopy(POD)))
    assert result.status == PASS
    assert [c.get("imagePullPolicy") for c in patched.value["spec"]["containers"]] == ["Always", None]


def test_mutate_substitution_failure_is_an_error():
    compiled = policy(rule("m", mutate={"patchStrategicMerge": {"metadata": {"labels": {
        "team": "{{ request.object.metadata.labels.team }}"}}}}))
    patched, [result] = compiled.mutator(ScanContext())(Resource(copy.deepcopy(POD)))
    assert result.status == ERROR
    assert "variable substitution failed" in result.message
    assert patched.value == POD
