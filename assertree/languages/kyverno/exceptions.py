"""PolicyExceptions: which ``kyverno.io/v2`` (or ``v2beta1``) exceptions exempt a resource from a rule.

Kyverno checks exceptions after a rule's match and preconditions, just before
the rule body runs (``pkg/engine/engine.go``, ``pkg/engine/utils/
exceptions.go``); a matching exception turns the rule's result into a skip.
An exception applies to a (policy, rule, resource) when:

1. one ``spec.exceptions[]`` entry names the policy exactly (``name`` for a
   ClusterPolicy, ``namespace/name`` for a Policy) and one of its
   ``ruleNames`` matches the rule's name as a wildcard. Names are compared as
   written: an autogen rule is ``autogen-<rule>`` or ``autogen-cronjob-<rule>``,
   so an exception covers it only if it lists that name or a wildcard such as
   ``autogen-*`` or ``*<rule>``;
2. ``spec.match`` (``any``/``all`` filters) selects the resource
   (`match.exception_matches`; a match with neither selects nothing);
3. ``spec.conditions``, when present, hold. Conditions are another module's
   job: pass a `ConditionsEvaluator`. If it raises, Kyverno logs the error and
   ignores that exception; so does `matching_exceptions`, recording why.

An exception with ``spec.podSecurity`` entries does not skip a
``validate.podSecurity`` rule outright: its entries exempt Pod Security
controls like a rule's own ``exclude`` (`pod_security`), and only a rule left
with no failing control is skipped.

The CLI hands the engine every exception it loaded (no namespace filter).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NoReturn

from assertree.errors import PolicyError
from assertree.languages.kyverno.match import GVK, exception_matches
from assertree.languages.kyverno.pod_security.exclusions import Exclusion, parse_exclusions
from assertree.languages.kyverno.wildcard import match as wildcard

__all__ = [
    "API_VERSIONS",
    "ConditionsEvaluator",
    "ExceptionMatch",
    "PolicyException",
    "exempts",
    "matching_exceptions",
    "parse_exception",
    "parse_policy_exception",
    "policy_key",
]

API_VERSIONS = ("kyverno.io/v2", "kyverno.io/v2beta1")

ConditionsEvaluator = Callable[[Any], bool]
"""Decides an exception's ``spec.conditions`` (the JSON given); raises when they cannot be evaluated."""


@dataclass(frozen=True)
class PolicyException:
    """A parsed PolicyException; `exceptions` are (policyName, ruleNames) pairs."""

    name: str
    namespace: str
    exceptions: tuple[tuple[str, tuple[str, ...]], ...]
    match: dict
    conditions: Any = None
    document: dict = field(default_factory=dict, repr=False)
    source: str | None = None
    pod_security: tuple[Exclusion, ...] = ()  # spec.podSecurity: Pod Security controls it exempts

    @property
    def key(self) -> str:
        """``namespace/name`` (or ``name``), as Kyverno names the exception in skip messages."""
        return f"{self.namespace}/{self.name}" if self.namespace else self.name

    def contains(self, policy: str, rule: str) -> bool:
        """Whether an entry names `policy` (its key) and a rule name pattern matching `rule`."""
        return any(name == policy and any(wildcard(pattern, rule) for pattern in rules)
                   for name, rules in self.exceptions)


@dataclass(frozen=True)
class ExceptionMatch:
    """The exceptions that exempt a resource from a rule, and those skipped because their conditions failed."""

    exceptions: tuple[PolicyException, ...] = ()
    errors: tuple[tuple[PolicyException, str], ...] = ()

    def __bool__(self) -> bool:
        return bool(self.exceptions)

    @property
    def message(self) -> str:
        """Kyverno's skip message for the rule."""
        return "rule is skipped due to policy exceptions" + ", ".join(e.key for e in self.exceptions)


def _fail(message: str, source: str | None, path: tuple[str | int, ...]) -> NoReturn:
    raise PolicyError(message, source=source, path=path)


def parse_exception(document: Mapping[str, Any], source: str | None = None) -> PolicyException:
    """A PolicyException document as `PolicyException`; `PolicyError` (file, field path) when malformed."""
    if document.get("kind") != "PolicyException" or document.get("apiVersion") not in API_VERSIONS:
        _fail(f"expected a PolicyException of {' or '.join(API_VERSIONS)}", source, ())
    metadata = document.get("metadata") or {}
    if not isinstance(metadata, Mapping) or not metadata.get("name"):
        _fail("metadata.name is required", source, ("metadata", "name"))
    spec = document.get("spec")
    if not isinstance(spec, Mapping):
        _fail("spec is required", source, ("spec",))
    entries = spec.get("exceptions")
    if not isinstance(entries, list):
        _fail("spec.exceptions is a list", source, ("spec", "exceptions"))
    pairs = []
    for i, entry in enumerate(entries):
        if not isinstance(entry, Mapping) or not isinstance(entry.get("policyName"), str) or not entry["policyName"]:
            _fail("An exception requires a policy name", source, ("spec", "exceptions", i, "policyName"))
        rules = entry.get("ruleNames") or []
        if not isinstance(rules, list) or not all(isinstance(rule, str) for rule in rules):
            _fail("ruleNames is a list of strings", source, ("spec", "exceptions", i, "ruleNames"))
        pairs.append((entry["policyName"], tuple(rules)))
    match = spec.get("match") or {}
    if not isinstance(match, Mapping):
        _fail("spec.match is a mapping", source, ("spec", "match"))
    if match.get("any") and match.get("all"):
        _fail("Can't specify any and all together", source, ("spec", "match"))
    try:
        pod_security = parse_exclusions(spec.get("podSecurity"), ("spec", "podSecurity"))
    except PolicyError as error:
        _fail(error.message, source, error.path)
    return PolicyException(str(metadata["name"]), str(metadata.get("namespace") or ""), tuple(pairs), dict(match),
                           spec.get("conditions"), dict(document), source, pod_security)


def parse_policy_exception(document: Mapping[str, Any], source: str | None = None) -> Any:
    """A PolicyException of either group, read: this module's `PolicyException` for ``kyverno.io``, a
    `cel_policies.exceptions.CelException` for ``policies.kyverno.io``; PolicyError when malformed."""
    from assertree.languages.kyverno.cel_policies.exceptions import is_cel_exception, read_exception

    return read_exception(document, source) if is_cel_exception(document) else parse_exception(document, source)


def policy_key(policy: Mapping[str, Any]) -> str:
    """How exceptions name `policy`: ``name`` for a ClusterPolicy, ``namespace/name`` for a Policy."""
    metadata = policy.get("metadata") or {}
    namespace = metadata.get("namespace") if policy.get("kind") == "Policy" else None
    return f"{namespace}/{metadata.get('name', '')}" if namespace else str(metadata.get("name", ""))


def matching_exceptions(
    exceptions: Iterable[PolicyException],
    *,
    policy: Mapping[str, Any],
    rule: str,
    resource: Mapping | None,
    old_resource: Mapping | None = None,
    namespace_labels: Mapping[str, str] | None = None,
    request_info: Mapping | None = None,
    subresources: Sequence[Any] = (),
    gvk: GVK | None = None,
    subresource: str | None = None,
    conditions: ConditionsEvaluator | None = None,
) -> ExceptionMatch:
    """The exceptions exempting `resource` (or `old_resource` on DELETE) from `rule` of `policy`.

    Without a `conditions` evaluator, an exception that has conditions is not
    applied and is reported in `ExceptionMatch.errors`.
    """
    key = policy_key(policy)
    subject = resource or old_resource or {}
    found: list[PolicyException] = []
    errors: list[tuple[PolicyException, str]] = []
    for exception in exceptions:
        if not exception.contains(key, rule):
            continue
        if not exception_matches(exception.match, subject, namespace_labels=namespace_labels,
                                 request_info=request_info, subresources=subresources, gvk=gvk,
                                 subresource=subresource):
            continue
        if exception.conditions is not None:
            if conditions is None:
                errors.append((exception, "no evaluator for the exception's conditions"))
                continue
            try:
                passed = conditions(exception.conditions)
            except Exception as error:  # noqa: BLE001 (Kyverno logs any evaluation error and skips the exception)
                errors.append((exception, f"failed to evaluate exception conditions: {error}"))
                continue
            if not passed:
                continue
        found.append(exception)
    return ExceptionMatch(tuple(found), tuple(errors))


def exempts(exceptions: Iterable[PolicyException], **request: Any) -> bool:
    """Whether any of `exceptions` exempts the request (keywords as `matching_exceptions`)."""
    return bool(matching_exceptions(exceptions, **request))
