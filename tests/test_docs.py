"""The documentation holds together: every internal link lands on a file and a heading that exist, and every
shell example marked runnable runs, with the exit code it promises.

A runnable example is a fenced block whose info string is ``sh runnable`` (GitHub highlights it as ``sh``
and ignores the rest), optionally ``exit=N`` when the command is meant to end with status N; each line of
it runs in bash from the repository's root, with this interpreter's ``assertree`` first on the PATH.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
FENCE = re.compile(r"^(```+|~~~+)(.*)$")
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


def prose(text: str) -> list[tuple[int, str]]:
    """(line number, line) of the text outside fenced code blocks, inline code taken out."""
    out, fence = [], None
    for number, line in enumerate(text.splitlines(), start=1):
        found = FENCE.match(line.strip())
        if found:
            marker = found.group(1)[0]
            fence = None if fence == marker else fence or marker
            continue
        if fence is None:
            out.append((number, re.sub(r"`[^`]*`", "``", line)))
    return out


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces as hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    found: set[str] = set()
    seen: dict[str, int] = {}
    text = path.read_text()
    fence = None
    for line in text.splitlines():
        marker = FENCE.match(line.strip())
        if marker:
            fence = None if fence == marker.group(1)[0] else fence or marker.group(1)[0]
            continue
        heading = re.match(r"^#{1,6} (.*)$", line)
        if fence is None and heading:
            base = slug(heading.group(1))
            count = seen.get(base, 0)
            seen[base] = count + 1
            found.add(base if not count else f"{base}-{count}")
    return found


def links():
    for page in PAGES:
        for number, line in prose(page.read_text()):
            for target in LINK.findall(line):
                if not re.match(r"^[a-z]+:", target):
                    yield pytest.param(page, number, target, id=f"{page.relative_to(REPO)}:{number}:{target}")


@pytest.mark.parametrize(("page", "line", "target"), list(links()))
def test_internal_link(page, line, target):
    path, _, anchor = target.partition("#")
    destination = (page.parent / path).resolve() if path else page
    assert destination.exists(), f"{page.relative_to(REPO)}:{line}: {path} does not exist"
    if anchor:
        assert destination.suffix == ".md", f"{page.relative_to(REPO)}:{line}: an anchor into {path}"
        assert anchor in anchors(destination), f"{page.relative_to(REPO)}:{line}: no heading #{anchor} in {path}"


def test_every_page_is_reachable_from_the_readme():
    reached, queue = set(), [REPO / "README.md"]
    while queue:
        page = queue.pop()
        if page in reached:
            continue
        reached.add(page)
        for _, line in prose(page.read_text()):
            for target in LINK.findall(line):
                path = target.partition("#")[0]
                if path.endswith(".md") and not re.match(r"^[a-z]+:", path):
                    queue.append((page.parent / path).resolve())
    assert {page.relative_to(REPO).as_posix() for page in PAGES} - {p.relative_to(REPO).as_posix()
                                                                    for p in reached} == set()


def examples():
    for page in PAGES:
        lines = page.read_text().splitlines()
        for index, line in enumerate(lines):
            found = FENCE.match(line.strip())
            if not found or "runnable" not in found.group(2).split():
                continue
            exit_code = int(next((word.split("=", 1)[1] for word in found.group(2).split()
                                  if word.startswith("exit=")), "0"))
            body = []
            for following in lines[index + 1:]:
                if following.strip().startswith(found.group(1)):
                    break
                body.append(following)
            for command in body:
                if command.strip() and not command.strip().startswith("#"):
                    yield pytest.param(command, exit_code,
                                       id=f"{page.relative_to(REPO)}:{index + 1}:{command.split()[1]}")


EXAMPLES = list(examples())


def test_there_are_runnable_examples():
    assert len(EXAMPLES) >= 8


@pytest.mark.parametrize(("command", "exit_code"), EXAMPLES)
def test_runnable_example(command, exit_code):
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = subprocess.run(["bash", "-c", command], cwd=REPO, env=env, capture_output=True, text=True, timeout=300,
                          check=False)
    assert done.returncode == exit_code, done.stdout + done.stderr
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr
