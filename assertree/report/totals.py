"""The totals every report ends with, counted once, with one meaning of each word in every format.

* **policies / rules**: as the user wrote them: a rule Kyverno's autogen made for
  Pod controllers (``autogen-<rule>``, ``autogen-cronjob-<rule>``) counts under
  the rule it was made from (`assertree.results.written_rule`);
* **passed / failed / errored**: results where a rule applied to a resource and
  passed, failed, or could not be evaluated;
* **skipped**: checks that did not run: a written rule that, with its autogen
  rules, applied to no resource at all (counted once per rule), or a result
  Kyverno marks ``skip`` (preconditions not met, a policy exception). JUnit's
  ``skipped`` counts exactly these;
* **not matched**: resource × written rule pairs where neither the rule nor its
  autogen rules selected the resource: the normal case of a rule for another
  kind; counted, never called skipped;
* **file errors**: payload files that could not be read or parsed (each one
  also reported on its own, and the scan exits 2).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from itertools import accumulate
from operator import attrgetter, is_, not_
from typing import Any

from assertree.errors import Problem
from assertree.records import ValueRecord
from assertree.results import (
    ERROR,
    FAIL,
    PASS,
    SKIP,
    WARN,
    PolicyInfo,
    Resource,
    RuleInfo,
    RuleResult,
    ScanResult,
    written_rule,
    written_rules,
)

BASELINED = "baselined"  # how a Tally counts a result that `RuleResult.baselined` marks, whatever its status


def plural(count: int, one: str, many: str) -> str:
    return f"{count} {one if count == 1 else many}"


class Totals(ValueRecord):
    """The counts of a scan that every report format states (the JSON report's ``summary``)."""

    resources: int
    policies: int
    rules: int
    passed: int
    failed: int
    errors: int
    skipped: int
    notMatched: int  # camelCase: the JSON report's key, as written
    warned: int
    violations: int
    fileErrors: int  # camelCase: the JSON report's key, as written
    baselined: int  # failures and errors whose every finding is in the --baseline file (not in `failed`)
    fixed: int  # --baseline entries no finding matched

    __slots__ = (
        "baselined", "errors", "failed", "fileErrors", "fixed", "notMatched", "passed", "policies", "resources",
        "rules", "skipped", "violations", "warned",
    )

    def __init__(
            self, resources: int, policies: int, rules: int, passed: int, failed: int, errors: int, skipped: int,
            notMatched: int, warned: int, violations: int, fileErrors: int, baselined: int = 0, fixed: int = 0,
    ) -> None:
        self.resources = resources
        self.policies = policies
        self.rules = rules
        self.passed = passed
        self.failed = failed
        self.errors = errors
        self.skipped = skipped
        self.notMatched = notMatched
        self.warned = warned
        self.violations = violations
        self.fileErrors = fileErrors
        self.baselined = baselined
        self.fixed = fixed

    def line(self) -> str:
        """``Checked 2 resources against 4 policies (6 rules): 3 passed, 2 failed, 1 errored, 0 skipped``,
        and the files that could not be read, when there are any."""
        counts = [f"{self.passed} passed", f"{self.failed} failed", f"{self.errors} errored",
                  f"{self.skipped} skipped"]
        if self.warned:
            counts.append(f"{self.warned} warned")
        if self.baselined:
            counts.append(f"{self.baselined} baselined")
        if self.fixed:
            counts.append(f"{self.fixed} fixed since the baseline")
        text = (f"Checked {plural(self.resources, 'resource', 'resources')} against "
                f"{plural(self.policies, 'policy', 'policies')} ({plural(self.rules, 'rule', 'rules')}): "
                f"{', '.join(counts)}")
        if self.fileErrors:
            text += f"; {plural(self.fileErrors, 'file', 'files')} could not be read"
        return text


def totals(result: ScanResult, problems: Sequence[Problem] = (), baseline: Any = None) -> Totals:
    """The totals of a scan and of the payload files that could not be used (counted by a `Tally` over
    the scan's resources, as a streamed report counts them)."""
    return Tally.of(result, baseline).totals(problems)


class Tally:
    """The totals of a scan counted as its resources go by, one at a time, keeping nothing of them.

    What a streamed report (`assertree.report.stream`) ends with, and what a whole report counts too,
    so both say the same. Per rule it keeps only how many resources the rule gave a result for.
    """

    def __init__(self, policies: Sequence[PolicyInfo], baseline: Any = None) -> None:
        self.policies = list(policies)
        self.baseline = baseline  # the --baseline file read back (`assertree.findings.baseline.Baseline`), or None
        self.resources = 0
        self.results = 0  # rule results (rules that applied)
        self.statuses: Counter[str] = Counter()
        self.violations = 0
        self.applied: dict[int, int] = {}  # id(rule): how many resources it gave a result for
        self.written: dict[tuple[int, str], int] = {}  # (id(policy), written rule): how many resources it checked

    @classmethod
    def of(cls, result: ScanResult, baseline: Any = None) -> Tally:
        """The tally of a whole scan, counted at once: what `add` gives over `units(result)`."""
        tally = cls(result.policies, baseline)
        results = result.results
        tally.resources = len(result.resources)
        tally.results = len(results)
        tally.statuses = Counter(BASELINED if item.baselined else item.status for item in results)
        tally.violations = sum(map(len, map(_VIOLATIONS, results)))
        tally.applied, tally.written = _counted_once(results) or _counted(results)
        return tally

    def add(self, resource: Resource, results: Sequence[RuleResult]) -> None:
        """Count one resource and the results of the rules that applied to it."""
        self.resources += 1
        if not results:
            return
        self.results += len(results)
        statuses, applied = self.statuses, self.applied
        written = self.written
        if len(results) == 1:  # the common case: no pair to tell apart
            only = results[0]
            statuses[BASELINED if only.baselined else only.status] += 1
            self.violations += len(only.violations)
            rule = id(only.rule)
            applied[rule] = applied.get(rule, 0) + 1
            key = (id(only.policy), written_rule(only.rule))
            written[key] = written.get(key, 0) + 1
            return
        pairs = set()
        written_pairs = set()
        for result in results:
            statuses[BASELINED if result.baselined else result.status] += 1
            self.violations += len(result.violations)
            pairs.add((id(result.rule), id(result.resource)))
            written_pairs.add(((id(result.policy), written_rule(result.rule)), id(result.resource)))
        for rule, _ in pairs:
            applied[rule] = applied.get(rule, 0) + 1
        for key, _ in written_pairs:
            written[key] = written.get(key, 0) + 1

    @property
    def failed(self) -> bool:
        """True when any rule failed or errored (exit code 1)."""
        return bool(self.statuses[FAIL] or self.statuses[ERROR])

    @property
    def rules(self) -> int:
        """The rules as written (`assertree.results.written_rules`)."""
        return sum(len(written_rules(policy)) for policy in self.policies)

    def not_matched(self, rule: RuleInfo) -> int:
        """How many resources `rule` gave no result for."""
        return self.resources - self.applied.get(id(rule), 0)

    def unmatched_rules(self) -> list[tuple[PolicyInfo, RuleInfo]]:
        """Written rules that, with their autogen rules, applied to no resource at all ("nothing was
        checked"), as `ScanResult.unmatched_rules`."""
        return [(policy, rule) for policy in self.policies for rule in written_rules(policy)
                if (id(policy), rule.name) not in self.written]

    def totals(self, problems: Sequence[Problem] = ()) -> Totals:
        statuses = self.statuses
        return Totals(
            resources=self.resources,
            policies=len(self.policies),
            rules=self.rules,
            passed=statuses[PASS],
            failed=statuses[FAIL],
            errors=statuses[ERROR],
            skipped=len(self.unmatched_rules()) + statuses[SKIP],
            notMatched=self.resources * self.rules - sum(self.written.values()),
            warned=statuses[WARN],
            violations=self.violations,
            fileErrors=len(problems),
            baselined=statuses[BASELINED],
            fixed=len(self.baseline.fixed()) if self.baseline is not None else 0,
        )


_RESOURCE, _RULE, _POLICY, _VIOLATIONS = (attrgetter(name) for name in ("resource", "rule", "policy", "violations"))


def _counted(results: Sequence[RuleResult]) -> tuple[dict[int, int], dict[tuple[int, str], int]]:
    """`Tally.applied` and `Tally.written` of `results`: how many resources each rule, and each written rule of
    each policy, gave a result for (a rule may give several results for one resource: they count once)."""
    applied = Counter(rule for rule, _ in {(id(item.rule), id(item.resource)) for item in results})
    written = Counter(key for key, _ in {((id(item.policy), written_rule(item.rule)), id(item.resource))
                                         for item in results})
    return dict(applied), dict(written)


def _counted_once(results: Sequence[RuleResult]) -> tuple[dict[int, int], dict[tuple[int, str], int]] | None:
    """`_counted` where no two results are of one resource and one rule, or one written rule (what a scan
    gives): each result then counts once, and the counts are taken per rule object rather than through a
    set of pairs per result, a third of the time at 10,000 resources. None when that cannot be told cheaply.

    Told with whole-list operations: every resource's results are side by side (as many runs of one resource
    as resources), each rule object belongs to one policy, and within a run of several results the rules and
    written rules differ. Invariant: whenever it answers, it is `_counted`'s answer
    (`tests/reports/test_report_fast_paths.py` holds the two to each other)."""
    resources = list(map(_RESOURCE, results))
    same = list(map(is_, resources[1:], resources[:-1]))  # result i + 1 is of the resource of result i
    if len(set(map(id, resources))) != len(resources) - sum(same):
        return None  # a resource's results are not all side by side
    rules = list(map(_RULE, results))
    rule_ids = list(map(id, rules))
    policies = list(map(_POLICY, results))
    policy_of = dict(zip(rule_ids, policies))
    if not all(map(is_, policies, map(policy_of.__getitem__, rule_ids))):
        return None  # one rule object under two policies
    key_of = {rule_id: (id(policy_of[rule_id]), written_rule(rule))
              for rule_id, rule in dict(zip(rule_ids, rules)).items()}  # once per rule object
    if any(same):  # runs of several results: within each, no rule or written rule twice
        run_of = list(accumulate(map(not_, same), initial=0))
        if len(set(zip(run_of, rule_ids))) != len(results) or len(
                set(zip(run_of, map(key_of.__getitem__, rule_ids)))) != len(results):
            return None
    applied = Counter(rule_ids)
    written: dict[tuple[int, str], int] = {}
    for rule_id, count in applied.items():
        key = key_of[rule_id]
        written[key] = written.get(key, 0) + count
    return dict(applied), written


def units(result: ScanResult) -> Iterator[tuple[Resource, list[RuleResult]]]:
    """Each resource of a whole scan with the results of its check, in order: what a streamed scan
    (`assertree.engine.stream`) yields, so that one report implementation serves both.

    Results are in resource order; a result naming a resource that is not in `result.resources` (the
    resource as it was before a mutating policy changed it) belongs with the results around it. Such
    a result is kept with the resource before the next one that has a result of its own, which every
    report treats alike (they order by results, or group by the final resource).
    """
    results = result.results
    finals = {id(resource) for resource in result.resources}
    position, count = 0, len(results)
    last = len(result.resources) - 1
    for index, resource in enumerate(result.resources):
        start = position
        if index == last:
            position = count
        else:
            while position < count and (results[position].resource is resource
                                        or id(results[position].resource) not in finals):
                position += 1
        yield resource, results[start:position]
