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


def _scan(app: typer.Typer) -> None:
    from assertree.cli import scan

    app.command("scan", no_args_is_help=True, epilog=scan.EXAMPLES, cls=Command)(scan.scan)


def _test(app: typer.Typer) -> None:
    from assertree.cli import test

    app.command("test", cls=Command)(test.test)


def _apply(app: typer.Typer) -> None:
    from assertree.cli import apply

    app.command("apply", no_args_is_help=True, epilog=apply.EXAMPLES, cls=Command)(apply.apply)


def _compare(app: typer.Typer) -> None:
    from assertree.cli import compare

    app.command("compare", no_args_is_help=True, epilog=compare.EXAMPLES, cls=Command)(compare.compare)


def _lint(app: typer.Typer) -> None:
    from assertree.cli import lint

    app.command("lint", no_args_is_help=True, epilog=lint.EXAMPLES, cls=Command)(lint.lint)


def _migrate(app: typer.Typer) -> None:
    from assertree.cli import migrate

    app.command("migrate", no_args_is_help=True, epilog=migrate.EXAMPLES, cls=Command)(migrate.migrate)


def _serve(app: typer.Typer) -> None:
    from assertree.cli import serve

    app.command("serve", cls=Command)(serve.serve)


def _config(app: typer.Typer) -> None:
    from assertree.cli import config

    app.command("config", cls=Command)(config.config)


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


COMMANDS = {"scan": _scan, "test": _test, "apply": _apply, "compare": _compare, "lint": _lint,
            "migrate": _migrate, "serve": _serve, "config": _config, "jp": _jp, "kyverno": _kyverno}
