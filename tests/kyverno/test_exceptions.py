"""PolicyException selection (api/kyverno/v2 PolicyException, pkg/engine/utils/exceptions.go)."""

from __future__ import annotations

import pytest
import yaml

from assertree.errors import PolicyError
from assertree.languages.kyverno.autogen import compute_rules
from assertree.languages.kyverno.conditions import evaluate_conditions
from assertree.languages.kyverno.exceptions import (
    exempts,
    matching_exceptions,
    parse_exception,
    policy_key,
)
from assertree.languages.kyverno.variables import KyvernoContext, substitute_variables

POLICY = {"apiVersion": "kyverno.io/v1", "kind": "ClusterPolicy", "metadata": {"name": "disallow-host-namespaces"},
          "spec": {"rules": [{"name": "host-namespaces", "match": {"any": [{"resources": {"kinds": ["Pod"]}}]},
                              "validate": {"pattern": {"spec": {"=(hostPID)": False}}}}]}}
POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "important-tool-1", "namespace": "delta",
                                                        "labels": {"app": "tool"}}}
DEPLOYMENT = {"apiVersion": "apps/v1", "kind": "Deployment",
              "metadata": {"name": "important-tool", "namespace": "delta"}}

# The example of Kyverno's PolicyException documentation.
DOCS_EXCEPTION = yaml.safe_load("""
apiVersion: kyverno.io/v2
kind: PolicyException
metadata:
  name: delta-exception
  namespace: delta
spec:
  exceptions:
  - policyName: disallow-host-namespaces
    ruleNames:
    - host-namespaces
    - autogen-host-namespaces
  match:
    any:
    - resources:
        kinds:
        - Pod
        - Deployment
        namespaces:
        - delta
        names:
        - important-tool*
""")


def test_docs_exception_exempts_the_pod_and_the_deployment():
    exception = parse_exception(DOCS_EXCEPTION, "exception.yaml")
    assert exception.key == "delta/delta-exception"
    found = matching_exceptions([exception], policy=POLICY, rule="host-namespaces", resource=POD)
    assert found.exceptions == (exception,)
    assert found.message == "rule is skipped due to policy exceptionsdelta/delta-exception"
    assert exempts([exception], policy=POLICY, rule="autogen-host-namespaces", resource=DEPLOYMENT)
    other = {**POD, "metadata": {**POD["metadata"], "namespace": "prod"}}
    assert not exempts([exception], policy=POLICY, rule="host-namespaces", resource=other)


def test_rule_names_are_wildcards_and_autogen_names_are_not_implied():
    narrow = parse_exception({**DOCS_EXCEPTION, "spec": {**DOCS_EXCEPTION["spec"], "exceptions": [
        {"policyName": "disallow-host-namespaces", "ruleNames": ["host-namespaces"]}]}})
    assert narrow.contains("disallow-host-namespaces", "host-namespaces")
    assert not narrow.contains("disallow-host-namespaces", "autogen-host-namespaces")
    assert not narrow.contains("disallow-host-namespaces", "autogen-cronjob-host-namespaces")
    wide = parse_exception({**DOCS_EXCEPTION, "spec": {**DOCS_EXCEPTION["spec"], "exceptions": [
        {"policyName": "disallow-host-namespaces", "ruleNames": ["*host-namespaces"]}]}})
    for rule in compute_rules(POLICY):
        assert wide.contains("disallow-host-namespaces", rule["name"])
    assert not wide.contains("disallow-host-*", "host-namespaces")  # policy names are exact


def test_namespaced_policies_are_named_with_their_namespace():
    namespaced = {**POLICY, "kind": "Policy", "metadata": {"name": "p", "namespace": "team"}}
    assert policy_key(namespaced) == "team/p"
    assert policy_key(POLICY) == "disallow-host-namespaces"
    exception = parse_exception({**DOCS_EXCEPTION, "spec": {**DOCS_EXCEPTION["spec"], "exceptions": [
        {"policyName": "team/p", "ruleNames": ["*"]}]}})
    assert exempts([exception], policy=namespaced, rule="host-namespaces", resource=POD)
    assert not exempts([exception], policy={**namespaced, "metadata": {"name": "p", "namespace": "x"}},
                       rule="host-namespaces", resource=POD)


def _with_match(match: dict) -> dict:
    return {**DOCS_EXCEPTION, "spec": {**DOCS_EXCEPTION["spec"], "match": match}}


@pytest.mark.parametrize(("match", "exempt"), [
    ({"any": [{"resources": {"kinds": ["Pod"]}}]}, True),
    ({"any": [{"resources": {"kinds": ["Service"]}}, {"resources": {"namespaces": ["del*"]}}]}, True),
    ({"all": [{"resources": {"kinds": ["Pod"]}}, {"resources": {"selector": {"matchLabels": {"app": "tool"}}}}]},
     True),
    ({"all": [{"resources": {"kinds": ["Pod"]}}, {"resources": {"names": ["other"]}}]}, False),
    ({}, False),  # neither any nor all: nothing
    ({"any": [{}]}, False),  # an empty filter selects nothing
    ({"any": [{"resources": {"kinds": ["Pod"], "operations": ["DELETE"]}}]}, True),  # operations are not checked
    ({"any": [{"resources": {"kinds": ["Pod"], "namespaceSelector": {"matchLabels": {"env": "dev"}}}}]}, False),
    ({"any": [{"subjects": [{"kind": "User", "name": "alice"}]}]}, False),  # user info is always checked
])
def test_exception_match_blocks(match, exempt):
    exception = parse_exception(_with_match(match))
    assert exempts([exception], policy=POLICY, rule="host-namespaces", resource=POD) is exempt


def test_namespace_labels_and_user_info():
    exception = parse_exception(_with_match({"any": [
        {"resources": {"kinds": ["Pod"], "namespaceSelector": {"matchLabels": {"env": "dev"}}}}]}))
    assert exempts([exception], policy=POLICY, rule="host-namespaces", resource=POD, namespace_labels={"env": "dev"})
    by_user = parse_exception(_with_match({"any": [{"subjects": [{"kind": "User", "name": "alice"}]}]}))
    assert exempts([by_user], policy=POLICY, rule="host-namespaces", resource=POD,
                   request_info={"userInfo": {"username": "alice"}})


def test_delete_requests_use_the_old_object():
    exception = parse_exception(DOCS_EXCEPTION)
    assert exempts([exception], policy=POLICY, rule="host-namespaces", resource=None, old_resource=POD)


# -- conditions: the caller's evaluator ------------------------------------------------------------------------

CONDITIONS = {"any": [{"key": "{{ request.object.metadata.labels.app || '' }}", "operator": "Equals",
                       "value": "tool"}]}


def test_conditions_go_through_the_evaluator():
    exception = parse_exception({**DOCS_EXCEPTION, "spec": {**DOCS_EXCEPTION["spec"], "conditions": CONDITIONS}})
    seen = []

    def decide(conditions):
        seen.append(conditions)
        return True

    assert exempts([exception], policy=POLICY, rule="host-namespaces", resource=POD, conditions=decide)
    assert seen == [CONDITIONS]
    assert not exempts([exception], policy=POLICY, rule="host-namespaces", resource=POD,
                       conditions=lambda conditions: False)


def test_a_failing_or_missing_evaluator_skips_the_exception_and_says_why():
    exception = parse_exception({**DOCS_EXCEPTION, "spec": {**DOCS_EXCEPTION["spec"], "conditions": CONDITIONS}})

    def broken(conditions):
        raise RuntimeError("variable not found")

    found = matching_exceptions([exception], policy=POLICY, rule="host-namespaces", resource=POD, conditions=broken)
    assert not found
    assert found.errors == ((exception, "failed to evaluate exception conditions: variable not found"),)
    missing = matching_exceptions([exception], policy=POLICY, rule="host-namespaces", resource=POD)
    assert missing.errors[0][1] == "no evaluator for the exception's conditions"


def test_conditions_with_the_kyverno_condition_evaluator():
    exception = parse_exception({**DOCS_EXCEPTION, "spec": {**DOCS_EXCEPTION["spec"], "conditions": CONDITIONS}})

    def decide_for(resource):
        context = KyvernoContext.for_cli(resource)
        return lambda conditions: evaluate_conditions(conditions, lambda raw: substitute_variables(raw, context)).passed

    assert exempts([exception], policy=POLICY, rule="host-namespaces", resource=POD, conditions=decide_for(POD))
    unlabelled = {**POD, "metadata": {"name": "important-tool-2", "namespace": "delta"}}
    assert not exempts([exception], policy=POLICY, rule="host-namespaces", resource=unlabelled,
                       conditions=decide_for(unlabelled))


# -- parsing -----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("change", "path"), [
    ({"apiVersion": "kyverno.io/v1"}, ()),
    ({"metadata": {}}, ("metadata", "name")),
    ({"spec": None}, ("spec",)),
    ({"spec": {"exceptions": {}}}, ("spec", "exceptions")),
    ({"spec": {"exceptions": [{"ruleNames": ["a"]}]}}, ("spec", "exceptions", 0, "policyName")),
    ({"spec": {"exceptions": [{"policyName": "p", "ruleNames": "a"}]}}, ("spec", "exceptions", 0, "ruleNames")),
    ({"spec": {"exceptions": [], "match": {"any": [{}], "all": [{}]}}}, ("spec", "match")),
])
def test_malformed_exceptions_are_located_errors(change, path):
    with pytest.raises(PolicyError) as caught:
        parse_exception({**DOCS_EXCEPTION, **change}, "exception.yaml")
    assert caught.value.path == path
    assert caught.value.source == "exception.yaml"


def test_v2beta1_is_accepted():
    assert parse_exception({**DOCS_EXCEPTION, "apiVersion": "kyverno.io/v2beta1"}).name == "delta-exception"
