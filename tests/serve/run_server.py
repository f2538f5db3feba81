"""Start ``assertree serve`` through the CLI's own entry point: ``python run_server.py ARGS``.

Until the lead registers the command, `assertree.cli.build_app` is replaced by an app holding only
``serve`` (so other commands' work in progress cannot break these tests); `assertree.cli.main` then
runs as the console script does, with its error handling and exit codes. Used by the tests here.
"""

from __future__ import annotations

import sys

import typer

import assertree.cli as cli
from assertree.cli.serve import serve


def _serve_app(command: str | None = None) -> typer.Typer:
    app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)

    @app.callback()
    def root() -> None:
        """assertree (serve only)."""

    app.command("serve")(serve)
    return app


if __name__ == "__main__":
    cli.build_app = _serve_app
    sys.exit(cli.main(["serve", *sys.argv[1:]]))
