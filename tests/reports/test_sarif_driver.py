"""The SARIF driver's informationUri is written from a constant, not read from the installed metadata."""

from __future__ import annotations

import tomllib

from conftest import REPO

from assertree.report.sarif import HOME_PAGE


def test_the_home_page_is_pyprojects():
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["urls"]["Homepage"] == HOME_PAGE
