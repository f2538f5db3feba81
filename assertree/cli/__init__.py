"""The ``assertree`` command: arguments in, a library call, a report out, an exit code.

Exit codes: 0 every rule passed (or did not apply), 1 a rule failed or
errored, 2 bad input (a policy, payload, expression or flag that cannot be
used; one line on stderr naming the file, line and field), 3 an internal bug.
Commands import the library lazily so that ``assertree --help`` and small
scans start fast.
"""

from __future__ import annotations

import errno
import os
import sys

import typer

from assertree.cli.exit_codes import EXIT_BAD_INPUT, EXIT_INTERNAL, EXIT_OK


def build_app() -> typer.Typer:
    from assertree.cli import apply as apply_command
    from assertree.cli import compare as compare_command
    from assertree.cli import jp as jp_commands
    from assertree.cli import lint as lint_command
    from assertree.cli import scan as scan_command
    from assertree.cli import serve as serve_command
    from assertree.cli import test as test_command
    from assertree.cli.help import Command

    app = typer.Typer(
        name="assertree",
        help="Validate JSON and YAML (Terraform plans, Kubernetes manifests, any config) against policies, "
        "offline: kyverno-json ValidatingPolicy, Kyverno ClusterPolicy/Policy and Kyverno's CEL policy kinds.",
        invoke_without_command=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        context_settings={"help_option_names": ["-h", "--help"]},
    )

    @app.callback()
    def root(
        context: typer.Context,
        version: bool = typer.Option(False, "--version", "-V", help="Print the version and exit.", is_eager=True),
    ) -> None:
        if version:
            from assertree import __version__

            typer.echo(f"assertree {__version__}")
            raise typer.Exit(EXIT_OK)
        if context.invoked_subcommand is None:
            typer.echo(context.get_help())

    app.command("scan", no_args_is_help=True, epilog=scan_command.EXAMPLES, cls=Command)(scan_command.scan)
    app.command("test", cls=Command)(test_command.test)
    app.command("apply", no_args_is_help=True, epilog=apply_command.EXAMPLES, cls=Command)(apply_command.apply)
    app.command("compare", no_args_is_help=True, epilog=compare_command.EXAMPLES, cls=Command)(
        compare_command.compare)
    app.command("lint", no_args_is_help=True, epilog=lint_command.EXAMPLES, cls=Command)(lint_command.lint)
    app.command("serve", cls=Command)(serve_command.serve)
    app.add_typer(jp_commands.app, name="jp")
    return app


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns (and, as a script, exits with) the exit code."""
    from assertree.errors import AssertreeError

    _ensure_streams()
    try:
        build_app()(args=argv, prog_name="assertree")
    except SystemExit as done:
        code = done.code
        return _flushed(code if isinstance(code, int) else (0 if code is None else EXIT_BAD_INPUT))
    except AssertreeError as error:
        print(f"assertree: error: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("assertree: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader of standard output left: nothing to tell it
        from assertree.cli.outputs import silence_stdout

        silence_stdout()
        return EXIT_OK
    except OSError as error:
        if error.errno not in _WRITE_ERRORS:
            return _internal(error)
        print(f"assertree: error: cannot write the report: {error.strerror}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except RecursionError:
        print("assertree: error: input nested too deeply to process", file=sys.stderr)
        return EXIT_BAD_INPUT
    except Exception as error:  # noqa: BLE001  (a bug: still one line, never a traceback)
        return _internal(error)
    return _flushed(EXIT_OK)


_WRITE_ERRORS = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO}  # the disk, not a bug


def _internal(error: BaseException) -> int:
    print(f"assertree: internal error: {type(error).__name__}: {error} "
          "(please report this at the project's issue tracker)", file=sys.stderr)
    return EXIT_INTERNAL


def _ensure_streams() -> None:
    """Give the command streams to write to when it has none (``assertree ... >&-``, pythonw): Python sets
    a closed descriptor's stream to None, and writing to a closed one raises."""
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        if stream is None or getattr(stream, "closed", False):
            setattr(sys, name, open(os.devnull, "w", encoding="utf-8"))  # noqa: SIM115  (for the process)


def _flushed(code: int) -> int:
    """`code`, once standard output's buffer is written: a reader that left changes nothing, a full disk
    is one line and exit 2 (bad input: the place the report was sent to)."""
    from assertree.cli.outputs import silence_stdout

    try:
        sys.stdout.flush()
    except BrokenPipeError:
        silence_stdout()
    except OSError as error:
        silence_stdout()
        print(f"assertree: error: cannot write the report: {error.strerror or error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except ValueError:  # closed meanwhile
        pass
    return code


def run() -> None:
    """Console-script entry point.

    Exits without tearing the interpreter down: freeing a large payload's
    millions of objects one by one at shutdown costs a tenth of a second per
    10,000 Terraform resources, for nothing. Output is flushed first.
    """
    from assertree.cli import process

    process.one_shot = True  # the command may freeze what it parsed: the process ends with it
    code = main()
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):  # main() already reported what could be; nothing is left to say
            pass
    os._exit(code)
