"""A migrated policy run on the rows of its hand-written CEL twin (``<category>-cel/``, ``-vpol/``, ``-mpol/``
folders of kyverno/policies beside ``<category>/``), with Kyverno's verdicts to settle where they disagree.

For each row of the twin's ``kyverno-test.yaml`` (with the twin test's resources, values, user info and
operation), the converted documents of the source rule the row names (every rule when it names none, as the
twin's one policy stands for them all) give one verdict: ``fail`` when one of them fails or errors, else
``pass`` when one passes, else ``skip`` (no result counts as skip, as ``kyverno test`` counts an excluded row).
Where that verdict is not the twin's expected result, the source ClusterPolicy's own test rows for the same
resource (Kyverno's verdicts, combined the same way) say which side Kyverno supports, when they name it.
Statuses are compared; a mutating twin's patched resources are not.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from assertree import load_policies
from assertree.languages.load import compile_document
from assertree.migrate import Report
from assertree.results import Resource
from assertree.testing.execute import load_inputs
from assertree.testing.testfile import read_test_file

DATA = Path(__file__).resolve().parents[1] / "conformance" / "data" / "kyverno-policies"
MANIFEST = json.loads((DATA / "manifest.json").read_text())
CORE = sorted({Path(test["test"]).parent.parent.as_posix() for test in MANIFEST["tests"]})
SUFFIXES = ("-cel", "-vpol", "-mpol")


def twins() -> list[tuple[str, str]]:
    """(core policy folder, twin folder) for every twin with a kyverno test."""
    found = []
    for folder in CORE:
        category, name = folder.split("/", 1)
        for suffix in SUFFIXES:
            twin = f"{category}{suffix}/{name}"
            if (DATA / twin / ".kyverno-test" / "kyverno-test.yaml").exists():
                found.append((folder, twin))
    return found


@dataclass
class Row:
    """One compared (twin row, resource): the twin's expected result, the conversion's, Kyverno's (or None)."""

    twin: str
    index: int
    resource: str
    rule: str | None
    expected: str
    converted: str
    kyverno: str | None  # the source test's rows for the resource (Kyverno's verdict), when they name it
    source: str  # the source ClusterPolicy run by assertree's Kyverno engine on the twin's resource

    @property
    def agrees(self) -> bool:
        return self.expected == self.converted

    @property
    def supported(self) -> str:
        """Which side Kyverno's verdict supports: ``twin``, ``conversion``, ``neither``, or ``no verdict``."""
        if self.kyverno is None:
            return "no verdict"
        return {self.expected: "twin", self.converted: "conversion"}.get(self.kyverno, "neither")

    def text(self) -> str:
        side = {"no verdict": "no Kyverno row names the resource"}.get(
            self.supported, f"Kyverno's rows support the {self.supported}")
        return (f"{self.twin} row {self.index + 1} on {self.resource}: twin {self.expected}, converted "
                f"{self.converted} ({side}{f': {self.kyverno}' if self.kyverno else ''}; the source policy gives "
                f"{self.source})")


def _combined(statuses: list[str | None]) -> str:
    if any(status in ("fail", "error") for status in statuses):
        return "fail"
    if any(status == "pass" for status in statuses):
        return "pass"
    return "skip"


def _kyverno_verdicts(folder: str) -> dict[str, str]:
    """Resource name -> the source test's expected result over every rule (Kyverno's verdicts)."""
    rows: dict[str, list[str | None]] = {}
    for test in MANIFEST["tests"]:
        if test["path"].startswith(folder + "/"):
            for row in test["rows"]:
                if not row.get("vacuous"):
                    rows.setdefault(row["resource"]["name"], []).append(row["result"])
    return {name: _combined(results) for name, results in rows.items()}


def compare(folder: str, twin: str, report: Report, out: Path) -> list[Row]:
    """Every (row, resource) of `twin`'s test, run through the documents `report` converted into `out`; none when
    a rule of the source was not converted (there is no conversion of the whole policy to compare)."""
    if any(rule.status == "not-converted" for policy in report.policies for rule in policy.rules):
        return []
    by_rule: dict[str, list[Any]] = {}
    compiled: dict[tuple[str, str], Any] = {}
    for policy in report.policies:
        for rule in policy.rules:
            for ref in rule.converted:
                key = (ref.file, ref.name)
                if key not in compiled:
                    documents = [document for document in yaml.safe_load_all((out / ref.file).read_text())
                                 if isinstance(document, dict)]
                    for document in documents:  # the default target: Kyverno's CEL kinds, no bindings
                        compiled[(ref.file, document["metadata"]["name"])] = compile_document(document)
                if key in compiled:
                    by_rule.setdefault(rule.name, []).append(compiled[key])
    kyverno = _kyverno_verdicts(folder)
    sources = [policy for file in sorted({policy.file for policy in report.policies})
               for policy in load_policies(file)]
    source_rules = {rule.name for policy in report.policies for rule in policy.rules}
    rows = []
    for test, context, expected, value in cases(twin):
        rule = expected.rule if expected.rule in by_rule and _twin_rules(test) == source_rules else None
        policies = by_rule[rule] if rule else [item for items in by_rule.values() for item in items]
        source = [_only(policy, rule) for policy in sources] if rule else sources
        name = str((value.get("metadata") or {}).get("name"))
        rows.append(Row(twin, expected.index, name, expected.rule, expected.result,
                        _verdict(policies, value, context), kyverno.get(name), _verdict(source, value, context)))
    return rows


def cases(twin: str) -> Iterator[tuple[Any, Any, Any, dict]]:
    """(test, scan context, expected result, resource) for each resource each row of `twin`'s test names
    (every resource, when the row names none)."""
    for test in read_test_file(DATA / twin / ".kyverno-test" / "kyverno-test.yaml"):
        loaded = load_inputs(test)
        resources = [manifest.value for manifest in loaded.resources if isinstance(manifest.value, dict)]
        for expected in test.results:
            names = {name.rsplit("/", 1)[-1] for name in expected.resources}
            for value in resources:
                if not names or str((value.get("metadata") or {}).get("name")) in names:
                    yield test, loaded.context, expected, value


def _twin_rules(test: Any) -> set[str]:
    """The rule names of the twin's ClusterPolicies (a row names one of them; they are the source's when the
    twin keeps its rules, else a row stands for the whole policy)."""
    names = set()
    for name in test.policies:
        for document in yaml.safe_load_all(test.path(name).read_text()):
            if isinstance(document, dict) and isinstance(document.get("spec"), dict):
                names.update(str(rule.get("name")) for rule in document["spec"].get("rules") or []
                             if isinstance(rule, dict))
    return names


def _only(policy: Any, rule: str) -> Any:
    """A compiled source ClusterPolicy reduced to `rule` (and its autogen rules)."""
    from assertree.languages.kyverno.compile import CompiledKyvernoPolicy

    def keep(compiled: Any) -> bool:
        return rule in (compiled.rule.name, compiled.rule.autogen_of)

    return CompiledKyvernoPolicy(policy.policy, [item for item in policy.rules if keep(item)],
                                 [item for item in policy.mutate_rules if keep(item)])


def _verdict(policies: list[Any], value: dict, context: Any) -> str:
    statuses: list[str | None] = []
    for policy in dict.fromkeys(policies):
        mutator = policy.mutator(context)
        if mutator is not None:
            _patched, results = mutator(Resource(value))
            statuses.extend(str(result.status) for result in results)
        for compiled_rule in policy.rules:
            result = compiled_rule.runner(context)(Resource(value))
            statuses.append(None if result is None else str(result.status))
    return _combined(statuses)
