"""The examples of the generate, mutate-existing, cleanup and images pages run, with the exit codes they say,
and print what the pages show."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from assertree.cli import main

REPO = Path(__file__).resolve().parents[1]
PAGES = ("generate.md", "mutate-existing.md", "cleanup.md", "images.md")


def commands():
    """(page, command, exit code, the lines of the output block that follows a one-command block)."""
    for page in PAGES:
        blocks = re.findall(r"```(\w*)\n(.*?)```", (REPO / "docs" / page).read_text(), re.S)
        for position, (language, body) in enumerate(blocks):
            lines = body.strip().splitlines()
            if language != "sh":
                continue
            following = blocks[position + 1] if position + 1 < len(blocks) else ("sh", "")
            shown = [line for line in following[1].splitlines() if line.strip() and not line.startswith("@@")] \
                if following[0] in ("", "diff") and len(lines) == 1 else []
            for line in lines:
                command, _, comment = line.partition("#")
                code = re.search(r"exit (\d)", comment)
                if command.startswith("assertree ") and code:
                    yield pytest.param(page, command.strip(), int(code.group(1)), shown, id=f"{page}:{command[:60]}")


COMMANDS = list(commands())


def test_every_page_has_an_example():
    assert {case.values[0] for case in COMMANDS} == set(PAGES)
    assert sum(bool(case.values[3]) for case in COMMANDS) >= 4  # most show their output


@pytest.mark.parametrize(("page", "command", "code", "shown"), COMMANDS)
def test_example_runs(page, command, code, shown, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(REPO)
    arguments = [argument.replace("/tmp/out", str(tmp_path / "out")) for argument in shlex.split(command)[1:]]
    assert main(arguments) == code
    out, err = capsys.readouterr()
    printed = (out + err).splitlines()
    assert [line for line in shown if line not in printed] == []


def test_apply_writes_one_generated_file_per_policy(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(REPO)
    out = tmp_path / "out"
    assert main(["apply", "--policy", "samples/kubernetes/generate/policies.yaml", "--target",
                 "samples/kubernetes/generate/existing.yaml", "-o", str(out),
                 "samples/kubernetes/generate/namespace.yaml"]) == 0
    assert sorted(path.name for path in out.iterdir()) == [
        "existing.yaml", "namespace-defaults-generated.yaml", "namespace-quota-generated.yaml", "namespace.yaml"]
    assert "kind: Secret" in (out / "namespace-defaults-generated.yaml").read_text()
