"""Settings files: found from the working directory upwards, per command, overridden by flags, errors located."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support import severity_policy

from assertree.cli import main


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A repository with policies, a payload, and a working directory two folders down (inside a folder of
    the test's own, so a settings file above the repository reaches no other test)."""
    tmp_path = tmp_path / "repository"
    tmp_path.mkdir()
    (tmp_path / ".git").mkdir()
    (tmp_path / "policies").mkdir()
    (tmp_path / "policies" / "high.yaml").write_text(severity_policy("high", "high"))
    (tmp_path / "policies" / "low.yaml").write_text(severity_policy("low", "low"))
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "r.json").write_text('{"name": "r", "ok": false}')
    work = tmp_path / "apps" / "web"
    work.mkdir(parents=True)
    monkeypatch.chdir(work)
    return tmp_path


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


YAML_SETTINGS = """\
# shared by every command
policy: [policies/]
fail-on: high
scan:
  payload: [data/r.json]
  output: [text, json=reports/scan.json]
  quiet: true
"""


def test_a_yaml_settings_file_is_found_above_and_its_paths_are_its_own(project, capsys):
    (project / ".assertree.yaml").write_text(YAML_SETTINGS)
    code, out, err = run(capsys, "scan")
    assert code == 1, err
    assert out.splitlines() == [
        "- FAILED (POLICY=high, RULE=check, ID=r)",
        " -> high fails (CHECK=spec.rules[0].assert.all[0])",
        "  -> Invalid value: false: Expected value: true (PATH=ok)",
        "Checked 1 resource against 2 policies (2 rules): 0 passed, 1 failed, 0 errored, 0 skipped, 1 warned",
    ]
    report = json.loads((project / "reports" / "scan.json").read_text())
    assert report["summary"]["warned"] == 1


def test_flags_win_over_settings(project, capsys):
    (project / ".assertree.yaml").write_text(YAML_SETTINGS)
    code, out, _ = run(capsys, "scan", "--fail-on", "critical")
    assert code == 0 and "2 warned" in out
    code, out, _ = run(capsys, "scan", "--policy", str(project / "policies" / "low.yaml"))
    assert code == 0 and "against 1 policy" in out


def test_pyproject_tables_and_command_tables_win_over_the_top_level(project, capsys):
    (project / "pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[tool.assertree]\npolicy = ["policies/"]\nfail-on = "info"\n\n'
        '[tool.assertree.scan]\npayload = ["data/r.json"]\nfail-on = "critical"\nquiet = true\n')
    code, out, _ = run(capsys, "scan")
    assert code == 0 and "2 warned" in out


def test_no_config_and_an_explicit_config(project, capsys, tmp_path):
    (project / ".assertree.yaml").write_text(YAML_SETTINGS)
    code, _, err = run(capsys, "--no-config", "scan", "../../data/r.json")
    assert code == 2 and "--policy" in err  # nothing set: the scan has no policy
    other = project / "elsewhere.yaml"
    other.write_text("policy: [policies/]\nscan:\n  payload: [data/r.json]\n  quiet: true\n")
    code, out, _ = run(capsys, "--config", str(other), "scan")
    assert code == 1 and "2 failed" in out


def test_the_search_stops_at_the_top_of_the_repository(project, capsys):
    (project.parent / ".assertree.yaml").write_text("fail-on: nonsense\n")  # above the repository: not read
    (project / ".assertree.yaml").unlink(missing_ok=True)
    code, _, err = run(capsys, "scan", "../../data/r.json", "--policy", "../../policies")
    assert code == 1 and err == ""


@pytest.mark.parametrize(("settings", "message"), [
    ("scan:\n  polcy: [policies/]\n", ".assertree.yaml:2: scan.polcy: not an option of 'assertree scan'"),
    ("sacn:\n  policy: [policies/]\n", ".assertree.yaml:2: sacn: not a command (commands: "),
    ("scan:\n  fail-on: [high]\n", ".assertree.yaml:2: scan.fail-on: must be a single value, not a list"),
    ("fail-on: severe\npolicy: [policies/]\nscan: {payload: [data/r.json]}\n", "--fail-on: unknown severity"),
    ("- policy\n", ".assertree.yaml:1: settings must be a mapping of option names to values"),
    ("policy: [a\n", ".assertree.yaml:2:1: invalid YAML"),
])
def test_a_bad_setting_is_one_located_line_and_exit_2(project, capsys, settings, message):
    (project / ".assertree.yaml").write_text(settings)
    code, out, err = run(capsys, "scan")
    assert code == 2 and out == ""
    assert len(err.splitlines()) == 1 and message in err, err


def test_a_bad_toml_setting_names_its_table(project, capsys):
    (project / "pyproject.toml").write_text('[tool.assertree.scan]\nquiet = [1]\n')
    code, _, err = run(capsys, "scan")
    assert code == 2 and "pyproject.toml [tool.assertree.scan]: scan.quiet: must be a single value" in err


def test_assertree_config_shows_each_setting_and_its_origin(project, capsys):
    (project / ".assertree.yaml").write_text(YAML_SETTINGS)
    code, out, _ = run(capsys, "config", "scan")
    settings_file = project / ".assertree.yaml"
    assert code == 0
    assert out.splitlines() == [
        f"Settings file: {settings_file}",
        "",
        "scan:",
        f'  policy = ["../../policies"]    # {settings_file}:2',
        f"  fail-on = high    # {settings_file}:3",
        f'  payload = ["../../data/r.json"]    # {settings_file}:5',
        f'  output = ["text","json=../../reports/scan.json"]    # {settings_file}:6',
        f"  quiet = true    # {settings_file}:7",
    ]


def test_assertree_config_without_a_file(project, capsys):
    code, out, _ = run(capsys, "config")
    assert code == 0 and out.startswith("No settings file")
