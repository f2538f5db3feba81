"""The examples of docs/kyverno-test.md and docs/kyverno-cel.md run as the pages show, and the pages name
every field `assertree test` reads."""

from __future__ import annotations

from pathlib import Path

from assertree.cli import main
from assertree.testing import run_tests
from assertree.testing.testfile import _FILE_FIELDS, _FILE_LIST_FIELDS, _KNOWN, _RESULT_FIELDS, POLICY_TYPE_FLAGS

DOCS = Path(__file__).resolve().parents[2] / "docs"


def test_the_example_tests_pass_row_for_row():
    run = run_tests([DOCS / "examples"])
    assert [outcome.name for outcome in run.outcomes] == ["cel-exceptions", "test-inputs"]
    assert all(outcome.error is None for outcome in run.outcomes)
    assert run.ok and run.passed == 8


def test_the_scan_shown_with_an_expiring_exception(monkeypatch, capsys):
    monkeypatch.chdir(DOCS.parent)
    example = "docs/examples/cel-exceptions"
    code = main(["scan", "--policy", f"{example}/policy.yaml", "--exceptions", f"{example}/exceptions.yaml",
                 f"{example}/resources.yaml"])
    out = capsys.readouterr().out
    assert code == 1
    page = (DOCS / "kyverno-cel.md").read_text()
    for line in out.splitlines():
        if line.startswith(("- ", " -> ")):
            assert line in page


def test_every_field_is_documented():
    page = (DOCS / "kyverno-test.md").read_text()
    fields = {*_KNOWN, *_FILE_LIST_FIELDS, *_FILE_FIELDS, *_RESULT_FIELDS} - {"isMUtatingPolicy"}
    missing = sorted(field for field in fields if f"`{field}`" not in page)
    assert not missing
    assert all(f"`{flag}`" in page for flag in POLICY_TYPE_FLAGS)
    cel = (DOCS / "kyverno-cel.md").read_text()
    for field in ("policyRefs", "matchConditions", "images", "allowedValues", "reportResult", "expiresAt"):
        assert f"spec.{field}" in cel
