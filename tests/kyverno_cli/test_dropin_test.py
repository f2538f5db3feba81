"""``assertree kyverno test``: Kyverno CLI 1.19's ``kyverno test``, its output (pinned) and its exit codes.

Texts from kyverno/kyverno 111e07bb (``commands/test``, ``output/table``): the
loading lines, the tables (the row count in the first header past ten rows),
the summary, ``--fail-only``, ``--detailed-results``, ``--output-format``, the
test-case selector and ``--require-tests``."""

from __future__ import annotations

from pathlib import Path

import pytest

from assertree.cli import main
from assertree.kyverno_cli.selector import Selector
from assertree.kyverno_cli.table import Paint, cell_text, render, width
from assertree.testing.testfile import ExpectedResult

DATA = Path(__file__).parent / "data" / "test"


def run(args, capsys, monkeypatch, cwd=DATA):
    monkeypatch.chdir(cwd)
    code = main(["kyverno", "test", *args])
    out = capsys.readouterr()
    assert "Traceback" not in out.err
    return code, out.out, out.err


@pytest.mark.parametrize("args", [
    pytest.param(["."], id="tables"),
    pytest.param(["latest", "--detailed-results"], id="detailed"),
    pytest.param([".", "--fail-only"], id="fail-only"),
    pytest.param(["latest", "-o", "json"], id="json"),
    pytest.param(["latest", "-o", "yaml"], id="yaml"),
    pytest.param(["latest", "-o", "markdown", "--detailed-results"], id="markdown"),
    pytest.param(["latest", "-o", "junit", "--detailed-results"], id="junit"),
    pytest.param([".", "--test-case-selector", "policy=disallow-*, resource=web"], id="selector"),
])
def test_output(args, capsys, monkeypatch, snapshot):
    assert run(args, capsys, monkeypatch) == snapshot


def test_summary_counts_and_exit_codes(capsys, monkeypatch, tmp_path):
    code, out, err = run(["labels"], capsys, monkeypatch)
    assert code == 0 and out.endswith("\nTest Summary: 12 tests passed and 0 tests failed\n\n") and err == ""
    code, out, err = run(["."], capsys, monkeypatch)
    assert code == 1 and "Test Summary: 15 tests passed and 1 tests failed" in out
    assert err == "Error: 1 tests failed\n"
    code, out, err = run([str(tmp_path)], capsys, monkeypatch)
    assert (code, out) == (0, "\nNo test yamls available\n")
    assert err == "assertree: note: nothing was tested (--require-tests makes that a failure)\n"
    code, out, err = run([str(tmp_path), "--require-tests"], capsys, monkeypatch)
    assert (code, err) == (1, "Error: no tests found\n")


def test_a_test_that_cannot_load_is_a_failed_test_and_the_others_run(capsys, monkeypatch, tmp_path):
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "kyverno-test.yaml").write_text(
        "apiVersion: cli.kyverno.io/v1alpha1\nkind: Test\nmetadata:\n  name: broken\npolicies: [missing.yaml]\n"
        "resources: [missing.yaml]\nresults:\n- policy: p\n  rule: r\n  result: pass\n")
    (tmp_path / "unreadable").mkdir()
    (tmp_path / "unreadable" / "kyverno-test.yaml").write_text("name: old-schema\n")
    code, out, _ = run([str(tmp_path), str(DATA / "labels")], capsys, monkeypatch)
    assert code == 1
    assert "\nTest errors:\n  Path: " in out and "uses the old un-typed kyverno-test.yaml schema" in out
    assert "  Error: " in out and "policies: file not found: 'missing.yaml'" in out
    assert "Test Summary: 12 tests passed and 2 tests failed" in out


def test_refused_and_bad_flags(capsys, monkeypatch):
    code, out, err = run([".", "--git-branch", "main"], capsys, monkeypatch)
    assert code == 2 and err.startswith("assertree: error: --git-branch clones a git repository")
    code, out, err = run(["https://github.com/kyverno/policies/pod-security"], capsys, monkeypatch)
    assert code == 2 and "needs the network" in err
    code, _, err = run([".", "-o", "html"], capsys, monkeypatch)
    assert (code, err) == (2, "assertree: error: invalid format, expected (json, yaml, markdown, junit)\n")
    code, out, err = run([".", "-t", "policy"], capsys, monkeypatch)
    assert out.startswith("\nFilter errors:\n  Error: Invalid test-case-selector argument (policy). Parameter must be "
                          "in the form `<key>=<value>`.\n")


def test_every_flag_of_kyverno_test_is_known():
    """Every flag ``kyverno test`` defines at kyverno/kyverno 111e07bb (``commands/test/command.go``)."""
    from test_dropin_apply import option_names

    assert {"--file-name", "-f", "--git-branch", "-b", "--test-case-selector", "-t", "--output-format", "-o",
            "--registry", "--fail-only", "--remove-color", "--detailed-results", "--require-tests"} \
        <= option_names("test")


# -- the pieces --------------------------------------------------------------------------------------


def test_selector():
    result = ExpectedResult(index=0, policy="disallow-latest-tag", rule="require-image-tag", result="pass",
                            resources=["web", "api"])
    assert Selector.parse("policy=disallow-*,rule=*").accepts(result)
    assert not Selector.parse("rule=validate-*").accepts(result)
    assert Selector.parse("resource=ap?").accepts(result)
    assert Selector.parse("resource=web").resources == ["web"]
    assert Selector.parse("policy=*,resource=*,resource=web").resources == []  # the first * ends the list
    assert Selector.parse("kind=Pod").errors == [
        "Invalid test-case-selector (kind=Pod). Parameter can only be policy, rule or resource."]


def test_table_layout():
    assert render(["id", "name"], []) == ""  # no row, no table
    assert render(["id", "name"], [["1", "日本"]]) == (
        "│────│──────│\n│ ID │ NAME │\n│────│──────│\n│ 1  │ 日本 │\n│────│──────│\n")  # wide characters count twice
    assert render(["id", "message"], [["1", "a\nlonger"]]).splitlines()[3:5] == ["│ 1  │ a       │",
                                                                                 "│    │ longer  │"]
    assert width(Paint(True).result("Pass")) == 4
    long = " ".join(["word"] * 80)  # 399 bytes: broken between words past tableprinter's 300
    lines = cell_text(long).split("\n")
    assert len(lines) == 2 and all(len(line) <= 300 for line in lines)
    coloured = render(["id"], [["1"]], color=True)
    assert "\033[40;32mID\033[0m" in coloured


def test_a_test_that_checks_nothing_fails_in_the_drop_in_too(capsys, monkeypatch, tmp_path):
    """Where the CLI warns and passes (a missing resource file after the first, a result naming a resource
    that was not loaded), the drop-in fails as `assertree test` does."""
    import shutil

    for name, extra in (("missing", "resources: [resources.yaml, absent.yaml]\n"),
                        ("typo", "resources: [resources.yaml]\n")):
        folder = tmp_path / name
        folder.mkdir()
        shutil.copy(DATA / "labels" / "policy.yaml", folder / "policy.yaml")
        shutil.copy(DATA / "labels" / "resources.yaml", folder / "resources.yaml")
        (folder / "kyverno-test.yaml").write_text(
            "apiVersion: cli.kyverno.io/v1alpha1\nkind: Test\nmetadata:\n  name: t\npolicies: [policy.yaml]\n"
            + extra + "results:\n- policy: require-labels\n  rule: check-team\n  resources: [cm-typo]\n"
            "  result: pass\n")
    code, out, _ = run([str(tmp_path / "missing")], capsys, monkeypatch)
    assert code == 1 and "resources: file not found: 'absent.yaml'" in out
    code, out, _ = run([str(tmp_path / "typo")], capsys, monkeypatch)
    assert code == 1 and "Resource not found" in out
