"""Every sample command in the README runs, with the exit code and findings it promises."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest

from assertree.cli import main

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text()


def readme_sample_commands():
    """The `assertree scan ... # ... exit N` lines of the README's samples block."""
    block = README.split("<!-- samples:", 1)[1].split("```sh", 1)[1].split("```", 1)[0]
    for line in block.strip().splitlines():
        command, comment = line.split("#", 1)
        exit_code = int(re.search(r"exit (\d)", comment).group(1))
        yield pytest.param(shlex.split(command)[1:], exit_code, id=command.split()[-3])


SAMPLE_COMMANDS = list(readme_sample_commands())


def test_the_readme_lists_a_passing_and_a_failing_payload_for_every_sample():
    sample_dirs = {path.name for path in (REPO / "samples").iterdir() if path.is_dir()}
    commanded = {}
    for param in SAMPLE_COMMANDS:
        args, exit_code = param.values
        sample = next(Path(arg).parts[1] for arg in args if arg.startswith("samples/"))
        commanded.setdefault(sample, set()).add(exit_code)
    assert commanded == {name: {0, 1} for name in sample_dirs}


@pytest.mark.parametrize(("args", "exit_code"), SAMPLE_COMMANDS)
def test_readme_sample_command(args, exit_code, monkeypatch, capsys):
    monkeypatch.chdir(REPO)
    assert main(args) == exit_code
    err = capsys.readouterr().err
    assert "Traceback" not in err and "error" not in err.lower()


def json_report(args, monkeypatch, capsys):
    monkeypatch.chdir(REPO)
    main([*args, "--output", "json"])
    return json.loads(capsys.readouterr().out)


def failed_rules(report):
    """(policy name, identifier) of every failed rule in a json report."""
    return {(result["policy"]["metadata"]["name"], rule["identifier"])
            for entry in report["reports"] for result in entry["results"] for rule in result.get("rules", [])
            if rule["status"] == "fail"}


def test_terraform_sample_reports_exactly_the_expected_addresses(monkeypatch, capsys):
    expected = json.loads((REPO / "samples/terraform-aws/plan-bad.expected.json").read_text())
    report = json_report(["scan", "--terraform", "samples/terraform-aws/plan-bad.json",
                          "--policy", "samples/terraform-aws/policies/"], monkeypatch, capsys)
    reported = {}
    for policy, identifier in failed_rules(report):
        reported.setdefault(policy, set()).add(identifier)
    assert reported == {name: set(check["addresses"]) for name, check in expected["checks"].items()}


def test_kubernetes_bad_sample_fails_every_policy_once_or_more(monkeypatch, capsys):
    report = json_report(["scan", "samples/kubernetes/deployment-bad.yaml",
                          "--policy", "samples/kubernetes/policies/"], monkeypatch, capsys)
    failed = failed_rules(report)
    assert {policy for policy, _ in failed} == {"no-latest-tag", "no-privileged-containers", "required-labels",
                                                "resource-limits"}
    assert report["summary"]["violations"] == 6
