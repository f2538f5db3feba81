"""``kyverno test`` as the Kyverno CLI 1.19 prints it (``commands/test/command.go``, ``test.go``, ``output.go`` at
kyverno/kyverno 111e07bb), over assertree's test machinery (`assertree.testing`).

For each Test file found (folders walked depth first, entries in name order,
hidden folders included, as the CLI's ``loadLocalTest`` does) whose results
the selector keeps:

    Loading test NAME ( PATH ) ...
      Loading values/variables ...
      Loading user infos ...          (when the Test names a userinfo file)
      Loading policies ...
      Loading resources ...
      Loading exceptions ...
      Applying 1 policy to 2 resources with 0 exceptions ...
      Checking results ...

then the results table (``ID``, ``POLICY``, ``RULE``, ``RESOURCE``, ``RESULT``,
``REASON``, and ``MESSAGE`` with ``--detailed-results``), or the rows in
``--output-format`` json, yaml, markdown or junit, and at the end ``Test
Summary: N tests passed and M tests failed`` (``--fail-only``: ``Test Summary:
M out of T tests failed`` and the failed rows together). NAME is the Test's
deprecated top-level ``name`` (the CLI prints that field, so a Test named only
in ``metadata`` shows two spaces). The rows are assertree's (`assertree.testing.check`).

Where assertree differs: a Test that cannot be read or loaded is printed with
its error and counted as a failed test, and the others still run (the CLI stops
at it); a file path may be given as well as a folder.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from assertree.documents.paths import NO_EXCLUDE, Exclude
from assertree.errors import AssertreeError
from assertree.kyverno_cli.selector import Selector
from assertree.kyverno_cli.table import Paint, render
from assertree.testing.check import EXCLUDED, NOT_FOUND, RowCheck
from assertree.testing.testfile import TEST_FILE_NAME, KyvernoTest

__all__ = ["FORMATS", "TestCommand", "TestOptions", "find_tests"]

FORMATS = ("json", "yaml", "markdown", "junit")


@dataclass
class TestOptions:
    """``kyverno test``'s flags that shape its output."""

    __test__ = False  # not a pytest class

    file_name: str = TEST_FILE_NAME
    selector: Selector = field(default_factory=Selector)
    output_format: str = ""
    fail_only: bool = False
    detailed: bool = False
    color: bool = False
    exclude: Exclude = NO_EXCLUDE


@dataclass
class Row:
    """One row of the CLI's table: `RowCheck` as ``table.Row``."""

    id: int
    policy: str
    rule: str
    resource: str
    result: str
    reason: str
    message: str
    failure: bool


def find_tests(paths: Sequence[str | Path], file_name: str = TEST_FILE_NAME,
               exclude: Exclude = NO_EXCLUDE) -> list[Path]:
    """The Test files under `paths` in the CLI's order: each folder's entries by name, folders descended as
    they come (hidden ones too); a file named is taken as it is. What `exclude` names is left out."""
    out: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_file():
            if not exclude.matches(path):
                out.append(path)
        elif path.is_dir():
            out.extend(_walk(Path(os.path.normpath(path)), file_name, exclude, Path(os.path.normpath(path))))
        else:
            from assertree.testing.testfile import KyvernoTestError

            raise KyvernoTestError("test file or folder not found", source=str(raw))
    return out


def _walk(folder: Path, file_name: str, exclude: Exclude, root: Path) -> Iterator[Path]:
    for entry in sorted(os.scandir(folder), key=lambda entry: entry.name):
        path = folder / entry.name if str(folder) != "." else Path(entry.name)
        if exclude.matches(path, root):
            continue
        if entry.is_dir():
            yield from _walk(path, file_name, exclude, root)
        elif entry.name == file_name:
            yield path


class TestCommand:
    """One ``kyverno test`` run: iterate it for the text, in order; then `passed`, `failed`, `found` say how it went."""

    __test__ = False

    def __init__(self, paths: Sequence[str | Path], options: TestOptions) -> None:
        self.paths, self.options = list(paths), options
        self.passed = self.failed = 0
        self.found = 0  # Test documents found
        self.failed_rows: list[Row] = []

    def __iter__(self) -> Iterator[str]:
        from assertree.testing.testfile import KyvernoTestError, read_test_file

        options = self.options
        if options.selector.errors:
            yield "\nFilter errors:\n" + "".join(f"  Error: {error}\n" for error in options.selector.errors)
        tests: list[KyvernoTest] = []
        unreadable: list[tuple[Path, str]] = []
        for file in find_tests(self.paths, options.file_name, options.exclude):
            try:
                tests.extend(read_test_file(file))
            except KyvernoTestError as error:
                unreadable.append((file, str(error)))
        self.found = len(tests) + len(unreadable)
        if not self.found:
            yield "\nNo test yamls available\n"
            return
        if unreadable:
            yield "\nTest errors:\n" + "".join(f"  Path: {file}\n    Error: {error}\n" for file, error in unreadable)
            self.failed += len(unreadable)
        for test in tests:
            yield from self._run(options.selector.select(test))
        if options.fail_only:
            yield f"\nTest Summary: {self.failed} out of {self.passed + self.failed} tests failed\n\n"
            if self.failed_rows:
                rows = [replace(row, id=number) for number, row in enumerate(self.failed_rows, start=1)]
                if options.output_format:
                    yield formatted(rows, options.output_format, options.detailed)
                else:
                    yield "Aggregated Failed Test Cases : \n" + _table(rows, options)
        else:
            yield f"\nTest Summary: {self.passed} tests passed and {self.failed} tests failed\n\n"

    def _run(self, test: KyvernoTest) -> Iterator[str]:
        from assertree.testing.check import check_test, nothing_compared
        from assertree.testing.execute import load_test, run_loaded
        from assertree.testing.patched import patched_lookup

        if not test.results:
            return
        name = test.document.get("name") if isinstance(test.document.get("name"), str) else ""
        yield f"Loading test {name} ( {test.file} ) ...\n  Loading values/variables ...\n"
        if test.userinfo:
            yield "  Loading user infos ...\n"
        yield "  Loading policies ...\n  Loading resources ...\n"
        try:
            loaded = load_test(test)
            yield "  Loading exceptions ...\n"
            yield (f"  Applying {_count(len(loaded.policies), 'policy', 'policies')} to "
                   f"{_count(len(loaded.resources), 'resource', 'resources')} with "
                   f"{_count(len(loaded.exceptions), 'exception', 'exceptions')} ...\n")
            responses = run_loaded(loaded)
        except AssertreeError as error:
            self.failed += 1
            yield f"  Error: {error}\n\n"
            return
        except RecursionError:  # what the test names nests deeper than the process may recurse
            from assertree.documents.nesting import TOO_DEEP

            self.failed += 1
            yield f"  Error: {test.file}: {TOO_DEEP}\n\n"
            return
        yield "  Checking results ...\n"
        checked = check_test(test, responses, patched_lookup())
        vacuous = nothing_compared(test, checked, responses)  # assertree test's rule: such a test fails
        if vacuous is not None:
            self.failed += 1
        rows = [Row(number, *_cells(row, self.options.color)[1:]) for number, row in enumerate(checked, start=1)]
        for row in rows:
            if row.failure:
                self.failed += 1
                self.failed_rows.append(row)
            else:
                self.passed += 1
        for warning in loaded.warnings:
            yield f"  warning: {warning}\n"
        if vacuous is not None:
            yield f"  Error: {vacuous}\n"
        if self.options.fail_only:
            return
        if self.options.output_format:
            yield formatted(rows, self.options.output_format, self.options.detailed)
        else:
            yield "\n" + _table(rows, self.options) + "\n"


def _count(number: int, one: str, many: str) -> str:
    return f"{number} {one if number == 1 else many}"


def _cells(row: RowCheck, color: bool = False) -> tuple[int, str, str, str, str, str, str, bool]:
    """A checked row as the CLI's cells: the resource as ``apiVersion/Kind/namespace/name`` (with ``//`` for a
    cluster-scoped one), Pass or Fail, the reason, and the message (``Excluded``, ``Not found``)."""
    paint = Paint(color)
    resource = "/".join(row.resource[:-1])
    rule = row.rule if row.rule is not None else ""
    if row.actual == EXCLUDED:
        message = "Excluded"
    elif row.actual == NOT_FOUND:
        message = "Not found"
    else:
        message = row.message
    reason = paint.yellow(row.reason) if row.reason in ("Excluded", "Not found") else row.reason
    return (0, paint.policy("", row.policy), paint.cyan(rule), paint.resource(resource, "", row.resource[-1]),
            paint.result("Pass" if row.ok else "Fail"), reason, message, not row.ok)


def _table(rows: list[Row], options: TestOptions) -> str:
    headers = ["id", "policy", "rule", "resource", "result", "reason"] + (["message"] if options.detailed else [])
    cells = [[str(row.id), row.policy, row.rule, row.resource, row.result, row.reason]
             + ([row.message] if options.detailed else []) for row in rows]
    return render(headers, cells, color=options.color)


def formatted(rows: list[Row], output_format: str, detailed: bool) -> str:
    """``printOutputFormats``: the rows as JSON (two-space indent, keys sorted), YAML (go-yaml v3), a
    Markdown table or JUnit XML (one testsuite per policy, in name order: the CLI's are in Go's map
    order; the CLI leaves ``<failure>`` open without ``--detailed-results``, assertree closes it), with a blank
    line before and after."""
    if output_format == "markdown":
        return "\n" + _markdown(rows, detailed) + "\n\n"
    if output_format == "junit":
        return "\n" + _junit(rows, detailed) + "\n\n"
    items: list[dict[str, Any]] = []
    for row in rows:
        item: dict[str, Any] = {"ID": row.id, "POLICY": row.policy, "RULE": row.rule, "RESOURCE": row.resource,
                                "RESULT": row.result, "REASON": row.reason}
        if detailed:
            item["Message"] = row.message
        items.append(item)
    if output_format == "json":
        from assertree.report.gojson import marshal_indent

        return "\n" + marshal_indent(items) + "\n\n"
    return "\n" + _yaml_v3(items) + "\n\n"


def _yaml_v3(items: list[dict[str, Any]]) -> str:
    """go-yaml v3's ``Marshal`` of the rows (``[]`` for none; keys sorted)."""
    if not items:
        return "[]\n"
    from assertree.kyverno_cli.goyaml import marshal

    return marshal(items)


def _markdown(rows: list[Row], detailed: bool) -> str:
    headers = ["ID", "POLICY", "RULE", "RESOURCE", "RESULT", "REASON"] + (["MESSAGE"] if detailed else [])
    out = ["| " + " | ".join(headers) + " | \n", "|" + "----|" * len(headers) + "\n"]
    for row in rows:
        line = f"| {row.id} | {row.policy} | {row.rule} | {row.resource} | {row.result} | {row.reason} |"
        out.append(line + (f" {row.message} |\n" if detailed else "\n"))
    return "".join(out)


def _junit(rows: list[Row], detailed: bool) -> str:
    failures = sum(row.failure for row in rows)
    out = ['<?xml version="1.0" encoding="UTF-8"?>\n', f'<testsuites tests="{len(rows)}" failures="{failures}">\n']
    suites: dict[str, list[Row]] = {}
    for row in rows:
        suites.setdefault(row.policy, []).append(row)
    for policy in sorted(suites):
        members = suites[policy]
        out.append(f' <testsuite name="{policy}" tests="{len(members)}" '
                   f'failures="{sum(row.failure for row in members)}">\n')
        for row in members:
            out.append(f'  <testcase classname="{row.rule}" name="{row.resource}">\n')
            if row.failure:
                out.append(f'   <failure message="{row.reason}">\n    Policy: {row.policy}\n    Rule: {row.rule}\n'
                           f"    Resource: {row.resource}\n    Result: {row.result}")
                # the CLI closes the element only with --detailed-results; assertree always does (valid XML)
                out.append(f"    Message: {row.message}\n   </failure>\n" if detailed else "\n   </failure>\n")
            else:
                out.append(f"   <system-out><![CDATA[\n    Reason: {row.reason}\n    Policy: {row.policy}\n"
                           f"    Rule: {row.rule}\n    Resource: {row.resource}\n")
                if detailed:
                    out.append(f"    Message: {row.message}\n")
                out.append("   ]]></system-out>\n")
            out.append("  </testcase>\n")
        out.append(" </testsuite>\n")
    out.append("</testsuites>")
    return "".join(out)
