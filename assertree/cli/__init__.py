"""The ``assertree`` command: arguments in, a library call, a report out, an exit code.

Exit codes: 0 every rule passed (or did not apply), 1 a rule failed or
errored, 2 bad input (a policy, payload, expression or flag that cannot be
used; one line on stderr naming the file, line and field), 3 an internal bug.
Commands import the library lazily so that ``assertree --help`` and small
scans start fast; ``assertree --version`` imports neither typer nor the library
(`run`), so it costs little more than the interpreter.
"""

from __future__ import annotations

import errno
import os
import sys

from assertree.cli.exit_codes import EXIT_BAD_INPUT, EXIT_INTERNAL, EXIT_OK

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~3 ms of `assertree --version`)
if TYPE_CHECKING:
    import typer


def build_app(command: str | None = None) -> typer.Typer:
    """The typer application (`assertree.cli.app`; typer is imported only here): with every command, or
    only `command` when that names one (`assertree.cli.app.build`)."""
    from assertree.cli.app import build

    return build(command)


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns (and, as a script, exits with) the exit code."""
    from assertree.cli import process

    with process.starting():  # what these import (threading, signal too) is kept until the command ends
        from assertree.documents.nesting import make_room_for_nesting
        from assertree.errors import AssertreeError

        _ensure_streams()
        make_room_for_nesting()
        previous = _terminate_on_sigterm()
    try:
        args = sys.argv[1:] if argv is None else list(argv)
        if args[:1] == ["kyverno"] and args[1:2] in (["apply"], ["test"]):
            from assertree.cli.kyverno import APPLY_BOOLEANS, TEST_BOOLEANS, pflag_arguments

            args = pflag_arguments(args, APPLY_BOOLEANS if args[1] == "apply" else TEST_BOOLEANS)
        command = args[0] if args and not args[0].startswith("-") else None  # an option first: all commands
        with process.starting():  # typer and the command's module: kept until the command ends
            app = build_app(command)
        app(args=args, prog_name="assertree")
    except SystemExit as done:
        code = done.code
        return _flushed(code if isinstance(code, int) else (0 if code is None else EXIT_BAD_INPUT))
    except AssertreeError as error:
        print(f"assertree: error: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("assertree: interrupted", file=sys.stderr)
        return 130
    except Terminated:
        print("assertree: terminated", file=sys.stderr)
        return EXIT_TERMINATED
    except OSError as error:
        return _output_error(error)
    except RecursionError:
        print("assertree: error: input nested too deeply to process", file=sys.stderr)
        return EXIT_BAD_INPUT
    except MemoryError:  # outside any rule (reading an input): the input is too large for this machine
        print("assertree: error: out of memory: an input is too large to process here", file=sys.stderr)
        return EXIT_BAD_INPUT
    except Exception as error:  # noqa: BLE001  (a bug: still one line, never a traceback)
        return _internal(error)
    finally:
        _restore_sigterm(previous)
        _keep_what_cel_learnt()
    return _flushed(EXIT_OK)


def _keep_what_cel_learnt() -> None:
    """Write what CEL learnt of the expressions a command ran (their compiled forms and cost facts,
    `assertree.languages.cel.text_facts`) for the next run, whatever the command: the console script ends
    with os._exit, which would lose them. The module is loaded only when CEL ran; it is not imported here."""
    facts = sys.modules.get("assertree.languages.cel.text_facts")
    if facts is not None:
        facts.flush_all()


_WRITE_ERRORS = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO}  # the disk, not a bug


def _output_error(error: OSError) -> int:
    """The exit code for an OSError that ended a command: the reader of standard output left (nothing to
    tell it: 0), a full disk (one line, 2), anything else (a bug, 3). Files are written through
    `assertree.writes`, whose errors name them; what is left here is standard output."""
    if isinstance(error, BrokenPipeError):
        from assertree.cli.outputs import silence_stdout

        silence_stdout()
        return EXIT_OK
    if error.errno not in _WRITE_ERRORS:
        return _internal(error)
    where = f"{error.filename}: cannot write" if error.filename else "cannot write to standard output"
    print(f"assertree: error: {where}: {error.strerror}", file=sys.stderr)
    return EXIT_BAD_INPUT


EXIT_TERMINATED = 128 + 15  # a shell's status for a process ended by SIGTERM


class Terminated(BaseException):
    """SIGTERM arrived: the command unwinds as for Ctrl+C (a BaseException, so no handler takes it for a
    bug), and every file being written removes its temporary file on the way out (`assertree.writes`)."""


def _terminate_on_sigterm() -> object:
    """Answer SIGTERM with `Terminated` while the command runs; returns the handler to restore. Only from
    the main thread (Python's rule for signal handlers), and only where SIGTERM still has its default
    action (a program that embeds `main` keeps its own handler). `serve` hands SIGTERM to uvicorn, which
    shuts down gracefully and then raises the signal again here."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        return None
    previous = signal.getsignal(signal.SIGTERM)
    if previous is not signal.SIG_DFL:
        return None
    signal.signal(signal.SIGTERM, _terminated)
    return previous


def _terminated(signum: int, frame: object) -> None:
    raise Terminated


def _restore_sigterm(previous: object) -> None:
    import signal

    if previous is not None:
        signal.signal(signal.SIGTERM, previous)  # type: ignore[arg-type]


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
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        from assertree.cli.outputs import silence_stdout  # the reports' module: only when the reader left

        silence_stdout()
    except OSError as error:
        from assertree.cli.outputs import silence_stdout

        silence_stdout()
        print(f"assertree: error: cannot write to standard output: {error.strerror or error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except ValueError:  # closed meanwhile
        pass
    return code


def _version() -> int:
    """``assertree --version`` as typer would print it, without importing typer (~50 ms) or the library."""
    from assertree import __version__

    _ensure_streams()
    try:
        print(f"assertree {__version__}")
    except OSError as error:  # as main() answers them: a closed pipe, a full disk
        return _output_error(error)
    return _flushed(EXIT_OK)


def run() -> None:
    """Console-script entry point.

    Exits without tearing the interpreter down: freeing a large payload's
    millions of objects one by one at shutdown costs a tenth of a second per
    10,000 Terraform resources, for nothing. Output is flushed first.
    """
    from assertree.cli import process

    process.one_shot = True  # the command may freeze what it parsed: the process ends with it
    code = _version() if sys.argv[1:] in (["--version"], ["-V"]) else main()
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):  # main() already reported what could be; nothing is left to say
            pass
    os._exit(code)
