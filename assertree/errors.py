"""Problems with the inputs, as data: one located-problem type, formatted in one place.

A `Problem` says what is wrong (message, severity) and where (`Location`: file,
line, column; and the field path inside the document). Policy errors, payload
errors, schema problems and lint findings are all `Problem`s; reporters and the
CLI format them, nobody else (python-jsonschema's lesson: errors stay objects
until someone prints them). The exceptions below carry one `Problem` and stop a
command with exit code 2. Evaluation problems inside a rule are not of this
kind: they become an ERROR result for that rule (`assertree.results.RuleError`).
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum

from assertree.records import ValueRecord


def shorten(text: str, limit: int = 100) -> str:
    """`text`, cut in the middle when longer than `limit`, so a one-line error stays readable."""
    if len(text) <= limit:
        return text
    keep = (limit - 5) // 2
    return f"{text[:keep]} ... {text[-keep:]}"


def field_path_text(path: Sequence[str | int]) -> str:
    """``("spec", "rules", 0, "name")`` as ``spec.rules[0].name``."""
    out = []
    for step in path:
        if isinstance(step, int) and not isinstance(step, bool):
            out.append(f"[{step}]")
        elif out:
            out.append(f".{shorten(str(step))}")
        else:
            out.append(shorten(str(step)))
    return "".join(out)


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"
    NOTE = "note"


class Location(ValueRecord):
    """A place in an input file; 1-based `line`/`column`, None when unknown. Never changed once made."""

    source: str | None  # the file as named on the command line, "<stdin>", or None
    line: int | None
    column: int | None

    __slots__ = ("column", "line", "source")

    def __init__(self, source: str | None = None, line: int | None = None, column: int | None = None) -> None:
        self.source = source
        self.line = line
        self.column = column

    def __str__(self) -> str:
        """``file:line:column``, leaving out the parts that are not known."""
        return ":".join(str(part) for part in (self.source, self.line, self.column) if part is not None)

    def filled(self, other: Location) -> Location:
        """This location, with what it does not know taken from `other`."""
        return Location(self.source or other.source, self.line or other.line, self.column or other.column)


NOWHERE = Location()


class Problem(ValueRecord):
    """One problem with an input: ``file:line:column: field.path: message``. Never changed once made."""

    message: str
    location: Location
    path: tuple[str | int, ...]  # field path inside the document, ("spec", "rules", 0, ...)
    severity: Severity

    __slots__ = ("location", "message", "path", "severity")

    def __init__(self, message: str, location: Location = NOWHERE, path: tuple[str | int, ...] = (),
                 severity: Severity = Severity.ERROR) -> None:
        self.message = message
        self.location = location
        self.path = path
        self.severity = severity

    @property
    def field(self) -> str:
        """The field path as kyverno-json prints it: ``spec.rules[0].name``."""
        return field_path_text(self.path)

    def located(self, where: Location) -> Problem:
        """This problem, with what its location does not know taken from `where`."""
        return self.replace(location=self.location.filled(where))

    def text(self, *, severity: bool = False) -> str:
        """The one-line form; with `severity`, ``error:``/``warning:`` before the field path."""
        field = self.field
        body = f"{field}: {self.message}" if field else self.message
        if severity:
            body = f"{self.severity}: {body}"
        where = str(self.location)
        return f"{where}: {body}" if where else body

    def __str__(self) -> str:
        return self.text()


class AssertreeError(Exception):
    """An input problem that stops a command (exit code 2); `problem` says what and where."""

    def __init__(
        self,
        message: str,
        *,
        source: str | None = None,
        line: int | None = None,
        column: int | None = None,
        path: Sequence[str | int] = (),
    ) -> None:
        self.problem = Problem(message, Location(source, line, column), tuple(path))
        super().__init__(message)

    @classmethod
    def of(cls, problem: Problem) -> AssertreeError:
        """The exception carrying `problem`."""
        error = cls(problem.message)
        error.problem = problem
        return error

    @property
    def message(self) -> str:
        return self.problem.message

    @property
    def path(self) -> tuple[str | int, ...]:
        return self.problem.path

    @property
    def location(self) -> Location:
        return self.problem.location

    @property
    def source(self) -> str | None:
        return self.problem.location.source

    @property
    def line(self) -> int | None:
        return self.problem.location.line

    @property
    def column(self) -> int | None:
        return self.problem.location.column

    def located(self, *, source: str | None = None, line: int | None = None, column: int | None = None):
        """Fill in where the problem is, keeping what is already known."""
        self.problem = self.problem.located(Location(source, line, column))
        return self

    def __str__(self) -> str:
        return str(self.problem)


class PolicyError(AssertreeError):
    """A policy that cannot be loaded or compiled."""


class Unsupported(PolicyError):
    """A valid policy (or part of one) that assertree does not run: a repository's other policies still
    run, and this one is named in one line rather than stopping the run."""


class PayloadError(AssertreeError):
    """A payload (or bindings file) that cannot be read or used."""


class DocumentError(AssertreeError):
    """A file that cannot be read as JSON or YAML (the caller knows whether it is a policy or a payload)."""


class UsageError(AssertreeError):
    """A command-line argument that makes no sense."""
