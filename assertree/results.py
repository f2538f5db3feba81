"""What a scan produces: plain data that the languages fill in and reporters format.

The result model sits right after the expression dialect and the assertion
trees in the stage order: every language builds `RuleResult`s, the engine
collects them into a `ScanResult`, reporters only read them.

A scan gives,
for every resource, every rule that applied to it: its status, identifier,
feedback, and for a failure the violations (one per failing assertion, each
with the field errors kyverno-json would list).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from assertree.errors import Problem
from assertree.records import ValueRecord
from assertree.tree.errors import INTERNAL, INVALID, REQUIRED, TYPE_INVALID, FieldError

if TYPE_CHECKING:  # made by --explain only: a plain scan does not import it
    from assertree.explanation import Explanation

__all__ = ["ERROR", "FAIL", "INTERNAL", "INVALID", "PASS", "REQUIRED", "SKIP", "TYPE_INVALID", "WARN", "FieldError",
           "PolicyInfo", "RefusedRule", "Resource", "RuleError", "RuleInfo", "RuleResult", "ScanResult", "Status",
           "Summary", "Violation", "fill_origins", "refused_rules", "written_rule", "written_rules"]


@runtime_checkable
class RuleInfo(Protocol):
    """What results and reports know of a rule.

    Read-only members: results and reports never assign them, and a read-only
    member is met by a plain attribute (a language's dataclass field) of the
    same or a narrower type.
    """

    @property
    def name(self) -> str: ...
    @property
    def index(self) -> int: ...  # position in the policy's rule list (generated rules such as autogen come last)
    @property
    def document(self) -> dict: ...  # the rule as written (or as generated), JSON


@runtime_checkable
class PolicyInfo(Protocol):
    """What results and reports know of a policy, whatever its language.

    Read-only members, as in `RuleInfo`; ``rules`` must be, so that a
    language's ``list[ItsRule]`` counts as a ``Sequence[Any]`` (covariance).
    """

    @property
    def name(self) -> str: ...
    @property
    def kind(self) -> str: ...  # "ValidatingPolicy", "ClusterPolicy", ...
    @property
    def rules(self) -> Sequence[Any]: ...  # RuleInfo objects, in evaluation order
    @property
    def annotations(self) -> dict[str, str]: ...
    @property
    def document(self) -> dict: ...
    @property
    def source(self) -> str | None: ...  # file the policy was read from
    @property
    def document_index(self) -> int | None: ...  # position in that file's YAML stream
    @property
    def line(self) -> int | None: ...  # where its document starts

    @property
    def severity(self) -> str | None: ...

    @property
    def title(self) -> str | None: ...

    @property
    def description(self) -> str | None: ...


class RefusedRule(ValueRecord):
    """A rule assertree does not run (it needs a registry, a cluster, or is not implemented): reported once,
    when its policy is loaded, while the policy's other rules run. `problem` is a located warning whose field
    path names the part at fault."""

    rule: str
    problem: Problem

    __slots__ = ("problem", "rule")

    def __init__(self, rule: str, problem: Problem) -> None:
        self.rule = rule
        self.problem = problem

    def __str__(self) -> str:
        return str(self.problem)


def refused_rules(policy: Any) -> tuple[RefusedRule, ...]:
    """The rules of a compiled policy, or of its `PolicyInfo`, that are not run (an optional member of both:
    a language whose rules all run has none)."""
    info = getattr(policy, "policy", policy)
    return tuple(getattr(info, "refused", None) or ())


def written_rule(rule: Any) -> str:
    """The name of the rule as the user wrote it: a rule a language generated (Kyverno's autogen rules for Pod
    controllers, ``autogen-require-team``) counts under the rule it was made from (``require-team``)."""
    return getattr(rule, "autogen_of", None) or rule.name


def written_rules(policy: Any) -> list[Any]:
    """The rules of `policy` as the user wrote them (generated ones left out): what totals count."""
    return [rule for rule in policy.rules if not getattr(rule, "autogen_of", None)]


class Status(StrEnum):
    """A rule's outcome on a resource, with Kyverno's names (a StrEnum: equal to its text)."""

    PASS = "pass"
    FAIL = "fail"
    ERROR = "error"
    SKIP = "skip"  # Kyverno: preconditions or a conditional/global anchor not met; an exception applied
    WARN = "warn"  # Kyverno: a failure of a policy that is not scored


PASS, FAIL, ERROR, SKIP, WARN = Status.PASS, Status.FAIL, Status.ERROR, Status.SKIP, Status.WARN

class Violation(ValueRecord):
    """One failing assertion of a rule: where it is in the policy, its message, its errors."""

    check: str  # "spec.rules[0].assert.all[1]"
    message: str | None
    errors: list[FieldError]
    steps: tuple | None  # where the failing field is in the resource, when no field error says it (Kyverno)
    baselined: bool  # found in the --baseline file (`assertree.findings.baseline`)

    __slots__ = ("baselined", "check", "errors", "message", "steps")

    def __init__(
            self, check: str, message: str | None, errors: list[FieldError], steps: tuple | None = None,
            baselined: bool = False,
    ) -> None:
        self.check = check
        self.message = message
        self.errors = errors
        self.steps = steps
        self.baselined = baselined

    def headline(self) -> str:
        """``<message> (CHECK=...)``, or ``(CHECK=...)`` without a message."""
        if self.message:
            return f"{self.message} (CHECK={self.check})"
        return f"(CHECK={self.check})"


class RuleError(ValueRecord):
    """Why a rule could not be evaluated (an ERROR result): kept as data until a reporter words it."""

    message: str
    path: tuple  # where the problem is: in the resource (evaluation), in the policy (identifier, feedback)
    kind: str  # "evaluation", "variable" (unresolved {{ }}), "identifier", "feedback", ...
    value: Any  # the offending value, when there is one

    __slots__ = ("kind", "message", "path", "value")

    def __init__(self, message: str, path: tuple = (), kind: str = "evaluation", value: Any = None) -> None:
        self.message = message
        self.path = path
        self.kind = kind
        self.value = value

    def __str__(self) -> str:
        return self.message


class Resource(ValueRecord, hidden=("root", "file")):
    """One payload item being checked, and where it came from."""

    value: Any
    source: str | None  # file path, "<stdin>", or None for values passed in Python
    document: int | None  # index of the YAML document / JSON array item in the source
    root: Any  # the whole document the resource was taken from
    origin: tuple | None  # keys/indexes from `root` to the resource, when known
    default_identifier: str | None  # used when a rule has no identifier (Terraform: the address)
    file: Any  # the input it was read from; `.locate(steps)` -> (line, column)

    __slots__ = ("default_identifier", "document", "file", "origin", "root", "source", "value")

    def __init__(
            self, value: Any, source: str | None = None, document: int | None = None, root: Any = None,
            origin: tuple | None = None, default_identifier: str | None = None, file: Any = None,
    ) -> None:
        self.value = value
        self.source = source
        self.document = document
        self.root = root
        self.origin = origin
        self.default_identifier = default_identifier
        self.file = file

    def with_value(self, value: Any) -> Resource:
        """This resource read from the same place, holding `value` (as a language reads or patches it)."""
        return Resource(value, self.source, self.document, self.root, self.origin, self.default_identifier, self.file)

    @property
    def label(self) -> str:
        """Short text naming the resource's source for people."""
        if self.source is None:
            return "<input>"
        if self.document is None:
            return self.source
        return f"{self.source}#{self.document}"

    def origin_path(self) -> tuple | None:
        """Keys/indexes from the source document to this resource (found by identity when a
        pre-process expression picked it out), or None when it is not part of the document."""
        if self.origin is None and self.root is not None:
            self.origin = find_origin(self.root, self.value)
        return self.origin


class RuleResult(ValueRecord):
    """The outcome of one rule on one resource (skipped pairs are not stored, see ScanResult)."""

    resource: Resource
    policy: PolicyInfo
    rule: RuleInfo
    status: str
    identifier: str | None
    violations: list[Violation]
    error: RuleError | None
    feedback: dict[str, Any]
    message: str | None  # Kyverno: the rule's message, variables substituted
    exception: str | None  # the PolicyException that made this result a skip
    patched: Any  # Kyverno mutate: the resource after this rule's patches
    generated: list[Any]  # Kyverno generate: the resources the rule would create
    target: Any  # Kyverno mutate existing: the existing resource this result patched, after the patch
    action: str | None  # what the rule would do in a cluster ("generate", "mutate existing", "delete"):
    # `message` says it ("would generate NetworkPolicy/ns/name"), and reports show it for a pass too
    identifier_error: RuleError | None  # the identifier expression failed (`identifier` says so too)
    baselined: bool  # a failure or error whose every finding is in the --baseline file: it does not fail
    gate: str | None  # why a failure is only a warning (--fail-on: the policy's severity is below it)
    explanation: Explanation | None  # how a failure or error was reached (--explain: `engine.explain`)

    __slots__ = (
        "action", "baselined", "error", "exception", "explanation", "feedback", "gate", "generated", "identifier",
        "identifier_error", "message", "patched", "policy", "resource", "rule", "status", "target", "violations",
    )

    def __init__(
            self, resource: Resource, policy: PolicyInfo, rule: RuleInfo, status: str, identifier: str | None = None,
            violations: list[Violation] | None = None, error: RuleError | None = None,
            feedback: dict[str, Any] | None = None, message: str | None = None, exception: str | None = None,
            patched: Any = None, generated: list[Any] | None = None, target: Any = None, action: str | None = None,
            identifier_error: RuleError | None = None, baselined: bool = False, gate: str | None = None,
            explanation: Explanation | None = None,
    ) -> None:
        self.resource = resource
        self.policy = policy
        self.rule = rule
        self.status = status
        self.identifier = identifier
        self.violations = [] if violations is None else violations
        self.error = error
        self.feedback = {} if feedback is None else feedback
        self.message = message
        self.exception = exception
        self.patched = patched
        self.generated = [] if generated is None else generated
        self.target = target
        self.action = action
        self.identifier_error = identifier_error
        self.baselined = baselined
        self.gate = gate
        self.explanation = explanation

    def feedback_json(self) -> dict[str, Any]:
        """`feedback` as JSON: ``{"name": {"value": ...}}`` or ``{"name": {"error": "text"}}``."""
        return {name: {key: str(item) if isinstance(item, RuleError) else item for key, item in entry.items()}
                for name, entry in self.feedback.items()}

    @property
    def failed(self) -> bool:
        """Whether this result fails the scan: a failure or an error that is not in the baseline."""
        return self.status in (FAIL, ERROR) and not self.baselined


class Summary(ValueRecord):
    """The counts of a scan (`ScanResult.summary`)."""

    resources: int
    policies: int
    rules: int
    passed: int
    failed: int
    errors: int
    skipped: int
    violations: int

    __slots__ = ("errors", "failed", "passed", "policies", "resources", "rules", "skipped", "violations")

    def __init__(
            self, resources: int, policies: int, rules: int, passed: int, failed: int, errors: int, skipped: int,
            violations: int,
    ) -> None:
        self.resources = resources
        self.policies = policies
        self.rules = rules
        self.passed = passed
        self.failed = failed
        self.errors = errors
        self.skipped = skipped
        self.violations = violations


class ScanResult(ValueRecord):
    """Every result of a scan, in evaluation order (resource, policy, rule).

    Only rules that applied are stored; `skipped()` derives the (resource,
    rule) pairs whose match failed or exclude matched, so a 10,000-resource
    plan does not allocate tens of thousands of "skip" objects up front.
    """

    resources: list[Resource]
    policies: list[PolicyInfo]
    results: list[RuleResult]

    __slots__ = ("policies", "resources", "results")

    def __init__(self, resources: list[Resource], policies: list[PolicyInfo], results: list[RuleResult]) -> None:
        self.resources = resources
        self.policies = policies
        self.results = results

    @property
    def failed(self) -> bool:
        """True when any rule failed or errored (exit code 1)."""
        return any(result.failed for result in self.results)

    def by_resource(self) -> Iterator[tuple[Resource, list[RuleResult]]]:
        """Results grouped per resource, in resource order (resources with no result included)."""
        grouped: dict[int, list[RuleResult]] = {}
        for result in self.results:
            grouped.setdefault(id(result.resource), []).append(result)
        for resource in self.resources:
            yield resource, grouped.get(id(resource), [])

    def findings(self) -> Iterator[tuple[RuleResult, Violation | None]]:
        """Every finding in report order: a rule that errored (violation None), then each violation."""
        for result in self.results:
            if result.status == ERROR:
                yield result, None
            for violation in result.violations:
                yield result, violation

    def skipped(self) -> Iterator[tuple[Resource, PolicyInfo, RuleInfo]]:
        """Every (resource, policy, rule) that produced no result, in evaluation order."""
        applied = {(id(r.resource), id(r.rule)) for r in self.results}
        for resource in self.resources:
            for policy in self.policies:
                for rule in policy.rules:
                    if (id(resource), id(rule)) not in applied:
                        yield resource, policy, rule

    def unmatched_rules(self) -> list[tuple[PolicyInfo, RuleInfo]]:
        """Rules, as the user wrote them, that applied to no resource at all ("nothing was checked"): a
        rule counts as applied when it, or a rule generated from it (`written_rule`), gave a result."""
        applied = {(id(r.policy), written_rule(r.rule)) for r in self.results}
        return [(p, rule) for p in self.policies for rule in written_rules(p) if (id(p), rule.name) not in applied]

    def summary(self) -> Summary:
        """Counts of the scan; ``rules`` are the rules as written, ``skipped`` the resource × written rule
        pairs that produced no result (the reports' ``notMatched``, `assertree.report.totals`)."""
        statuses = Counter(result.status for result in self.results)
        rule_count = sum(len(written_rules(policy)) for policy in self.policies)
        pairs = {(id(r.resource), id(r.policy), written_rule(r.rule)) for r in self.results}
        return Summary(
            resources=len(self.resources),
            policies=len(self.policies),
            rules=rule_count,
            passed=statuses[PASS],
            failed=statuses[FAIL],
            errors=statuses[ERROR],
            skipped=len(self.resources) * rule_count - len(pairs),
            violations=sum(len(result.violations) for result in self.results),
        )


def find_origin(root: Any, target: Any) -> tuple | None:
    """The keys/indexes leading from `root` to the very object `target` (identity, not equality).

    Pre-processing with JMESPath hands out the payload's own objects, so a
    resource can be traced back to its place in the file without knowing the
    expression. Breadth first, so shallow matches are found quickly.
    """
    return find_origins(root, [target])[0]


def find_origins(root: Any, targets: Sequence[Any]) -> list[tuple | None]:
    """`find_origin` of each of `targets`, all in one breadth-first walk of `root` that ends when the last one
    is found: a report places its findings' resources at once (one walk each was quadratic: 36 s of CPU for
    the 1,580 findings of a 10,000-resource plan scanned with --pre-process and a SARIF report)."""
    found: list[tuple | None] = [None] * len(targets)
    wanted: dict[int, list[int]] = {}  # id of a target (alive: `targets` holds it) -> its numbers
    for number, target in enumerate(targets):
        if target is root:
            found[number] = ()
        elif isinstance(target, (dict, list)):
            wanted.setdefault(id(target), []).append(number)
    queue: list[tuple[Any, tuple]] = [(root, ())] if wanted else []
    while queue:
        next_level = []
        for value, path in queue:
            items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
            for key, child in items:
                if isinstance(child, (dict, list)):
                    numbers = wanted.pop(id(child), None)
                    if numbers is not None:
                        for number in numbers:
                            found[number] = (*path, key)
                        if not wanted:
                            return found
                    next_level.append((child, (*path, key)))
        queue = next_level
    return found


def fill_origins(resources: Iterable[Resource]) -> None:
    """`Resource.origin_path` of many resources at once: one walk of each root for all of its resources not
    placed yet."""
    by_root: dict[int, tuple[Any, list[Resource]]] = {}
    for resource in resources:
        if resource.origin is None and resource.root is not None:
            by_root.setdefault(id(resource.root), (resource.root, []))[1].append(resource)
    for root, waiting in by_root.values():
        for resource, origin in zip(waiting, find_origins(root, [item.value for item in waiting]), strict=True):
            resource.origin = origin
