"""``docs/explain.md`` and ``docs/test-coverage.md`` stay true: files, commands, outputs and Python run as written.

A YAML block whose first line is ``# NAME`` (a file name) is the file NAME; a ``console`` block is
``$ assertree ...`` commands, each followed by what it prints (standard output, then standard error); a
``markdown`` block is the Markdown file the command before it wrote; a ``python`` block runs in the folder.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from assertree.cli import main

DOCS = Path(__file__).resolve().parents[1] / "docs"
PAGES = ("explain.md", "test-coverage.md")
FILE_NAME = re.compile(r"# ([\w.-]+\.yaml)\n")


def blocks(page: str) -> list[tuple[str, str]]:
    return re.findall(r"```(\w+)\n(.*?)```", (DOCS / page).read_text(), re.S)


def _commands():
    for page in PAGES:
        for kind, text in blocks(page):
            if kind != "console":
                continue
            for command in re.split(r"^(?=\$ )", text, flags=re.M):
                if command.strip():
                    line, _, output = command.partition("\n")
                    yield pytest.param(page, line[2:], output, id=f"{page}: {line[2:]}")


def write_files(page: str, folder: Path) -> dict[str, str]:
    files = {}
    for kind, text in blocks(page):
        found = FILE_NAME.match(text) if kind == "yaml" else None
        if found:
            files[found.group(1)] = text
            (folder / found.group(1)).write_text(text)
    return files


@pytest.mark.parametrize(("page", "command", "output"), list(_commands()))
def test_every_command_prints_what_the_page_shows(page, command, output, tmp_path, monkeypatch, capsys):
    write_files(page, tmp_path)
    monkeypatch.chdir(tmp_path)
    args = shlex.split(command)
    assert args[0] == "assertree"
    main(args[1:])
    out, err = capsys.readouterr()
    assert out + err == output


def test_the_markdown_coverage_is_what_the_command_writes(tmp_path, monkeypatch, capsys):
    write_files("test-coverage.md", tmp_path)
    monkeypatch.chdir(tmp_path)
    [markdown] = [text for kind, text in blocks("test-coverage.md") if kind == "markdown"]
    main(["test", ".", "--coverage", "markdown=coverage.md", "-o", "junit=report.xml"])
    assert (tmp_path / "coverage.md").read_text() == markdown


@pytest.mark.parametrize("page", PAGES)
def test_the_python_example_runs(page, tmp_path, monkeypatch, capsys):
    write_files(page, tmp_path)
    monkeypatch.chdir(tmp_path)
    [example] = [text for kind, text in blocks(page) if kind == "python"]
    exec(compile(example, f"docs/{page}", "exec"), {})
    assert capsys.readouterr().out  # it printed something: the example found what it looks for


def test_each_page_has_the_files_its_commands_read(tmp_path):
    (tmp_path / "explain").mkdir()
    (tmp_path / "coverage").mkdir()
    assert set(write_files("explain.md", tmp_path / "explain")) == {
        "policy.yaml", "deployment.yaml", "clusterpolicy.yaml", "workloads.yaml", "celpolicy.yaml", "kyverno-test.yaml"}
    assert set(write_files("test-coverage.md", tmp_path / "coverage")) == {
        "policy.yaml", "resources.yaml", "kyverno-test.yaml"}
