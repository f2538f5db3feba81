"""The Pod Security Standards checks, one function per check revision, as upstream's ``policy/check_*.go``.

Written from kubernetes/pod-security-admission's ``policy/`` (the verdicts,
reasons and details) and Kyverno's fork of it (the field errors Kyverno's
exclusions and messages are made from), not translated line by line: each
function takes a decoded `Pod` and returns None when the Pod is allowed, else
a `Found` (reason, detail, field errors). Field errors list the pod-level
field first, then containers in the order upstream visits them (init
containers, containers, ephemeral containers); where upstream iterates a Go
map (annotations), they are sorted by key so results are deterministic.

Which revision runs at which version, and which checks make up a level, is
`registry`'s job.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from assertree.pss.pod import VOLUME_SOURCES, Pod
from assertree.pss.violations import FieldError, forbidden, go_quote, join_quote, plural, required


class Found(NamedTuple):
    """Why a check refused the Pod: upstream's reason and detail, and the field errors."""

    reason: str
    detail: str
    errors: tuple[FieldError, ...]


CheckFunction = Callable[[Pod], "Found | None"]


def _containers(names: list[str]) -> str:
    """``container "a"`` / ``containers "a", "b"``."""
    return f"{plural('container', 'containers', len(names))} {join_quote(names)}"


def _context(container: dict) -> dict | None:
    return container.get("securityContext")


# -- baseline ---------------------------------------------------------------------------------------------


def host_namespaces(pod: Pod) -> Found | None:
    """``spec.hostNetwork``, ``hostPID`` and ``hostIPC`` must be unset or false."""
    found = [(name, forbidden(f"spec.{name}", True)) for name in ("hostNetwork", "hostPID", "hostIPC")
             if pod.spec.get(name)]
    if not found:
        return None
    return Found("host namespaces", ", ".join(f"{name}=true" for name, _ in found), tuple(e for _, e in found))


def privileged(pod: Pod) -> Found | None:
    """``securityContext.privileged`` must be unset or false in every container."""
    bad, errors = [], []
    for path, container in pod.containers:
        if (_context(container) or {}).get("privileged") is True:
            bad.append(container.get("name", ""))
            errors.append(forbidden(f"{path}.securityContext.privileged", True))
    if not bad:
        return None
    return Found("privileged", f"{_containers(bad)} must not set securityContext.privileged=true", tuple(errors))


_BASELINE_CAPABILITIES = frozenset({"AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD",
                                    "NET_BIND_SERVICE", "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT"})


def capabilities_baseline(pod: Pod) -> Found | None:
    """``capabilities.add`` may hold only the container runtime's default capabilities."""
    bad, errors, added = [], [], set()
    for path, container in pod.containers:
        capabilities = (_context(container) or {}).get("capabilities")
        if capabilities is None:
            continue
        extra = sorted({c for c in capabilities.get("add") or () if c not in _BASELINE_CAPABILITIES})
        if extra:
            added.update(extra)
            bad.append(container.get("name", ""))
            errors.append(forbidden(f"{path}.securityContext.capabilities.add", tuple(extra)))
    if not bad:
        return None
    return Found("non-default capabilities", f"{_containers(bad)} must not include {join_quote(sorted(added))} "
                 "in securityContext.capabilities.add", tuple(errors))


def host_path_volumes(pod: Pod) -> Found | None:
    """No ``hostPath`` volumes."""
    bad, errors = [], []
    for index, volume in enumerate(pod.spec.get("volumes") or ()):
        if "hostPath" in volume:
            bad.append(volume.get("name", ""))
            errors.append(forbidden(f"spec.volumes[{index}].hostPath", volume["hostPath"].get("path", "")))
    if not bad:
        return None
    return Found("hostPath volumes", f"{plural('volume', 'volumes', len(bad))} {join_quote(bad)}", tuple(errors))


def host_ports(pod: Pod) -> Found | None:
    """Container ports must not set ``hostPort`` (0 means unset)."""
    bad: list[str] = []
    errors: list[FieldError] = []
    ports: set[str] = set()
    for path, container in pod.containers:
        mine = [(index, port["hostPort"]) for index, port in enumerate(container.get("ports") or ())
                if port.get("hostPort", 0) != 0]
        if mine:
            bad.append(container.get("name", ""))
            ports.update(str(number) for _, number in mine)
            errors.extend(forbidden(f"{path}.ports[{index}].hostPort", number) for index, number in mine)
    if not bad:
        return None
    return Found("hostPort", f"{_containers(bad)} {plural('uses', 'use', len(bad))} "
                 f"{plural('hostPort', 'hostPorts', len(ports))} {', '.join(sorted(ports))}", tuple(errors))


def host_probes_and_lifecycle(pod: Pod) -> Found | None:
    """Probes and lifecycle handlers must not set ``httpGet.host`` or ``tcpSocket.host`` (v1.34)."""
    bad, hosts = set(), set()
    for _, container in pod.containers:
        handlers = [container.get(probe) for probe in ("livenessProbe", "readinessProbe", "startupProbe")]
        lifecycle = container.get("lifecycle") or {}
        handlers += [lifecycle.get("postStart"), lifecycle.get("preStop")]
        for handler in handlers:
            mine = [(handler.get(action) or {}).get("host", "") for action in ("httpGet", "tcpSocket")] \
                if handler is not None else []
            mine = [host for host in mine if host]
            if mine:
                bad.add(container.get("name", ""))
                hosts.update(mine)
    if not bad:
        return None
    return Found("probe or lifecycle host", f"{_containers(sorted(bad))} {plural('uses', 'use', len(bad))} "
                 f"{plural('probe or lifecycle host', 'probe or lifecycle hosts', len(hosts))} "
                 f"{join_quote(sorted(hosts))}", ())


_APPARMOR_TYPES = frozenset({"RuntimeDefault", "Localhost"})
_APPARMOR_ANNOTATION = "container.apparmor.security.beta.kubernetes.io/"


def _apparmor_annotation_allowed(value: str) -> bool:
    return not value or value == "runtime/default" or value.startswith("localhost/")


def _profile_setters(pod: Pod, key: str, allowed: frozenset[str]) -> tuple[list[str], list[FieldError], set[str],
                                                                           bool]:
    """Who sets ``<key>.type`` (``seccompProfile``, ``appArmorProfile``) to a type not `allowed`: setters
    (``pod``, ``containers "a", "b"``), errors, bad types; and whether the pod sets an allowed one."""
    setters, errors, values = [], [], set()
    pod_set = False
    profile = (pod.security_context or {}).get(key)
    if profile is not None:
        if profile.get("type", "") in allowed:
            pod_set = True
        else:
            setters.append("pod")
            values.add(profile.get("type", ""))
            errors.append(forbidden(f"spec.securityContext.{key}.type", profile.get("type", "")))
    bad = []
    for path, container in pod.containers:
        profile = (_context(container) or {}).get(key)
        if profile is not None and profile.get("type", "") not in allowed:
            bad.append(container.get("name", ""))
            values.add(profile.get("type", ""))
            errors.append(forbidden(f"{path}.securityContext.{key}.type", profile.get("type", "")))
    if bad:
        setters.append(_containers(bad))
    return setters, errors, values, pod_set


def apparmor_profile(pod: Pod) -> Found | None:
    """AppArmor may be ``RuntimeDefault``/``Localhost`` (fields) or ``runtime/default``/``localhost/*``
    (the beta annotations); it must not be disabled or set to another profile."""
    setters, errors, values, _ = _profile_setters(pod, "appArmorProfile", _APPARMOR_TYPES)
    annotations = sorted((key, value) for key, value in pod.annotations.items()
                         if key.startswith(_APPARMOR_ANNOTATION) and not _apparmor_annotation_allowed(value))
    listed = sorted(values)
    if annotations:
        listed += sorted(f"{key}={go_quote(value)}" for key, value in annotations)
        setters.append(plural("annotation", "annotations", len(annotations)))
        errors.extend(forbidden(f"metadata.annotations[{key}]", value) for key, value in annotations)
    if not setters:
        return None
    return Found(plural("forbidden AppArmor profile", "forbidden AppArmor profiles", len(listed)),
                 f"{' and '.join(setters)} must not set AppArmor profile type to {join_quote(listed)}", tuple(errors))


_SELINUX_TYPES_1_0 = frozenset({"", "container_t", "container_init_t", "container_kvm_t"})
_SELINUX_TYPES_1_31 = _SELINUX_TYPES_1_0 | {"container_engine_t"}


def _se_linux_options(allowed: frozenset[str]) -> CheckFunction:
    def check(pod: Pod) -> Found | None:
        setters, errors, types = [], [], set()
        user = role = False

        def bad_options(options: dict, prefix: str) -> bool:
            nonlocal user, role
            valid = True
            for key in ("type", "user", "role"):
                value = options.get(key, "")
                if (key == "type" and value not in allowed) or (key != "type" and value):
                    valid = False
                    errors.append(forbidden(f"{prefix}.seLinuxOptions.{key}", value))
                    if key == "type":
                        types.add(value)
                    elif key == "user":
                        user = True
                    else:
                        role = True
            return not valid

        options = (pod.security_context or {}).get("seLinuxOptions")
        if options is not None and bad_options(options, "spec.securityContext"):
            setters.append("pod")
        bad = [container.get("name", "") for path, container in pod.containers
               if (options := (_context(container) or {}).get("seLinuxOptions")) is not None
               and bad_options(options, f"{path}.securityContext")]
        if bad:
            setters.append(_containers(bad))
        if not setters:
            return None
        what = [f"{plural('type', 'types', len(types))} {join_quote(sorted(types))}"] if types else []
        what += ["user may not be set"] if user else []
        what += ["role may not be set"] if role else []
        return Found("seLinuxOptions", f"{' and '.join(setters)} set forbidden securityContext.seLinuxOptions: "
                     f"{'; '.join(what)}", tuple(errors))

    return check


se_linux_options_1_0 = _se_linux_options(_SELINUX_TYPES_1_0)
se_linux_options_1_31 = _se_linux_options(_SELINUX_TYPES_1_31)


def proc_mount_1_0(pod: Pod) -> Found | None:
    """``securityContext.procMount`` must be unset or ``Default``."""
    bad, errors, types = [], [], set()
    for path, container in pod.containers:
        mount = (_context(container) or {}).get("procMount")
        if mount is not None and mount != "Default":
            bad.append(container.get("name", ""))
            types.add(mount)
            errors.append(forbidden(f"{path}.securityContext.procMount", mount))
    if not bad:
        return None
    return Found("procMount", f"{_containers(bad)} must not set securityContext.procMount to "
                 f"{join_quote(sorted(types))}", tuple(errors))


def proc_mount_1_35(pod: Pod) -> Found | None:
    """`proc_mount_1_0`, except that any value is allowed in a user namespace (``hostUsers: false``)."""
    return None if pod.in_user_namespace else proc_mount_1_0(pod)


_SECCOMP_TYPES = frozenset({"RuntimeDefault", "Localhost"})
_SECCOMP_POD_ANNOTATION = "seccomp.security.alpha.kubernetes.io/pod"
_SECCOMP_CONTAINER_ANNOTATION = "container.seccomp.security.alpha.kubernetes.io/"


def _seccomp_annotation_allowed(value: str) -> bool:
    return value in ("runtime/default", "docker/default") or value.startswith("localhost/")


def seccomp_profile_baseline_1_0(pod: Pod) -> Found | None:
    """Before v1.19: the seccomp annotations may only name the runtime's default or a local profile."""
    keys = [_SECCOMP_POD_ANNOTATION] + [_SECCOMP_CONTAINER_ANNOTATION + container.get("name", "")
                                        for _, container in pod.containers]
    annotations = pod.annotations
    bad = sorted({(f"{key}={go_quote(annotations[key])}", key) for key in keys
                  if key in annotations and not _seccomp_annotation_allowed(annotations[key])})
    if not bad:
        return None
    errors = tuple(forbidden(f"metadata.annotations[{key}]", annotations[key]) for _, key in bad)
    return Found("seccompProfile", f"forbidden {plural('annotation', 'annotations', len(bad))} "
                 f"{', '.join(text for text, _ in bad)}", errors)


def _seccomp_found(setters: list[str], errors: list[FieldError], values: set[str]) -> Found:
    return Found("seccompProfile", f"{' and '.join(setters)} must not set securityContext.seccompProfile.type to "
                 f"{join_quote(sorted(values))}", tuple(errors))


def seccomp_profile_baseline_1_19(pod: Pod) -> Found | None:
    """From v1.19: ``seccompProfile.type``, where set, must be ``RuntimeDefault`` or ``Localhost``."""
    setters, errors, values, _ = _profile_setters(pod, "seccompProfile", _SECCOMP_TYPES)
    return _seccomp_found(setters, errors, values) if setters else None


_SYSCTLS_1_0 = frozenset({"kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range", "net.ipv4.tcp_syncookies",
                          "net.ipv4.ping_group_range", "net.ipv4.ip_unprivileged_port_start"})
_SYSCTLS_1_27 = _SYSCTLS_1_0 | {"net.ipv4.ip_local_reserved_ports"}
_SYSCTLS_1_29 = _SYSCTLS_1_27 | {"net.ipv4.tcp_keepalive_time", "net.ipv4.tcp_fin_timeout",
                                 "net.ipv4.tcp_keepalive_intvl", "net.ipv4.tcp_keepalive_probes"}
_SYSCTLS_1_32 = _SYSCTLS_1_29 | {"net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem"}
_SYSCTLS_1_37 = _SYSCTLS_1_32 | {"net.ipv4.tcp_slow_start_after_idle", "net.ipv4.tcp_notsent_lowat"}


def _sysctls(allowed: frozenset[str]) -> CheckFunction:
    def check(pod: Pod) -> Found | None:
        sysctls = (pod.security_context or {}).get("sysctls") or ()
        bad = [(index, sysctl.get("name", "")) for index, sysctl in enumerate(sysctls)
               if sysctl.get("name", "") not in allowed]
        if not bad:
            return None
        return Found("forbidden sysctls", ", ".join(name for _, name in bad),
                     tuple(forbidden(f"spec.securityContext.sysctls[{index}].name", name) for index, name in bad))

    return check


sysctls_1_0, sysctls_1_27, sysctls_1_29, sysctls_1_32, sysctls_1_37 = (
    _sysctls(allowed) for allowed in (_SYSCTLS_1_0, _SYSCTLS_1_27, _SYSCTLS_1_29, _SYSCTLS_1_32, _SYSCTLS_1_37))


def windows_host_process(pod: Pod) -> Found | None:
    """``windowsOptions.hostProcess`` must be unset or false, on the pod and every container."""
    setters, errors = [], []
    if ((pod.security_context or {}).get("windowsOptions") or {}).get("hostProcess") is True:
        setters.append("pod")
        errors.append(forbidden("spec.securityContext.windowsOptions.hostProcess", True))
    bad = []
    for path, container in pod.containers:
        if (((_context(container) or {}).get("windowsOptions") or {}).get("hostProcess")) is True:
            bad.append(container.get("name", ""))
            errors.append(forbidden(f"{path}.securityContext.windowsOptions.hostProcess", True))
    if bad:
        setters.append(_containers(bad))
    if not setters:
        return None
    return Found("hostProcess", f"{' and '.join(setters)} must not set securityContext.windowsOptions.hostProcess="
                 "true", tuple(errors))


# -- restricted -------------------------------------------------------------------------------------------


_ALLOWED_VOLUMES = frozenset({"configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "image",
                              "persistentVolumeClaim", "projected", "secret"})
_RESTRICTED_VOLUMES = tuple(source for source in VOLUME_SOURCES if source not in _ALLOWED_VOLUMES)


def restricted_volumes(pod: Pod) -> Found | None:
    """Inline volumes may only be configMap, csi, downwardAPI, emptyDir, ephemeral, image,
    persistentVolumeClaim, projected or secret."""
    bad, errors, kinds = [], [], set()
    for index, volume in enumerate(pod.spec.get("volumes") or ()):
        if any(source in volume for source in _ALLOWED_VOLUMES):
            continue
        kind = next((source for source in _RESTRICTED_VOLUMES if source in volume), "unknown")
        bad.append(volume.get("name", ""))
        kinds.add(kind)
        errors.append(forbidden(f"spec.volumes[{index}].{kind}"))
    if not bad:
        return None
    return Found("restricted volume types", f"{plural('volume', 'volumes', len(bad))} {join_quote(bad)} "
                 f"{plural('uses', 'use', len(bad))} "
                 f"{plural('restricted volume type', 'restricted volume types', len(kinds))} "
                 f"{join_quote(sorted(kinds))}", tuple(errors))


def allow_privilege_escalation_1_8(pod: Pod) -> Found | None:
    """Every container must set ``securityContext.allowPrivilegeEscalation: false``."""
    bad, errors = [], []
    for path, container in pod.containers:
        context = _context(container)
        field = f"{path}.securityContext.allowPrivilegeEscalation"
        if context is None:
            errors.append(required(field))
        elif context.get("allowPrivilegeEscalation") is None:
            errors.append(forbidden(field, "nil"))
        elif context["allowPrivilegeEscalation"]:
            errors.append(forbidden(field, True))
        else:
            continue
        bad.append(container.get("name", ""))
    if not bad:
        return None
    return Found("allowPrivilegeEscalation != false",
                 f"{_containers(bad)} must set securityContext.allowPrivilegeEscalation=false", tuple(errors))


def _not_on_windows(check: CheckFunction) -> CheckFunction:
    """From v1.25 some restricted checks do not apply to Pods with ``spec.os.name: windows``."""
    def on_linux(pod: Pod) -> Found | None:
        return None if pod.windows else check(pod)

    return on_linux


allow_privilege_escalation_1_25 = _not_on_windows(allow_privilege_escalation_1_8)


def run_as_non_root_1_0(pod: Pod) -> Found | None:
    """The pod, or else every container, must set ``runAsNonRoot: true``; none may set it false."""
    setters, errors, implicit, implicit_errors = [], [], [], []
    pod_non_root = False
    value = (pod.security_context or {}).get("runAsNonRoot")
    if value is False:
        setters.append("pod")
        errors.append(forbidden("spec.securityContext.runAsNonRoot", False))
    elif value is True:
        pod_non_root = True
    explicit = []
    for path, container in pod.containers:
        value = (_context(container) or {}).get("runAsNonRoot")
        if value is False:
            explicit.append(container.get("name", ""))
            errors.append(forbidden(f"{path}.securityContext.runAsNonRoot", False))
        elif value is None and not pod_non_root:
            implicit.append(container.get("name", ""))
            implicit_errors.append(required(f"{path}.securityContext.runAsNonRoot"))
    if explicit:
        setters.append(_containers(explicit))
    if setters:
        detail = f"{' and '.join(setters)} must not set securityContext.runAsNonRoot=false"
    elif implicit:
        detail = f"pod or {_containers(implicit)} must set securityContext.runAsNonRoot=true"
    else:
        return None
    return Found("runAsNonRoot != true", detail, (*errors, *implicit_errors))


def run_as_user_1_23(pod: Pod) -> Found | None:
    """Neither the pod nor a container may set ``runAsUser: 0``."""
    setters, errors = [], []
    if (pod.security_context or {}).get("runAsUser") == 0:
        setters.append("pod")
        errors.append(forbidden("spec.securityContext.runAsUser", 0))
    bad = []
    for path, container in pod.containers:
        if (_context(container) or {}).get("runAsUser") == 0:
            bad.append(container.get("name", ""))
            errors.append(forbidden(f"{path}.securityContext.runAsUser", 0))
    if bad:
        setters.append(_containers(bad))
    if not setters:
        return None
    return Found("runAsUser=0", f"{' and '.join(setters)} must not set runAsUser=0", tuple(errors))


def _relaxed_in_user_namespace(check: CheckFunction) -> CheckFunction:
    """From v1.35 the root-user checks allow any value in a user namespace (``hostUsers: false``)."""
    def outside_user_namespace(pod: Pod) -> Found | None:
        return None if pod.in_user_namespace else check(pod)

    return outside_user_namespace


run_as_non_root_1_35 = _relaxed_in_user_namespace(run_as_non_root_1_0)
run_as_user_1_35 = _relaxed_in_user_namespace(run_as_user_1_23)


def seccomp_profile_restricted_1_19(pod: Pod) -> Found | None:
    """The pod, or else every container, must set ``seccompProfile.type`` to ``RuntimeDefault`` or
    ``Localhost``; none may set another type."""
    setters, errors, values, pod_set = _profile_setters(pod, "seccompProfile", _SECCOMP_TYPES)
    if setters:
        return _seccomp_found(setters, errors, values)
    implicit = [(path, container.get("name", "")) for path, container in pod.containers
                if (_context(container) or {}).get("seccompProfile") is None and not pod_set]
    if not implicit:
        return None
    return Found("seccompProfile", f"pod or {_containers([name for _, name in implicit])} must set "
                 'securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost"',
                 tuple(required(f"{path}.securityContext.seccompProfile.type") for path, _ in implicit))


seccomp_profile_restricted_1_25 = _not_on_windows(seccomp_profile_restricted_1_19)


def capabilities_restricted_1_22(pod: Pod) -> Found | None:
    """Every container must drop ``ALL`` capabilities and may add only ``NET_BIND_SERVICE``."""
    missing, missing_errors, adding, adding_errors, added = [], [], [], [], set()
    for path, container in pod.containers:
        name = container.get("name", "")
        field = f"{path}.securityContext.capabilities"
        capabilities = (_context(container) or {}).get("capabilities")
        if capabilities is None:
            missing.append(name)
            missing_errors.append(required(f"{field}.drop"))
            continue
        drop = capabilities.get("drop") or []
        if "ALL" not in drop:
            missing.append(name)
            missing_errors.append(forbidden(f"{field}.drop", tuple(sorted(set(drop)))) if drop
                                  else required(f"{field}.drop"))
        extra = sorted({c for c in capabilities.get("add") or () if c != "NET_BIND_SERVICE"})
        if extra:
            adding.append(name)
            added.update(extra)
            adding_errors.append(forbidden(f"{field}.add", tuple(extra)))
    details = [f'{_containers(missing)} must set securityContext.capabilities.drop=["ALL"]'] if missing else []
    if adding:
        details.append(f"{_containers(adding)} must not include {join_quote(sorted(added))} "
                       "in securityContext.capabilities.add")
    if not details:
        return None
    return Found("unrestricted capabilities", "; ".join(details), (*missing_errors, *adding_errors))


capabilities_restricted_1_25 = _not_on_windows(capabilities_restricted_1_22)
