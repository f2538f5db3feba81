"""``--output FORMAT[=FILE]``: which reports a scan writes, and where.

A report file is written whole or not at all (`write_atomically`): a run that
fails or is killed mid-way leaves the previous report as it was, so a CI step
never uploads half a SARIF file. Standard output may go away (``| head -1``)
or fill up (``> /dev/full``): the first ends the report quietly and keeps the
scan's exit code, the second is one line and exit 2 (`write_stdout`).
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from assertree.errors import UsageError
from assertree.report import FORMATS, ReportOptions, render


@dataclass(frozen=True)
class Output:
    format: str
    file: Path | None  # None: standard output


def parse_outputs(values: list[str]) -> list[Output]:
    """Parse repeated ``--output`` values; at most one report may go to standard output."""
    outputs = []
    for value in values:
        name, separator, file = value.partition("=")
        name = name.strip().lower()
        if name not in FORMATS:
            raise UsageError(f"unknown --output format {name!r} (choose from: {', '.join(FORMATS)})")
        if separator and not file:
            raise UsageError(f"--output {value!r}: missing file name after '='")
        outputs.append(Output(name, Path(file) if file else None))
    if sum(1 for output in outputs if output.file is None) > 1:
        raise UsageError("only one --output can go to standard output; give the others a file (FORMAT=FILE)")
    return outputs


def write_outputs(outputs: list[Output], result, options: ReportOptions) -> None:
    """Render and write every requested report. The payload files that could not be read also go to
    standard error, one line each (as every input problem that exits 2 does), and when no text or
    github report goes to standard output the totals line goes there too, so that a terminal or a CI
    log always shows them."""
    for output in outputs:
        text = render(output.format, result, options)
        if output.file is None:
            write_stdout(text)
        else:
            write_atomically(output.file, text, f"the {output.format} report")
        if output.format == "github":
            from assertree.report.github import overflow_note

            note = overflow_note(result)
            if note:
                print(f"assertree: note: {note}", file=sys.stderr)
    for problem in options.problems:
        print(f"assertree: error: {problem}", file=sys.stderr)
    on_terminal = any(output.file is None and output.format in ("text", "github") for output in outputs)
    if not on_terminal and not options.kyverno_json:
        from assertree.report.totals import totals

        written = ", ".join(f"{output.format} to {output.file}" for output in outputs if output.file is not None)
        line = totals(result, options.problems).line()
        print(f"assertree: {line} (reports: {written})" if written else f"assertree: {line}", file=sys.stderr)


def write_stdout(text: str) -> None:
    """Write `text` to standard output. When the reader has gone (a closed pipe: ``| head -1``), the rest
    is dropped quietly and the command's exit code still tells the result; any other write error (a full
    disk) is a UsageError: one line, exit 2."""
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:
        silence_stdout()
    except OSError as error:
        silence_stdout()
        raise UsageError(f"cannot write the report: {error.strerror or error}") from None


def silence_stdout() -> None:
    """Send what standard output still holds, and anything written later, to the null device (so that the
    flush at exit cannot fail again)."""
    try:
        descriptor = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):  # no stream, or one without a file (a test's StringIO)
        sys.stdout = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115  (lives as long as the process)
        return
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, descriptor)
    finally:
        os.close(null)


def write_atomically(path: Path, text: str, what: str = "the report") -> None:
    """Write `text` (UTF-8) to `path` whole or not at all: into a temporary file in the same folder, then
    `os.replace` (atomic within one file system). A file already there keeps its permissions; on any error
    the temporary file is removed, `path` is untouched, and a UsageError names it (exit 2)."""
    temporary = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            mode = path.stat().st_mode & 0o7777
        except FileNotFoundError:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
        descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        with os.fdopen(descriptor, "w", encoding="utf-8") as stream:
            stream.write(text)
        os.chmod(temporary, mode)
        os.replace(temporary, path)
        temporary = None
    except OSError as error:
        raise UsageError(f"cannot write {what}: {error.strerror or error}", source=str(path)) from None
    finally:
        if temporary is not None:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
