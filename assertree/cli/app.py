"""The typer application: the root options (``--version``, help without a command) and every command.

Kept apart from ``assertree.cli`` so that importing that package, and
``assertree --version``, do not import typer: typer reads the annotations of
the callbacks below, so typer must be a name of the module that defines them.
"""

# No `from __future__ import annotations` here: typer reads the command's annotations, and as strings it
# evaluates each of them twice per run (~10 ms for scan's two dozen options).

from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer

from assertree.cli.exit_codes import EXIT_OK
from assertree.cli.help import Command, context_settings, markup_mode


def build(command: str | None = None) -> typer.Typer:
    """A new application (tests build one per run). With `command` naming one of its commands, the
    application holds that one alone: typer turns every registered command into a click command on each
    run, reading all their annotations, and a run uses one; registering one also imports one command
    module (`COMMANDS`). Any other `command` (None, an unknown name, ``config``, which reads the others'
    options) registers them all, so help and "No such command" messages list every command."""

    app = typer.Typer(
        name="assertree",
        help="Validate JSON and YAML (Terraform plans, Kubernetes manifests, any config) against policies, "
        "offline: kyverno-json ValidatingPolicy, Kyverno ClusterPolicy/Policy and Kyverno's CEL policy kinds.",
        invoke_without_command=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        rich_markup_mode=markup_mode(),
        context_settings=context_settings(),
    )

    @app.callback()
    def root(
        context: typer.Context,
        version: bool = typer.Option(False, "--version", "-V", help="Print the version and exit.", is_eager=True),
        config: Annotated[Path | None, typer.Option(
            "--config", metavar="FILE", show_default=False,
            help="Read settings from FILE (.assertree.yaml, or a pyproject.toml with [tool.assertree]) instead of "
            "the first one found from the working directory upwards.")] = None,
        no_config: Annotated[bool, typer.Option("--no-config", help="Read no settings file.")] = False,
    ) -> None:
        if version:
            from assertree import __version__

            typer.echo(f"assertree {__version__}")
            raise typer.Exit(EXIT_OK)
        if context.invoked_subcommand is None:
            typer.echo(context.get_help())
            return
        from assertree.cli.settings import apply_settings

        apply_settings(context, config=config, use=not no_config)

    for register in ([COMMANDS[command]] if command in COMMANDS and command != "config" else COMMANDS.values()):
        register(app)
    return app


# Each command's registration imports its module only when it runs: `build` registers the one a command
# line names. In the order `assertree --help` lists them (commands, then the groups jp and kyverno).


def _command(name: str, *, no_args_is_help: bool) -> Callable[[typer.Typer], None]:
    """The registration of a command that is one function, ``assertree.cli.<name>.<name>``; its module's
    ``EXAMPLES``, when it has them, close its help."""

    def register(app: typer.Typer) -> None:
        # __import__, the import statement's own machinery: `python -X importtime` lists what it imports
        # (tests/test_startup.py reads that list), not what importlib.import_module does
        module = __import__(f"assertree.cli.{name}", fromlist=[name])
        app.command(name, no_args_is_help=no_args_is_help, epilog=getattr(module, "EXAMPLES", None),
                    cls=Command)(getattr(module, name))

    return register


def _jp(app: typer.Typer) -> None:
    from assertree.cli import jp

    jp.app.rich_markup_mode = markup_mode()
    jp.app.info.context_settings = context_settings()
    app.add_typer(jp.app, name="jp")


def _kyverno(app: typer.Typer) -> None:
    from assertree.cli import kyverno as commands

    kyverno = typer.Typer(
        name="kyverno", add_completion=False, no_args_is_help=True, rich_markup_mode=markup_mode(),
        context_settings=context_settings(),
        help="The Kyverno CLI 1.19's command lines, run by assertree: change 'kyverno' to 'assertree kyverno'.")
    kyverno.command("apply", epilog=commands.APPLY_EXAMPLES, cls=Command)(commands.apply)
    kyverno.command("test", epilog=commands.TEST_EXAMPLES, cls=Command)(commands.test)
    app.add_typer(kyverno, name="kyverno")


COMMANDS = {
    "scan": _command("scan", no_args_is_help=True),
    "test": _command("test", no_args_is_help=False),
    "apply": _command("apply", no_args_is_help=True),
    "compare": _command("compare", no_args_is_help=True),
    "lint": _command("lint", no_args_is_help=True),
    "migrate": _command("migrate", no_args_is_help=True),
    "serve": _command("serve", no_args_is_help=False),
    "config": _command("config", no_args_is_help=False),
    "jp": _jp,
    "kyverno": _kyverno,
}
