"""``validate.podSecurity`` rules: Kyverno's versions, exclusions, PolicyExceptions, controllers and messages.

The verdicts on Kubernetes' fixtures are `tests/conformance/test_pod_security.py`; the message shapes and
exception scenarios here follow kyverno/kyverno's ``pkg/pss`` and ``validate_pss.go`` (111e07bb).
"""

from __future__ import annotations

import copy

import pytest
from hypothesis import given
from hypothesis import strategies as st

from assertree.errors import PolicyError
from assertree.languages.base import ScanContext
from assertree.languages.kyverno.bridge import parse_exceptions
from assertree.languages.kyverno.language import compile_document
from assertree.results import ERROR, FAIL, PASS, SKIP, WARN, Resource


def policy(security, *, name="psa", action=None, annotations=None, kinds=("Pod",), allow_existing=None):
    validate = {"podSecurity": security}
    if action:
        validate["failureAction"] = action
    if allow_existing is not None:
        validate["allowExistingViolations"] = allow_existing
    return {"apiVersion": "kyverno.io/v1", "kind": "ClusterPolicy",
            "metadata": {"name": name, "annotations": annotations or {}},
            "spec": {"rules": [{"name": "pss", "match": {"any": [{"resources": {"kinds": list(kinds)}}]},
                                "validate": validate}]}}


def run(document, resource, context=None):
    """The result of every rule (written and autogen) that gives one, by rule name."""
    compiled = compile_document(document)
    context = context or ScanContext()
    results = {}
    for rule in compiled.rules:
        result = rule.runner(context)(Resource(copy.deepcopy(resource)))
        if result is not None:
            results[rule.rule.name] = result
    return results


def one(document, resource, context=None):
    [result] = run(document, resource, context).values()
    return result


def pod(spec=None, *, name="web", namespace="default", annotations=None):
    metadata = {"name": name, "namespace": namespace}
    if annotations:
        metadata["annotations"] = annotations
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata,
            "spec": spec if spec is not None else {"containers": [{"name": "app", "image": "nginx"}]}}


PRIVILEGED_POD = pod({"containers": [{"name": "app", "image": "nginx", "securityContext": {"privileged": True}}]})
BASELINE = {"level": "baseline", "version": "latest"}


# -- loading -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("security", "field", "text"), [
    ({"level": "baseline", "version": "v1.33"}, "podSecurity.version", "must be one of: v1.19, v1.20"),
    ({"level": "baseline", "version": "v1.18"}, "podSecurity.version", 'not "v1.18"'),
    ({"level": "Baseline"}, "podSecurity.level", "must be one of: privileged, baseline, restricted"),
    ({"level": "baseline", "exclude": [{"controlName": "Capability"}]}, "podSecurity.exclude[0].controlName",
     "must be one of"),
    ({"level": "baseline", "exclude": [{"images": ["x"]}]}, "podSecurity.exclude[0].controlName", "required"),
    ({"level": "baseline", "exclud": []}, "podSecurity.exclud", "unknown field"),
    ({"level": "baseline", "exclude": [{"controlName": "Volume Types"}]}, "podSecurity.exclude[0].controlName",
     "Invalid control name defined at the given level"),
    ({"level": "restricted", "exclude": [{"controlName": "Host Ports"}]}, "podSecurity.exclude[0].controlName",
     "exclude.images must be specified for the container level control"),
    ({"level": "restricted", "exclude": [{"controlName": "Sysctls", "images": ["*"]}]},
     "podSecurity.exclude[0].controlName", "exclude.images must not be specified for the pod level control"),
    ({"level": "restricted", "exclude": [{"controlName": "Sysctls", "restrictedField": "x"}]},
     "podSecurity.exclude[0].values", "values is required"),
    ({"level": "restricted", "exclude": [{"controlName": "Sysctls", "values": ["x"]}]},
     "podSecurity.exclude[0].restrictedField", "restrictedField is required"),
])
def test_rules_kyverno_refuses_fail_at_load_time_with_the_field(security, field, text):
    with pytest.raises(PolicyError) as raised:
        compile_document(policy(security))
    assert raised.value.problem.field == f"spec.rules[0].validate.{field}"
    assert text in raised.value.message


@pytest.mark.parametrize("security", [
    {"level": "baseline", "exclude": [{"controlName": "Seccomp"}, {"controlName": "Capabilities", "images": ["*"]}]},
    {"level": "privileged", "version": "v1.19"},
    {"version": "v1.32"},
])
def test_rules_kyverno_accepts(security):
    compile_document(policy(security))


def test_an_empty_pod_security_block_is_no_pod_security_rule():
    """Kyverno runs a podSecurity rule only when the block is not empty; an empty one checks nothing."""
    assert run(policy({}), PRIVILEGED_POD) == {}


# -- verdicts and messages -----------------------------------------------------------------------------


def test_pass_and_fail_messages():
    assert one(policy(BASELINE), pod()).message == "Validation rule 'pss' passed."
    result = one(policy(BASELINE), PRIVILEGED_POD)
    assert result.status == FAIL
    assert result.message == (
        "Validation rule 'pss' failed. It violates PodSecurity \"baseline:latest\": (Forbidden reason: privileged, "
        "field error list: [spec.containers[0].securityContext.privileged is forbidden, forbidden values found: "
        "true])")
    assert result.violations[0].steps == ("spec", "containers", 0, "securityContext", "privileged")


def test_the_message_lists_every_failed_check_in_registration_order_with_go_s_value_formats():
    spec = {"hostNetwork": True, "volumes": [{"name": "h", "hostPath": {}}],
            "containers": [{"name": "app", "ports": [{"hostPort": 80}],
                            "securityContext": {"capabilities": {"add": ["SYS_ADMIN", "NET_RAW"]}}}]}
    result = one(policy({"level": "restricted", "version": "v1.30"}), pod(spec))
    assert result.message.split(": ", 1)[1] == (
        "(Forbidden reason: allowPrivilegeEscalation != false, field error list: "
        "[spec.containers[0].securityContext.allowPrivilegeEscalation is forbidden, forbidden values found: nil])"
        "(Forbidden reason: unrestricted capabilities, field error list: "
        "[spec.containers[0].securityContext.capabilities.drop: Required value, "
        "spec.containers[0].securityContext.capabilities.add is forbidden, forbidden values found: "
        "[NET_RAW SYS_ADMIN]])"
        "(Forbidden reason: host namespaces, field error list: [spec.hostNetwork is forbidden, forbidden values "
        "found: true])"
        "(Forbidden reason: hostPort, field error list: [spec.containers[0].ports[0].hostPort is forbidden, "
        "forbidden values found: 80])"
        "(Forbidden reason: restricted volume types, field error list: [spec.volumes[0].hostPath: Forbidden])"
        "(Forbidden reason: runAsNonRoot != true, field error list: "
        "[spec.containers[0].securityContext.runAsNonRoot: Required value])"
        "(Forbidden reason: seccompProfile, field error list: "
        "[spec.containers[0].securityContext.seccompProfile.type: Required value])")


def test_latest_is_kyverno_s_v1_34():
    """Kyverno's ``latest`` runs the v1.34 checks: a root user in a user namespace (allowed from v1.35 on) fails."""
    restricted = {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}, "runAsNonRoot": True,
                  "seccompProfile": {"type": "RuntimeDefault"}, "runAsUser": 0}
    root = pod({"hostUsers": False, "containers": [{"name": "app", "securityContext": restricted}]})
    result = one(policy({"level": "restricted", "version": "latest"}), root)
    assert result.status == FAIL and "runAsUser=0" in result.message
    probes = pod({"containers": [{"name": "app", "livenessProbe": {"httpGet": {"host": "1.2.3.4", "port": 80}}}]})
    assert one(policy({"level": "baseline"}), probes).status == FAIL  # v1.34's probe host check, version unset
    assert one(policy({"level": "baseline", "version": "v1.32"}), probes).status == PASS


def test_privileged_allows_everything():
    assert one(policy({"level": "privileged", "version": "latest"}), PRIVILEGED_POD).status == PASS


def test_a_rule_without_a_level_runs_every_check():
    result = one(policy({"version": "v1.30"}), pod())
    assert result.status == FAIL
    assert 'PodSecurity ":v1.30"' in result.message and "runAsNonRoot" in result.message


def test_controllers_are_checked_through_autogen_with_paths_under_their_templates():
    template = {"metadata": {"annotations": {"container.apparmor.security.beta.kubernetes.io/app": "unconfined"}},
                "spec": PRIVILEGED_POD["spec"]}
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "namespace": "default"},
                  "spec": {"template": template}}
    results = run(policy(BASELINE), deployment)
    assert list(results) == ["autogen-pss"]
    assert results["autogen-pss"].message.split(": ", 1)[1] == (
        "(Forbidden reason: forbidden AppArmor profile, field error list: "
        "[spec.template.metadata.annotations[container.apparmor.security.beta.kubernetes.io/app] is forbidden, "
        "forbidden values found: unconfined])"
        "(Forbidden reason: privileged, field error list: "
        "[spec.template.spec.containers[0].securityContext.privileged is forbidden, forbidden values found: true])")
    cronjob = {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "c", "namespace": "default"},
               "spec": {"jobTemplate": {"metadata": {}, "spec": {"template": template}}}}
    result = run(policy(BASELINE), cronjob)["autogen-cronjob-pss"]
    # Kyverno reads the job template's annotations, not the Pod template's
    assert "AppArmor" not in result.message
    assert "spec.jobTemplate.spec.template.spec.containers[0].securityContext.privileged" in result.message
    cronjob["spec"]["jobTemplate"]["metadata"] = template["metadata"]
    result = run(policy(BASELINE), cronjob)["autogen-cronjob-pss"]
    assert "spec.jobTemplate.metadata.annotations[container.apparmor" in result.message


def test_a_resource_that_is_no_pod_or_controller_is_an_error():
    service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s", "namespace": "default"}}
    result = one(policy(BASELINE, kinds=("Service",)), service)
    assert result.status == ERROR
    assert result.message == "Error while getting new resource: could not find correct resource type"


def test_a_field_of_the_wrong_type_is_an_error_naming_it():
    result = one(policy(BASELINE), pod({"containers": [{"name": "app", "securityContext": {"privileged": "yes"}}]}))
    assert result.status == ERROR
    assert result.message == ("Error while getting new resource: spec.containers[0].securityContext.privileged: "
                              "must be a boolean, not a string")
    assert result.error.path == ("spec", "containers", 0, "securityContext", "privileged")
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "namespace": "default"},
                  "spec": {"template": []}}
    assert run(policy(BASELINE), deployment)["autogen-pss"].message == (
        "Error while getting new resource: spec.template: must be an object, not an array")


def test_unscored_policies_warn():
    result = one(policy(BASELINE, annotations={"policies.kyverno.io/scored": "false"}), PRIVILEGED_POD)
    assert result.status == WARN


# -- exclusions ----------------------------------------------------------------------------------------


def restricted_container(name, image, **security):
    return {"name": name, "image": image, "securityContext": {
        "allowPrivilegeEscalation": False, "runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"},
        "capabilities": {"drop": ["ALL"]}, **security}}


def test_a_container_level_exclusion_exempts_only_the_matching_images():
    exclude = [{"controlName": "Capabilities", "images": ["ghcr.io/kyverno/test-nginx*", "redis*"]}]
    rule = policy({"level": "restricted", "version": "latest", "exclude": exclude})
    adding = {"capabilities": {"drop": ["ALL"], "add": ["SYS_ADMIN"]}}
    allowed = pod({"containers": [restricted_container("a", "ghcr.io/kyverno/test-nginx:1", **adding),
                                  restricted_container("b", "redis:7", **adding)]})
    assert one(rule, allowed).status == PASS
    refused = pod({"containers": [restricted_container("a", "ghcr.io/kyverno/test-nginx:1", **adding),
                                  restricted_container("b", "busybox", **adding)]})
    result = one(rule, refused)
    assert result.status == FAIL
    assert "spec.containers[1].securityContext.capabilities.add" in result.message
    assert "spec.containers[0]" not in result.message


def test_an_exclusion_with_values_exempts_only_those_values():
    def rule(values):
        return policy({"level": "baseline", "version": "v1.29", "exclude": [
            {"controlName": "Capabilities", "images": ["*"],
             "restrictedField": "spec.containers[*].securityContext.capabilities.add", "values": values}]})

    adding = pod({"containers": [{"name": "app", "image": "nginx",
                                  "securityContext": {"capabilities": {"add": ["NET_ADMIN", "NET_RAW"]}}}]})
    assert one(rule(["NET_*"]), adding).status == PASS
    assert one(rule(["NET_ADMIN"]), adding).status == FAIL  # every value must be allowed
    assert one(rule(["NET_*"]), {**adding, "spec": {"initContainers": adding["spec"]["containers"],
                                                     "containers": [{"name": "x"}]}}).status == FAIL  # other field


def test_a_pod_level_exclusion():
    rule = policy({"level": "baseline", "version": "latest", "exclude": [{"controlName": "Host Namespaces"}]})
    assert one(rule, pod({"hostNetwork": True, "hostPID": True, "containers": [{"name": "app"}]})).status == PASS
    restricted = policy({"level": "baseline", "exclude": [
        {"controlName": "Host Namespaces", "restrictedField": "spec.hostNetwork", "values": ["true"]}]})
    result = one(restricted, pod({"hostNetwork": True, "hostPID": True, "containers": [{"name": "app"}]}))
    assert result.status == FAIL
    assert "[spec.hostPID is forbidden, forbidden values found: true]" in result.message


def test_an_exclusion_without_images_cancels_container_errors_only_as_often_as_its_empty_container_has_them():
    """Kyverno checks a copy of the Pod with one empty container: each of its errors cancels one like it."""
    rule = policy({"level": "restricted", "version": "latest", "exclude": [{"controlName": "Seccomp"}]})
    unset = {"allowPrivilegeEscalation": False, "runAsNonRoot": True, "capabilities": {"drop": ["ALL"]}}
    one_container = pod({"containers": [{"name": "a", "securityContext": unset}]})
    assert one(rule, one_container).status == PASS
    two = pod({"containers": [{"name": "a", "securityContext": unset}, {"name": "b", "securityContext": unset}]})
    result = one(rule, two)
    assert result.status == FAIL
    # the first error was cancelled by moving the last into its place
    assert "[spec.containers[1].securityContext.seccompProfile.type: Required value]" in result.message


def test_exclusions_at_baseline_may_name_seccomp_and_capabilities():
    rule = policy({"level": "baseline", "exclude": [{"controlName": "Seccomp"}]})
    unconfined = pod({"securityContext": {"seccompProfile": {"type": "Unconfined"}}, "containers": [{"name": "a"}]})
    assert one(rule, unconfined).status == PASS


# -- PolicyExceptions ----------------------------------------------------------------------------------


def exception(name, namespace="default", pod_security=None, match_names=None):
    spec = {"exceptions": [{"policyName": "psa", "ruleNames": ["pss"]}],
            "match": {"any": [{"resources": {"kinds": ["Pod"], **({"names": match_names} if match_names else {})}}]}}
    if pod_security is not None:
        spec["podSecurity"] = pod_security
    return {"apiVersion": "kyverno.io/v2", "kind": "PolicyException",
            "metadata": {"name": name, "namespace": namespace}, "spec": spec}


def with_exceptions(*documents):
    return ScanContext(exceptions=parse_exceptions(list(documents)))


INIT_CAPABILITIES = pod({
    "containers": [{"name": "primary", "image": "alpine:latest"}],
    "initContainers": [
        {"name": "init1", "image": "alpine:latest", "securityContext": {"capabilities": {"add": ["NET_ADMIN",
                                                                                                 "NET_RAW"]}}},
        {"name": "init2", "image": "busybox:latest", "securityContext": {"capabilities": {"add": ["SYS_TIME"]}}}]})


def init_exemption(image, values):
    return [{"controlName": "Capabilities", "images": [image],
             "restrictedField": "spec.initContainers[*].securityContext.capabilities.add", "values": values}]


def test_exceptions_with_pod_security_entries_exempt_controls_and_skip_only_when_nothing_is_left():
    rule = policy({"level": "baseline", "version": "v1.29"})
    first = exception("init1", pod_security=init_exemption("alpine:latest", ["NET_ADMIN", "NET_RAW"]))
    second = exception("init2", pod_security=init_exemption("busybox:latest", ["SYS_TIME"]))
    result = one(rule, INIT_CAPABILITIES, with_exceptions(first, second))
    assert (result.status, result.exception) == (SKIP, "default/init1, default/init2")
    assert result.message == "rule is skipped due to policy exceptions default/init1, default/init2"
    result = one(rule, INIT_CAPABILITIES, with_exceptions(second))
    assert (result.status, result.exception) == (FAIL, None)
    assert result.message == (
        "Validation rule 'pss' failed. It violates PodSecurity \"baseline:v1.29\": (Forbidden reason: non-default "
        "capabilities, field error list: [spec.initContainers[0].securityContext.capabilities.add is forbidden, "
        "forbidden values found: [NET_ADMIN NET_RAW]])")


def test_an_exception_without_pod_security_entries_skips_the_rule_with_its_name():
    plain = exception("plain")
    result = one(policy(BASELINE), PRIVILEGED_POD, with_exceptions(plain))
    assert (result.status, result.message, result.exception) == (
        SKIP, "rule is skipped due to policy exception default/plain", "default/plain")
    # even a Pod that passes is skipped, before any check runs
    assert one(policy(BASELINE), pod(), with_exceptions(plain)).status == SKIP


def test_a_pod_that_passes_passes_whatever_exceptions_match():
    entries = exception("entries", pod_security=[{"controlName": "Privileged Containers", "images": ["*"]}])
    assert one(policy(BASELINE), pod(), with_exceptions(entries)).status == PASS
    assert one(policy(BASELINE), PRIVILEGED_POD, with_exceptions(entries)).status == SKIP


def test_an_exception_that_does_not_match_the_pod_changes_nothing():
    entries = exception("entries", pod_security=[{"controlName": "Privileged Containers", "images": ["*"]}],
                        match_names=["other"])
    assert one(policy(BASELINE), PRIVILEGED_POD, with_exceptions(entries)).status == FAIL


@pytest.mark.parametrize(("entries", "field", "text"), [
    ([{"images": ["*"]}], "spec.podSecurity[0].controlName", "required"),
    ([{"controlName": "Nope"}], "spec.podSecurity[0].controlName", "must be one of"),
    ({"controlName": "Sysctls"}, "spec.podSecurity", "must be a list"),
    ([{"controlName": "Sysctls", "values": "x"}], "spec.podSecurity[0].values", "list of strings"),
])
def test_malformed_pod_security_entries_of_an_exception_are_refused(entries, field, text):
    with pytest.raises(PolicyError) as raised:
        parse_exceptions([exception("bad", pod_security=entries)])
    assert raised.value.problem.field == field
    assert text in raised.value.message


# -- the request -------------------------------------------------------------------------------------------


def test_existing_violations_of_an_enforced_rule_are_allowed_on_update():
    update = ScanContext(operation="UPDATE")
    assert one(policy(BASELINE, action="Enforce"), PRIVILEGED_POD, update).status == SKIP
    assert one(policy(BASELINE, action="Enforce"), PRIVILEGED_POD, update).message == (
        "skipping the rule evaluation as pre-existing violations are allowed")
    assert one(policy(BASELINE, action="Enforce", allow_existing=False), PRIVILEGED_POD, update).status == FAIL
    assert one(policy(BASELINE, action="Audit"), PRIVILEGED_POD, update).status == FAIL
    assert one(policy(BASELINE, action="Enforce"), PRIVILEGED_POD).status == FAIL


def test_a_delete_request_is_not_checked():
    assert run(policy(BASELINE), PRIVILEGED_POD, ScanContext(operation="DELETE")) == {}


# -- the command line ----------------------------------------------------------------------------------

SCAN_POLICY = """\
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: pod-security
spec:
  rules:
  - name: restricted
    match:
      any:
      - resources:
          kinds: [Pod]
    validate:
      podSecurity:
        level: restricted
        version: latest
        exclude:
        - controlName: Capabilities
          images: ["ghcr.io/example/proxy:*"]
"""

SCAN_PAYLOAD = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
spec:
  template:
    spec:
      securityContext:
        runAsNonRoot: true
        seccompProfile:
          type: RuntimeDefault
      containers:
      - name: app
        image: ghcr.io/example/app:1.0
        securityContext:
          allowPrivilegeEscalation: true
          capabilities:
            drop: [ALL]
      - name: proxy
        image: ghcr.io/example/proxy:2.1
        securityContext:
          allowPrivilegeEscalation: false
          capabilities:
            add: [NET_ADMIN]
---
apiVersion: v1
kind: Pod
metadata:
  name: debug
  namespace: shop
spec:
  hostPID: true
  containers:
  - name: shell
    image: busybox:1.36
    securityContext:
      privileged: true
"""


@pytest.mark.parametrize("output", ["text", "sarif"])
def test_scan_reports_pod_security_failures(output, tmp_path, monkeypatch, capsys, snapshot):
    from assertree.cli import main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "policy.yaml").write_text(SCAN_POLICY)
    (tmp_path / "workloads.yaml").write_text(SCAN_PAYLOAD)
    code = main(["scan", "workloads.yaml", "--policy", "policy.yaml", "-o", output])
    out, err = capsys.readouterr()
    assert code == 1
    assert "Traceback" not in err
    assert out == snapshot


def test_the_server_s_playground_runs_pod_security_rules():
    import asyncio

    import httpx

    from assertree.serve import create_app

    async def call() -> httpx.Response:
        transport = httpx.ASGITransport(app=create_app())
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
            return await client.post("/api/playground/scan", json={"policy": SCAN_POLICY, "payload": SCAN_PAYLOAD})

    response = asyncio.run(call())
    assert response.status_code == 200
    results = {(entry["rule"], entry["result"]) for entry in response.json()["results"]}
    assert results == {("autogen-restricted", "fail"), ("restricted", "fail")}


def test_lint_locates_a_version_kyverno_does_not_accept(tmp_path, monkeypatch, capsys):
    from assertree.cli import main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "policy.yaml").write_text(SCAN_POLICY.replace("version: latest", "version: v1.35"))
    assert main(["lint", "policy.yaml"]) == 1
    out, _ = capsys.readouterr()
    assert "policy.yaml:15:9: error: spec.rules[0].validate.podSecurity.version: must be one of: v1.19," in out


def test_the_policy_schema_names_the_controls_kyverno_knows():
    from assertree.languages.kyverno.pod_security.controls import CONTROL_CHECKS, CONTROL_NAMES
    from assertree.languages.kyverno.schema import schema

    enum = schema()["$defs"]["podSecurityStandard"]["properties"]["controlName"]["enum"]
    assert tuple(enum) == CONTROL_NAMES
    assert set(CONTROL_NAMES) == set(CONTROL_CHECKS)
    assert schema()["$defs"]["podSecurity"]["properties"]["version"]["enum"] == [
        *(f"v1.{minor}" for minor in range(19, 33)), "latest"]


# -- the error index: Kyverno's scan, without its quadratic cost -------------------------------------------


def _scan_and_swap(errors: list, keys: list, key) -> bool:
    """Kyverno's way (``exemptExclusions``): the first error with `key`, replaced by the last one."""
    for position, mine in enumerate(keys):
        if mine == key:
            errors[position], keys[position] = errors[-1], keys[-1]
            errors.pop()
            keys.pop()
            return True
    return False


@given(st.lists(st.sampled_from("abcd"), max_size=30), st.lists(st.sampled_from("abcde"), max_size=40))
def test_the_error_index_cancels_exactly_as_kyverno_s_scan(keys, cancels):
    from assertree.languages.kyverno.pod_security.exclusions import ErrorIndex

    errors = [f"{key}{position}" for position, key in enumerate(keys)]
    plain_errors, plain_keys = list(errors), list(keys)
    index = ErrorIndex(errors, list(keys))
    for key in cancels:
        assert index.cancel(key) == _scan_and_swap(plain_errors, plain_keys, key)
        assert errors == plain_errors


def test_cancelling_is_linear_in_the_number_of_field_errors(monkeypatch):
    """A Pod made for the worst case of the plain scan (each cancel finds its error further down the list):
    each field error's key is computed a bounded number of times, not once per error before it."""
    from assertree.languages.kyverno.pod_security import exclusions

    calls = []
    where = exclusions._where
    monkeypatch.setattr(exclusions, "_where", lambda *args: calls.append(1) or where(*args))
    count = 2_000
    containers = [{"name": f"c{index}", "image": "tool", "securityContext": {"privileged": True}}
                  for index in range(count)]
    rule = policy({"level": "baseline", "exclude": [{"controlName": "Privileged Containers", "images": ["*"]}]})
    assert one(rule, pod({"containers": containers})).status == PASS
    assert len(calls) <= 2 * count  # the plain scan computes about count * count / 2 keys


def test_lint_warns_where_kyverno_would_check_a_privileged_level():
    from assertree.errors import Severity
    from assertree.languages.kyverno.language import lint_document

    [warning] = lint_document(policy({"level": "privileged"}))
    assert (warning.severity, warning.field) == (Severity.WARNING, "spec.rules[0].validate.podSecurity.level")
    assert "Kyverno 111e07bb runs every check" in warning.message
    assert list(lint_document(policy(BASELINE))) == []


def test_autogen_copies_the_pod_security_block_as_kyverno_s_json_round_trip_does():
    """``exclude: []`` makes the written rule a podSecurity rule (not empty), but Kyverno's autogen drops the
    empty list, so the controller rules are empty blocks that check nothing."""
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "namespace": "default"},
                  "spec": {"template": {"spec": PRIVILEGED_POD["spec"]}}}
    assert one(policy({"exclude": []}), PRIVILEGED_POD).status == FAIL
    assert run(policy({"exclude": []}), deployment) == {}
    assert run(policy({"level": "baseline", "exclude": []}), deployment)["autogen-pss"].status == FAIL
