"""Kyverno's names for the Pod Security Standards: levels, versions and controls (``pkg/pss/utils``).

Kyverno's CRD (``api/kyverno/v1/common_types.go`` at kyverno/kyverno
111e07bb) accepts ``level`` privileged, baseline or restricted and
``version`` v1.19 to v1.32 or ``latest`` (the default). ``latest`` is not
"the newest Kubernetes": it is the newest check revisions of the library
Kyverno is built with, kyverno/pod-security-admission (a fork of
k8s.io/pod-security-admission, branch release-1.34, commit 46f2077), which
are upstream's v1.34 checks. `KYVERNO_LATEST` is that version; the v1.35+
revisions (user-namespace relaxations, more allowed sysctls) are not in it.

An exclusion names a *control* (``"Capabilities"``), which Kyverno maps to
one or more check IDs; some controls are pod-level (they may not name
images), some container-level (they must), and six are restricted-only (a
baseline rule may not exclude them, except Seccomp and Capabilities, which
have a baseline check too).
"""

from __future__ import annotations

from assertree.pss import Version, parse_version

KYVERNO_LATEST: Version = parse_version("v1.34")

CONTROL_CHECKS: dict[str, tuple[str, ...]] = {
    "Capabilities": ("capabilities_baseline", "capabilities_restricted"),
    "Seccomp": ("seccompProfile_baseline", "seccompProfile_restricted"),
    "Privileged Containers": ("privileged",),
    "Host Ports": ("hostPorts",),
    "/proc Mount Type": ("procMount",),
    "HostProcess": ("windowsHostProcess",),
    "SELinux": ("seLinuxOptions",),
    "Host Namespaces": ("hostNamespaces",),
    "HostPath Volumes": ("hostPathVolumes",),
    "Sysctls": ("sysctls",),
    "AppArmor": ("appArmorProfile",),
    "Privilege Escalation": ("allowPrivilegeEscalation",),
    "Running as Non-root": ("runAsNonRoot",),
    "Running as Non-root user": ("runAsUser",),
    "Volume Types": ("restrictedVolumes",),
}
# The CRD's enum, in its order (the policy schema holds the same list).
CONTROL_NAMES = ("HostProcess", "Host Namespaces", "Privileged Containers", "Capabilities", "HostPath Volumes",
                 "Host Ports", "AppArmor", "SELinux", "/proc Mount Type", "Seccomp", "Sysctls", "Volume Types",
                 "Privilege Escalation", "Running as Non-root", "Running as Non-root user")
RESTRICTED_CONTROLS = frozenset({"Volume Types", "Privilege Escalation", "Running as Non-root",
                                 "Running as Non-root user", "Seccomp", "Capabilities"})
BOTH_LEVEL_CONTROLS = frozenset({"Seccomp", "Capabilities"})  # restricted controls a baseline rule may exclude
POD_LEVEL_CONTROLS = frozenset({"Host Namespaces", "HostPath Volumes", "Sysctls", "Volume Types"})
CONTAINER_LEVEL_CONTROLS = frozenset({"Capabilities", "Privileged Containers", "Host Ports", "/proc Mount Type",
                                      "Privilege Escalation"})


def rule_version(text: str) -> Version:
    """The checks' version for a rule's ``version`` as written (empty and ``latest``: `KYVERNO_LATEST`)."""
    return KYVERNO_LATEST if text in ("", "latest") else parse_version(text)
