"""The README and the docs stay true: the README's quick start, and the function reference (docs/functions.md)
generated from the registry."""

from __future__ import annotations

import re
from pathlib import Path

from assertree.cli.jp import markdown_reference
from assertree.jp.registry import all_functions

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text()
FUNCTIONS = (REPO / "docs" / "functions.md").read_text()


def test_function_reference_matches_the_registry():
    """Regenerate with: assertree jp function --markdown (between the functions markers)."""
    block = re.search(r"<!-- functions:[^\n]*-->\n(.*)<!-- /functions -->", FUNCTIONS, re.S).group(1)
    assert block.strip() == markdown_reference(all_functions()).strip()


def test_every_function_is_in_the_reference():
    for function in all_functions():
        assert f"| `{function.name}(" in FUNCTIONS, function.name


def test_quick_start_has_exactly_two_commands():
    quick_start = README.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    commands = re.findall(r"```sh\n(.*?)```", quick_start, re.S)
    assert len(commands) == 2 and all(len(command.strip().splitlines()) == 1 for command in commands)
    assert "samples/" in commands[0] and "assertree scan" in commands[0]
    assert ".[test]" in commands[1] and "pytest" in commands[1]
