"""``--output FORMAT[=FILE]``: which reports a scan writes, and where.

A report file is written whole or not at all (`assertree.writes`): a run that
fails or is killed mid-way leaves the previous report as it was, so a CI step
never uploads half a SARIF file. Standard output may go away (``| head -1``)
or fill up (``> /dev/full``): the first ends the report quietly and keeps the
scan's exit code, the second is one line and exit 2 (`write_stdout`).
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from assertree.errors import Problem, UsageError
from assertree.records import ValueRecord
from assertree.report import FORMATS, ReportOptions


class Output(ValueRecord):
    format: str
    file: Path | None  # None: standard output

    __slots__ = ("file", "format")

    def __init__(self, format: str, file: Path | None) -> None:
        self.format = format
        self.file = file


def parse_outputs(values: list[str]) -> list[Output]:
    """Parse repeated ``--output`` values; at most one report may go to standard output."""
    return parse_reports(values, FORMATS, "--output")


def parse_reports(values: Sequence[str], formats: Iterable[str], option: str, *,
                  single_stdout: bool = True) -> list[Output]:
    """Parse repeated ``FORMAT[=FILE]`` values of `option`, each FORMAT one of `formats`; with `single_stdout`,
    at most one of them may go to standard output."""
    known = list(formats)
    outputs = []
    for value in values:
        name, separator, file = value.partition("=")
        name = name.strip().lower()
        if name not in known:
            raise UsageError(f"unknown {option} format {name!r} (choose from: {', '.join(known)})")
        if separator and not file:
            raise UsageError(f"{option} {value!r}: missing file name after '='")
        outputs.append(Output(name, Path(file) if file else None))
    if single_stdout and sum(1 for output in outputs if output.file is None) > 1:
        raise UsageError(f"only one {option} can go to standard output; give the others a file (FORMAT=FILE)")
    return outputs


def write_outputs(outputs: list[Output], result, options: ReportOptions) -> Any:
    """Render and write every requested report. The payload files that could not be read also go to
    standard error, one line each (as every input problem that exits 2 does), unless a text or github
    report on standard output already listed them and both streams go to one place (a terminal, a CI
    log): each problem is printed once. When no text or github report goes to standard output the totals
    line goes to standard error too, so that a terminal or a CI log always shows them. The totals are
    counted once, for every report and that line; returns them (the scan's `assertree.report.totals.Tally`)."""
    from assertree.report.stream import render_whole
    from assertree.report.totals import Tally

    tally = Tally.of(result, options.baseline)
    for output in outputs:
        text = render_whole(output.format, result, options, tally)
        if output.file is None:
            write_stdout(text)
        else:
            from assertree.writes import write_file

            write_file(output.file, text, f"the {output.format} report")
        if output.format == "github":
            from assertree.report.github import overflow_note

            _print_note(overflow_note(result))
    _after_reports(outputs, options, lambda: tally.totals(options.problems).line())
    return tally


def write_streamed(outputs: list[Output], policies, options: ReportOptions,
                   units: Iterable[tuple[Any, Any]], problems: Sequence[Problem]):
    """Write every requested report as the scan goes: `units` yields each resource with its results
    (`assertree.engine.stream.check_stream`), `problems` fills up with the files and lines that could
    not be used while it does. Standard output gets its report as it is written (a format that must
    hold results back keeps them in a spool, `assertree.report.spool`); a report file is still written
    whole or not at all (a temporary file beside it, renamed at the end; its spools beside it too).
    Then standard error as `write_outputs`. Returns the scan's `assertree.report.totals.Tally`."""
    from assertree.report.stream import writer_for
    from assertree.report.totals import Tally

    tally = Tally(policies, options.baseline)
    sinks: list[_Sink] = []
    writers = []
    try:
        for output in outputs:
            sink = _Sink(output.file, f"the {output.format} report")
            sinks.append(sink)
            writers.append(writer_for(output.format, policies, options, sink, sink.spill_dir))
        for resource, results in units:
            tally.add(resource, results)
            for writer, sink in zip(writers, sinks, strict=True):
                with sink.blamed():
                    writer.add(resource, results)
        for writer, sink in zip(writers, sinks, strict=True):
            with sink.blamed():
                writer.finish(tally, tuple(problems))
                writer.close()
            sink.finish()
        for output, writer, sink in zip(outputs, writers, sinks, strict=True):  # every report is ready
            sink.commit()
            if output.format == "github":  # as `write_outputs`, from what the writer counted
                from assertree.report.github import Writer as GitHubWriter
                from assertree.report.github import overflow_note_of

                if isinstance(writer, GitHubWriter):
                    _print_note(overflow_note_of(writer.counts))
    finally:
        for writer in writers:
            writer.close()
        for sink in sinks:
            sink.discard()
    done = options.replace(problems=tuple(problems))
    _after_reports(outputs, done, lambda: tally.totals(done.problems).line())
    return tally


def _print_note(note: str | None) -> None:
    if note:
        print(f"assertree: note: {note}", file=sys.stderr)


def _after_reports(outputs: list[Output], options: ReportOptions, totals_line: Callable[[], str]) -> None:
    on_terminal = any(output.file is None and output.format in ("text", "github") for output in outputs)
    if not (on_terminal and _stdout_is_stderr()):  # the report on standard output has said it already
        for problem in options.problems:
            print(f"assertree: error: {problem}", file=sys.stderr)
    if not on_terminal and not options.kyverno_json:
        written = ", ".join(f"{output.format} to {output.file}" for output in outputs if output.file is not None)
        line = totals_line()
        print(f"assertree: {line} (reports: {written})" if written else f"assertree: {line}", file=sys.stderr)


def _stdout_is_stderr() -> bool:
    """Whether standard output and standard error go to one place (a terminal, or one log file or pipe:
    ``2>&1`` in CI), so that what the report printed would be read twice if standard error repeated it."""
    try:
        out, err = os.fstat(sys.stdout.fileno()), os.fstat(sys.stderr.fileno())
    except (AttributeError, OSError, ValueError):  # no file behind a stream (a test's StringIO)
        return False
    return os.path.samestat(out, err) or (sys.stdout.isatty() and sys.stderr.isatty())


class _Sink:
    """Where one streamed report goes: standard output as it is written (`write_stdout`'s rules), or a
    report file written whole or not at all (`assertree.writes.ReplacingFile`)."""

    def __init__(self, file: Path | None, what: str) -> None:
        import tempfile  # only where a report is written (start-up time)

        from assertree.writes import ReplacingFile

        self.file, self.what = file, what
        self.closed_pipe = False
        self.replacing: ReplacingFile | None = None
        if file is None:
            self.spill_dir = tempfile.gettempdir()
            return
        self.replacing = ReplacingFile(file, what)
        self.spill_dir = str(self.replacing.target.parent)  # the report's own folder: its disk, its rights

    def write(self, text: str) -> int:
        if self.replacing is not None:
            return self.replacing.write(text)
        if not self.closed_pipe:
            try:
                sys.stdout.write(text)
            except BrokenPipeError:
                self.closed_pipe = True
                silence_stdout()
            except OSError as error:
                silence_stdout()
                raise UsageError(f"cannot write to standard output: {error.strerror or error}") from None
        return len(text)

    @contextlib.contextmanager
    def blamed(self) -> Iterator[None]:
        """An OSError of this report's spool (a file beside the report, or in the temporary folder for
        standard output) is this report's write error: one line naming the report, exit 2."""
        try:
            yield
        except OSError as error:
            from assertree.writes import WriteError

            self.discard()
            reason = error.strerror or str(error)
            if self.file is None:
                raise WriteError(f"cannot write {self.what}: its spool in {self.spill_dir}: {reason}") from None
            raise WriteError(f"cannot write {self.what}: {reason}", source=str(self.file)) from None

    def finish(self) -> None:
        """The report is complete: flush standard output, or make the file ready to replace the old one."""
        if self.replacing is not None:
            self.replacing.finish()
        elif not self.closed_pipe:
            write_stdout("")

    def commit(self) -> None:
        """Put the finished file in place (nothing for standard output)."""
        if self.replacing is not None:
            self.replacing.commit()

    def discard(self) -> None:
        """Remove what an unfinished report left (nothing after `commit`)."""
        if self.replacing is not None:
            self.replacing.discard()


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
        raise UsageError(f"cannot write to standard output: {error.strerror or error}") from None


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
