"""Settings files: the options a team sets once for every run, in CI and pre-commit alike.

assertree looks for ``.assertree.yaml`` (or ``.assertree.yml``), or a
``[tool.assertree]`` table in ``pyproject.toml``, in the working directory and
then in each folder above it, up to the top of the repository (a folder with
``.git``); the first found is used (``.assertree.yaml`` first in one folder).
``--config FILE`` names one; ``--no-config`` uses none.

A setting is an option's long name without the dashes (``policy``,
``fail-on``, ``exclude``, ``output``, ``baseline``, ...). Top-level settings
apply to every command that has that option; a table named after a command
(``scan:``, ``test:``) sets that command's options and wins over the top level.
Options given on the command line win over both. Paths are relative to the
settings file's folder. Settings reach each command as click's ``default_map``,
so every option keeps its own type checks; an unknown setting, or one of the
wrong type, is an error naming the file, line and setting (exit 2).
`assertree config` prints the settings a command would get, with their origin.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from assertree.errors import AssertreeError
from assertree.records import ValueRecord

YAML_NAMES = (".assertree.yaml", ".assertree.yml")
PYPROJECT = "pyproject.toml"
# settings whose values are paths (a list or one), resolved against the settings file's folder
PATH_SETTINGS = frozenset({"policy", "payload", "bindings", "values", "user-info", "exceptions", "baseline",
                           "write-baseline", "params", "resource", "target", "exception", "values-file", "userinfo"})
OUTPUT_SETTINGS = frozenset({"output"})  # FORMAT[=FILE]: the FILE part is a path
# every command a settings file may have a table for
COMMANDS = ("scan", "test", "apply", "compare", "lint", "serve", "jp", "config", "kyverno", "migrate")


class SettingsError(AssertreeError):
    """A settings file that cannot be used (exit code 2)."""


class Setting(ValueRecord):
    """One setting as read: its value and where it was written."""

    name: str  # as written: fail-on
    value: Any
    source: str  # the settings file
    line: int | None  # YAML: the setting's line (TOML: not known)
    command: str | None  # the command table it is in, None at the top level

    __slots__ = ("command", "line", "name", "source", "value")

    def __init__(self, name: str, value: Any, source: str, line: int | None = None, command: str | None = None) -> None:
        self.name = name
        self.value = value
        self.source = source
        self.line = line
        self.command = command

    @property
    def origin(self) -> str:
        """Where the setting was written, for people: ``file:line``, or the TOML table and key."""
        if self.line is not None:
            return f"{self.source}:{self.line}"
        table = f"tool.assertree.{self.command}" if self.command else "tool.assertree"
        return f"{self.source} [{table}]"

    def error(self, message: str) -> SettingsError:
        """A SettingsError about this setting, located."""
        where = f"{self.command}.{self.name}" if self.command else self.name
        return SettingsError(f"{where}: {message}", source=self.origin if self.line is None else self.source,
                             line=self.line)


class Settings(ValueRecord):
    """A settings file read: its settings, top level and per command."""

    file: Path | None
    settings: list[Setting]

    __slots__ = ("file", "settings")

    def __init__(self, file: Path | None = None, settings: list[Setting] | None = None) -> None:
        self.file = file
        self.settings = [] if settings is None else settings

    def for_command(self, command: str) -> dict[str, Setting]:
        """The settings of `command`: the top level, then its own table over it."""
        chosen: dict[str, Setting] = {}
        for setting in self.settings:
            if setting.command is None:
                chosen[setting.name] = setting
        for setting in self.settings:
            if setting.command == command:
                chosen[setting.name] = setting
        return chosen


def find_settings_file(start: Path) -> Path | None:
    """The settings file that applies in `start` (see the module docstring), if any."""
    folder = start.resolve()
    while True:
        for name in YAML_NAMES:
            if (folder / name).is_file():
                return folder / name
        pyproject = folder / PYPROJECT
        if pyproject.is_file() and _has_tool_table(pyproject):
            return pyproject
        if (folder / ".git").exists() or folder.parent == folder:
            return None
        folder = folder.parent


def _has_tool_table(path: Path) -> bool:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return False
    return "[tool.assertree" in text


def read_settings(path: Path) -> Settings:
    """Read a settings file (YAML, or pyproject.toml's ``[tool.assertree]``)."""
    if path.name == PYPROJECT:
        return Settings(path, list(_from_pyproject(path)))
    return Settings(path, list(_from_yaml(path)))


def _from_pyproject(path: Path) -> Iterator[Setting]:
    import tomllib

    try:
        table = tomllib.loads(path.read_text(encoding="utf-8")).get("tool", {}).get("assertree", {})
    except (OSError, UnicodeDecodeError) as error:
        raise SettingsError(f"cannot read the settings: {error}", source=str(path)) from None
    except tomllib.TOMLDecodeError as error:
        raise SettingsError(f"invalid TOML: {error}", source=str(path)) from None
    if not isinstance(table, dict):
        raise SettingsError("[tool.assertree] must be a table", source=str(path))
    for name, value in table.items():
        if isinstance(value, dict):
            for inner, item in value.items():
                yield Setting(inner, item, str(path), None, name)
        else:
            yield Setting(name, value, str(path))


def _from_yaml(path: Path) -> Iterator[Setting]:
    from assertree.documents.reader import load_documents

    try:
        documents = load_documents(path)
    except AssertreeError as error:
        raise SettingsError(error.message, source=error.source or str(path), line=error.line,
                            column=error.column) from None
    if not documents:
        return
    if len(documents) > 1:
        raise SettingsError("a settings file holds one YAML document", source=str(path))
    document = documents[0]
    if document.value is None:
        return
    if not isinstance(document.value, dict):
        raise SettingsError("settings must be a mapping of option names to values", source=str(path),
                            line=document.line)
    for name, value in document.value.items():
        if isinstance(value, dict):
            for inner, item in value.items():
                yield Setting(str(inner), item, str(path), document.locate((name, inner))[0], str(name))
        else:
            yield Setting(str(name), value, str(path), document.locate((name,))[0])


def _relative(value: str, base: Path) -> str:
    """`value`, a path written relative to the settings file's folder, as a path to use from here."""
    if value == "-" or os.path.isabs(value):
        return value
    return os.path.relpath(base / value)


def _resolved(setting: Setting, base: Path) -> Any:
    value = setting.value
    if setting.name in PATH_SETTINGS:
        if isinstance(value, list):
            return [_relative(str(item), base) if isinstance(item, str) else item for item in value]
        return _relative(value, base) if isinstance(value, str) else value
    if setting.name in OUTPUT_SETTINGS:
        items = value if isinstance(value, list) else [value]
        out = []
        for item in items:
            if isinstance(item, str) and "=" in item:
                name, _, file = item.partition("=")
                item = f"{name}={_relative(file, base)}"
            out.append(item)
        return out if isinstance(value, list) else out[0]
    return value


def default_map(settings: Settings, command: Any, command_name: str) -> dict[str, Any]:
    """click's ``default_map`` of `command` (a click command) from `settings`; raises SettingsError for a
    setting of its table that names no option of the command, or holds the wrong kind of value."""
    assert settings.file is not None
    base = settings.file.parent
    options = {parameter.name: parameter for parameter in command.params}
    out: dict[str, Any] = {}
    for name, setting in settings.for_command(command_name).items():
        key = name.replace("-", "_")
        parameter = options.get(key)
        if parameter is None:
            if setting.command is None:  # a top-level setting for the commands that have it
                continue
            raise setting.error(f"not an option of 'assertree {command_name}' (a setting is an option's long "
                                "name without the dashes)")
        value = _resolved(setting, base)
        multiple = getattr(parameter, "multiple", False) or getattr(parameter, "nargs", 1) == -1
        if multiple and not isinstance(value, list):
            value = [value]
        if not multiple and isinstance(value, (list, dict)):
            raise setting.error(f"must be a single value, not a {'list' if isinstance(value, list) else 'mapping'}")
        if isinstance(value, list) and not all(isinstance(item, (str, int, float)) for item in value):
            raise setting.error("must be a list of values")
        out[key] = value
    return out


def check_commands(settings: Settings, commands: list[str]) -> None:
    """Refuse a command table naming no command (a typo would silently set nothing)."""
    for setting in settings.settings:
        if setting.command is not None and setting.command not in commands:
            raise SettingsError(f"{setting.command}: not a command (commands: {', '.join(sorted(commands))})",
                                source=setting.source if setting.line is not None else setting.origin,
                                line=setting.line)


def settings_for(config: Path | None = None, *, use: bool = True) -> Settings | None:
    """The settings of this run: `config`'s, else the file found from the working directory, else None."""
    if not use:
        return None
    path = config if config is not None else find_settings_file(Path.cwd())
    if path is None:
        return None
    if not path.is_file():
        raise SettingsError("settings file not found", source=str(path))
    return read_settings(path)


def apply_settings(context: Any, *, config: Path | None, use: bool) -> None:
    """Give the command about to run its settings, as click's ``default_map`` of the root context."""
    settings = settings_for(config, use=use)
    if settings is None:
        return
    check_commands(settings, list(COMMANDS))
    name = context.invoked_subcommand
    command = context.command.get_command(context, name)
    if command is None or not hasattr(command, "params") or hasattr(command, "commands"):  # a group: jp
        return
    defaults = default_map(settings, command, name)
    context.default_map = {name: defaults}
    if defaults:  # the settings may say all the command needs: `assertree scan` alone runs, not its help
        command.no_args_is_help = False
