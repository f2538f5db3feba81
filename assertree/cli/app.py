"""The typer application: the root options (``--version``, help without a command) and every command.

Kept apart from ``assertree.cli`` so that importing that package, and
``assertree --version``, do not import typer: typer reads the annotations of
the callbacks below, so typer must be a name of the module that defines them.
"""

# No `from __future__ import annotations` here: typer reads the command's annotations, and as strings it
# evaluates each of them twice per run (~10 ms for scan's two dozen options).

from pathlib import Path
from typing import Annotated

import typer

from assertree.cli.exit_codes import EXIT_OK


def build() -> typer.Typer:
    """A new application (tests build one per run)."""
    from assertree.cli import apply as apply_command
    from assertree.cli import compare as compare_command
    from assertree.cli import config as config_command
    from assertree.cli import jp as jp_commands
    from assertree.cli import kyverno as kyverno_commands
    from assertree.cli import lint as lint_command
    from assertree.cli import migrate as migrate_command
    from assertree.cli import scan as scan_command
    from assertree.cli import serve as serve_command
    from assertree.cli import test as test_command
    from assertree.cli.help import Command, context_settings, markup_mode

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

    app.command("scan", no_args_is_help=True, epilog=scan_command.EXAMPLES, cls=Command)(scan_command.scan)
    app.command("test", cls=Command)(test_command.test)
    app.command("apply", no_args_is_help=True, epilog=apply_command.EXAMPLES, cls=Command)(apply_command.apply)
    app.command("compare", no_args_is_help=True, epilog=compare_command.EXAMPLES, cls=Command)(
        compare_command.compare)
    app.command("lint", no_args_is_help=True, epilog=lint_command.EXAMPLES, cls=Command)(lint_command.lint)
    app.command("migrate", no_args_is_help=True, epilog=migrate_command.EXAMPLES, cls=Command)(
        migrate_command.migrate)
    app.command("serve", cls=Command)(serve_command.serve)
    jp_commands.app.rich_markup_mode = markup_mode()
    jp_commands.app.info.context_settings = context_settings()
    app.command("config", cls=Command)(config_command.config)
    app.add_typer(jp_commands.app, name="jp")
    kyverno = typer.Typer(
        name="kyverno", add_completion=False, no_args_is_help=True, rich_markup_mode=markup_mode(),
        context_settings=context_settings(),
        help="The Kyverno CLI 1.19's command lines, run by assertree: change 'kyverno' to 'assertree kyverno'.")
    kyverno.command("apply", epilog=kyverno_commands.APPLY_EXAMPLES, cls=Command)(kyverno_commands.apply)
    kyverno.command("test", epilog=kyverno_commands.TEST_EXAMPLES, cls=Command)(kyverno_commands.test)
    app.add_typer(kyverno, name="kyverno")
    return app


def narrowed(app: typer.Typer, args: list[str]) -> typer.Typer:
    """`app` keeping only the command `args` starts with, when it names one: typer turns every registered
    command into a click command on each run, reading all their annotations (~20 ms for assertree's eleven),
    and a run uses one. Anything else (no command, an option first, an unknown name) keeps them all, so help
    and "No such command" messages list every command (so does ``config``, which reads the others' options)."""
    if app.registered_callback is None or not args or args[0].startswith("-") or args[0] == "config":
        return app  # without a root callback typer makes a lone command the program itself: leave it as built
    commands = [info for info in app.registered_commands if info.name == args[0]]
    groups = [info for info in app.registered_groups if info.name == args[0]]
    if commands or groups:
        app.registered_commands = commands
        app.registered_groups = groups
    return app
