"""--fail-on: failures below the level are warnings in every report and do not change the exit code."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support import severity_policy as policy

from assertree.cli import main


@pytest.fixture
def policies(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "policies").mkdir()
    for name, severity in [("crit", "critical"), ("high", "High"), ("med", "medium"), ("low", "low"),
                           ("info", "info"), ("none", None), ("odd", "moderate")]:
        (tmp_path / "policies" / f"{name}.yaml").write_text(policy(name, severity))
    (tmp_path / "r.json").write_text('{"name": "r", "ok": false}')
    return tmp_path


def failing(capsys, *args: str) -> tuple[int, set[str], str]:
    code = main(["scan", "r.json", "--policy", "policies/", "-o", "json", *args])
    report = json.loads(capsys.readouterr().out)
    rules = {result["policy"]["metadata"]["name"]: rule for result in report["reports"][0]["results"]
             for rule in result["rules"]}
    return code, {name for name, rule in rules.items() if rule["status"] == "fail"}, json.dumps(rules)


@pytest.mark.parametrize(("level", "still_failing"), [
    ("critical", {"crit", "none", "odd"}),
    ("high", {"crit", "high", "none", "odd"}),
    ("medium", {"crit", "high", "med", "none", "odd"}),
    ("info", {"crit", "high", "med", "low", "info", "none", "odd"}),
])
def test_failures_below_the_level_are_warnings(policies, capsys, level, still_failing):
    code, failed, _ = failing(capsys, "--fail-on", level)
    assert failed == still_failing
    assert code == 1  # a policy without a known severity always fails


def test_the_exit_code_follows_only_the_failures_at_or_above_the_level(policies, capsys):
    for name in ("none", "odd"):
        (policies / "policies" / f"{name}.yaml").unlink()
    code, failed, rules = failing(capsys, "--fail-on", "critical")
    assert code == 1 and failed == {"crit"}
    (policies / "policies" / "crit.yaml").unlink()
    code, failed, rules = failing(capsys, "--fail-on", "critical")
    assert code == 0 and failed == set()
    warned = json.loads(rules)
    assert warned["high"]["status"] == "warn"
    assert warned["high"]["gate"] == "severity high is below --fail-on critical"


def test_every_format_shows_a_gated_failure_as_a_warning(policies, capsys):
    for name in ("crit", "none", "odd"):
        (policies / "policies" / f"{name}.yaml").unlink()
    code = main(["scan", "r.json", "--policy", "policies/", "--fail-on", "critical", "-o", "text",
                 "-o", "sarif=r.sarif", "-o", "junit=r.xml", "-o", "github=r.github"])
    out = capsys.readouterr().out
    assert code == 0
    assert "- WARNING (POLICY=high, RULE=check, ID=r)\n -> a warning: severity high is below --fail-on critical" in out
    assert out.splitlines()[-1].endswith("0 failed, 0 errored, 0 skipped, 4 warned")
    levels = {result["ruleId"]: result["level"]
              for result in json.loads(Path("r.sarif").read_text())["runs"][0]["results"]}
    assert levels == {"high/check": "warning", "med/check": "warning", "low/check": "note", "info/check": "note"}
    assert 'failures="0"' in Path("r.xml").read_text()
    github = Path("r.github").read_text()
    assert "::error " not in github and github.count("::warning ") == 3


def test_errors_are_never_gated(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "p.yaml").write_text(policy("low", "low").replace("ok: true", "(length(ok)): 1"))
    (tmp_path / "r.json").write_text('{"name": "r", "ok": 5}')  # length of a number: the rule errors
    assert main(["scan", "r.json", "--policy", "p.yaml", "--fail-on", "critical", "-q"]) == 1
    assert "- ERROR:" in capsys.readouterr().out


@pytest.mark.parametrize("level", ["severe", ""])
def test_an_unknown_level_is_a_usage_error(policies, capsys, level):
    assert main(["scan", "r.json", "--policy", "policies/", "--fail-on", level]) == 2
    err = capsys.readouterr().err
    assert "--fail-on: unknown severity" in err and "critical, high, medium, low, info" in err
