"""``assertree test``: Kyverno CLI test files (``kyverno-test.yaml``) run offline.

    >>> from assertree.testing import run_tests
    >>> run = run_tests(["policies/"])
    >>> run.summary_line()
    'Test Summary: 12 tests passed and 0 tests failed'

Stages, one module each: `testfile` reads the Test documents, `execute`
loads what a Test names and runs the policies (mutate, then validate) into
`responses` (one per policy and phase, as the Kyverno engine gives them),
`check` compares each expected row as ``kyverno test`` does, `patched`
finds and compares mutated resources, `output` formats the outcome (table,
JSON, JUnit). A Test that cannot be loaded (a file it names is missing or
unreadable) is reported as an error of that test and the others still run; a
Test that compared nothing fails (`check.nothing_compared`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from assertree.errors import AssertreeError
from assertree.testing.check import EXCLUDED, NOT_FOUND, RowCheck, check_test, nothing_compared
from assertree.testing.testfile import (
    TEST_FILE_NAME,
    ExpectedResult,
    KyvernoTest,
    KyvernoTestError,
    find_test_files,
    read_test_file,
)

__all__ = [
    "EXCLUDED",
    "NOT_FOUND",
    "TEST_FILE_NAME",
    "ExpectedResult",
    "KyvernoTest",
    "KyvernoTestError",
    "RowCheck",
    "TestOutcome",
    "TestRun",
    "find_test_files",
    "read_test_file",
    "run_test",
    "run_tests",
]


@dataclass
class TestOutcome:
    """One Test's rows, or the error that stopped it from running."""

    __test__ = False  # not a pytest class

    test: KyvernoTest | None
    file: Path
    rows: list[RowCheck] = field(default_factory=list)
    error: AssertreeError | None = None
    warnings: list[str] = field(default_factory=list)
    vacuous: str | None = None  # why the test compared nothing (it fails), None when it compared something
    policies: list[Any] = field(default_factory=list)  # the PolicyInfo of every policy the Test loaded

    @property
    def name(self) -> str:
        return self.test.name if self.test is not None else self.file.parent.name

    @property
    def passed(self) -> int:
        return sum(row.ok for row in self.rows)

    @property
    def failed(self) -> int:
        return sum(not row.ok for row in self.rows) + (self.error is not None) + (self.vacuous is not None)


@dataclass
class TestRun:
    """Every Test run by one call, in file order."""

    __test__ = False

    outcomes: list[TestOutcome]

    @property
    def passed(self) -> int:
        return sum(outcome.passed for outcome in self.outcomes)

    @property
    def failed(self) -> int:
        return sum(outcome.failed for outcome in self.outcomes)

    @property
    def ok(self) -> bool:
        return self.failed == 0

    def summary_line(self) -> str:
        """``Test Summary: N tests passed and M tests failed``, as ``kyverno test`` prints it."""
        return f"Test Summary: {self.passed} tests passed and {self.failed} tests failed"

    def summary(self) -> dict[str, Any]:
        return {"tests": len(self.outcomes), "passed": self.passed, "failed": self.failed,
                "errors": sum(outcome.error is not None for outcome in self.outcomes)}


def run_test(test: KyvernoTest, *, strict: bool = False, explain: bool = False) -> TestOutcome:
    """Load, run and check one Test; a loading problem becomes the outcome's error. With `explain`, each
    failing or erroring rule result is explained (its rows carry the result: `RowCheck.result`)."""
    from assertree.testing.execute import load_test, run_loaded, with_operation
    from assertree.testing.patched import patched_lookup

    try:
        loaded = load_test(test)
        responses = run_loaded(loaded, explain=explain)
        operations = sorted({result.operation for result in test.results if result.operation})
        by_operation = {operation: run_loaded(with_operation(loaded, operation), explain=explain)
                        for operation in operations}
    except AssertreeError as error:
        return TestOutcome(test, test.file, error=error)
    except RecursionError:  # what the test names nests deeper than the process may recurse
        from assertree.documents.nesting import TOO_DEEP

        return TestOutcome(test, test.file, error=KyvernoTestError(TOO_DEEP, source=str(test.file)))
    rows = check_test(test, responses, patched_lookup(), strict=strict, by_operation=by_operation,
                      invalid=loaded.invalid)
    return TestOutcome(test, test.file, rows, warnings=list(loaded.warnings),
                       vacuous=nothing_compared(test, rows, responses),
                       policies=[getattr(policy, "policy", policy) for policy in loaded.policies])


MIN_TEST_FILES_PER_JOB = 16
"""Fewer test files than this per process run in one process: a test file takes a few milliseconds, a forked
worker 15-20 ms to start and its outcomes about a tenth of their running time to send back."""
_PRELOADED = ("assertree.testing.execute", "assertree.testing.patched", "assertree.testing.payloads",
              "assertree.languages.load", "assertree.languages.kyverno.language",
              "assertree.languages.kyverno.evaluate", "assertree.languages.kyverno.cel_policies.language",
              "assertree.languages.cel.engine")


def run_tests(paths: Iterable[str | Path], *, file_name: str = TEST_FILE_NAME, strict: bool = False,
              exclude: Iterable[str] = (), explain: bool = False, jobs: int = 1, reports_only: bool = False,
              ) -> TestRun:
    """Every Test in the files and folders `paths` (folders searched for `file_name`, leaving out what the
    `exclude` patterns name).

    With `jobs` > 1 and enough files (`MIN_TEST_FILES_PER_JOB` per process), test files also run in
    `jobs` - 1 worker processes (`assertree.inputs.parallel.pooled`); the outcomes are those of one
    process, in the same order (a worker that dies loses nothing: its files run here). With `reports_only`,
    the rule results of rows run in a worker come back without the documents the reports never read
    (`_reported`)."""
    from assertree.documents.collector import collector_paused
    from assertree.inputs.parallel import Here, jobs_for, pooled
    from assertree.languages.cel.text_facts import batched

    files = find_test_files(paths, file_name, exclude)
    processes = jobs_for(len(files), jobs, MIN_TEST_FILES_PER_JOB)
    with batched():  # what the CEL engine learns of the expressions is written once, at the end
        if processes <= 1:
            return TestRun(run_test_files(files, strict=strict, explain=explain))
        _preload()  # before the workers are forked: they start with what every test needs imported
        outcomes: list[TestOutcome] = []
        run_chunk = partial(_run_chunk, strict=strict, explain=explain, reports_only=reports_only)
        with collector_paused():  # between files too (`run_test_files`), while the workers' outcomes are unpickled
            for file, found in pooled(files, processes, run_chunk, window=len(files)):  # every outcome is kept
                outcomes.extend(found if not isinstance(found, Here) else run_test_files([file], strict=strict,
                                                                                           explain=explain))
        return TestRun(outcomes)


def _run_chunk(files: list[Path], *, strict: bool, explain: bool, reports_only: bool = False,
               ) -> list[list[TestOutcome]]:
    """A worker's share: each file's outcomes (`_reported` ones with `reports_only`)."""
    from assertree.languages.cel.text_facts import batched

    with batched():
        outcomes = [run_test_files([file], strict=strict, explain=explain) for file in files]
    return [[_reported(outcome) for outcome in found] for found in outcomes] if reports_only else outcomes


def _reported(outcome: TestOutcome) -> TestOutcome:
    """`outcome` with what the reports read (table, JSON, JUnit, --explain, coverage) and not the documents
    its rows' rule results hold: the resource checked (its value and the document it came from) and what a
    mutate or generate rule made of it. A worker sends these back: on kyverno/policies' tests those documents
    were 40% of what it sent and half the time the main process spent unpickling it."""
    for row in outcome.rows:
        result = row.result
        if result is not None:
            source = result.resource
            row.result = result.replace(resource=type(source)(None, source.source, source.document), patched=None,
                                        generated=[], target=None)
    return outcome


def run_test_files(files: list[Path], *, strict: bool = False, explain: bool = False) -> list[TestOutcome]:
    """The outcomes of every Test in `files`, in order (a file that cannot be read is one outcome, its error).

    The cyclic garbage collector is paused while the files run, and collects its youngest generation after
    each file (what that file left): a test builds hundreds of thousands of objects (its documents, compiled
    policies, responses), and the collector's passes over them as they are made took about a tenth of the
    run. Its passes over the older generations (the outcomes kept so far, again and again) found a few
    thousand objects in a run of 4,000 rows and cost as much again: they wait until the files have run. What
    one file leaves is at most one file's garbage."""
    import gc

    from assertree.documents.collector import collector_paused

    outcomes = []
    with collector_paused():
        for file in files:
            try:
                tests = read_test_file(file)
            except KyvernoTestError as error:
                outcomes.append(TestOutcome(None, file, error=error))
            else:
                outcomes.extend(run_test(test, strict=strict, explain=explain) for test in tests)
            gc.collect(0)
    return outcomes


def _preload() -> None:
    """Import what running tests needs, and the CEL library when it is installed (`_PRELOADED`)."""
    from importlib import import_module

    for name in _PRELOADED:
        import_module(name)
    from assertree.languages.cel.engine import available

    available()
