"""``--output FORMAT[=FILE]``: which reports a scan writes, and where."""

from __future__ import annotations

import sys
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
            sys.stdout.write(text)
            sys.stdout.flush()
        else:
            try:
                output.file.parent.mkdir(parents=True, exist_ok=True)
                output.file.write_text(text, encoding="utf-8")
            except OSError as error:
                raise UsageError(f"cannot write the {output.format} report: {error.strerror or error}",
                                 source=str(output.file)) from None
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
