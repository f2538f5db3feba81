"""Reading payloads: the documents to check, turned into resources.

Speed matters here more than anywhere: on a large Terraform plan, parsing is
most of a scan's time, and most of parsing is CPython's cyclic garbage
collector walking the millions of new dicts and lists. JSON is parsed with
orjson while the collector is paused (containers of parsed JSON cannot form
cycles, so nothing is lost); the CLI then freezes the result out of the
collector's sight (`freeze_loaded`).

Formats: ``.json`` is one JSON value; ``.yaml``/``.yml`` a stream of YAML
documents (one document gives that value, several give a list); anything
else, and standard input, is read as JSON when it parses as JSON, else as
YAML. YAML is read as kyverno-json reads payloads (gopkg.in/yaml.v3): YAML 1.2
scalars (``on``, ``yes``, ``no`` are strings), mapping keys as strings, CloudFormation
``!Ref``/``!GetAtt`` and other unknown tags as the value they tag, dates as the
strings they were written as, repeated keys an error
(`assertree.documents.loaders.PayloadLoader`). Text may be UTF-8, UTF-16 or UTF-32
(`assertree.documents.reader.decode_text`).

Standard input is read in chunks up to ``ASSERTREE_MAX_INPUT_BYTES`` (512 MiB,
`assertree.documents.limits.max_input_bytes`), as files are; a FIFO, such as a
shell's ``<(terraform show -json plan)``, is a payload file like any other.

An empty or comment-only YAML file holds no resource and is not an error; an
empty ``.json`` file is (JSON has no empty document). A file that cannot be read
is a `PayloadError` here; `assertree.inputs.resources.load_resources` turns it into
a problem of that file and goes on with the others.
"""

from __future__ import annotations

import gc
import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assertree.documents.paths import NO_EXCLUDE, Exclude, walk
from assertree.documents.reader import (
    SUFFIXES,
    Document,
    DocumentError,
    collector_paused,
    encoding_of,
    format_of,
    load_documents,
    parse_values,
    read_bytes,
    read_stream,
    stdin_bytes,
)
from assertree.errors import PayloadError, UsageError
from assertree.inputs.ahead import take
from assertree.jp.values import type_name
from assertree.records import ValueRecord
from assertree.results import Resource

if TYPE_CHECKING:  # a large file's members: read by `parse_payload` only then
    from assertree.documents.members import Members

STDIN = "-"
STDIN_SOURCE = "<stdin>"  # the source name of a payload read from standard input
__all__ = ["STDIN", "STDIN_SOURCE", "Payload", "collector_paused", "freeze_loaded", "payload_error", "payload_files",
           "read_payload", "resources_from"]


class Payload(ValueRecord, hidden=("data", "_positioned",)):
    """One payload file as read: its value, whether it was a YAML stream of documents, and its bytes,
    kept so that a report can ask where a field is without reading the file again. Read for some members
    only (`read_payload`'s `members`), the value of a large JSON object may hold only those (`partial`)."""

    source: str
    value: Any
    documents: bool  # True when `value` is the list of a YAML stream's documents (two or more, or none)
    data: bytes | None
    _positioned: list[Document] | None
    partial: bool  # `value` holds the members asked for only (`data` has the rest)

    __slots__ = ("_positioned", "data", "documents", "partial", "source", "value")

    def __init__(
            self, source: str, value: Any, documents: bool = False, data: bytes | None = None,
            _positioned: list[Document] | None = None, partial: bool = False,
    ) -> None:
        self.source = source
        self.value = value
        self.documents = documents
        self.data = data
        self._positioned = _positioned
        self.partial = partial

    @property
    def empty(self) -> bool:
        """True for a YAML file with no document (empty, or comments only): no resource, no error."""
        return self.documents and not self.value

    def locate(self, steps: Sequence[Any]) -> tuple[int, int] | None:
        """(line, column) of the field at `steps` from the payload's root (its deepest existing
        ancestor when the path does not exist); None when the payload has no text to point into."""
        documents = self._positioned_documents()
        if not documents:
            return None
        inside = self._inside(documents, steps)
        if inside is None:
            return documents[0].line, 1
        return _located(documents[inside[0]], inside[1])

    def locate_all(self, paths: Sequence[Sequence[Any]]) -> list[tuple[int, int] | None]:
        """`locate` of each of `paths`, each document's in one walk of its text (a report's findings)."""
        documents = self._positioned_documents()
        if not documents:
            return [None] * len(paths)
        found: list[tuple[int, int] | None] = [(documents[0].line, 1)] * len(paths)
        wanted: dict[int, list[tuple[int, tuple]]] = {}  # document index -> (path number, path inside it)
        for number, steps in enumerate(paths):
            inside = self._inside(documents, steps)
            if inside is not None:
                wanted.setdefault(inside[0], []).append((number, inside[1]))
        for index, asked in wanted.items():
            document = documents[index]
            try:
                places: list[tuple[int, int]] = document.locate_all([path for _, path in asked])
            except (ValueError, IndexError, RecursionError):  # text a walk cannot follow: each path on its own
                places = [_located(document, path) for _, path in asked]
            for (number, _), place in zip(asked, places, strict=True):
                found[number] = place
        return found

    def _inside(self, documents: list[Document], steps: Sequence[Any]) -> tuple[int, tuple] | None:
        """The document `steps` lead into and the steps inside it; None when they name no document of a
        YAML stream (the first document's start stands for them)."""
        if not self.documents:
            return 0, tuple(steps)
        if steps and isinstance(steps[0], int) and 0 <= steps[0] < len(documents):  # a stream: its documents' list
            return steps[0], tuple(steps[1:])
        return None

    def _positioned_documents(self) -> list[Document]:
        if self._positioned is None:
            found: list[Document] = []
            if self.data is not None:
                try:
                    found = load_documents(self.source, payload=True, positions_only=True, data=self.data,
                                           value=None if self.documents else self.value)
                except (DocumentError, ValueError, RecursionError):
                    found = []
            # the value keeps only the non-null documents of a stream; so must the positions
            # (a JSON file's one document is read for its positions only: its value is not built again)
            self._positioned = [document for document in found if document.value is not None or not self.documents]
        return self._positioned


def _located(document: Document, path: tuple) -> tuple[int, int]:
    """`Document.locate`, or the document's start when its text cannot be followed to `path`."""
    try:
        return document.locate(path)
    except (ValueError, IndexError, RecursionError):
        return document.line, 1


_last_payload: list[Payload] = []


def freeze_loaded(last: Payload | None = None) -> None:
    """Move everything allocated so far out of the collector's reach (for one-shot CLI runs), and hold the
    `last` payload read until the process ends: whatever a scan does not keep of it (a plan's prior state,
    what --pre-process left out) is then never freed, one object at a time, for nothing. Only the last
    one: the earlier ones are freed as the next is read, so memory stays that of the largest file."""
    if last is not None:
        _last_payload[:] = [last]
    gc.freeze()


_GLOB_CHARACTERS = frozenset("*?[")


def payload_files(arguments: Sequence[str], exclude: Exclude = NO_EXCLUDE) -> list[str]:
    """The payload files named by ``--payload`` arguments, in order, without repeats.

    An argument is a file, ``-`` (standard input), a directory (every ``.json``,
    ``.yaml`` and ``.yml`` file under it, sorted) or a glob pattern (``**``
    included, for shells that do not expand it). What `exclude` names is left out
    (`assertree.documents.paths`); a directory or pattern that leaves nothing is an error.
    """
    found: list[str] = []
    for argument in arguments:
        path = Path(argument)
        if argument == STDIN or path.is_file() or path.is_fifo() or path.is_char_device():  # <(command): a FIFO
            if argument == STDIN or not exclude.matches(argument):  # a file named: its whole path may match
                found.append(argument)
        elif path.is_dir():
            matches = [str(p) for p in walk(path, SUFFIXES, exclude)]
            if not matches:
                left = " (--exclude left none)" if exclude else ""
                raise PayloadError(f"no .json, .yaml or .yml files in this directory{left}", source=argument)
            found.extend(matches)
        elif _GLOB_CHARACTERS & set(argument):
            import glob  # here: a payload named as it is needs none

            matches = sorted(p for p in glob.glob(argument, recursive=True)
                             if Path(p).is_file() and not exclude.matches(p))
            if not matches:
                left = " (--exclude left none)" if exclude else ""
                raise PayloadError(f"no file matches this pattern{left}", source=argument)
            found.extend(matches)
        else:
            raise PayloadError("payload file not found", source=argument)
    if found.count(STDIN) > 1:
        raise UsageError("standard input ('-') can be read only once")
    return list(dict.fromkeys(found))


def read_payload(path: str, stdin: Any = None, *, members: Members | None = None) -> Payload:
    """Read one payload file (``-`` for standard input). `members`: the top-level members of a JSON object
    that will be read (`assertree.jp.fields.fields_read` of a ``--pre-process`` expression, or a plan's
    planned resources, `assertree.inputs.plan_reading`); a large object's value may then hold only those
    (`assertree.documents.members`, `Payload.partial`), parsed in a fraction of the time."""
    if path == STDIN:
        try:
            data = read_stream(stdin if stdin is not None else stdin_bytes(STDIN_SOURCE), STDIN_SOURCE)
        except DocumentError as error:
            raise payload_error(error) from None
        return parse_payload(data, STDIN_SOURCE, kind=None, members=members)
    try:
        taken = take(path)  # read in a thread while the command got ready (`assertree.inputs.ahead`)
        read = taken if taken is not None else read_bytes(path)
    except DocumentError as error:
        raise payload_error(error, "payload ") from None
    return parse_payload(read, path, kind=format_of(path), members=members)


def payload_error(error: DocumentError, prefix: str = "") -> PayloadError:
    """A reader's error worded for a payload (`prefix` ``"payload "`` for a named file: "payload file not
    found")."""
    problem = error.problem
    message = problem.message
    if prefix and message in ("file not found", "is a directory, not a file"):
        message = f"{prefix}{message}" if message == "file not found" else f"{prefix.strip()} {message}"
    elif message.startswith("cannot read"):
        message = message.replace("cannot read", "cannot read payload", 1)
    elif message.startswith("not ") and " text (byte " in message:
        message = f"payload is {message}"
    return PayloadError(message, source=problem.location.source, line=problem.location.line,
                        column=problem.location.column, path=problem.path)


def parse_payload(data: bytes, source: str, kind: str | None, *, members: Members | None = None) -> Payload:
    """Parse payload bytes as JSON, YAML, or (kind None) whichever they are. A YAML file with no
    document (empty, or comments only) is a payload with no resource (`Payload.empty`). `members`: see
    `read_payload`."""
    if members is not None and kind != "yaml" and len(data) >= _MEMBERS_FROM:
        from assertree.documents.members import parse_members

        with collector_paused():
            found = parse_members(data, members.names, members.checked)
        if found is not None:
            return Payload(source, found, data=data, partial=True)
    if not data or data.isspace():
        if kind == "json":
            raise PayloadError("empty file: a .json file must hold a JSON value", source=source)
        if kind is None:
            raise PayloadError("payload is empty", source=source)
        return Payload(source, [], documents=True, data=data)
    try:
        values = parse_values(data, source, kind, payload=True)
    except DocumentError as error:
        problem = error.located(source=source)
        hint = _hint(data, kind, problem.problem.location.column, problem.problem.location.line)
        if hint:
            problem.problem = problem.problem.replace(message=f"{problem.problem.message} ({hint})")
        raise payload_error(problem) from None
    if not values:
        if kind is None:
            raise PayloadError("payload is empty (no YAML document)", source=source)
        return Payload(source, [], documents=True, data=data)
    if len(values) == 1:
        return Payload(source, values[0], data=data)
    return Payload(source, values, documents=True, data=data)


_MEMBERS_FROM = 3 << 20
"""Bytes from which a JSON object is read for its `members` only: importing msgspec costs 7-10 ms, which a file
of a few megabytes saves only from about this size on (a 3.5 MB plan parses whole in ~20 ms; read for its
planned resources, its scan took 4-7% less CPU time, by alternating runs of `--terraform` and `--pre-process`)."""

_TEMPLATE = re.compile(r"\{\{-?\s*[^{}]*?-?\}\}")
_QUOTED = re.compile(r"'[^'\n]*'|\"(?:[^\"\\\n]|\\.)*\"")


def looks_like_template(text: str) -> bool:
    """Whether YAML text holds a ``{{ ... }}`` template action outside quoted strings and comments
    (Helm, gomplate, Jinja): a file to render before it can be checked."""
    for line in text.splitlines():
        if "{{" not in line:
            continue
        bare = _QUOTED.sub("", line)
        bare = bare.split(" #", 1)[0] if not bare.lstrip().startswith("#") else ""
        if _TEMPLATE.search(bare):
            return True
    return False


def _hint(data: bytes, kind: str | None, column: int | None, line: int | None) -> str | None:
    """What a newcomer should do about a payload that does not parse, when it is recognisable."""
    try:
        text = data.decode(encoding_of(data))
    except UnicodeDecodeError:
        return None
    if kind != "json" and looks_like_template(text):
        return "this looks like an unrendered template: render it first, or leave it out with --exclude"
    if kind == "json" and line is not None and column is not None:
        lines = text.splitlines()
        at = lines[line - 1][column - 1:] if 0 < line <= len(lines) else ""
        if at.startswith(("//", "/*")) or (at.startswith("/") and "//" in lines[line - 1]):
            return "JSON has no comments: remove them, or exclude the file"
    return None


def compile_preprocessors(expressions: Sequence[str]):
    """Compile ``--pre-process`` expressions up front, so a typo fails before any payload is read."""
    from assertree import jp
    from assertree.jp.errors import quoted

    compiled = []
    for text in expressions:
        try:
            expression = jp.compile(text)
        except jp.ParseError as error:
            raise UsageError(f"invalid --pre-process expression {quoted(text, error)}: {error.located()}") from None
        if expression.problems:
            raise UsageError(f"invalid --pre-process expression {quoted(text)}: {'; '.join(expression.problems)}")
        compiled.append(expression)
    return compiled


def resources_from(payload: Payload, preprocessors=()) -> list[Resource]:
    """The resources a payload holds: each item of a list (after pre-processing), or the value."""
    from assertree import jp

    value = payload.value
    if payload.empty:
        return []
    if value is None:
        raise PayloadError("payload is null", source=payload.source)
    for expression in preprocessors:
        try:
            value = expression.search(value)
        except jp.JMESPathError as error:
            raise PayloadError(f"--pre-process {expression.text!r} failed: {error}", source=payload.source) from None
        if value is None:
            raise PayloadError(
                f"--pre-process {expression.text!r} returned null: nothing to check", source=payload.source
            )
    root = payload.value
    if not isinstance(root, (dict, list)):
        raise PayloadError(
            f"payload must be an object or a list of objects, not a {type_name(root)}", source=payload.source
        )
    if isinstance(value, list):
        source = payload.source  # positional arguments: 10,000 calls on a large plan
        resources = [Resource(item, source, index, root, None, None, payload) for index, item in enumerate(value)]
        if value is root:
            for resource in resources:
                resource.origin = (resource.document,)
        return resources
    return [Resource(value, payload.source, None, root=root, origin=() if value is root else None, file=payload)]
