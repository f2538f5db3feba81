"""How command help is shown: boxes and colours on a terminal only, and metavariables (``FILE``, ``EXPR``) where
typer would print Python types.

On a terminal, typer's rich help wraps at the terminal's width. Anywhere else
(a pipe, a file, a CI log: GitHub Actions sets ``GITHUB_ACTIONS``, which makes
typer draw its boxes there too) help and usage errors are click's plain text,
with no box drawing and no line broken in the middle of a sentence: the width
is ``COLUMNS`` when it is set, else unlimited.
"""

from __future__ import annotations

import os
import sys
from typing import Any, Literal

import typer
from typer.core import TyperArgument, TyperCommand

_UNWRAPPED = 10_000  # columns: wide enough that click never breaks a help sentence


def on_terminal() -> bool:
    """Whether help goes to a terminal (it is written on standard output)."""
    try:
        return sys.stdout.isatty()
    except (AttributeError, ValueError):  # no stream, or a closed one
        return False


def markup_mode() -> Literal["rich"] | None:
    """typer's rich help on a terminal; click's plain text (no boxes) elsewhere."""
    return "rich" if on_terminal() else None


def context_settings() -> dict[str, Any]:
    """The click context settings of every command: ``-h`` as well as ``--help``, and off a terminal the
    width help wraps at (``COLUMNS``, else none)."""
    settings: dict[str, Any] = {"help_option_names": ["-h", "--help"]}
    if not on_terminal():
        columns = os.environ.get("COLUMNS", "").strip()
        width = int(columns) if columns.isdigit() and int(columns) > 0 else _UNWRAPPED
        settings.update(max_content_width=width, terminal_width=width)
    return settings


class Command(TyperCommand):
    """A command whose help shows metavariables (``FILE``, ``EXPR``) and nothing for flags, where typer
    would print Python types (``<list[str]>``, ``<bool>``)."""

    def get_params(self, ctx: typer.Context) -> list:  # type: ignore[override]
        params = super().get_params(ctx)
        for param in params:
            if getattr(param, "is_flag", False) or isinstance(param, TyperArgument):
                param.display_type_rich = _no_type  # type: ignore[attr-defined]  # typer's rich help reads it; click's Parameter lacks it
        return params


def _no_type(ctx: object = None) -> None:
    return None
