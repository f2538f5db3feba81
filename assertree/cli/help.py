"""How command help is shown: metavariables (``FILE``, ``EXPR``) where typer would print Python types."""

from __future__ import annotations

import typer
from typer.core import TyperArgument, TyperCommand


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
