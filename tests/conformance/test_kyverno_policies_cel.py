"""The CEL tier of the kyverno/policies ``kyverno test`` fixtures, row by row, through assertree.

Every row of manifest.json ``celTests`` whose policy is a ``policies.kyverno.io``
ValidatingPolicy or MutatingPolicy, or a ClusterPolicy whose rules are
``validate.cel``, is one case. Each test folder runs through ``assertree test``
(`assertree.testing.run_test`), rows compared by `assertree.testing.check`
(Excluded / Not found, patched resources).

A row agrees when every compared (entry, resource, rule) for it is ok. Rows
that do not agree are listed in `XFAIL` with the reason, and must fail.
"""

from __future__ import annotations

import json
from collections import Counter
from functools import cache
from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data" / "kyverno-policies"
CEL_KINDS = {"ValidatingPolicy", "MutatingPolicy"}

XFAIL: dict[str, str] = {}


def _manifest() -> dict:
    return json.loads((DATA / "manifest.json").read_text())


def _kind(test: dict) -> str | None:
    kinds = {policy["kind"] for policy in test["policies"]}
    if kinds & CEL_KINDS:
        return "cel"
    if kinds == {"ClusterPolicy"} and "validate.cel" in test["features"]:
        return "validate.cel"
    return None


def _row_id(test: dict, row: dict) -> str:
    resource = row["resource"]
    return (f"{test['path'].removesuffix('/.kyverno-test')}:{row['policy']}:{row.get('rule') or '-'}:"
            f"{resource['namespace']}/{resource['name']}:{row['result']}")


def _cases() -> list:
    cases = []
    seen: Counter[str] = Counter()
    for test in _manifest()["celTests"]:
        tier = _kind(test)
        if tier is None:
            continue
        for row in test["rows"]:
            row_id = _row_id(test, row)
            seen[row_id] += 1
            if seen[row_id] > 1:
                row_id = f"{row_id}#{seen[row_id]}"
            marks = [pytest.mark.xfail(strict=True, reason=XFAIL[row_id])] if row_id in XFAIL else []
            cases.append(pytest.param(test["path"], row, id=row_id, marks=marks))
    return cases


# ---- running one test folder ---------------------------------------------------------------------------------


@cache
def _run(path: str) -> list:
    """The row checks of the test folder at `path`, through ``assertree test`` (run once per session)."""
    from assertree.testing import run_test
    from assertree.testing.testfile import read_test_file

    [test] = read_test_file(DATA / path / "kyverno-test.yaml")
    outcome = run_test(test)
    assert outcome.error is None, str(outcome.error)
    return outcome.rows


def _agrees(row: dict, checks: list) -> tuple[bool, list]:
    """Whether the checks of `row` all pass. The manifest gives cluster-scoped built-in kind names no namespace
    whatever their group; the CLI reads ``authorization.openshift.io/v1`` ClusterRole as namespaced, so an empty
    namespace on either side matches."""
    resource = row["resource"]
    found = [check for check in checks
             if check.policy == row["policy"] and check.resource[3] == resource["name"]
             and (check.resource[2] == resource["namespace"] or "" in (check.resource[2], resource["namespace"]))
             and check.expected.result == row["result"]
             and (not row.get("rule") or check.expected.rule == row["rule"])]
    return bool(found) and all(check.ok for check in found), found


@pytest.mark.parametrize(("path", "row"), _cases())
def test_row(path: str, row: dict) -> None:
    agrees, found = _agrees(row, _run(path))
    assert agrees, [(check.rule, check.actual, check.reason, check.message[:300]) for check in found]


def test_every_xfail_names_a_row() -> None:
    ids = {case.id for case in _cases()}
    assert set(XFAIL) <= ids
