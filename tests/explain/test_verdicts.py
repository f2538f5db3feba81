"""Explaining never changes a verdict, and every explanation ends where its verdict did.

Property over the conformance data: every case runs twice, without and with
``--explain``, and every result is compared field by field (status, message,
error, violations and their field errors, exception, patched resource,
feedback, identifier). Each failing or erroring result of a rule that can be
explained has an explanation that reaches its outcome (`engine.explain.reaches`),
never one that says the second evaluation disagreed or that explaining failed;
for kyverno-json trees, the traced failing nodes of each failing assertion are
exactly its field errors. The cases:

* kyverno-json: its own scan tests (``scan/manifest.json``) and the engine
  vectors (``semantics.json``);
* kyverno/policies: the core and extra tiers and the CEL tier (``manifest.json``
  ``tests``, ``extraTests``, ``celTests``), each folder as ``assertree test`` runs it;
* kyverno/kyverno's ``test/cli`` fixtures, every tier.
"""

from __future__ import annotations

import json
from collections import Counter
from functools import cache

import pytest
from conftest import CONFORMANCE

from assertree.engine.explain import reaches
from assertree.engine.scan import scan
from assertree.errors import AssertreeError
from assertree.inputs.payload import Payload, compile_preprocessors, read_payload, resources_from
from assertree.jp.values import to_display
from assertree.languages.base import ScanContext
from assertree.languages.load import load_policies, policy_from_mapping
from assertree.results import ERROR, FAIL, WARN, RuleResult
from assertree.testing.execute import load_test, run_loaded
from assertree.testing.testfile import read_test_file

KYVERNO_JSON = CONFORMANCE / "kyverno-json"
POLICIES = CONFORMANCE / "kyverno-policies"
CLI = CONFORMANCE / "kyverno-cli"
EXPLAINED = (FAIL, ERROR, WARN)
_COUNTS: Counter[str] = Counter()  # explained results per corpus (the last test checks none was vacuous)


def facts(result: RuleResult) -> tuple:
    """Everything a report could show of a result, except its explanation."""
    error = result.error
    return (result.policy.name, result.rule.name, str(result.status), result.identifier, result.message,
            None if error is None else (error.message, tuple(error.path), error.kind, to_display(error.value)),
            [(violation.check, violation.message, violation.steps,
              [(item.type, item.field, to_display(item.value), item.detail) for item in violation.errors])
             for violation in result.violations],
            result.exception, to_display(result.patched), to_display(result.feedback_json()),
            to_display(result.resource.value), result.resource.source, result.resource.document)


def assert_same(plain: list[RuleResult], explained: list[RuleResult], corpus: str) -> None:
    assert [facts(result) for result in plain] == [facts(result) for result in explained]
    for result in plain:
        assert result.explanation is None
    for result in explained:
        if result.status not in EXPLAINED:
            assert result.explanation is None
            continue
        explanation = result.explanation
        if explanation is None:
            assert _mutates(result), f"{result.policy.name}/{result.rule.name} has no explanation"
            continue
        texts = [step.detail for step in explanation.steps]
        assert not any(text.startswith(("could not explain", "evaluated again")) for text in texts), texts
        assert reaches(explanation, result.status), [(step.what, step.outcome) for step in explanation.steps]
        _COUNTS[corpus] += 1


def _mutates(result: RuleResult) -> bool:
    """Mutate rules have no explainer: their results go unexplained."""
    return getattr(result.rule, "kind", "") == "mutate" or getattr(result.policy, "mutating", False) is True


# -- kyverno-json -----------------------------------------------------------------------------------------------


SCAN = KYVERNO_JSON / "scan"
VECTORS = json.loads((KYVERNO_JSON / "semantics.json").read_text())["vectors"]


def _scan_rows():
    for row in json.loads((SCAN / "manifest.json").read_text()):
        yield pytest.param(row, id=row["name"])


def _both(resources, policies, bindings) -> tuple[list[RuleResult], list[RuleResult]]:
    plain = scan(resources, policies, bindings).results
    explained = scan(resources, policies, bindings, context=ScanContext(explain=True)).results
    return plain, explained


@pytest.mark.parametrize("row", list(_scan_rows()))
def test_kyverno_json_scan_tests(row):
    policies = load_policies(*(SCAN / path for path in row["policies"]))
    bindings = read_payload(str(SCAN / row["bindings"])).value if row["bindings"] else None
    resources = resources_from(read_payload(str(SCAN / row["payload"])), compile_preprocessors(row["preprocessors"]))
    plain, explained = _both(resources, policies, bindings)
    assert_same(plain, explained, "kyverno-json")
    assert_tree_errors(explained)


def _loaded(vector: dict):
    """(policies, resources) of a vector, or None for one refused at load time (its conformance test says why)."""
    try:
        policies = [policy_from_mapping(document) for document in vector["policies"]]
        resources = resources_from(Payload("<inline>", vector["payload"]),
                                   compile_preprocessors(vector["preprocessors"]))
    except AssertreeError:
        return None
    return policies, resources


LOADED = [vector for vector in VECTORS if _loaded(vector) is not None]


@pytest.mark.parametrize("vector", LOADED, ids=[vector["id"] for vector in LOADED])
def test_kyverno_json_semantics(vector):
    policies, resources = _loaded(vector)
    plain, explained = _both(resources, policies, vector["bindings"])
    assert_same(plain, explained, "kyverno-json")
    assert_tree_errors(explained)


def assert_tree_errors(results: list[RuleResult]) -> None:
    """For each failing assertion, the failing nodes the trace shows are its field errors, one for one."""
    for result in results:
        if result.status != FAIL or result.explanation is None:
            continue
        for violation in result.violations:
            steps = result.explanation.for_check(violation.check)
            nodes = [step for step in steps if step.depth > 0 and step.outcome == "fail"]
            assert len(nodes) == len(violation.errors), (violation.check, [(s.what, s.outcome) for s in steps])
            located = {tuple(error.payload_steps) for error in violation.errors}
            assert {step.resource_path for step in nodes if step.resource_path is not None} <= located | {
                path[:-1] for path in located}


# -- kyverno/policies and kyverno/kyverno's test/cli ------------------------------------------------------------


def _folders(manifest: dict, keys: tuple[str, ...], root) -> list:
    """The kyverno-test.yaml of every test the manifest lists under `keys`."""
    return sorted({str(root / test["test"]) for key in keys for test in manifest.get(key, ())})


@cache
def _policies_tests() -> list:
    manifest = json.loads((POLICIES / "manifest.json").read_text())
    return _folders(manifest, ("tests", "extraTests", "celTests"), POLICIES)


@cache
def _cli_tests() -> list:
    manifest = json.loads((CLI / "manifest.json").read_text())
    return _folders(manifest, ("tests", "celTests", "admissionTests"), CLI)


def _run_twice(test_file: str, corpus: str) -> None:
    try:
        tests = read_test_file(test_file)
    except AssertreeError:
        return  # a test assertree refuses (a field it does not run yet) is scored by the conformance tests
    for test in tests:
        try:
            loaded = load_test(test)
        except AssertreeError:
            continue
        plain = [result for item in run_loaded(loaded) for response in item.responses for result in response.results]
        explained = [result for item in run_loaded(loaded, explain=True) for response in item.responses
                     for result in response.results]
        assert_same(plain, explained, corpus)


@pytest.mark.parametrize("test_file", _policies_tests(), ids=lambda path: path.split("kyverno-policies/")[-1])
def test_kyverno_policies(test_file):
    _run_twice(test_file, "kyverno-policies")


@pytest.mark.parametrize("test_file", _cli_tests(), ids=lambda path: path.split("kyverno-cli/")[-1])
def test_kyverno_cli(test_file):
    _run_twice(test_file, "kyverno-cli")


def test_the_corpora_were_explained():
    """Not vacuous: each corpus gives explained results. Counted afresh here, whatever ran before in this
    process (with pytest-xdist the other tests of this module may run in other workers)."""
    _COUNTS.clear()
    for row in _scan_rows():
        test_kyverno_json_scan_tests(row.values[0])
    for test_file in _policies_tests()[:40]:
        _run_twice(test_file, "kyverno-policies")
    for test_file in _cli_tests()[:20]:
        _run_twice(test_file, "kyverno-cli")
    assert _COUNTS["kyverno-json"] >= 5  # the scan cases alone (the engine vectors add more when they run here)
    assert _COUNTS["kyverno-policies"] > 50
    assert _COUNTS["kyverno-cli"] > 10
