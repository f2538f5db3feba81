"""``assertree lint`` on PolicyExceptions: the ones that exempt nothing, and the ones about to expire.

An exception that names no policy of the repository (a renamed policy, a
typo in ``policyName`` or ``ruleNames``) silently exempts nothing, and one
whose ``expiresAt`` has passed no longer applies: both are warnings, as is one
that expires within the ``--expiring`` window, so that a team renews or
removes it before a pipeline turns red. Both exception kinds are read:
``kyverno.io`` (``spec.exceptions[].policyName``/``ruleNames``, wildcards in
rule names) and ``policies.kyverno.io`` (``spec.policyRefs[].name``/``kind``,
and ``spec.expiresAt``).
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from assertree.errors import PolicyError, Problem, Severity
from assertree.languages.kyverno.cel_policies.exceptions import CelException, is_cel_exception, read_exception
from assertree.languages.kyverno.exceptions import PolicyException, parse_exception
from assertree.languages.kyverno.wildcard import match as wildcard


@dataclass(frozen=True)
class KnownPolicy:
    """What an exception may name: a policy's kind, its key (``name``, ``namespace/name`` for a Policy) and
    its rules' names (autogen names included)."""

    kind: str
    key: str
    rules: tuple[str, ...] = ()


def known_policy(document: dict) -> KnownPolicy | None:
    """The `KnownPolicy` of a policy document of any language (None when it has no name)."""
    raw_metadata = document.get("metadata")
    metadata = raw_metadata if isinstance(raw_metadata, dict) else {}
    name = metadata.get("name")
    if not isinstance(name, str) or not name:
        return None
    kind = str(document.get("kind") or "")
    namespace = metadata.get("namespace")
    key = f"{namespace}/{name}" if kind == "Policy" and namespace else name
    raw_spec = document.get("spec")
    spec = raw_spec if isinstance(raw_spec, dict) else {}
    rules = [rule.get("name") for rule in spec.get("rules") or () if isinstance(rule, dict)]
    names = [rule for rule in rules if isinstance(rule, str)]
    autogen = [f"{prefix}{rule}" for rule in names for prefix in ("autogen-", "autogen-cronjob-")]
    return KnownPolicy(kind, key, tuple(names + autogen))


def lint_exceptions(documents: Sequence[dict], policies: Iterable[KnownPolicy], *, expiring_days: int,
                    now: datetime.datetime | None = None) -> list[tuple[int, Problem]]:
    """(position in `documents`, problem) for each exception problem: malformed, naming no policy or rule
    among `policies`, expired, or expiring within `expiring_days`."""
    known = list(policies)
    moment = now or datetime.datetime.now(datetime.UTC)
    found: list[tuple[int, Problem]] = []
    for position, document in enumerate(documents):
        try:
            if is_cel_exception(document):
                problems = _cel_problems(read_exception(document), known, moment, expiring_days)
            else:
                problems = _kyverno_problems(parse_exception(document), known)
            found.extend((position, problem) for problem in problems)
        except PolicyError as error:
            found.append((position, error.problem))
    return found


def _kyverno_problems(exception: PolicyException, known: list[KnownPolicy]) -> list[Problem]:
    problems = []
    for index, (policy, rules) in enumerate(exception.exceptions):
        candidates = [item for item in known if item.key == policy]
        where = ("spec", "exceptions", index)
        if not candidates:
            problems.append(Problem(f"policyName {policy!r} names no policy found here: this entry exempts nothing",
                                    path=(*where, "policyName"), severity=Severity.WARNING))
            continue
        names = {rule for item in candidates for rule in item.rules}
        for number, pattern in enumerate(rules):
            if not any(wildcard(pattern, rule) for rule in names):
                problems.append(Problem(f"ruleNames: {pattern!r} names no rule of {policy!r}: it exempts nothing",
                                        path=(*where, "ruleNames", number), severity=Severity.WARNING))
    return problems


def _cel_problems(exception: CelException, known: list[KnownPolicy], moment: datetime.datetime,
                  expiring_days: int) -> list[Problem]:
    problems = []
    for index, (kind, name) in enumerate(exception.policy_refs):
        if not any(item.kind == kind and item.key == name for item in known):
            problems.append(Problem(f"policyRefs: {kind} {name!r} is not among the policies found here: this "
                                    "reference exempts nothing", path=("spec", "policyRefs", index),
                                    severity=Severity.WARNING))
    expires = exception.expires_at
    if expires is not None:
        text = exception.expires_text
        if expires <= moment:
            problems.append(Problem(f"expired at {text}: it no longer applies (remove it, or renew it)",
                                    path=("spec", "expiresAt"), severity=Severity.WARNING))
        elif expires - moment <= datetime.timedelta(days=expiring_days):
            days = (expires - moment).days
            problems.append(Problem(f"expires at {text}, in {days} day{'s' if days != 1 else ''} (--expiring "
                                    f"{expiring_days}): renew or remove it", path=("spec", "expiresAt"),
                                    severity=Severity.WARNING))
    return problems
