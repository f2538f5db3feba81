"""PolicyExceptions for kyverno-json policies, which Kyverno's exception kinds do not reach by themselves.

Kyverno applies its PolicyExceptions inside its own engines: ``kyverno.io``
exceptions to ClusterPolicy/Policy rules, ``policies.kyverno.io`` exceptions
to the CEL kinds (both done in `assertree.languages.kyverno`). A kyverno-json
``ValidatingPolicy`` has no exception kind of its own, so assertree lets both
kinds name one, and applies them here, to its results:

- a ``kyverno.io/v2`` PolicyException whose ``spec.exceptions[]`` entry names
  the policy (``policyName``) and the rule (``ruleNames``, wildcards allowed),
  and whose ``spec.match`` selects the resource (Kyverno's exception match on
  the document's ``kind`` and ``metadata``: kinds, names, namespaces, label
  selectors; so it suits Kubernetes-shaped documents), exempts it; one with
  ``spec.conditions`` is not applied, with a note (its ``{{ }}`` conditions
  read a Kubernetes admission request, which a JSON payload is not);
- a ``policies.kyverno.io`` PolicyException whose ``spec.policyRefs`` has the
  policy's name and ``kind: ValidatingPolicy`` exempts a resource when all its
  ``matchConditions`` (CEL over ``object``, the payload: any JSON, a Terraform
  resource included) hold. One whose ``expiresAt`` has passed is not applied:
  the result names it and its date.

An exempted result is a ``skip`` naming the exception (``pass`` with
``reportResult: pass``), as in Kyverno; its violations are dropped, since the
rule is not applied to the resource. Exceptions never turn a pass into a fail.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable, Sequence
from typing import Any

from assertree.records import ValueRecord
from assertree.results import ERROR, FAIL, PASS, SKIP, WARN, RuleResult

GROUP = "json.kyverno.io"


def reads_no_exceptions(policy: Any) -> bool:
    """Whether results of `policy` get their exceptions here (a kyverno-json policy)."""
    api_version = str((policy.document or {}).get("apiVersion", ""))
    return api_version.split("/", 1)[0] == GROUP


class Exempting(ValueRecord):
    """The exceptions of a scan, ready to exempt kyverno-json results (CEL conditions compiled once)."""

    kyverno: list[Any]  # kyverno.io PolicyException objects
    cel: list[Any]  # policies.kyverno.io CelException objects
    compiled: dict[str, list[Any]]  # policy name -> its CompiledExceptions

    __slots__ = ("cel", "compiled", "kyverno")

    def __init__(
            self, kyverno: list[Any] | None = None, cel: list[Any] | None = None,
            compiled: dict[str, list[Any]] | None = None,
    ) -> None:
        self.kyverno = [] if kyverno is None else kyverno
        self.cel = [] if cel is None else cel
        self.compiled = {} if compiled is None else compiled

    @classmethod
    def of(cls, exceptions: Iterable[Any]) -> Exempting:
        exceptions = list(exceptions)
        if not exceptions:  # most scans: nothing of the Kyverno language is imported for them
            return cls()
        from assertree.languages.kyverno.cel_policies.exceptions import CelException
        from assertree.languages.kyverno.exceptions import PolicyException

        found = cls()
        for exception in exceptions:
            if isinstance(exception, PolicyException):
                found.kyverno.append(exception)
            elif isinstance(exception, CelException):
                found.cel.append(exception)
        return found

    def __bool__(self) -> bool:
        return bool(self.kyverno or self.cel)

    def _compiled(self, name: str) -> list[Any]:
        found = self.compiled.get(name)
        if found is None:
            from assertree.languages.kyverno.cel_policies.compile import compile_expression
            from assertree.languages.kyverno.cel_policies.exceptions import compile_exceptions

            found = compile_exceptions(self.cel, "ValidatingPolicy", name,
                                       lambda text, path: compile_expression(text, path))
            self.compiled[name] = found
        return found

    def apply(self, results: Sequence[RuleResult], now: datetime.datetime | None = None) -> None:
        """Exempt each kyverno-json result its exceptions cover (in place)."""
        for result in results:
            if result.status in (PASS, FAIL, ERROR, WARN) and reads_no_exceptions(result.policy):
                self._apply_one(result, now)

    def _apply_one(self, result: RuleResult, now: datetime.datetime | None) -> None:
        from assertree.languages.kyverno.cel_policies.exceptions import check_exceptions
        from assertree.languages.kyverno.match import exception_matches

        value = result.resource.value
        keys: list[str] = []
        notes: list[str] = []
        report_pass = False
        resource = value if isinstance(value, dict) else {}
        for exception in self.kyverno:
            if not exception.contains(result.policy.name, result.rule.name):
                continue
            if not exception_matches(exception.match, resource):
                continue
            if exception.conditions is not None:
                notes.append(f"policy exception {exception.key} has conditions, which a kyverno-json policy's "
                             "resources cannot be checked against: not applied")
                continue
            keys.append(exception.key)
        if self.cel:
            check = check_exceptions(self._compiled(result.policy.name), {"object": value}, None, now)
            if check.expiry_note():
                notes.append(check.expiry_note())
            if check.error is not None:
                notes.append(f"a policy exception could not be checked: {check.error}")
            if check.exempting:
                keys.extend(exception.key for exception in check.exempting)
                decisive = check.decisive
                report_pass = decisive is not None and decisive.report_result == "pass" and len(keys) == len(
                    check.exempting)
        note = "; ".join(notes)
        if keys:
            verb = "passed" if report_pass else "skipped"
            result.status = PASS if report_pass else SKIP
            result.exception = ", ".join(keys)
            result.message = f"rule is {verb} due to policy exception: {result.exception}" + (
                f" ({note})" if note else "")
            result.violations = []
            result.error = None
            result.baselined = False
        elif note:
            result.message = f"{result.message} ({note})" if result.message else note
            for violation in result.violations:
                violation.message = f"{violation.message} ({note})" if violation.message else note
