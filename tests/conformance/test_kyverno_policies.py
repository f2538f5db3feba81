"""Kyverno's policy library (kyverno/policies) run through `assertree test`, row by row.

Every core-tier row of ``data/kyverno-policies/manifest.json`` is one case,
id ``<test path>#<row index>``, and so is every row of its ``extraTests``
whose features are run (`EXTRA_FEATURES`). Each kyverno-test.yaml runs once through
`assertree.testing.run_test` (the same machinery as ``assertree test``); a
row agrees when every compared result for its (entry, resource) equals the
expected one (an expected ``skip`` is also met by ``excluded``: Kyverno gives no
rule response when match/exclude does not select) and any patched resource
matches. This is stricter than ``kyverno test``, which counts ``Excluded``
as a pass whatever was expected. Vacuous rows (a rule the policy lacks) are
not cases.

Rows that cannot pass yet are listed in XFAIL, one reason each; they run as
``xfail(strict=True)`` so a row that starts agreeing must leave the list.

The generate and GeneratingPolicy rows of ``extraTests`` are scored the same
way (`test_generate_row`), and each must have generated what its
``generatedResource`` file holds (the file is compared, not only the status).
"""

from __future__ import annotations

import json
import re
import shutil
from functools import cache

import pytest
from conftest import CONFORMANCE

from assertree.testing import EXCLUDED, run_test, run_tests
from assertree.testing.testfile import read_test_file

DATA = CONFORMANCE / "kyverno-policies"
MANIFEST = json.loads((DATA / "manifest.json").read_text())

# Rows that do not agree, by id, with the reason (grouped by cause in comments).
XFAIL: dict[str, str] = {
    # The oracle is kyverno test's lenient comparison, which the strict check here does not share.
    "other/memory-requests-equal-limits/.kyverno-test#0":
        "kyverno test prints Pass (Excluded): autogen's batch/v1/CronJob kind does not select this "
        "batch/v1beta1 CronJob, so no rule response exists; strictly, excluded is not pass",
    "psa/add-psa-labels/.kyverno-test#0":
        "patchedResourcefail.yaml lacks Namespace test-fail: kyverno test drops the row ('not found in "
        "manifest'), so no result is ever compared for it",
}


# The extra tier's features scored here (the manifest lists the extra tests' features per row).
EXTRA_FEATURES = {"validate.podSecurity"}


def _scored(row: dict) -> bool:
    if row.get("vacuous"):
        return False
    return row["tier"] == "core" or (row["tier"] == "extra" and bool(EXTRA_FEATURES & set(row["features"])))


def _cases():
    for test in [*MANIFEST["tests"], *MANIFEST["extraTests"]]:
        for index, row in enumerate(test["rows"]):
            if not _scored(row):
                continue
            case_id = f"{test['path']}#{index}"
            marks = [pytest.mark.xfail(strict=True, reason=XFAIL[case_id])] if case_id in XFAIL else []
            yield pytest.param(test, index, id=case_id, marks=marks)


CASES = list(_cases())


@cache
def _checks(test_file: str) -> tuple:
    """(expanded entries, outcomes) of one kyverno-test.yaml: entries in manifest row order."""
    tests = read_test_file(DATA / test_file)
    outcomes = [run_test(test) for test in tests]
    entries = []
    for test, outcome in zip(tests, outcomes, strict=True):
        for expected in test.results:
            for wanted in expected.resources or ["<none>"]:
                entries.append((outcome, expected, wanted))
    return entries


def _computed(test: dict, index: int) -> tuple[list, object]:
    outcome, expected, wanted = _checks(test["test"])[index]
    if outcome.error is not None:
        return [], outcome.error
    namespace, _, name = wanted.rpartition("/")
    rows = [row for row in outcome.rows if row.expected is expected and row.resource[3] == name
            and (not namespace or row.resource[2] == namespace)]
    return rows, None


def _agrees(test: dict, index: int) -> list:
    """The compared results of a row, asserted to agree with it (an expected skip is met by excluded)."""
    want = test["rows"][index]["result"]
    computed, error = _computed(test, index)
    assert error is None, f"test did not run: {error}"
    assert computed, "no result was compared for this row"
    for check in computed:
        assert check.reason not in ("Resource diff", "Resource error"), check.message
        assert check.actual == want or (want == "skip" and check.actual == EXCLUDED), (
            f"rule {check.rule}: expected {want}, got {check.actual}: {check.message}")
    return computed


@pytest.mark.parametrize(("test", "index"), CASES)
def test_kyverno_policies_row(test, index):
    _agrees(test, index)


GENERATE_FEATURES = {"generate", "CEL policy kind GeneratingPolicy"}


def _generate_cases():
    for test in MANIFEST["extraTests"]:
        if not GENERATE_FEATURES & set(test.get("features") or ()):
            continue
        for index in range(len(test["rows"])):
            yield pytest.param(test, index, id=f"{test['path']}#{index}")


GENERATE_CASES = list(_generate_cases())


def test_the_generate_extra_tests_are_all_scored():
    """kyverno/policies' generate rules and GeneratingPolicies: 8 tests, 9 rows (its manifest's extraTests)."""
    assert len({case.values[0]["path"] for case in GENERATE_CASES}) == 8
    assert len(GENERATE_CASES) == 9


@pytest.mark.parametrize(("test", "index"), GENERATE_CASES)
def test_generate_row(test, index):
    for check in _agrees(test, index):
        if test["rows"][index].get("generatedResource"):
            assert check.message.startswith("would generate ") and "nothing" not in check.message, check.message


def test_xfail_ids_exist():
    ids = {case.id for case in CASES}
    assert not set(XFAIL) - ids


def test_assertree_test_on_a_copied_policy_folder(tmp_path):
    """`assertree test` over a copied kyverno/policies folder prints kyverno test's summary line."""
    import typer
    from typer.testing import CliRunner

    from assertree.cli import test as test_cli

    target = tmp_path / "disallow-latest-tag"
    shutil.copytree(DATA / "best-practices" / "disallow-latest-tag", target)
    app = typer.Typer()
    app.callback()(lambda: None)
    app.command("test")(test_cli.test)
    result = CliRunner().invoke(app, ["test", str(tmp_path)])
    run = run_tests([tmp_path])
    assert run.outcomes and all(outcome.error is None for outcome in run.outcomes)
    line = re.search(r"Test Summary: (\d+) tests passed and (\d+) tests failed", result.output)
    assert line is not None, result.output
    assert line.group(0) == run.summary_line()
    assert int(line.group(1)) == run.passed > 0
    assert result.exit_code == (0 if run.failed == 0 else 1)
