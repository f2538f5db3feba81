"""Kubernetes' Pod Security Standards fixtures (``data/pod-security``): every Pod gets upstream's verdict.

Two ways, one case per fixture each:

- the checks themselves (`assertree.pss.evaluate`), at every version the
  fixtures cover (v1.0 to v1.37): the verdict, and for a refused Pod, the
  check its file name names (or, at restricted, the restricted check that
  replaces that baseline check) among the failed checks;
- a ClusterPolicy ``validate.podSecurity`` rule at the fixture's level and
  version, for the versions Kyverno's CRD accepts (v1.19 to v1.32), and at
  ``version: latest`` for the v1.34 fixtures (Kyverno's ``latest`` is the
  v1.34 checks; see ``docs/pod-security.md``).
"""

from __future__ import annotations

import copy
import json
from functools import cache

import pytest
import yaml
from conftest import CONFORMANCE

from assertree.languages.base import ScanContext
from assertree.languages.kyverno.language import compile_document
from assertree.pss import CHECKS, checks_for, decode_pod, evaluate, parse_version
from assertree.results import FAIL, PASS, Resource

DATA = CONFORMANCE / "pod-security"
MANIFEST = json.loads((DATA / "manifest.json").read_text())
ROWS = MANIFEST["rows"]
KYVERNO_VERSIONS = {f"v1.{minor}" for minor in range(19, 33)}
KYVERNO_LATEST = "v1.34"
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@cache
def _pod(file: str) -> dict:
    return yaml.load((DATA / file).read_text(), Loader=_LOADER)


def _named_checks(row: dict) -> set[str]:
    """The check the fixture's name names, as it runs at the fixture's level and version: itself, or the
    restricted checks that replace it there."""
    named = next(check.id for check in CHECKS if check.id.lower() == row["check"])
    running = {selected.id for selected in checks_for(row["profile"], parse_version(row["version"]))}
    if named in running:
        return {named}
    return {check.id for check in CHECKS if check.id in running
            and any(named in revision.overrides for revision in check.revisions)}


@pytest.mark.parametrize("row", ROWS, ids=[row["file"].removeprefix("testdata/") for row in ROWS])
def test_checks_give_upstreams_verdict(row):
    document = _pod(row["file"])
    violations = evaluate(decode_pod(document.get("metadata"), document.get("spec")), row["profile"],
                          parse_version(row["version"]))
    failed = {violation.check for violation in violations}
    assert ("fail" if failed else "pass") == row["expected"], failed
    if row["expected"] == "fail":
        assert _named_checks(row) & failed, f"{row['check']} not among {failed}"


@cache
def _rule(level: str, version: str):
    document = {"apiVersion": "kyverno.io/v1", "kind": "ClusterPolicy", "metadata": {"name": "pss"},
                "spec": {"rules": [{"name": level, "match": {"any": [{"resources": {"kinds": ["Pod"]}}]},
                                    "validate": {"podSecurity": {"level": level, "version": version}}}]}}
    [rule] = [compiled for compiled in compile_document(document).rules if compiled.rule.autogen_of is None]
    return rule.runner(ScanContext())


KYVERNO_ROWS = [row for row in ROWS if row["version"] in KYVERNO_VERSIONS | {KYVERNO_LATEST}]


@pytest.mark.parametrize("row", KYVERNO_ROWS, ids=[row["file"].removeprefix("testdata/") for row in KYVERNO_ROWS])
def test_a_podsecurity_rule_gives_upstreams_verdict(row):
    version = "latest" if row["version"] == KYVERNO_LATEST else row["version"]
    pod = copy.deepcopy(_pod(row["file"]))
    pod["metadata"]["namespace"] = "default"
    result = _rule(row["profile"], version)(Resource(pod))
    assert result is not None
    assert result.status == (FAIL if row["expected"] == "fail" else PASS), result.message
    if row["expected"] == "fail":
        assert result.message.startswith(
            f"Validation rule '{row['profile']}' failed. It violates PodSecurity \"{row['profile']}:{version}\": ")


def test_the_fixtures_cover_every_check_and_version():
    """The data is what the README says: both levels, v1.0 to v1.37, every check named by some fixture."""
    assert {(row["profile"], row["version"]) for row in ROWS} == {
        (level, f"v1.{minor}") for level in ("baseline", "restricted") for minor in range(38)}
    named = {row["check"] for row in ROWS if row["expected"] == "fail"}
    assert {check.id.lower() for check in CHECKS} <= named
    assert len(KYVERNO_ROWS) > 1500
