"""Which checks make up a level at a version, and running them on a Pod (upstream's ``policy/registry.go``).

`CHECKS` lists every check with its revisions, in the order upstream
registers them (the order of its ``check_*.go`` files, which is also the
order Kyverno reports them in). For a level and a version (`checks_for`):

- ``privileged`` runs nothing;
- ``baseline`` runs the baseline checks, ``restricted`` the baseline and the
  restricted checks;
- a check runs only from its first revision's minimum version on, and runs
  the newest revision whose minimum version is not newer than the version
  asked for (``latest`` gets the newest revision of every check);
- at ``restricted``, a restricted revision that overrides a baseline check
  (``capabilities_restricted`` overrides ``capabilities_baseline``,
  ``restrictedVolumes`` overrides ``hostPathVolumes``, ...) replaces it.

The selection is made once (`checks_for` is cached); `evaluate` then only
calls the selected functions.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from assertree.pss import checks as c
from assertree.pss.checks import CheckFunction
from assertree.pss.pod import Pod
from assertree.pss.versions import BASELINE, LATEST, PRIVILEGED, RESTRICTED, Version, v
from assertree.pss.violations import Violation

__all__ = ["CHECKS", "Check", "Revision", "SelectedCheck", "checks_for", "evaluate", "newest_version", "run_checks"]


@dataclass(frozen=True)
class Revision:
    """One revision of a check: from `minimum` on, `run` decides; `overrides` names replaced baseline checks."""

    minimum: Version
    run: CheckFunction
    overrides: tuple[str, ...] = ()


@dataclass(frozen=True)
class Check:
    """A check (``privileged``, ``runAsNonRoot``, ...): its level and its revisions, oldest first."""

    id: str
    level: str
    revisions: tuple[Revision, ...]


@dataclass(frozen=True)
class SelectedCheck:
    """The revision of a check that runs at some version."""

    id: str
    level: str
    run: CheckFunction


def _check(id_: str, level: str, *revisions: Revision) -> Check:
    return Check(id_, level, revisions)


CHECKS: tuple[Check, ...] = (
    _check("allowPrivilegeEscalation", RESTRICTED, Revision(v(8), c.allow_privilege_escalation_1_8),
           Revision(v(25), c.allow_privilege_escalation_1_25)),
    _check("appArmorProfile", BASELINE, Revision(v(0), c.apparmor_profile)),
    _check("capabilities_baseline", BASELINE, Revision(v(0), c.capabilities_baseline)),
    _check("capabilities_restricted", RESTRICTED,
           Revision(v(22), c.capabilities_restricted_1_22, ("capabilities_baseline",)),
           Revision(v(25), c.capabilities_restricted_1_25, ("capabilities_baseline",))),
    _check("hostNamespaces", BASELINE, Revision(v(0), c.host_namespaces)),
    _check("hostPathVolumes", BASELINE, Revision(v(0), c.host_path_volumes)),
    _check("hostPorts", BASELINE, Revision(v(0), c.host_ports)),
    _check("hostProbesAndHostLifecycle", BASELINE, Revision(v(34), c.host_probes_and_lifecycle)),
    _check("privileged", BASELINE, Revision(v(0), c.privileged)),
    _check("procMount", BASELINE, Revision(v(0), c.proc_mount_1_0), Revision(v(35), c.proc_mount_1_35)),
    _check("procMount_restricted", RESTRICTED, Revision(v(35), c.proc_mount_1_0, ("procMount",))),
    _check("restrictedVolumes", RESTRICTED, Revision(v(0), c.restricted_volumes, ("hostPathVolumes",))),
    _check("runAsNonRoot", RESTRICTED, Revision(v(0), c.run_as_non_root_1_0), Revision(v(35), c.run_as_non_root_1_35)),
    _check("runAsUser", RESTRICTED, Revision(v(23), c.run_as_user_1_23), Revision(v(35), c.run_as_user_1_35)),
    _check("seLinuxOptions", BASELINE, Revision(v(0), c.se_linux_options_1_0),
           Revision(v(31), c.se_linux_options_1_31)),
    _check("seccompProfile_baseline", BASELINE, Revision(v(0), c.seccomp_profile_baseline_1_0),
           Revision(v(19), c.seccomp_profile_baseline_1_19)),
    _check("seccompProfile_restricted", RESTRICTED,
           Revision(v(19), c.seccomp_profile_restricted_1_19, ("seccompProfile_baseline",)),
           Revision(v(25), c.seccomp_profile_restricted_1_25, ("seccompProfile_baseline",))),
    _check("sysctls", BASELINE, Revision(v(0), c.sysctls_1_0), Revision(v(27), c.sysctls_1_27),
           Revision(v(29), c.sysctls_1_29), Revision(v(32), c.sysctls_1_32), Revision(v(37), c.sysctls_1_37)),
    _check("windowsHostProcess", BASELINE, Revision(v(0), c.windows_host_process)),
)


def newest_version() -> Version:
    """The newest version any revision starts at (``latest`` runs the same checks)."""
    return max(revision.minimum for check in CHECKS for revision in check.revisions)


def _revision_at(check: Check, version: Version) -> Revision | None:
    """The newest revision of `check` whose minimum version is not newer than `version`."""
    found = [revision for revision in check.revisions if revision.minimum <= version]
    return found[-1] if found else None


@cache
def checks_for(level: str, version: Version = LATEST) -> tuple[SelectedCheck, ...]:
    """The checks `level` runs at `version`, in registration order (see the module docstring)."""
    if level == PRIVILEGED:
        return ()
    if level not in (BASELINE, RESTRICTED):
        raise ValueError(f"unknown Pod Security level {level!r}")
    levels = (BASELINE,) if level == BASELINE else (BASELINE, RESTRICTED)
    chosen = [(check, revision) for check in CHECKS if check.level in levels
              if (revision := _revision_at(check, version)) is not None]
    overridden = {name for _, revision in chosen for name in revision.overrides}
    return tuple(SelectedCheck(check.id, check.level, revision.run) for check, revision in chosen
                 if check.id not in overridden)


def evaluate(pod: Pod, level: str, version: Version = LATEST) -> list[Violation]:
    """Every check of `level` at `version` that refuses `pod` (empty: the Pod is allowed)."""
    return run_checks(checks_for(level, version), pod)


def run_checks(selected: tuple[SelectedCheck, ...], pod: Pod) -> list[Violation]:
    """The violations of already selected checks (`checks_for`) on `pod`."""
    out = []
    for check in selected:
        found = check.run(pod)
        if found is not None:
            out.append(Violation(check.id, *found))
    return out
