"""Kyverno's Pod Security exclusions: which failed fields an ``exclude`` entry exempts (``pkg/pss/evaluate.go``).

An entry (of a rule's ``podSecurity.exclude`` or a PolicyException's
``podSecurity``) names a control and, optionally, ``images`` (wildcards),
a ``restrictedField`` (``spec.containers[*].securityContext.capabilities.add``)
and the ``values`` allowed there (wildcards). Kyverno does not test the
field errors against the entry directly; it runs the same checks on a
second Pod and cancels the Pod's field errors that this second Pod
reproduces:

- without ``images`` the second Pod is the Pod with its containers replaced
  by one empty container named ``fake`` (pod-level fields only, plus
  whatever that empty container fails); a field error of the second Pod
  cancels the first field error of the Pod at the same path, numbers
  replaced by ``*``;
- with ``images`` the second Pod holds only the containers whose image
  matches (in their lists, renumbered; no metadata but name and namespace);
  a container field error also has to be of a container with the same name;
- an error counts only if its check is one of the control's checks, its
  path (numbers as ``*``) equals ``restrictedField`` when one is given, and
  each of its values matches one of ``values`` when they are given (a value
  that is not a string, boolean, integer or list of strings, or an empty
  string, has none, so it always qualifies);
- a check left with no field error passes.

Cancelling takes the matching error out by moving the last error into its
place, as Kyverno does, so messages list the remaining errors in Kyverno's
order. The results keep the registry's check order (Kyverno's own order
there is Go's random map order).
"""

from __future__ import annotations

import heapq
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from assertree.errors import PolicyError
from assertree.languages.kyverno.pod_security.controls import (
    BOTH_LEVEL_CONTROLS,
    CONTAINER_LEVEL_CONTROLS,
    CONTROL_CHECKS,
    CONTROL_NAMES,
    POD_LEVEL_CONTROLS,
    RESTRICTED_CONTROLS,
)
from assertree.languages.kyverno.wildcard import check_patterns
from assertree.pss import CONTAINER_LISTS, FieldError, Pod, SelectedCheck, make_pod, run_checks

__all__ = ["CheckResult", "Exclusion", "exempt", "parse_exclusions", "validate_for_level"]

_DIGITS = re.compile(r"\d+")
_LETTERS = re.compile(r"[a-zA-Z]+")


@dataclass(frozen=True)
class Exclusion:
    """One ``exclude`` entry (Kyverno's ``PodSecurityStandard``)."""

    control_name: str
    images: tuple[str, ...] = ()
    restricted_field: str = ""
    values: tuple[str, ...] = ()


@dataclass
class CheckResult:
    """A failed check as Kyverno carries it: the check ID, reason and field errors (which exclusions cancel)."""

    check: str
    reason: str
    detail: str
    errors: list[FieldError] = field(default_factory=list)


def parse_exclusions(items: Any, at: tuple) -> tuple[Exclusion, ...]:
    """``exclude`` entries (their shape as Kyverno's CRD has it); PolicyError naming the field otherwise."""
    if items is None:
        return ()
    if not isinstance(items, list):
        raise PolicyError("must be a list", path=at)
    return tuple(_exclusion(item, (*at, index)) for index, item in enumerate(items))


def _exclusion(item: Any, at: tuple) -> Exclusion:
    if not isinstance(item, dict):
        raise PolicyError("must be a mapping (controlName, images, restrictedField, values)", path=at)
    name = item.get("controlName")
    if name is None:
        raise PolicyError("required field is missing", path=(*at, "controlName"))
    if name not in CONTROL_NAMES:
        raise PolicyError(f"must be one of: {', '.join(CONTROL_NAMES)}, not {name!r}", path=(*at, "controlName"))
    field_value = item.get("restrictedField") or ""
    if not isinstance(field_value, str):
        raise PolicyError("must be a string", path=(*at, "restrictedField"))
    return Exclusion(name, _strings(item.get("images"), (*at, "images")), field_value,
                     _strings(item.get("values"), (*at, "values")))


def _strings(value: Any, at: tuple) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise PolicyError("must be a list of strings", path=at)
    return tuple(value)


def validate_for_level(exclusions: Iterable[Exclusion], level: str, at: tuple) -> None:
    """Kyverno's policy validation of a rule's exclusions (``PodSecurityStandard.Validate`` and
    ``ValidatePSaControlNames``): PolicyError at the offending entry."""
    for index, exclusion in enumerate(exclusions):
        where = (*at, index)
        name = exclusion.control_name
        if name in CONTAINER_LEVEL_CONTROLS and not exclusion.images:
            raise PolicyError("exclude.images must be specified for the container level control",
                              path=(*where, "controlName"))
        if name in POD_LEVEL_CONTROLS and exclusion.images:
            raise PolicyError("exclude.images must not be specified for the pod level control",
                              path=(*where, "controlName"))
        if exclusion.restricted_field and not exclusion.values:
            raise PolicyError("values is required", path=(*where, "values"))
        if exclusion.values and not exclusion.restricted_field:
            raise PolicyError("restrictedField is required", path=(*where, "restrictedField"))
        if level == "baseline" and name in RESTRICTED_CONTROLS and name not in BOTH_LEVEL_CONTROLS:
            raise PolicyError("Invalid control name defined at the given level", path=(*where, "controlName"))


# -- exempting ---------------------------------------------------------------------------------------------


def exempt(checks: tuple[SelectedCheck, ...], exclusions: Iterable[Exclusion], pod: Pod,
           results: list[CheckResult]) -> list[CheckResult]:
    """`results` (the checks that failed on `pod`) less what `exclusions` exempt, in order
    (``ApplyPodSecurityExclusion``); the results' error lists are changed in place."""
    remaining = {result.check: result for result in results}
    for exclusion in exclusions:
        if exclusion.images:
            second, container_level = _matching_containers(exclusion.images, pod), True
        else:
            second, container_level = _pod_level(pod), False
        indexes: dict[str, ErrorIndex] = {}
        for found in run_checks(checks, second):
            if found.check not in CONTROL_CHECKS[exclusion.control_name]:
                continue
            for error in found.errors:
                key = _where(error.field, second, container_level)
                if not _qualifies(error, key[0], exclusion) or found.check not in remaining:
                    continue
                errors = remaining[found.check].errors
                index = indexes.get(found.check)
                if index is None:
                    index = indexes[found.check] = ErrorIndex(
                        errors, [_where(mine.field, pod, container_level) for mine in errors])
                index.cancel(key)
                if not errors:
                    del remaining[found.check]
    return [result for result in results if result.check in remaining]


def _pod_level(pod: Pod) -> Pod:
    """The Pod with one empty container named ``fake`` and no init or ephemeral containers."""
    spec = {key: value for key, value in pod.spec.items() if key not in CONTAINER_LISTS}
    spec["containers"] = [{"name": "fake"}]
    return make_pod(pod.metadata, spec)


def _matching_containers(images: tuple[str, ...], pod: Pod) -> Pod:
    """A Pod of the containers whose image matches one of `images` (name and namespace kept, nothing else)."""
    metadata = {key: pod.metadata[key] for key in ("name", "namespace") if key in pod.metadata}
    spec = {}
    for name in CONTAINER_LISTS:
        matching = [c for c in pod.spec.get(name) or () if check_patterns(images, [c.get("image", "")])]
        if matching:
            spec[name] = matching
    return make_pod(metadata, spec)


def _qualifies(error: FieldError, path: str, exclusion: Exclusion) -> bool:
    """Whether a field error of the second Pod may cancel one: its path is the entry's ``restrictedField`` and
    all its values are among the entry's ``values`` (each, when given)."""
    if exclusion.restricted_field and path != exclusion.restricted_field:
        return False
    return not exclusion.values or all(check_patterns(exclusion.values, [value]) for value in _values(error))


class ErrorIndex:
    """A check's field errors, with the first one of each key (path with ``*``, container name) found fast.

    Kyverno cancels an error by scanning the list from the start for the first error with the same key, then
    moving the last error into its place; scanning is quadratic in the number of errors, which a Pod with
    thousands of containers makes hostile. `cancel` keeps, per key, a heap of the positions holding that key
    (stale positions are dropped when met), so it finds the same error in logarithmic time. It must never
    change a result: ``tests/kyverno/test_pod_security_rules.py`` holds it to the plain scan.
    """

    def __init__(self, errors: list[Any], keys: list[Any]) -> None:
        self.errors, self.keys = errors, keys
        self.positions: dict[Any, list[int]] = {}
        for position, key in enumerate(keys):
            self.positions.setdefault(key, []).append(position)  # ascending: already a heap

    def cancel(self, key: Any) -> bool:
        """Remove the first error with `key`, moving the last error into its place; False if there is none."""
        heap = self.positions.get(key)
        while heap and not (heap[0] < len(self.keys) and self.keys[heap[0]] == key):
            heapq.heappop(heap)
        if not heap:
            return False
        position = heapq.heappop(heap)
        last = len(self.errors) - 1
        self.errors[position], self.keys[position] = self.errors[last], self.keys[last]
        self.errors.pop()
        self.keys.pop()
        if position != last:
            heapq.heappush(self.positions.setdefault(self.keys[position], []), position)
        return True


def _where(field_path: str, pod: Pod, container_level: bool) -> tuple[str, str | None]:
    """A field path with its numbers as ``*``, and the name of the container it is in when containers are
    compared (None for a field outside a container; ``""`` for a container Go would find unnamed)."""
    path = _DIGITS.sub("*", field_path)
    if not container_level:
        return path, None
    words = _LETTERS.findall(field_path)
    if len(words) < 2 or words[1] not in CONTAINER_LISTS:
        return path, None
    index = int(_DIGITS.findall(field_path)[0])
    containers = pod.spec.get(words[1]) or ()
    return path, containers[index].get("name", "") if index < len(containers) else ""


def _values(error: FieldError) -> list[str]:
    """The field error's values as Kyverno reads them (``extractBadValues``)."""
    value = error.bad_value
    if isinstance(value, bool):
        return ["true" if value else "false"]
    if isinstance(value, int):
        return [str(value)]
    if isinstance(value, tuple):
        return list(value)
    return [value] if value else []
