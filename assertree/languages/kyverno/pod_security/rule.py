"""A ``validate.podSecurity`` rule: compiled once, then run on each Pod or Pod controller it selects.

`compile_pod_security` checks the rule as Kyverno's policy validation does
(exclusions per control, restricted-only controls at baseline) and selects
its checks once: ``level`` (empty: every check, as Kyverno runs them) at
``version`` (empty or ``latest``: `controls.KYVERNO_LATEST`). The structure
(known keys, level and version values) is the policy schema's job.

`PodSecurityRule.run` is Kyverno's ``validatePssHandler`` for one resource,
after match, context and preconditions (``validate_pss.go``):

1. a matching PolicyException without ``podSecurity`` entries skips the rule
   ("rule is skipped due to policy exception NS/NAME");
2. the Pod is read from the resource (a Pod, the template of a Deployment,
   DaemonSet, StatefulSet, ReplicaSet, ReplicationController or Job, or a
   CronJob's job template); another kind, or a field of the wrong type, is
   an ERROR;
3. the checks run, the rule's exclusions apply; nothing left: PASS;
4. the matching exceptions' ``podSecurity`` entries apply; nothing left:
   SKIP naming them;
5. otherwise FAIL with Kyverno's message: every remaining check's reason
   and field errors, with the errors' paths where the fields are in the
   resource (under a controller's template).

Kyverno moves the paths under the template by replacing every ``spec`` and
``metadata`` in them (``convertChecks``), which also rewrites a Pod's own
``metadata.annotations[...]`` as ``spec.template.metadata...``, a CronJob's
job-template annotations likewise, and any annotation key containing
``spec``; assertree prints the real paths instead (a documented difference).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from assertree.errors import PolicyError, Problem, Severity, field_path_text
from assertree.languages.kyverno.pod_security.controls import rule_version
from assertree.languages.kyverno.pod_security.exclusions import (
    CheckResult,
    Exclusion,
    exempt,
    parse_exclusions,
    validate_for_level,
)
from assertree.pss import (
    FORBIDDEN,
    RESTRICTED,
    FieldError,
    PodDecodeError,
    SelectedCheck,
    checks_for,
    decode_pod,
    field_steps,
    type_error,
)
from assertree.pss import run_checks as run_pss_checks
from assertree.results import ERROR, FAIL, PASS, SKIP

__all__ = ["PodSecurityOutcome", "PodSecurityRule", "compile_pod_security", "is_pod_security", "lint_pod_security"]

_CONTROLLERS = frozenset({"DaemonSet", "Deployment", "Job", "StatefulSet", "ReplicaSet", "ReplicationController"})


def is_pod_security(validate: Mapping) -> bool:
    """Whether a ``validate`` block is a podSecurity rule (Kyverno: ``podSecurity`` set and not all empty)."""
    security = validate.get("podSecurity")
    return isinstance(security, Mapping) and bool(security.get("level") or security.get("version")
                                                  or security.get("exclude") is not None)


@dataclass(frozen=True)
class PodSecurityOutcome:
    """What the rule gave: a status, Kyverno's message, the exceptions that made it a skip, and where in the
    resource the first failing field (FAIL) or the field that could not be read (ERROR) is."""

    status: str
    message: str
    exception: str | None = None
    steps: tuple | None = None


@dataclass(frozen=True)
class PodSecurityRule:
    """A compiled ``podSecurity`` block: level and version as written (for messages), the checks they select,
    and the rule's exclusions."""

    level: str
    version: str
    checks: tuple[SelectedCheck, ...]
    exclusions: tuple[Exclusion, ...]

    def run(self, rule_name: str, resource: Any, exceptions: Sequence[Any]) -> PodSecurityOutcome:
        """Steps 1 to 5 of the module docstring; `exceptions` are the PolicyExceptions matching this resource."""
        plain = next((exception for exception in exceptions if not exception.pod_security), None)
        if plain is not None:
            return PodSecurityOutcome(SKIP, f"rule is skipped due to policy exception {plain.key}",
                                      exception=plain.key)
        try:
            pod, template = _read_pod(resource)
        except PodDecodeError as error:
            where = f"{field_path_text(error.path)}: " if error.path else ""
            return PodSecurityOutcome(ERROR, f"Error while getting new resource: {where}{error}",
                                      steps=error.path or None)
        results = self.evaluate(pod)
        if not results:
            return PodSecurityOutcome(PASS, f"Validation rule '{rule_name}' passed.")
        if exceptions:
            excluded = [entry for exception in exceptions for entry in exception.pod_security]
            results = exempt(self.checks, excluded, pod, results)
            if not results:
                keys = ", ".join(exception.key for exception in exceptions)
                return PodSecurityOutcome(SKIP, f"rule is skipped due to policy exceptions {keys}", exception=keys)
        message = (f"Validation rule '{rule_name}' failed. It violates PodSecurity \"{self.level}:{self.version}\": "
                   f"{format_checks(results, template)}")
        return PodSecurityOutcome(FAIL, message, steps=_first_field(results, template))

    def evaluate(self, pod: Any) -> list[CheckResult]:
        """The checks that fail on `pod` after the rule's own exclusions (``EvaluatePod``)."""
        results = [CheckResult(found.check, found.reason, found.detail, list(found.errors))
                   for found in run_pss_checks(self.checks, pod)]
        if results and self.exclusions:
            results = exempt(self.checks, self.exclusions, pod, results)
        return results


def compile_pod_security(security: Mapping, at: tuple) -> PodSecurityRule:
    """A ``podSecurity`` block (already schema-checked) as a `PodSecurityRule`; PolicyError at the field."""
    level = security.get("level") or ""
    version = security.get("version") or ""
    exclusions = parse_exclusions(security.get("exclude"), (*at, "exclude"))
    validate_for_level(exclusions, level, (*at, "exclude"))
    try:
        checks = checks_for(level or RESTRICTED, rule_version(version))
    except ValueError as error:  # the schema has checked both; kept for a document that bypassed it
        raise PolicyError(str(error), path=at) from None
    return PodSecurityRule(level, version, checks, exclusions)


def lint_pod_security(security: Mapping, at: tuple) -> list[Problem]:
    """Warnings for a ``podSecurity`` block whose results Kyverno 111e07bb would not give."""
    if security.get("level") == "privileged":
        return [Problem("level privileged runs no check (the standard's privileged level); Kyverno 111e07bb runs "
                        "every check for it, as for restricted", path=(*at, "level"), severity=Severity.WARNING)]
    return []


# -- reading the Pod -----------------------------------------------------------------------------------------


def _read_pod(resource: Any) -> tuple[Any, tuple]:
    """The resource's Pod (decoded) and where its template is: ``()`` for a Pod, ``("spec", "template")`` ..."""
    kind = resource.get("kind") if isinstance(resource, Mapping) else None
    if kind == "Pod":
        return decode_pod(resource.get("metadata"), resource.get("spec")), ()
    if kind in _CONTROLLERS:
        template = _object(resource, ("spec", "template"))
        return decode_pod(template.get("metadata"), template.get("spec"), metadata_at=("spec", "template", "metadata"),
                          spec_at=("spec", "template", "spec")), ("spec", "template")
    if kind == "CronJob":
        job = _object(resource, ("spec", "jobTemplate"))
        template = _object(job, ("spec", "template"), at=("spec", "jobTemplate"))
        # Kyverno reads the labels and annotations of the job template, not of its Pod template
        return decode_pod(job.get("metadata"), template.get("spec"), metadata_at=("spec", "jobTemplate", "metadata"),
                          spec_at=("spec", "jobTemplate", "spec", "template", "spec")), \
            ("spec", "jobTemplate", "spec", "template")
    raise PodDecodeError("could not find correct resource type", ())


def _object(value: Mapping, path: tuple, *, at: tuple = ()) -> Mapping:
    """The object at `path` under `value` (null or absent: empty, as Go's zero value); PodDecodeError if
    something on the way is not an object."""
    for step in path:
        item = value.get(step)
        at = (*at, step)
        if item is None:
            return {}
        if not isinstance(item, Mapping):
            raise type_error("an object", item, at)
        value = item
    return value


# -- messages ------------------------------------------------------------------------------------------------


def format_checks(results: list[CheckResult], template: tuple = ()) -> str:
    """Kyverno's ``FormatChecksPrint`` of the results; `template` is where the Pod template is in the resource
    (``("spec", "template")`` for a Deployment), which the field paths are moved under."""
    return "".join(f"(Forbidden reason: {result.reason}, field error list: ["
                   f"{', '.join(_error_text(error, template) for error in result.errors)}])" for result in results)


def _error_text(error: FieldError, template: tuple) -> str:
    path = _resource_path(error.field, template)
    if error.type == FORBIDDEN and error.bad_value != "":
        return f"{path} is forbidden, forbidden values found: {_go_value(error.bad_value)}"
    return f"{path}: {error.type}"


def _resource_path(path: str, template: tuple) -> str:
    """A Pod field path (``spec.hostNetwork``) where it is in the resource (``spec.template.spec.hostNetwork``)."""
    if template[:2] == ("spec", "jobTemplate") and path.startswith("metadata"):
        return f"spec.jobTemplate.{path}"  # Kyverno reads the job template's metadata
    return ".".join((*template, path))


def _go_value(value: Any) -> str:
    """A field error's value as Go's ``%+v`` prints it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, tuple):
        return "[" + " ".join(value) + "]"
    return str(value)


def _first_field(results: list[CheckResult], template: tuple) -> tuple | None:
    """Where the first failing field is in the resource (for reports), or None."""
    return next((field_steps(_resource_path(error.field, template)) for result in results
                 for error in result.errors), None)
