"""`assertree test`'s inputs beyond policies and resources: exceptions, operations, mocks, cluster, payloads.

Each test writes a small kyverno-test.yaml and its files, then checks the
rows as ``kyverno test`` (kyverno/kyverno 111e07bb, cmd/cli/kubectl-kyverno)
would compare them.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
import yaml

from assertree.testing import run_tests

POD = """
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: team, labels: {env: prod}}
spec: {containers: [{name: c, image: "nginx:1.25"}]}
"""


def write(folder: Path, files: dict[str, str | dict | list]) -> Path:
    for name, content in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, str):
            path.write_text(textwrap.dedent(content).lstrip())
        elif name.endswith(".json"):
            path.write_text(json.dumps(content))
        else:
            path.write_text(yaml.safe_dump_all(content if isinstance(content, list) else [content], sort_keys=False))
    return folder


def kyverno_test(results: list[dict], **fields) -> dict:
    return {"apiVersion": "cli.kyverno.io/v1alpha1", "kind": "Test", "metadata": {"name": "t"},
            "policies": ["policy.yaml"], "resources": ["resources.yaml"], "results": results, **fields}


def vpol(name: str = "check", *validations: str, **spec) -> dict:
    return {"apiVersion": "policies.kyverno.io/v1", "kind": "ValidatingPolicy", "metadata": {"name": name},
            "spec": {"matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"],
                                                             "operations": ["CREATE", "UPDATE", "DELETE"],
                                                             "resources": ["pods"]}]},
                     "validations": [{"expression": text, "message": "no"} for text in validations], **spec}}


def result(expected: str, policy: str = "check", **more) -> dict:
    return {"policy": policy, "isValidatingPolicy": True, "kind": "Pod", "result": expected, **more}


def rows(folder: Path) -> list[tuple]:
    run = run_tests([folder])
    assert all(outcome.error is None for outcome in run.outcomes), [str(o.error) for o in run.outcomes]
    return [(r.resource[3], r.actual, r.ok, r.reason, r.message) for o in run.outcomes for r in o.rows]


# -- policies.kyverno.io PolicyExceptions -------------------------------------------------------------


def exception(name: str = "allow", *conditions: str, **spec) -> dict:
    return {"apiVersion": "policies.kyverno.io/v1", "kind": "PolicyException",
            "metadata": {"name": name, "namespace": "team", **spec.pop("metadata", {})},
            "spec": {"policyRefs": [{"name": "check", "kind": "ValidatingPolicy"}],
                     "matchConditions": [{"name": f"c{i}", "expression": text} for i, text in enumerate(conditions)],
                     **spec}}


def test_an_exception_that_holds_skips_the_policy(tmp_path):
    write(tmp_path, {"policy.yaml": vpol("check", "false"), "resources.yaml": POD,
                     "exception.yaml": exception("allow", "object.metadata.labels.env == 'prod'"),
                     "kyverno-test.yaml": kyverno_test([result("skip")], exceptions=["exception.yaml"])})
    [(name, actual, ok, _reason, message)] = rows(tmp_path)
    assert (name, actual, ok) == ("web", "skip", True)
    assert message == "rule is skipped due to policy exception: team/allow"


def test_report_result_pass_and_the_priority_label(tmp_path):
    exceptions = [exception("low", "true", reportResult="skip",
                            metadata={"labels": {"polex.kyverno.io/priority": "1"}}),
                  exception("high", "true", reportResult="pass",
                            metadata={"labels": {"polex.kyverno.io/priority": "5"}})]
    write(tmp_path, {"policy.yaml": vpol("check", "false"), "resources.yaml": POD, "exceptions.yaml": exceptions,
                     "kyverno-test.yaml": kyverno_test([result("pass")], exceptions=["exceptions.yaml"])})
    [(_, actual, ok, _, message)] = rows(tmp_path)
    assert (actual, ok) == ("pass", True)
    assert message == "rule is passed due to policy exception: team/low, team/high"


def test_images_and_allowed_values_are_handed_to_the_policy(tmp_path):
    policy = vpol("check", "object.spec.containers.all(c, c.image in exceptions.allowedImages || "
                           "c.image.endsWith(':latest'))", "'x' in exceptions.allowedValues")
    write(tmp_path, {"policy.yaml": policy, "resources.yaml": POD,
                     "exceptions.yaml": [exception("images", "true", images=["nginx:1.25"]),
                                         exception("values", "true", allowedValues=["x"])],
                     "kyverno-test.yaml": kyverno_test([result("pass")], exceptions=["exceptions.yaml"])})
    assert [row[1:3] for row in rows(tmp_path)] == [("pass", True)]


def test_an_expired_exception_is_not_applied_and_the_result_says_when_it_expired(tmp_path):
    write(tmp_path, {"policy.yaml": vpol("check", "false"), "resources.yaml": POD,
                     "exceptions.yaml": [exception("old", "true", expiresAt="2020-01-01T00:00:00Z"),
                                         exception("later", "false", expiresAt="2999-01-01T00:00:00Z")],
                     "kyverno-test.yaml": kyverno_test([result("fail")], exceptions=["exceptions.yaml"])})
    [(_, actual, ok, _, message)] = rows(tmp_path)
    assert (actual, ok) == ("fail", True)
    assert message == "no (policy exception team/old expired at 2020-01-01T00:00:00Z and was not applied)"


def test_an_exception_names_its_policy_by_kind_and_name(tmp_path):
    wrong_kind = exception("other", "true")
    wrong_kind["spec"]["policyRefs"] = [{"name": "check", "kind": "MutatingPolicy"}]
    write(tmp_path, {"policy.yaml": vpol("check", "false"), "resources.yaml": POD, "exceptions.yaml": wrong_kind,
                     "kyverno-test.yaml": kyverno_test([result("fail")], exceptions=["exceptions.yaml"])})
    assert [row[1] for row in rows(tmp_path)] == ["fail"]


@pytest.mark.parametrize(("change", "fragment"), [
    ({"expiresAt": "tomorrow"}, "spec.expiresAt: invalid date-time 'tomorrow'"),
    ({"reportResult": "fail"}, "spec.reportResult: must be one of: skip, pass"),
    ({"policyRefs": [{"name": "check"}]}, "spec.policyRefs[0].kind: required field is missing"),
])
def test_malformed_exceptions_are_errors_naming_the_field(tmp_path, change, fragment):
    document = exception("bad", "true")
    document["spec"].update(change)
    write(tmp_path, {"policy.yaml": vpol("check", "false"), "resources.yaml": POD, "exceptions.yaml": document,
                     "kyverno-test.yaml": kyverno_test([result("fail")], exceptions=["exceptions.yaml"])})
    [outcome] = run_tests([tmp_path]).outcomes
    assert fragment in str(outcome.error)


# -- operation ---------------------------------------------------------------------------------------


DELETE_POLICY = """
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: no-delete}
spec:
  rules:
  - name: no-delete
    match: {any: [{resources: {kinds: [Pod], operations: [DELETE]}}]}
    validate:
      failureAction: Enforce
      message: "no deleting"
      deny: {conditions: {all: [{key: "{{ request.operation }}", operator: Equals, value: DELETE}]}}
"""


def test_a_result_operation_runs_the_resource_again_under_it(tmp_path):
    write(tmp_path, {"policy.yaml": DELETE_POLICY, "cel.yaml": vpol("check", "request.operation != 'UPDATE' || "
                                                                             "oldObject.metadata.name == 'web'",
                                                                    "request.operation != 'DELETE'"),
                     "resources.yaml": POD,
                     "kyverno-test.yaml": kyverno_test([
                         {"policy": "no-delete", "rule": "no-delete", "kind": "Pod", "result": "fail",
                          "operation": "DELETE"},
                         {"policy": "no-delete", "rule": "no-delete", "kind": "Pod", "result": "pass"},  # CREATE
                         result("pass", operation="UPDATE"), result("fail", operation="DELETE"), result("pass"),
                     ], policies=["policy.yaml", "cel.yaml"])})
    assert [(actual, ok) for _, actual, ok, _, _ in rows(tmp_path)] == [
        ("fail", True), ("excluded", True), ("pass", True), ("fail", True), ("pass", True)]


def test_an_unknown_operation_is_refused_as_the_cli_refuses_it(tmp_path):
    write(tmp_path, {"policy.yaml": vpol("check", "true"), "resources.yaml": POD,
                     "kyverno-test.yaml": kyverno_test([result("pass", operation="CONNECT")])})
    [outcome] = run_tests([tmp_path]).outcomes
    assert "results[0].operation: invalid test result for policy check: invalid operation 'CONNECT'" in str(
        outcome.error)


# -- one unusable policy ----------------------------------------------------------------------------


def test_a_policy_that_does_not_compile_errs_its_own_rows_and_the_others_run(tmp_path):
    broken = vpol("broken", "object.spec.(")
    write(tmp_path, {"policy.yaml": [broken, vpol("check", "true")], "resources.yaml": POD,
                     "kyverno-test.yaml": kyverno_test([result("pass", policy="broken"), result("pass")])})
    [(_, broken_actual, broken_ok, reason, message), (_, actual, ok, _, _)] = rows(tmp_path)
    assert (broken_actual, broken_ok, reason) == ("error", False, "Invalid policy")
    assert "policy.yaml" in message and "spec.validations[0].expression" in message
    assert (actual, ok) == ("pass", True)


# -- cluster resources, CRDs, API call mocks, global context entries ---------------------------------


CRD = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
       "metadata": {"name": "gadgeteria.example.com"},
       "spec": {"group": "example.com", "scope": "Namespaced",
                "names": {"kind": "Gadget", "plural": "gadgeteria", "singular": "gadget"},
                "versions": [{"name": "v1", "served": True, "storage": True}]}}


def test_cluster_resources_serve_lookups_and_name_custom_resources(tmp_path):
    gadget = {"apiVersion": "example.com/v1", "kind": "Gadget", "metadata": {"name": "g", "namespace": "team"}}
    config = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings", "namespace": "team"},
              "data": {"allowed": "g"}}
    policy = vpol("check", "resource.Get('v1', 'configmaps', object.metadata.namespace, 'settings').data.allowed "
                           "== object.metadata.name")
    policy["spec"]["matchConstraints"]["resourceRules"] = [
        {"apiGroups": ["example.com"], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["gadgeteria"]}]
    cluster = {"apiVersion": "cli.kyverno.io/v1alpha1", "kind": "ClusterResource", "metadata": {"name": "c"},
               "spec": {"crds": ["crds/gadget.yaml"], "resources": [config]}}
    write(tmp_path, {"policy.yaml": policy, "resources.yaml": gadget, "crds/gadget.yaml": CRD,
                     "cluster.yaml": cluster,
                     "kyverno-test.yaml": kyverno_test([result("pass", kind="Gadget")],
                                                        clusterResources=["cluster.yaml"])})
    assert [(name, actual) for name, actual, *_ in rows(tmp_path)] == [("g", "pass")]


API_POLICY = """
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: lookups}
spec:
  rules:
  - name: lookups
    match: {any: [{resources: {kinds: [Pod]}}]}
    context:
    - name: external
      apiCall: {service: {url: "https://svc.test/allow?ns={{ request.object.metadata.namespace }}"}, jmesPath: allowed}
    - name: settings
      configMap: {name: settings, namespace: team}
    - name: pods
      apiCall: {urlPath: "/api/v1/namespaces/team/pods", jmesPath: "length(items)"}
    - name: zones
      globalReference: {name: zones.names}
    validate:
      failureAction: Audit
      deny:
        conditions:
          any:
          - {key: "{{ external }}", operator: Equals, value: false}
          - {key: "{{ settings.data.mode }}", operator: NotEquals, value: strict}
          - {key: "{{ pods }}", operator: NotEquals, value: 1}
          - {key: "{{ length(zones) }}", operator: NotEquals, value: 2}
"""


def test_mocks_and_the_cluster_answer_clusterpolicy_context_entries(tmp_path):
    settings = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings", "namespace": "team"},
                "data": {"mode": "strict"}}
    cluster = {"apiVersion": "cli.kyverno.io/v1alpha1", "kind": "ClusterResource", "metadata": {"name": "c"},
               "spec": {"resources": [settings]}}
    fields = {
        "clusterResources": ["cluster.yaml"],
        "apiCallResponses": [{"url": "https://svc.test/allow?ns=team", "response": {"body": {"allowed": True}}}],
        "globalContextEntries": [{"name": "zones", "resourceFiles": ["zones.yaml"],
                                  "projections": [{"name": "names", "path": "[].metadata.name"}]}],
    }
    zones = [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}} for name in ("a", "b")]
    write(tmp_path, {"policy.yaml": API_POLICY, "resources.yaml": POD, "cluster.yaml": cluster, "zones.yaml": zones,
                     "kyverno-test.yaml": kyverno_test(
                         [{"policy": "lookups", "rule": "lookups", "kind": "Pod", "result": "pass"}], **fields)})
    assert [(actual, ok, message) for _, actual, ok, _, message in rows(tmp_path)] == [
        ("pass", True, "validation rule 'lookups' passed.")]


def test_cel_http_calls_read_api_call_responses(tmp_path):
    policy = vpol("check", "http.Post('https://svc.test/check', {'name': object.metadata.name}).body.allowed && "
                           "http.Get('https://svc.test/status').statusCode == 204")
    responses = [{"url": "https://svc.test/check", "method": "POST", "response": {"body": {"allowed": True}}},
                 {"url": "https://svc.test/status", "response": {"statusCode": 204, "body": {}}}]
    write(tmp_path, {"policy.yaml": policy, "resources.yaml": POD,
                     "kyverno-test.yaml": kyverno_test([result("pass")], apiCallResponses=responses)})
    assert [row[1:3] for row in rows(tmp_path)] == [("pass", True)]


@pytest.mark.parametrize(("fields", "fragment"), [
    ({"apiCallResponses": [{"url": "ftp://x", "response": {"body": {}}}]}, "must be an absolute https/http URL"),
    ({"apiCallResponses": [{"urlPath": "/a", "url": "https://x", "response": {"body": {}}}]},
     "exactly one of url and urlPath"),
    ({"apiCallResponses": [{"urlPath": "/a", "response": {"body": [1]}}]}, "response.body must be a JSON object"),
    ({"globalContextEntries": [{"name": "a"}]}, "one of them is required"),
    ({"globalContextEntries": [{"name": "a", "resourceFiles": ["../outside.yaml"]}]},
     "must be relative and stay inside the test directory"),
])
def test_mock_problems_are_refused(tmp_path, fields, fragment):
    write(tmp_path, {"policy.yaml": vpol("check", "true"), "resources.yaml": POD,
                     "kyverno-test.yaml": kyverno_test([result("pass")], **fields)})
    [outcome] = run_tests([tmp_path]).outcomes
    assert fragment in str(outcome.error)


def test_global_context_entries_serve_cel(tmp_path):
    policy = vpol("check", "globalContext.Get('settings', 'mode') == 'strict' && "
                           "globalContext.get('missing', '') == null")
    write(tmp_path, {"policy.yaml": policy, "resources.yaml": POD, "kyverno-test.yaml": kyverno_test(
        [result("pass")], globalContextEntries=[{"name": "settings", "data": {"mode": "strict"}}])})
    assert [row[1:3] for row in rows(tmp_path)] == [("pass", True)]


PARAM_POLICY = """
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: params}
spec:
  rules:
  - name: allowed-images
    match: {any: [{resources: {kinds: [Pod]}}]}
    validate:
      failureAction: Audit
      cel:
        paramKind: {apiVersion: v1, kind: ConfigMap}
        paramRef: {selector: {matchLabels: {policy: images}}, parameterNotFoundAction: Deny}
        expressions:
        - expression: "object.spec.containers.all(c, c.image.startsWith(params.data.prefix))"
          messageExpression: "'images must start with ' + params.data.prefix"
"""


def test_param_resources_and_cluster_resources_give_validate_cel_its_params(tmp_path):
    def prefix(name: str, value: str) -> dict:  # no namespace: in default, as the CLI loads it
        return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "labels": {"policy": "images"}},
                "data": {"prefix": value}}

    pods = [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
             "spec": {"containers": [{"name": "c", "image": image}]}}
            for name, image in (("good", "docker.io/library/nginx"), ("bad", "docker.io/team/nginx"))]
    cluster = {"apiVersion": "cli.kyverno.io/v1alpha1", "kind": "ClusterResource", "metadata": {"name": "c"},
               "spec": {"resources": [prefix("second", "docker.io/library/")]}}
    row = {"policy": "params", "rule": "allowed-images", "kind": "Pod"}
    write(tmp_path, {"policy.yaml": PARAM_POLICY, "resources.yaml": pods, "params.yaml": prefix("first", "docker.io/"),
                     "cluster.yaml": cluster,
                     "kyverno-test.yaml": kyverno_test([{**row, "resources": ["good"], "result": "pass"},
                                                        {**row, "resources": ["bad"], "result": "fail"}],
                                                       paramResources=["params.yaml"],
                                                       clusterResources=["cluster.yaml"])})
    assert [(name, actual, message) for name, actual, _, _, message in rows(tmp_path)] == [
        ("good", "pass", "Validation rule 'allowed-images' passed."),
        ("bad", "fail", "images must start with docker.io/library/")]  # each param in turn decides


# -- payloads --------------------------------------------------------------------------------------------


def test_json_payloads_run_json_mode_policies(tmp_path):
    policy = {"apiVersion": "policies.kyverno.io/v1", "kind": "ValidatingPolicy", "metadata": {"name": "json"},
              "spec": {"evaluation": {"mode": "JSON"}, "validations": [{"expression": "object.size > 2"}]}}
    write(tmp_path, {"policy.yaml": policy, "small.json": {"size": 1}, "big.yaml": "size: 3\n",
                     "kyverno-test.yaml": kyverno_test(
                         [{"policy": "json", "kind": "", "resources": ["small.json"], "result": "fail"},
                          {"policy": "json", "kind": "", "resources": ["big.yaml"], "result": "pass"}],
                         resources=[], jsonPayloads=["small.json", "big.yaml"])})
    assert [(name, actual, ok) for name, actual, ok, _, _ in rows(tmp_path)] == [
        ("small.json", "fail", True), ("big.yaml", "pass", True)]


def test_http_and_envoy_payloads_run_authorization_policies(tmp_path):
    http = {"apiVersion": "policies.kyverno.io/v1", "kind": "ValidatingPolicy", "metadata": {"name": "http"},
            "spec": {"evaluation": {"mode": "HTTP"}, "validations": [
                {"expression": "object.attributes.Header('x-team')[0] == 'core' ? http.Allowed().Response() : "
                               "http.Denied('not core').Response()"}]}}
    envoy = {"apiVersion": "policies.kyverno.io/v1", "kind": "ValidatingPolicy", "metadata": {"name": "envoy"},
             "spec": {"evaluation": {"mode": "Envoy"}, "validations": [
                 {"expression": "object.attributes.request.http.path == '/ok' ? null : "
                                "envoy.Denied(403).WithBody('no').Response()"},
                 {"expression": "envoy.Allowed().WithHeader('x', 'y').Response()"}]}}
    write(tmp_path, {"policy.yaml": [http, envoy],
                     "core.json": {"attributes": {"method": "GET", "path": "/", "header": {"X-Team": ["core"]}}},
                     "other.json": {"attributes": {"header": {"X-Team": ["ops"]}}},
                     "ok.json": {"attributes": {"request": {"http": {"path": "/ok"}}}},
                     "no.json": {"attributes": {"request": {"http": {"path": "/no"}}}},
                     "kyverno-test.yaml": kyverno_test(
                         [{"policy": "http", "kind": "", "resources": ["core.json"], "result": "pass"},
                          {"policy": "http", "kind": "", "resources": ["other.json"], "result": "fail"},
                          {"policy": "envoy", "kind": "", "resources": ["ok.json"], "result": "pass"},
                          {"policy": "envoy", "kind": "", "resources": ["no.json"], "result": "fail"}],
                         resources=[], httpPayloads=["core.json", "other.json"], envoyPayloads=["ok.json", "no.json"])})
    assert [(name, actual, ok, message) for name, actual, ok, _, message in rows(tmp_path)] == [
        ("core.json", "pass", True, "request allowed"),
        ("other.json", "fail", True, "request denied, reason: not core"),
        ("ok.json", "pass", True, "request allowed"),
        ("no.json", "fail", True, "request denied with status code 403")]


# -- resourceSpecs ---------------------------------------------------------------------------------------


def test_resource_specs_select_beside_resources(tmp_path):
    pods = [yaml.safe_load(POD), {**yaml.safe_load(POD), "metadata": {"name": "db", "namespace": "data"}}]
    spec = {"version": "v1", "kind": "Pod", "namespace": "data", "name": "db"}
    write(tmp_path, {"policy.yaml": vpol("check", "object.metadata.name == 'db'"), "resources.yaml": pods,
                     "kyverno-test.yaml": kyverno_test([result("pass", resources=[], resourceSpecs=[spec])])})
    assert [(name, actual) for name, actual, *_ in rows(tmp_path)] == [("db", "pass")]
