"""``docs/pod-security.md`` stays true: its files, commands and outputs, and its Python example, run as written.

A YAML block whose first line is ``# NAME`` is the file NAME; a ``console`` block is ``$ assertree ...``
commands, each followed by what it prints (standard output, then standard error).
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from assertree.cli import main

DOC = (Path(__file__).resolve().parents[1] / "docs" / "pod-security.md").read_text()
BLOCKS = re.findall(r"```(\w+)\n(.*?)```", DOC, re.S)
FILES = {text.split("\n", 1)[0][2:].strip(): text for kind, text in BLOCKS
         if kind == "yaml" and text.startswith("# ")}


def _commands():
    for kind, text in BLOCKS:
        if kind != "console":
            continue
        for command in re.split(r"^(?=\$ )", text, flags=re.M):
            if command.strip():
                line, _, output = command.partition("\n")
                yield pytest.param(line[2:], output, id=line[2:])


@pytest.fixture
def doc_files(tmp_path, monkeypatch):
    for name, text in FILES.items():
        (tmp_path / name).write_text(text)
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize(("command", "output"), list(_commands()))
def test_every_command_prints_what_the_page_shows(command, output, doc_files, capsys):
    args = shlex.split(command)
    assert args[0] == "assertree"
    main(args[1:])
    out, err = capsys.readouterr()
    assert out + err == output


def test_the_python_example_runs():
    [example] = [text for kind, text in BLOCKS if kind == "python"]
    exec(compile(example, "docs/pod-security.md", "exec"), {})


def test_the_page_has_the_files_its_commands_read():
    assert set(FILES) == {"policy.yaml", "workloads.yaml", "exception.yaml", "kyverno-test.yaml", "psa.yaml"}
