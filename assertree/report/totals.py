"""The totals every report ends with, counted once, with one meaning of each word in every format.

* **passed / failed / errored**: resource × rule pairs where the rule applied and
  passed, failed, or could not be evaluated;
* **skipped**: checks that did not run: a rule that applied to no resource at all
  (counted once per rule), or a result Kyverno marks ``skip`` (preconditions not
  met, a policy exception). JUnit's ``skipped`` counts exactly these;
* **not matched**: resource × rule pairs whose ``match`` did not select the
  resource (or whose ``exclude`` did): the normal case of a rule for another kind;
  counted, never called skipped;
* **file errors**: payload files that could not be read or parsed (each one
  also reported on its own, and the scan exits 2).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass

from assertree.errors import Problem
from assertree.results import SKIP, WARN, ScanResult


def plural(count: int, one: str, many: str) -> str:
    return f"{count} {one if count == 1 else many}"


@dataclass(frozen=True)
class Totals:
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

    def as_dict(self) -> dict[str, int]:
        return asdict(self)

    def line(self) -> str:
        """``Checked 2 resources against 4 policies (6 rules): 3 passed, 2 failed, 1 errored, 0 skipped``,
        and the files that could not be read, when there are any."""
        counts = [f"{self.passed} passed", f"{self.failed} failed", f"{self.errors} errored",
                  f"{self.skipped} skipped"]
        if self.warned:
            counts.append(f"{self.warned} warned")
        text = (f"Checked {plural(self.resources, 'resource', 'resources')} against "
                f"{plural(self.policies, 'policy', 'policies')} ({plural(self.rules, 'rule', 'rules')}): "
                f"{', '.join(counts)}")
        if self.fileErrors:
            text += f"; {plural(self.fileErrors, 'file', 'files')} could not be read"
        return text


def totals(result: ScanResult, problems: Sequence[Problem] = ()) -> Totals:
    """The totals of a scan and of the payload files that could not be used.

    The counts the library's `ScanResult.summary()` already makes are taken from it (its ``skipped``, the
    pairs that produced no result, is what reports call ``notMatched``); only the report's own words are
    counted here.
    """
    summary = result.summary()
    return Totals(
        resources=summary.resources,
        policies=summary.policies,
        rules=summary.rules,
        passed=summary.passed,
        failed=summary.failed,
        errors=summary.errors,
        skipped=len(result.unmatched_rules()) + sum(1 for item in result.results if item.status == SKIP),
        notMatched=summary.skipped,
        warned=sum(1 for item in result.results if item.status == WARN),
        violations=summary.violations,
        fileErrors=len(problems),
    )
