"""ValidatingAdmissionPolicy as the apiserver runs it: validations, messages, failure policy, bindings, params.

Expected outcomes follow k8s.io/apiserver/pkg/admission/plugin/policy/validating (validator.go, dispatcher.go)
and generic/policy_dispatcher.go (CollectParams).
"""

from __future__ import annotations

import json

import pytest
from admission_helpers import POD_RULES, binding, config_map, one, pod, run, vap

from assertree.languages.cel.functions.authz import DECISION_REASON


def checked(expression: str, resource: dict | None = None, **validation: str):
    return one([vap(validations=[{"expression": expression, **validation}]), binding()], resource or pod())


def test_a_true_validation_passes_and_a_false_one_fails_with_its_message() -> None:
    assert checked("object.metadata.name == 'web'").status == "pass"
    failed = checked("object.metadata.name == 'db'", message="the name must be db")
    assert failed.status == "fail"
    assert failed.message == "the name must be db"
    assert failed.violations[0].check == "spec.validations[0].expression"


@pytest.mark.parametrize(("validation", "message"), [
    ({}, "failed expression: false"),  # no message: the expression itself
    ({"message": "  static  "}, "static"),  # trimmed
    ({"message": "static", "messageExpression": "'dynamic: ' + object.metadata.name"}, "dynamic: web"),
    ({"message": "static", "messageExpression": "''"}, "static"),  # empty: falls back
    ({"message": "static", "messageExpression": "'two\\nlines'"}, "static"),  # a line break: falls back
    ({"message": "static", "messageExpression": "object.metadata.nope"}, "static"),  # an error: falls back
])
def test_the_message_of_a_failure(validation: dict, message: str) -> None:
    assert checked("false", **validation).message == message


def test_a_message_expression_longer_than_5_kb_falls_back() -> None:
    long = pod()
    long["metadata"]["annotations"] = {"long": "x" * 6000}
    result = one([vap(validations=[{"expression": "false", "message": "static",
                                    "messageExpression": "object.metadata.annotations.long"}]), binding()], long)
    assert result.message == "static"


def test_an_evaluation_error_is_an_error_unless_the_failure_policy_ignores_it() -> None:
    failing = {"expression": "object.spec.replicas > 1"}  # a Pod has no replicas: no such key
    result = one([vap(validations=[failing]), binding()], pod())
    assert result.status == "error"
    assert result.message.startswith("expression 'object.spec.replicas > 1' resulted in error: ")
    ignored = one([vap(validations=[failing], failurePolicy="Ignore"), binding()], pod())
    assert ignored.status == "pass"


def test_a_validation_that_is_not_a_bool_denies() -> None:
    assert checked("'yes'").status == "fail"


def test_every_validation_runs_and_each_failure_is_a_violation() -> None:
    policy = vap(validations=[{"expression": "false", "message": "one"}, {"expression": "true"},
                              {"expression": "false", "message": "three"}])
    result = one([policy, binding()], pod())
    assert [violation.message for violation in result.violations] == ["one", "three"]
    assert result.message == "one"


def test_match_conditions_skip_or_error() -> None:
    conditions = [{"name": "labelled", "expression": "has(object.metadata.labels)"},
                  {"name": "web", "expression": "object.metadata.name == 'web'"}]
    policy = vap(matchConditions=conditions, validations=[{"expression": "false"}])
    assert one([policy, binding()], pod(labels={"a": "b"})).status == "fail"
    skipped = one([policy, binding()], pod())
    assert (skipped.status, skipped.message) == ("skip", "match conditions are not met")
    erroring = vap(matchConditions=[{"name": "broken", "expression": "object.spec.replicas > 0"},
                                    {"name": "web", "expression": "object.metadata.name == 'web'"}],
                   validations=[{"expression": "true"}])
    assert one([erroring, binding()], pod()).status == "error"
    # a false condition wins over an error in another one
    assert one([erroring, binding()], pod("db")).status == "skip"


def test_variables_see_earlier_variables_and_a_failed_one_is_reported_where_it_is_read() -> None:
    policy = vap(variables=[{"name": "image", "expression": "object.spec.containers[0].image"},
                            {"name": "tagged", "expression": "variables.image.contains(':')"},
                            {"name": "broken", "expression": "object.spec.nothing"}],
                 validations=[{"expression": "variables.tagged"}, {"expression": "variables.broken == 1"}])
    result = one([policy, binding()], pod())
    assert result.status == "error"
    assert result.message.startswith("expression 'variables.broken == 1' resulted in error: variable 'broken': ")


def test_audit_annotations_are_published_as_feedback() -> None:
    policy = vap(validations=[{"expression": "true"}], auditAnnotations=[
        {"key": "image", "valueExpression": "object.spec.containers[0].image"},
        {"key": "empty", "valueExpression": "'  '"},
        {"key": "none", "valueExpression": "null"}])
    result = one([policy, binding()], pod())
    assert result.status == "pass"
    assert result.feedback == {"p/image": {"value": "nginx:1.27"}}


def test_an_audit_annotation_of_another_type_denies() -> None:
    policy = vap(validations=[{"expression": "true"}], auditAnnotations=[{"key": "n", "valueExpression": "1"}])
    result = one([policy, binding()], pod())
    assert result.status == "error"
    assert "Return type must be either string or null" in result.message


@pytest.mark.parametrize(("actions", "status"), [
    (["Deny"], "fail"), (["Warn"], "warn"), (["Audit"], "warn"), (["Warn", "Audit"], "warn"),
    (["Deny", "Audit"], "fail"),
])
def test_validation_actions(actions: list[str], status: str) -> None:
    result = one([vap(validations=[{"expression": "false"}]), binding(validationActions=actions)], pod())
    assert result.status == status
    if "Audit" in actions:
        failure = json.loads(result.feedback["validation.policy.admission.k8s.io/validation_failure"]["value"])
        assert failure == [{"message": "failed expression: false", "policy": "p", "binding": "p-binding",
                            "expressionIndex": 0, "validationActions": actions}]


def test_bindings_select_with_their_own_match_resources_and_each_binding_runs() -> None:
    policy = vap(validations=[{"expression": "object.metadata.name != 'web'", "message": "no web"}])
    only_db = binding(name="db-only", matchResources={"resourceRules": [{**POD_RULES[0], "resourceNames": ["db"]}]})
    assert one([policy, only_db], pod("web")) is None  # no binding selects it: the policy does not run
    warn = binding(name="warn", validationActions=["Warn"])
    deny = binding(name="deny", matchResources={"objectSelector": {"matchLabels": {"tier": "prod"}}})
    assert one([policy, warn, deny], pod("web")).status == "warn"
    result = one([policy, warn, deny], pod("web", labels={"tier": "prod"}))
    assert result.status == "fail"
    assert result.message == "no web (binding 'deny')"


def test_a_policy_without_a_binding_is_not_bound_unless_run_as_if_bound() -> None:
    policy = vap(validations=[{"expression": "false"}])
    result = one([policy], pod())
    assert result.status == "skip"
    assert result.message.startswith("not bound: no ValidatingAdmissionPolicyBinding names this policy")
    assert one([policy], pod(), run_unbound=True).status == "fail"
    assert one([policy], config_map("cm")) is None  # not selected at all: nothing to say


def test_the_policy_constraints_decide_before_any_binding() -> None:
    policy = vap(validations=[{"expression": "false"}],
                 matchConstraints={"resourceRules": POD_RULES, "excludeResourceRules": [
                     {**POD_RULES[0], "resourceNames": ["web"]}]})
    assert one([policy, binding()], pod("web")) is None
    assert one([policy, binding()], pod("db")).status == "fail"


def test_namespace_selectors_read_the_values_file_or_the_name_label() -> None:
    class Values:
        def namespace(self, name: str) -> dict | None:
            return {"metadata": {"name": name, "labels": {"env": "prod"}}} if name == "prod" else None

    selector = {"resourceRules": POD_RULES, "namespaceSelector": {"matchLabels": {"env": "prod"}}}
    policy = vap(validations=[{"expression": "namespaceObject.metadata.labels.env == 'prod'"}],
                 matchConstraints=selector)
    assert one([policy, binding()], pod(namespace="prod"), values=Values()).status == "pass"
    assert one([policy, binding()], pod(namespace="dev"), values=Values()) is None
    by_name = vap(validations=[{"expression": "true"}], matchConstraints={
        "resourceRules": POD_RULES,
        "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "kube-system"}}})
    assert one([by_name, binding()], pod(namespace="kube-system")).status == "pass"


def test_the_request_as_admission_policies_see_it() -> None:
    policy = vap(validations=[
        {"expression": "request.operation == 'CREATE' && request.namespace == 'default'"},
        {"expression": "request.kind.kind == 'Pod' && request.resource.resource == 'pods'"},
        {"expression": "!has(request.object) && oldObject == null"},
        {"expression": "object.metadata.namespace == 'default'"},  # what kubectl apply sends
        {"expression": "namespaceObject.metadata.name == 'default' && namespaceObject.status.phase == 'Active'"},
    ])
    assert one([policy, binding()], pod(namespace=None)).status == "pass"


def test_a_namespace_object_is_its_own_namespace_and_has_no_namespace_object() -> None:
    namespaces = [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["namespaces"]}]
    policy = vap(matchConstraints={"resourceRules": namespaces}, validations=[
        {"expression": "request.namespace == 'team-a' && namespaceObject == null"}])
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a"}}
    assert one([policy, binding()], namespace).status == "pass"


def test_update_and_delete_requests() -> None:
    policy = vap(matchConstraints={"resourceRules": [{**POD_RULES[0], "operations": ["*"]}]},
                 validations=[{"expression": "request.operation != 'DELETE' || (object == null && oldObject != null)"},
                              {"expression": "request.operation != 'UPDATE' || oldObject == object"}])
    for operation in ("CREATE", "UPDATE", "DELETE"):
        assert one([policy, binding()], pod(), operation=operation).status == "pass", operation


def test_the_authorizer_has_no_opinion() -> None:
    policy = vap(validations=[
        {"expression": "authorizer.requestResource.check('create').allowed()", "messageExpression":
         "'no: ' + string(object.metadata.name)"},
    ], auditAnnotations=[{"key": "reason", "valueExpression": "authorizer.path('/x').check('get').reason()"}])
    result = one([policy, binding()], pod())
    assert result.status == "fail"
    assert result.feedback["p/reason"] == {"value": DECISION_REASON}


def test_matching_follows_kubernetes_rules() -> None:
    apps = [{"apiGroups": ["apps"], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["deployments"]}]
    old_deployment = {"apiVersion": "extensions/v1beta1", "kind": "Deployment", "metadata": {"name": "d"}}
    equivalent = vap(matchConstraints={"resourceRules": apps}, validations=[{"expression": "false"}])
    assert one([equivalent, binding()], old_deployment).status == "fail"  # matchPolicy: Equivalent (default)
    exact = vap(matchConstraints={"resourceRules": apps, "matchPolicy": "Exact"}, validations=[{"expression": "false"}])
    assert one([exact, binding()], old_deployment) is None
    cluster_only = vap(matchConstraints={"resourceRules": [{**POD_RULES[0], "scope": "Cluster"}]},
                       validations=[{"expression": "false"}])
    assert one([cluster_only, binding()], pod()) is None


# ---- params (CollectParams) ----------------------------------------------------------------------

PARAM_KIND = {"apiVersion": "v1", "kind": "ConfigMap"}
LIMIT = {"expression": "size(object.spec.containers) <= int(params.data.max)", "messageExpression":
         "'at most ' + params.data.max + ' containers (' + params.metadata.name + ')'"}


def limited(**param_ref: str) -> list[dict]:
    return [vap(paramKind=PARAM_KIND, validations=[LIMIT]), binding(paramRef=param_ref)]


def two_containers(**metadata: str) -> dict:
    return pod(containers=[{"name": "a", "image": "x"}, {"name": "b", "image": "y"}], **metadata)


def test_params_by_name_in_the_request_namespace_or_the_given_one() -> None:
    params = (config_map("limits", max="1"), config_map("limits", namespace="other", max="5"))
    result = one(limited(name="limits", parameterNotFoundAction="Deny"), two_containers(), params=params)
    assert (result.status, result.message) == ("fail", "at most 1 containers (limits)")
    assert one(limited(name="limits", namespace="other", parameterNotFoundAction="Deny"), two_containers(),
               params=params).status == "pass"


def test_params_of_another_kind_are_not_candidates() -> None:
    secret = {**config_map("limits", max="1"), "kind": "Secret"}
    assert one(limited(name="limits", parameterNotFoundAction="Allow"), two_containers(), params=(secret,)) is None


def test_a_selector_runs_the_policy_once_per_param() -> None:
    params = (config_map("a", labels={"set": "limits"}, max="1"), config_map("b", labels={"set": "limits"}, max="5"),
              config_map("c", max="0"))
    result = one(limited(selector={"matchLabels": {"set": "limits"}}, parameterNotFoundAction="Deny"),
                 two_containers(), params=params)
    assert result.status == "fail"
    assert [violation.message for violation in result.violations] == [
        "at most 1 containers (a) (binding 'p-binding', params 'default/a')"]


@pytest.mark.parametrize(("action", "status"), [("Allow", None), ("Deny", "error"), (None, None)])
def test_params_not_found(action: str | None, status: str | None) -> None:
    reference = {"name": "missing", **({"parameterNotFoundAction": action} if action else {})}
    result = one(limited(**reference), two_containers(), params=(config_map("limits", max="1"),))
    assert (result.status if result else None) == status
    if status == "error":
        assert result.message == ("failed to configure binding: no params found for policy binding with `Deny` "
                                  "parameterNotFoundAction")


def test_a_policy_with_params_and_a_binding_without_param_ref_runs_with_null_params() -> None:
    policy = vap(paramKind=PARAM_KIND, validations=[{"expression": "params == null"}])
    assert one([policy, binding()], pod(), params=(config_map("limits", max="1"),)).status == "pass"


def test_cluster_scoped_params_of_a_custom_kind() -> None:
    kind = {"apiVersion": "example.com/v1", "kind": "Limits"}
    limits = {"apiVersion": "example.com/v1", "kind": "Limits", "metadata": {"name": "global"}, "max": 1}
    policy = vap(paramKind=kind, validations=[{"expression": "size(object.spec.containers) <= params.max"}])
    assert one([policy, binding(paramRef={"name": "global", "parameterNotFoundAction": "Deny"})],
               two_containers(), params=(limits,)).status == "fail"
    with_namespace = binding(paramRef={"name": "global", "namespace": "x", "parameterNotFoundAction": "Deny"})
    result = one([policy, with_namespace], two_containers(), params=(limits,))
    assert "must not be provided for a cluster-scoped `paramKind`" in result.message


def test_namespaced_params_for_a_cluster_scoped_request_need_a_namespace() -> None:
    namespaces = [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["namespaces"]}]
    policy = vap(paramKind=PARAM_KIND, matchConstraints={"resourceRules": namespaces},
                 validations=[{"expression": "true"}])
    result = one([policy, binding(paramRef={"name": "limits", "parameterNotFoundAction": "Deny"})],
                 {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "n"}},
                 params=(config_map("limits"),))
    assert result.status == "error"
    assert "cannot use namespaced paramRef in policy binding that matches cluster-scoped resources" in result.message


def test_params_are_declared_only_with_a_param_kind() -> None:
    from assertree.errors import PolicyError
    from assertree.languages.load import compile_document

    with pytest.raises(PolicyError, match="params are declared only when the policy has a paramKind"):
        compile_document(vap(validations=[{"expression": "params.x == 1"}]))


def test_every_resource_gets_one_result_per_policy() -> None:
    results = run([vap(validations=[{"expression": "object.metadata.name == 'web'"}]), binding()],
                  [pod("web"), pod("db"), config_map("cm")])
    assert [(result.resource.value["metadata"]["name"], str(result.status)) for result in results] == [
        ("web", "pass"), ("db", "fail")]


def test_policies_see_the_defaults_the_apiserver_fills_in() -> None:
    service_rules = [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["services"]}]
    ssh = vap(matchConstraints={"resourceRules": service_rules},
              validations=[{"expression": "object.spec.ports.all(p, p.targetPort != 22 && p.protocol == 'TCP')"}])
    service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"}, "spec": {"ports": [{"port": 80}]}}
    assert one([ssh, binding()], service).status == "pass"  # targetPort is the port, protocol TCP
    assert one([ssh, binding()], service, kubernetes_defaults=False).status == "error"  # as written: no such key
    pull = vap(validations=[{"expression": "object.spec.containers.all(c, c.imagePullPolicy == 'Always' && "
                                           "c.resources.requests.cpu == '1')"}])
    latest = pod(containers=[{"name": "a", "image": "nginx", "resources": {"limits": {"cpu": "1"}}}])
    assert one([pull, binding()], latest).status == "pass"
    pinned = pod(containers=[{"name": "a", "image": "nginx:1.27", "resources": {"limits": {"cpu": "1"}}}])
    assert one([pull, binding()], pinned).status == "fail"  # IfNotPresent for a pinned tag


def test_a_policy_of_audit_annotations_only_passes_and_publishes() -> None:
    policy = vap(auditAnnotations=[{"key": "name", "valueExpression": "object.metadata.name"}])
    result = one([policy, binding()], pod())
    assert (result.status, result.feedback) == ("pass", {"p/name": {"value": "web"}})
