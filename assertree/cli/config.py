"""``assertree config``: the settings each command would run with, and where each came from."""

# No `from __future__ import annotations` here: typer reads the command's annotations.

from pathlib import Path
from typing import Annotated

import typer


def config(
    context: typer.Context,
    command: Annotated[list[str] | None, typer.Argument(
        metavar="COMMAND", show_default=False,
        help="The commands to show (default: every command the settings file has settings for).")] = None,
    file: Annotated[Path | None, typer.Option(
        "--file", metavar="FILE", show_default=False,
        help="Show this settings file's settings instead of the one found from the working directory.")] = None,
) -> None:
    """Print the effective settings: the settings file found (from the working directory upwards, or
    --file), then, per command, each option it sets and the file and line it comes from. Options given on a
    command line win over these."""
    from assertree.cli.settings import COMMANDS, check_commands, default_map, settings_for

    settings = settings_for(file)
    if settings is None:
        typer.echo("No settings file: none of .assertree.yaml, .assertree.yml or a pyproject.toml with "
                   "[tool.assertree] from here up to the repository's top.")
        return
    check_commands(settings, list(COMMANDS))
    typer.echo(f"Settings file: {settings.file}")
    wanted = command or sorted({s.command for s in settings.settings if s.command} | (
        {"scan", "test", "apply", "lint"} if any(s.command is None for s in settings.settings) else set()))
    root = context.parent  # the application's context: every command is there (`app.narrowed` keeps them)
    assert root is not None
    group = root.command
    for name in wanted:
        found = group.get_command(root, name)  # type: ignore[attr-defined]
        if found is None or hasattr(found, "commands"):
            from assertree.errors import UsageError

            raise UsageError(f"{name}: not a command with options (commands: {', '.join(COMMANDS)})")
        values = default_map(settings, found, name)
        origins = settings.for_command(name)
        typer.echo(f"\n{name}:")
        if not values:
            typer.echo("  (nothing set)")
        for key, value in values.items():
            setting = origins[key.replace("_", "-")] if key.replace("_", "-") in origins else origins[key]
            typer.echo(f"  {setting.name} = {_shown(value)}    # {setting.origin}")


def _shown(value: object) -> str:
    import orjson

    return orjson.dumps(value).decode() if not isinstance(value, str) else value
