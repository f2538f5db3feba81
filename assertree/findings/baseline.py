"""Baselines: record today's findings, then fail only on new ones.

``--write-baseline FILE`` writes every finding of a scan (failures, errors and
warnings) with its fingerprint (`assertree.findings.fingerprint`) and what a
person needs to recognise it. ``--baseline FILE`` reads it back: a finding whose
fingerprint is in the file is *baselined* (`Violation.baselined`; a result whose
every finding is baselined is `RuleResult.baselined` and does not fail the scan),
and stays visible in every report; baseline entries that no scanned finding
matched are *fixed* (`Baseline.fixed`), and reports list them. Fingerprints
ignore lines and positions, so a baseline written before reordering resources,
reformatting files or moving lines still matches every unchanged finding.

The file is JSON, sorted, one finding per entry, so that it reviews well in a
pull request and burns down visibly; it is written like every file assertree
writes (`assertree.writes`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from assertree.errors import AssertreeError
from assertree.findings.fingerprint import fingerprint, resource_identity, rule_id
from assertree.inputs.paths import relative_path
from assertree.records import ValueRecord
from assertree.results import ERROR, FAIL, WARN, RuleResult, Violation

FORMAT = "assertree-baseline"
VERSION = 1


class BaselineError(AssertreeError):
    """A baseline file that cannot be used (exit code 2)."""


class Entry(ValueRecord):
    """One recorded finding: its fingerprint and how to recognise it."""

    fingerprint: str
    rule: str  # policy/rule
    file: str  # the payload file, relative to the working directory
    resource: str  # its identity (`resource_identity`)
    check: str  # the failing check, or "error"
    message: str

    __slots__ = ("check", "file", "fingerprint", "message", "resource", "rule")

    def __init__(self, fingerprint: str, rule: str, file: str, resource: str, check: str, message: str) -> None:
        self.fingerprint = fingerprint
        self.rule = rule
        self.file = file
        self.resource = resource
        self.check = check
        self.message = message


def findings_of(results: Iterable[RuleResult]) -> Iterator[tuple[RuleResult, Violation | None]]:
    """Every finding a baseline records: each violation of a failure or warning, each error."""
    for result in results:
        if result.status == ERROR:
            yield result, None
        elif result.status in (FAIL, WARN):
            for violation in result.violations:
                yield result, violation


def entry(result: RuleResult, violation: Violation | None) -> Entry:
    source = result.resource.source
    message = (str(result.error) if result.error is not None else "") if violation is None else \
        violation.headline()
    return Entry(fingerprint(result, violation), rule_id(result.policy, result.rule),
                 relative_path(source) if source else "", resource_identity(result),
                 "error" if violation is None else violation.check, message)


class Recorder:
    """The entries of a baseline being written, gathered as results go by (one entry per fingerprint)."""

    def __init__(self) -> None:
        self.entries: dict[str, Entry] = {}

    def add(self, results: Iterable[RuleResult]) -> None:
        for result, violation in findings_of(results):
            found = entry(result, violation)
            self.entries.setdefault(found.fingerprint, found)

    def write(self, path: str | Path) -> int:
        """Write the baseline file; returns how many findings it holds."""
        import orjson

        from assertree.writes import write_file

        ordered = sorted(self.entries.values(), key=lambda item: (item.file, item.rule, item.resource, item.check,
                                                                 item.fingerprint))
        document = {"format": FORMAT, "version": VERSION, "findings": [item.as_dict() for item in ordered]}
        write_file(path, orjson.dumps(document, option=orjson.OPT_INDENT_2) + b"\n", "the baseline")
        return len(ordered)


class Baseline:
    """A baseline file read back: marks the findings it holds and knows which of its entries were not met."""

    def __init__(self, path: str | Path, entries: dict[str, Entry]) -> None:
        self.path = str(path)
        self.entries = entries
        self.matched: set[str] = set()

    @classmethod
    def read(cls, path: str | Path) -> Baseline:
        import orjson

        from assertree.documents.reader import read_bytes

        try:
            document = orjson.loads(read_bytes(path))
        except orjson.JSONDecodeError as error:
            raise BaselineError(f"not a baseline file: invalid JSON ({error})", source=str(path)) from None
        except AssertreeError as error:
            raise BaselineError(f"cannot read the baseline: {error.message}", source=str(path)) from None
        if not isinstance(document, dict) or document.get("format") != FORMAT:
            raise BaselineError(f"not a baseline file (write one with --write-baseline): no \"format\": \"{FORMAT}\"",
                                source=str(path))
        if document.get("version") != VERSION:
            raise BaselineError(f"baseline version {document.get('version')!r} is not {VERSION}: write it again",
                                source=str(path))
        entries: dict[str, Entry] = {}
        findings = document.get("findings")
        if not isinstance(findings, list):
            raise BaselineError("findings: must be a list", source=str(path))
        for index, item in enumerate(findings):
            try:
                found = Entry(**{name: str(item[name]) for name in Entry._fields})
            except (KeyError, TypeError):
                fields = ", ".join(Entry._fields)
                raise BaselineError(f"findings[{index}]: must be a mapping with {fields}",
                                    source=str(path)) from None
            entries[found.fingerprint] = found
        return cls(path, entries)

    def mark(self, results: Iterable[RuleResult]) -> None:
        """Mark each finding of `results` that the baseline holds, and each result all of whose findings it
        holds (in place)."""
        entries, matched = self.entries, self.matched
        for result in results:
            if result.status == ERROR:
                key = fingerprint(result, None)
                if key in entries:
                    matched.add(key)
                    result.baselined = True
                continue
            if result.status not in (FAIL, WARN) or not result.violations:
                continue
            for violation in result.violations:
                key = fingerprint(result, violation)
                if key in entries:
                    matched.add(key)
                    violation.baselined = True
            result.baselined = all(violation.baselined for violation in result.violations)

    def fixed(self) -> list[Entry]:
        """The entries no finding matched (so far), in the file's order."""
        return [item for key, item in self.entries.items() if key not in self.matched]

    def as_dict(self) -> dict[str, Any]:
        return {"file": self.path, "entries": len(self.entries), "matched": len(self.matched),
                "fixed": [item.as_dict() for item in self.fixed()]}
