"""``policies.kyverno.io`` PolicyExceptions: which exempt a request from a CEL policy, and what they allow.

Kyverno's replacement for ``failureActionOverrides`` and the ``kyverno.io``
PolicyException, for every ``policies.kyverno.io`` kind (kyverno/kyverno
pkg/cel/policies/*/compiler/policy.go, */engine/engine.go, pkg/cel/engine/
exception.go; the CRD in cmd/cli/kubectl-kyverno/data/crds). Versions
v1alpha1, v1beta1 and v1 read the same. An exception:

- applies to a policy when one of its ``spec.policyRefs`` has the policy's
  ``name`` and ``kind``;
- holds for a request when all its ``spec.matchConditions`` (CEL, over
  ``object``, ``oldObject``, ``request``, ``namespaceObject``; compiled in
  the policy's environment) are true. Exceptions are checked before the
  policy's own match conditions; an exception whose condition errors makes
  the policy's result an error, unless a full exemption was already found;
- without ``images`` or ``allowedValues`` exempts the request fully: the
  result is ``skip`` (``pass`` when ``reportResult: pass``; with several, the
  one with the highest ``polex.kyverno.io/priority`` label decides, else the
  first) with the message "rule is skipped due to policy exception: <keys>";
- with ``images``/``allowedValues`` exempts nothing by itself: the policy runs
  with ``exceptions.allowedImages``/``exceptions.allowedValues`` holding the
  union of those of every exception that holds, for its expressions to read;
- with ``expiresAt`` (RFC 3339) in the past does not apply. The cluster skips
  expired exceptions (pkg/cel/engine/exception.go); ``kyverno test`` does not
  look (kyverno/kyverno#17473). assertree honours the date and says so: an
  expired exception that would have held is named in the result's message
  with the date it expired (`ExceptionCheck.expired`).
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from assertree.errors import PolicyError
from assertree.languages.cel.fallback import Runnable
from assertree.languages.kyverno.cel_policies.conditions import check_conditions

__all__ = ["GROUP", "PRIORITY_LABEL", "CelException", "CompiledException", "ExceptionCheck", "check_exceptions",
           "compile_exceptions", "is_cel_exception", "read_exception"]

GROUP = "policies.kyverno.io"
VERSIONS = ("v1alpha1", "v1beta1", "v1")
PRIORITY_LABEL = "polex.kyverno.io/priority"
REPORT_RESULTS = ("skip", "pass")

FieldPath = tuple[str | int, ...]


def is_cel_exception(document: Any) -> bool:
    """Whether `document` is a ``policies.kyverno.io`` PolicyException (any version)."""
    return (isinstance(document, Mapping) and document.get("kind") == "PolicyException"
            and str(document.get("apiVersion", "")).split("/", 1)[0] == GROUP)


@dataclass(frozen=True)
class CelException:
    """A read ``policies.kyverno.io`` PolicyException."""

    name: str
    namespace: str
    policy_refs: tuple[tuple[str, str], ...]  # (kind, name)
    match_conditions: tuple[tuple[str, str, FieldPath], ...]  # (name, expression, field path)
    images: tuple[str, ...] = ()
    allowed_values: tuple[str, ...] = ()
    report_result: str = "skip"
    expires_at: datetime.datetime | None = None
    expires_text: str = ""
    labels: Mapping[str, str] = field(default_factory=dict)
    document: dict = field(default_factory=dict, repr=False)
    source: str | None = None

    @property
    def key(self) -> str:
        """``namespace/name`` (or ``name``), as Kyverno names the exception in its messages."""
        return f"{self.namespace}/{self.name}" if self.namespace else self.name

    @property
    def full(self) -> bool:
        """Whether it exempts a request outright (no images or allowed values to hand to the policy)."""
        return not self.images and not self.allowed_values

    @property
    def priority(self) -> int:
        try:
            return int(self.labels.get(PRIORITY_LABEL, ""))
        except ValueError:
            return 0

    def applies_to(self, kind: str, name: str) -> bool:
        return (kind, name) in self.policy_refs

    def expired(self, now: datetime.datetime) -> bool:
        return self.expires_at is not None and self.expires_at <= now


def _fail(message: str, source: str | None, path: FieldPath) -> PolicyError:
    return PolicyError(message, source=source, path=path)


def _strings(value: Any, source: str | None, path: FieldPath) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise _fail("must be a list of strings", source, path)
    return tuple(value)


def parse_time(text: str) -> datetime.datetime:
    """An RFC 3339 date-time (``2026-05-01T00:00:00Z``, an offset, fractions of a second) in UTC."""
    cleaned = text.strip()
    if cleaned.endswith(("Z", "z")):
        cleaned = cleaned[:-1] + "+00:00"
    if "T" not in cleaned.upper() or len(cleaned) < 20:
        raise ValueError(text)
    moment = datetime.datetime.fromisoformat(cleaned)
    if moment.tzinfo is None:
        raise ValueError(text)
    return moment.astimezone(datetime.UTC)


def read_exception(document: Mapping[str, Any], source: str | None = None) -> CelException:
    """A PolicyException document as `CelException`; `PolicyError` (file, field path) when malformed."""
    api_version = str(document.get("apiVersion", ""))
    if not is_cel_exception(document) or api_version.partition("/")[2] not in VERSIONS:
        raise _fail(f"expected a PolicyException of {GROUP}/{'|'.join(VERSIONS)}", source, ("apiVersion",))
    metadata = document.get("metadata")
    if not isinstance(metadata, Mapping) or not isinstance(metadata.get("name"), str) or not metadata["name"]:
        raise _fail("required field is missing", source, ("metadata", "name"))
    spec = document.get("spec")
    if not isinstance(spec, Mapping):
        raise _fail("required field is missing", source, ("spec",))
    refs = spec.get("policyRefs")
    if not isinstance(refs, list) or not refs:
        raise _fail("required field is missing: an exception names the policies it applies to", source,
                    ("spec", "policyRefs"))
    policy_refs = []
    for index, ref in enumerate(refs):
        at = ("spec", "policyRefs", index)
        if not isinstance(ref, Mapping):
            raise _fail("must be a mapping with name and kind", source, at)
        for key in ("name", "kind"):
            if not isinstance(ref.get(key), str) or not ref[key]:
                raise _fail("required field is missing", source, (*at, key))
        policy_refs.append((ref["kind"], ref["name"]))
    conditions = []
    raw_conditions = spec.get("matchConditions") or []
    if not isinstance(raw_conditions, list):
        raise _fail("must be a list", source, ("spec", "matchConditions"))
    for index, item in enumerate(raw_conditions):
        at = ("spec", "matchConditions", index)
        if not isinstance(item, Mapping):
            raise _fail("must be a mapping with name and expression", source, at)
        for key in ("name", "expression"):
            if not isinstance(item.get(key), str) or not item[key].strip():
                raise _fail("required field is missing", source, (*at, key))
        conditions.append((item["name"], item["expression"], (*at, "expression")))
    report = spec.get("reportResult") or "skip"
    if report not in REPORT_RESULTS:
        raise _fail(f"must be one of: {', '.join(REPORT_RESULTS)}", source, ("spec", "reportResult"))
    expires_text = spec.get("expiresAt")
    expires_at = None
    if isinstance(expires_text, datetime.datetime):  # a YAML reader that resolves timestamps
        expires_text = expires_text.isoformat().replace("+00:00", "Z")
    if expires_text is not None:
        try:
            expires_at = parse_time(str(expires_text))
        except ValueError:
            raise _fail(f"invalid date-time {expires_text!r} (expected RFC 3339, e.g. 2026-05-01T00:00:00Z)",
                        source, ("spec", "expiresAt")) from None
    raw_labels = metadata.get("labels")
    labels: Mapping[str, Any] = raw_labels if isinstance(raw_labels, Mapping) else {}
    namespace = metadata.get("namespace")
    return CelException(
        name=metadata["name"], namespace=namespace if isinstance(namespace, str) else "",
        policy_refs=tuple(policy_refs), match_conditions=tuple(conditions),
        images=_strings(spec.get("images"), source, ("spec", "images")),
        allowed_values=_strings(spec.get("allowedValues"), source, ("spec", "allowedValues")),
        report_result=report, expires_at=expires_at, expires_text=str(expires_text or ""),
        labels={str(k): str(v) for k, v in labels.items()}, document=dict(document), source=source)


@dataclass(frozen=True)
class CompiledException:
    """An exception with its match conditions compiled in one policy's environment."""

    exception: CelException
    conditions: tuple[tuple[str, Runnable, FieldPath], ...]


def compile_exceptions(exceptions: Iterable[Any], kind: str, name: str,
                       compile_expression: Callable[[str, FieldPath], Runnable]) -> list[CompiledException]:
    """The exceptions (of any kind; others are ignored) that name the policy `kind`/`name`, compiled.

    `compile_expression(text, path)` compiles in the policy's environment; a
    condition that does not compile is a PolicyError located in the exception's file.
    """
    out = []
    for exception in exceptions:
        if not isinstance(exception, CelException) or not exception.applies_to(kind, name):
            continue
        programs = []
        for condition, text, path in exception.match_conditions:
            try:
                programs.append((condition, compile_expression(text, path), path))
            except PolicyError as error:
                raise PolicyError(f"PolicyException {exception.key}: {error.message}", source=exception.source,
                                  path=path) from None
        out.append(CompiledException(exception, tuple(programs)))
    return out


@dataclass
class ExceptionCheck:
    """What the exceptions say about one request."""

    exempting: list[CelException] = field(default_factory=list)  # full exemptions that hold
    allowed_images: list[str] = field(default_factory=list)
    allowed_values: list[str] = field(default_factory=list)
    expired: list[CelException] = field(default_factory=list)  # would have held, but expired
    error: str | None = None

    @property
    def variable(self) -> dict[str, list[str]]:
        """The ``exceptions`` CEL variable."""
        return {"allowedImages": list(self.allowed_images), "allowedValues": list(self.allowed_values)}

    @property
    def decisive(self) -> CelException | None:
        """The exemption whose ``reportResult`` decides (highest priority label, else the first)."""
        if not self.exempting:
            return None
        best = self.exempting[0]
        for exception in self.exempting[1:]:
            if exception.priority > best.priority and exception.priority > 0:
                best = exception
        return best

    @property
    def keys(self) -> str:
        return ", ".join(exception.key for exception in self.exempting)

    def message(self) -> str:
        """Kyverno's message for an exempted request."""
        decisive = self.decisive
        verb = "passed" if decisive is not None and decisive.report_result == "pass" else "skipped"
        return f"rule is {verb} due to policy exception: {self.keys}"

    def expiry_note(self) -> str:
        """Which expired exceptions did not apply, and when they expired ("" when none)."""
        if not self.expired:
            return ""
        return "; ".join(f"policy exception {exception.key} expired at {exception.expires_text} and was not applied"
                         for exception in self.expired)


def _holds(compiled: CompiledException, data: Mapping[str, Any], context: Any) -> bool:
    """Whether every condition holds (a false one wins over errors; errors then raise ValueError)."""
    check = check_conditions(compiled.conditions, data, context, f"exception {compiled.exception.key} condition")
    if check.false is not None:
        return False
    if check.errors:
        raise ValueError(check.message())
    return True


def check_exceptions(compiled: Sequence[CompiledException], data: Mapping[str, Any], context: Any = None,
                     now: datetime.datetime | None = None) -> ExceptionCheck:
    """What `compiled` say about the request `data` (the CEL variables), in Kyverno's order."""
    check = ExceptionCheck()
    moment = now or datetime.datetime.now(datetime.UTC)
    for item in compiled:
        exception = item.exception
        if exception.expired(moment):  # the cluster drops it before evaluating anything; it is only reported
            try:
                if _holds(item, data, context):
                    check.expired.append(exception)
            except ValueError:
                pass
            continue
        try:
            holds = _holds(item, data, context)
        except ValueError as error:
            if check.exempting:
                continue  # an exemption already granted: a broken later exception does not undo it
            check.error = str(error)
            return check
        if not holds:
            continue
        if exception.full:
            check.exempting.append(exception)
        elif not check.exempting:
            check.allowed_images.extend(exception.images)
            check.allowed_values.extend(exception.allowed_values)
    return check
