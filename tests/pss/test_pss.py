"""The Pod Security Standards library: decoding, versions, check selection, and what a failed check says.

The verdicts on upstream's fixtures are `tests/conformance/test_pod_security.py`; these tests pin what the
fixtures cannot show: Go's decoding, the field errors Kyverno's fork adds, and the version rules.
"""

from __future__ import annotations

import pytest

from assertree.pss import (
    BASELINE,
    FORBIDDEN,
    LATEST,
    PRIVILEGED,
    REQUIRED,
    RESTRICTED,
    FieldError,
    PodDecodeError,
    checks_for,
    decode_pod,
    evaluate,
    newest_version,
    parse_level,
    parse_version,
)

V = parse_version


def pod(spec=None, metadata=None):
    return decode_pod(metadata or {"name": "p"}, spec or {"containers": [{"name": "app"}]})


def failed(spec, level=BASELINE, version="latest", metadata=None):
    return {violation.check: violation for violation in evaluate(pod(spec, metadata), level, V(version))}


RESTRICTED_CONTAINER = {"name": "app", "securityContext": {
    "allowPrivilegeEscalation": False, "runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"},
    "capabilities": {"drop": ["ALL"]}}}


# -- versions and levels -------------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["v1.0", "v1.9", "v1.25", "v1.137", "latest"])
def test_versions_kubernetes_accepts(text):
    assert str(parse_version(text)) == text


@pytest.mark.parametrize("text", ["v1.01", "1.25", "v2.0", "v1.25.3", "Latest", "", "v1."])
def test_versions_kubernetes_refuses(text):
    with pytest.raises(ValueError, match=r'"latest" or "v1\.x"'):
        parse_version(text)


def test_latest_orders_after_every_version_and_runs_the_newest_revisions():
    assert V("v1.9") < V("v1.10") < V("v1.99") < LATEST
    assert newest_version() == V("v1.37")
    assert checks_for(RESTRICTED, LATEST) == checks_for(RESTRICTED, V("v1.37")) == checks_for(RESTRICTED, V("v1.99"))


def test_levels():
    assert parse_level("baseline") == BASELINE
    with pytest.raises(ValueError):
        parse_level("Baseline")
    with pytest.raises(ValueError):
        checks_for("strict", LATEST)


def test_privileged_runs_no_check():
    assert checks_for(PRIVILEGED, LATEST) == ()
    assert evaluate(pod({"hostNetwork": True, "containers": [{"name": "c", "securityContext": {"privileged": True}}]}),
                    PRIVILEGED) == []


def test_a_check_runs_from_its_first_revision_on():
    ids = {version: {check.id for check in checks_for(RESTRICTED, V(version))} for version in ("v1.7", "v1.8",
                                                                                                   "v1.21", "v1.22",
                                                                                                   "v1.33", "v1.34")}
    assert "allowPrivilegeEscalation" not in ids["v1.7"] and "allowPrivilegeEscalation" in ids["v1.8"]
    assert "capabilities_restricted" not in ids["v1.21"] and "capabilities_restricted" in ids["v1.22"]
    assert "hostProbesAndHostLifecycle" not in ids["v1.33"] and "hostProbesAndHostLifecycle" in ids["v1.34"]


def test_restricted_replaces_the_baseline_checks_it_overrides():
    at_restricted = [check.id for check in checks_for(RESTRICTED, V("v1.30"))]
    assert "capabilities_baseline" not in at_restricted and "capabilities_restricted" in at_restricted
    assert "hostPathVolumes" not in at_restricted and "restrictedVolumes" in at_restricted
    assert "seccompProfile_baseline" not in at_restricted
    # before v1.22 there is no restricted capabilities check, so the baseline one runs
    assert "capabilities_baseline" in [check.id for check in checks_for(RESTRICTED, V("v1.21"))]
    assert "procMount" in [c.id for c in checks_for(RESTRICTED, V("v1.34"))]
    assert "procMount_restricted" in [c.id for c in checks_for(RESTRICTED, V("v1.35"))]


def test_windows_pods_skip_three_restricted_checks_from_v1_25():
    windows = {"os": {"name": "windows"}, "securityContext": {"runAsNonRoot": True},
               "containers": [{"name": "app", "securityContext": {"capabilities": {"add": ["SYS_ADMIN"]}}}]}
    assert set(failed(windows, RESTRICTED, "v1.24")) == {"allowPrivilegeEscalation", "capabilities_restricted",
                                                          "seccompProfile_restricted"}
    assert set(failed(windows, RESTRICTED, "v1.25")) == set()
    # baseline still refuses the capability: only the restricted check has the Windows exemption
    assert set(failed(windows, BASELINE, "v1.25")) == {"capabilities_baseline"}


def test_user_namespaces_relax_the_root_checks_from_v1_35():
    root = {"hostUsers": False, "securityContext": {"runAsUser": 0, "runAsNonRoot": False, "seccompProfile": {
        "type": "RuntimeDefault"}}, "containers": [{**RESTRICTED_CONTAINER, "securityContext": {
            **RESTRICTED_CONTAINER["securityContext"], "procMount": "Unmasked", "runAsNonRoot": None}}]}
    assert set(failed(root, RESTRICTED, "v1.34")) == {"runAsNonRoot", "runAsUser", "procMount"}
    assert set(failed(root, RESTRICTED, "v1.35")) == {"procMount_restricted"}
    assert set(failed(root, BASELINE, "v1.35")) == set()


def test_sysctls_allowed_grow_with_the_version():
    spec = {"securityContext": {"sysctls": [{"name": "net.ipv4.tcp_rmem", "value": "1"},
                                            {"name": "net.ipv4.tcp_notsent_lowat", "value": "1"}]},
            "containers": [{"name": "app"}]}
    assert failed(spec, version="v1.31")["sysctls"].detail == "net.ipv4.tcp_rmem, net.ipv4.tcp_notsent_lowat"
    assert failed(spec, version="v1.32")["sysctls"].detail == "net.ipv4.tcp_notsent_lowat"
    assert "sysctls" not in failed(spec, version="v1.37")


# -- decoding as Go does -------------------------------------------------------------------------------


@pytest.mark.parametrize(("spec", "path", "text"), [
    ({"hostNetwork": "true"}, ("spec", "hostNetwork"), "must be a boolean, not a string"),
    ({"containers": {}}, ("spec", "containers"), "must be an array, not an object"),
    ({"containers": ["app"]}, ("spec", "containers", 0), "must be an object, not a string"),
    ({"containers": [{"ports": [{"hostPort": 80.5}]}]}, ("spec", "containers", 0, "ports", 0, "hostPort"),
     "must be an integer (int32), not 80.5"),
    ({"containers": [{"ports": [{"hostPort": 2**31}]}]}, ("spec", "containers", 0, "ports", 0, "hostPort"),
     "within int32"),
    ({"securityContext": {"runAsUser": True}}, ("spec", "securityContext", "runAsUser"), "integer (int64)"),
    ({"containers": [{"securityContext": {"capabilities": {"add": [1]}}}]},
     ("spec", "containers", 0, "securityContext", "capabilities", "add", 0), "must be a string, not a number"),
])
def test_a_field_of_the_wrong_type_cannot_be_decoded(spec, path, text):
    with pytest.raises(PodDecodeError) as raised:
        decode_pod({}, spec)
    assert raised.value.path == path
    assert text in str(raised.value)


def test_annotations_must_be_strings_and_paths_can_be_placed():
    with pytest.raises(PodDecodeError) as raised:
        decode_pod({"annotations": {"a": 1}}, {}, metadata_at=("spec", "template", "metadata"))
    assert raised.value.path == ("spec", "template", "metadata", "annotations", "a")


def test_fields_no_check_reads_are_ignored():
    decode_pod({"labels": {"a": 1}}, {"replicas": "x", "containers": [{"resources": 7, "name": "app"}]})


def test_null_is_the_zero_value():
    decoded = pod({"hostNetwork": None, "securityContext": None, "containers": [None, {"name": None,
                                                                                       "securityContext": None}]})
    assert decoded.spec == {"containers": [{}, {}]}
    assert failed({"containers": [{"name": "app", "securityContext": {"privileged": None}}]}) == {}


def test_a_present_empty_struct_is_set():
    """``seccompProfile: {}`` is a profile of type "" (refused); an absent one is not set."""
    result = failed({"securityContext": {"seccompProfile": {}}, "containers": [{"name": "app"}]})
    assert result["seccompProfile_baseline"].errors == (
        FieldError(FORBIDDEN, "spec.securityContext.seccompProfile.type", ""),)
    assert "seccompProfile_baseline" not in failed({"containers": [{"name": "app"}]})


def test_integral_floats_are_integers():
    """Kyverno reads numbers as float64; 80.0 is the port 80."""
    result = failed({"containers": [{"name": "app", "ports": [{"hostPort": 80.0}]}]})
    assert result["hostPorts"].errors == (FieldError(FORBIDDEN, "spec.containers[0].ports[0].hostPort", 80),)


def test_a_volume_without_a_source_is_an_empty_dir_as_the_api_server_defaults_it():
    decoded = pod({"volumes": [{"name": "scratch"}], "containers": [{"name": "app"}]})
    assert decoded.spec["volumes"] == [{"name": "scratch", "emptyDir": True}]
    spec = {"volumes": [{"name": "scratch", "awsElasticBlockStore": None}], "containers": [RESTRICTED_CONTAINER]}
    assert failed(spec, RESTRICTED) == {}


# -- what failed checks say ----------------------------------------------------------------------------


def test_containers_are_visited_init_first_then_regular_then_ephemeral():
    spec = {"containers": [{"name": "c", "securityContext": {"privileged": True}}],
            "initContainers": [{"name": "i", "securityContext": {"privileged": True}}],
            "ephemeralContainers": [{"name": "e", "securityContext": {"privileged": True}}]}
    violation = failed(spec)["privileged"]
    assert violation.detail == 'containers "i", "c", "e" must not set securityContext.privileged=true'
    assert [error.field for error in violation.errors] == [
        "spec.initContainers[0].securityContext.privileged", "spec.containers[0].securityContext.privileged",
        "spec.ephemeralContainers[0].securityContext.privileged"]


def test_allow_privilege_escalation_field_errors():
    spec = {"containers": [{"name": "a"}, {"name": "b", "securityContext": {}},
                           {"name": "c", "securityContext": {"allowPrivilegeEscalation": True}},
                           {"name": "d", "securityContext": {"allowPrivilegeEscalation": False}}]}
    violation = failed(spec, RESTRICTED)["allowPrivilegeEscalation"]
    assert violation.reason == "allowPrivilegeEscalation != false"
    assert violation.detail == 'containers "a", "b", "c" must set securityContext.allowPrivilegeEscalation=false'
    assert violation.errors == (
        FieldError(REQUIRED, "spec.containers[0].securityContext.allowPrivilegeEscalation"),
        FieldError(FORBIDDEN, "spec.containers[1].securityContext.allowPrivilegeEscalation", "nil"),
        FieldError(FORBIDDEN, "spec.containers[2].securityContext.allowPrivilegeEscalation", True))


def test_capabilities_restricted_lists_missing_drops_before_forbidden_adds():
    spec = {"containers": [{"name": "a", "securityContext": {"capabilities": {"add": ["SYS_ADMIN", "NET_RAW",
                                                                                       "NET_RAW"]}}},
                           {"name": "b"}, {"name": "c", "securityContext": {"capabilities": {"drop": ["NET_RAW"]}}}]}
    violation = failed(spec, RESTRICTED)["capabilities_restricted"]
    assert violation.detail == ('containers "a", "b", "c" must set securityContext.capabilities.drop=["ALL"]; '
                                'container "a" must not include "NET_RAW", "SYS_ADMIN" in '
                                "securityContext.capabilities.add")
    assert violation.errors == (
        FieldError(REQUIRED, "spec.containers[0].securityContext.capabilities.drop"),
        FieldError(REQUIRED, "spec.containers[1].securityContext.capabilities.drop"),
        FieldError(FORBIDDEN, "spec.containers[2].securityContext.capabilities.drop", ("NET_RAW",)),
        FieldError(FORBIDDEN, "spec.containers[0].securityContext.capabilities.add", ("NET_RAW", "SYS_ADMIN")))


def test_run_as_non_root_reports_explicit_and_implicit_containers():
    spec = {"securityContext": {"runAsNonRoot": False},
            "containers": [{"name": "a", "securityContext": {"runAsNonRoot": False}}, {"name": "b"}]}
    violation = failed(spec, RESTRICTED)["runAsNonRoot"]
    assert violation.detail == 'pod and container "a" must not set securityContext.runAsNonRoot=false'
    assert violation.errors == (FieldError(FORBIDDEN, "spec.securityContext.runAsNonRoot", False),
                                FieldError(FORBIDDEN, "spec.containers[0].securityContext.runAsNonRoot", False),
                                FieldError(REQUIRED, "spec.containers[1].securityContext.runAsNonRoot"))


def test_apparmor_annotations_are_sorted_and_quoted_as_go_quotes():
    metadata = {"annotations": {"container.apparmor.security.beta.kubernetes.io/b": "unconfined",
                                "container.apparmor.security.beta.kubernetes.io/a": 'x"\n'}}
    violation = failed({"containers": [{"name": "a"}, {"name": "b"}]}, metadata=metadata)["appArmorProfile"]
    assert violation.reason == "forbidden AppArmor profiles"
    assert violation.detail == ('annotations must not set AppArmor profile type to '
                                '"container.apparmor.security.beta.kubernetes.io/a="x\\"\\n"", '
                                '"container.apparmor.security.beta.kubernetes.io/b="unconfined""')
    assert [error.field for error in violation.errors] == [
        "metadata.annotations[container.apparmor.security.beta.kubernetes.io/a]",
        "metadata.annotations[container.apparmor.security.beta.kubernetes.io/b]"]


def test_seccomp_annotations_before_v1_19():
    metadata = {"annotations": {"seccomp.security.alpha.kubernetes.io/pod": "unconfined"}}
    spec = {"containers": [{"name": "app"}]}
    assert failed(spec, version="v1.18", metadata=metadata)["seccompProfile_baseline"].detail == (
        'forbidden annotation seccomp.security.alpha.kubernetes.io/pod="unconfined"')
    assert failed(spec, version="v1.19", metadata=metadata) == {}


def test_host_ports_and_volumes_carry_their_values():
    spec = {"volumes": [{"name": "v", "hostPath": {"path": "/etc"}}],
            "containers": [{"name": "app", "ports": [{"hostPort": 8080}, {"containerPort": 80}, {"hostPort": 80}]}]}
    result = failed(spec)
    assert result["hostPorts"].detail == 'container "app" uses hostPorts 80, 8080'
    assert [error.bad_value for error in result["hostPorts"].errors] == [8080, 80]
    assert result["hostPathVolumes"].errors == (FieldError(FORBIDDEN, "spec.volumes[0].hostPath", "/etc"),)
    restricted = failed(spec, RESTRICTED)["restrictedVolumes"]
    assert restricted.detail == 'volume "v" uses restricted volume type "hostPath"'
    assert restricted.errors == (FieldError(FORBIDDEN, "spec.volumes[0].hostPath"),)


def test_probe_hosts_have_no_field_errors():
    spec = {"containers": [{"name": "app", "livenessProbe": {"httpGet": {"host": "10.0.0.1", "port": 80}},
                            "lifecycle": {"preStop": {"tcpSocket": {"host": "a", "port": 1}}}}]}
    violation = failed(spec)["hostProbesAndHostLifecycle"]
    assert violation.detail == 'container "app" uses probe or lifecycle hosts "10.0.0.1", "a"'
    assert violation.errors == ()
    assert "hostProbesAndHostLifecycle" not in failed(spec, version="v1.33")


def test_field_error_text_is_go_s():
    assert str(FieldError(REQUIRED, "spec.x")) == "spec.x: Required value"
    assert str(FieldError(FORBIDDEN, "spec.x", True)) == "spec.x: Forbidden"
