"""Payloads read one resource at a time: JSON Lines files, YAML streams, and the streamed scan's inputs.

A JSON Lines (NDJSON) file (``.ndjson``, ``.jsonl``, or any payload with
``--payload-format ndjson``) holds one resource per line: each non-blank line
is one JSON object. It is read a line at a time and never whole, so a file of
millions of resources needs the memory of one line. Each resource names its
file and its position among the non-blank lines (``document``, counted from 0,
bad lines included, so a line's index never depends on the lines before it
parsing); reports point into it by line (`LinePayload.locate`). A line that is
not a JSON object is a located problem of that file (``file:line:column``) and
the other lines are still read: the scan exits 2 at the end, as for a file that
cannot be read.

Bad lines are listed one by one up to `MAX_LINE_PROBLEMS` per file, then
counted (one more problem says how many, from which line to which): a file of
millions of bad lines must not fill memory, or a report, with its problems.

Limits: ``ASSERTREE_MAX_INPUT_BYTES`` caps one line (or one YAML document), not
the whole file, which is never held in memory; a longer line is a problem of
its own and is skipped without being kept. In a YAML stream the nesting and
alias limits apply to each document, as when the file is read whole.

`ResourceStream` is the streamed scan's input (``assertree scan`` of payloads
without ``--terraform`` or ``--pre-process``): every payload, one resource at a
time, in the order a whole scan lists them. A file is read whole with the fast
reader the whole scan uses (`read_payload`, in worker processes with ``--jobs``,
`assertree.inputs.parallel`), its resources are checked, then let go; only a
YAML file larger than `STREAM_YAML_BYTES` is read document by document
(`yaml_stream_resources`), which is slower per document but holds one document.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator, Sequence
from typing import Any, BinaryIO

from assertree.documents.limits import MAX_INPUT_BYTES_VARIABLE, max_input_bytes
from assertree.documents.reader import Document, JSONError, parse_json, stdin_bytes, unreadable
from assertree.errors import AssertreeError, DocumentError, Location, Problem
from assertree.inputs.formats import NDJSON_SUFFIXES, is_ndjson
from assertree.inputs.payload import STDIN, STDIN_SOURCE, Payload, payload_error, resources_from
from assertree.results import Resource

_BOM = b"\xef\xbb\xbf"
_CHUNK = 1 << 20

MAX_LINE_PROBLEMS = 100
"""Bad lines of one JSON Lines file reported one by one; the rest are counted in one more problem."""

STREAM_YAML_BYTES = 1 << 20
"""A regular YAML file larger than this is read document by document. Measured on 3,306 manifests in one
5.3 MB file: read whole (libyaml's events, then the one-walk constructor) 1.6-2.1 s and 53 MB held at once
(its value and bytes, about ten times its size); document by document, with the same constructor, 1.8-1.9 s
and 2 MB. So a file read whole holds about ten times its size until its resources are checked: at 1 MiB
that is about 10 MB, under what the rest of a scan holds (policies, modules: about 30 MB); above it,
memory wins."""

__all__ = ["NDJSON_SUFFIXES", "LinePayload", "ResourceStream", "is_ndjson", "ndjson_resources",
           "yaml_stream_resources"]


class LinePayload:
    """One line of a JSON Lines file, as the input a resource came from: it says where a field of the
    resource is (`locate`, as `assertree.inputs.payload.Payload.locate`), reading only its own line."""

    __slots__ = ("_positioned", "data", "document", "line", "source", "value")

    def __init__(self, source: str, line: int, data: bytes, value: Any, document: int) -> None:
        self.source, self.line, self.data, self.value, self.document = source, line, data, value, document
        self._positioned: Document | None = None  # the line with positions, prepared on the first question

    @property
    def text(self) -> str:
        """The line's text (decoded only when a report asks where a field is: most lines are never asked)."""
        return self.data.decode("utf-8").rstrip("\r\n")

    def locate(self, steps: Sequence[Any]) -> tuple[int, int] | None:
        """(line, column) in the file of the field at `steps`: the line's index among the file's resources
        (the resource's `origin`), then the path inside it."""
        from assertree.documents.reader import load_documents

        if steps and steps[0] == self.document:
            steps = steps[1:]
        try:
            if self._positioned is None:
                self._positioned = load_documents(self.source, self.text, positions_only=True, value=self.value)[0]
            line, column = self._positioned.locate(tuple(steps))
        except (ValueError, IndexError, RecursionError, AssertreeError):
            return self.line, 1
        return self.line + line - 1, column


def ndjson_resources(path: str, problems: list[Problem], stdin: BinaryIO | None = None) -> Iterator[Resource]:
    """The resources of a JSON Lines file (``-``: standard input), one line at a time; each bad line is
    appended to `problems`, located, and reading goes on. A file that cannot be opened is a PayloadError."""
    if path == STDIN:
        try:
            stream = stdin if stdin is not None else stdin_bytes(STDIN_SOURCE)
        except DocumentError as error:
            raise payload_error(error) from None
        yield from _lines(stream, STDIN_SOURCE, problems)
        return
    try:
        stream = open(path, "rb")  # noqa: SIM115  (only the opening's errors are the file's; `with` below)
    except OSError as error:
        raise payload_error(unreadable(error, path), "payload ") from None
    with stream:
        yield from _lines(stream, path, problems)


class _BadLines:
    """A file's bad lines: the first `MAX_LINE_PROBLEMS` go to `problems`, the others are counted and
    summed up in one problem when the file ends (`close`)."""

    __slots__ = ("count", "first_hidden", "last_hidden", "problems", "source")

    def __init__(self, problems: list[Problem], source: str) -> None:
        self.problems, self.source = problems, source
        self.count = self.first_hidden = self.last_hidden = 0

    def add(self, message: str, line: int, column: int | None = None) -> None:
        self.count += 1
        if self.count <= MAX_LINE_PROBLEMS:
            self.problems.append(Problem(message, Location(self.source, line, column)))
            return
        self.first_hidden = self.first_hidden or line
        self.last_hidden = line

    def close(self) -> None:
        hidden = self.count - MAX_LINE_PROBLEMS
        if hidden > 0:
            lines = "line" if hidden == 1 else f"lines, through line {self.last_hidden:,}"
            self.problems.append(Problem(f"{hidden:,} more bad {lines}, not listed (the first "
                                         f"{MAX_LINE_PROBLEMS} of this file are)", Location(self.source,
                                                                                            self.first_hidden)))


def _lines(stream: BinaryIO, source: str, problems: list[Problem]) -> Iterator[Resource]:
    bad = _BadLines(problems, source)
    try:
        yield from _good_lines(stream, source, bad)
    finally:
        bad.close()


def _good_lines(stream: BinaryIO, source: str, bad: _BadLines) -> Iterator[Resource]:
    limit = max_input_bytes()
    number = 0  # line number, from 1
    index = -1  # position among the non-blank lines
    while True:
        try:
            data = stream.readline(limit + 1)
        except OSError as error:
            bad.add(f"cannot read payload: {error.strerror or error}", number + 1)
            return
        if not data:
            return
        number += 1
        if number == 1 and data.startswith(_BOM):
            data = data[len(_BOM):]
        if len(data) > limit and not data.endswith(b"\n"):
            index += 1
            while data and not data.endswith(b"\n"):  # the rest of the line, never kept
                data = stream.readline(_CHUNK)
            bad.add(f"line longer than {limit:,} bytes, the input limit (set {MAX_INPUT_BYTES_VARIABLE} to raise it)",
                    number)
            continue
        if data.isspace():
            continue
        index += 1
        try:
            value = parse_json(data)
        except JSONError as error:
            try:
                data.decode("utf-8")
            except UnicodeDecodeError as bad_byte:  # that is the error, where it is (not the parser's words)
                bad.add(f"not UTF-8 text (byte {bad_byte.start} of the line): save the file as UTF-8", number,
                        _column(data, bad_byte.start))
                continue
            bad.add(error.message, number, _column(data, error.offset))
            continue
        if not isinstance(value, dict):
            from assertree.jp.values import type_name

            column = 1 + len(data) - len(data.lstrip())
            bad.add(f"a JSON Lines payload holds one JSON object (a resource) per line, found {type_name(value)}",
                    number, column)
            continue
        yield Resource(value, source, index, origin=(index,), file=LinePayload(source, number, data, value, index))


def _column(data: bytes, offset: int) -> int:
    """The 1-based column (in characters) of byte `offset` of a line."""
    return len(data[:offset].decode("utf-8", errors="replace")) + 1


class ResourceStream:
    """Every resource of some payload files, one at a time, for a streamed scan.

    Iterate it once; `problems` collects the files (and lines) that could not be used as they are met, as
    `assertree.inputs.resources.LoadedResources.problems` does, and `plans_without_terraform` counts
    the Terraform plans read as one payload. `jobs` > 1 parses the files read whole in worker processes
    (`assertree.inputs.parallel.read_payloads`), a chunk of files ahead of the scan. With
    `per_document_limit` (``--stream``) ``ASSERTREE_MAX_INPUT_BYTES`` caps each YAML document, so a larger
    YAML file is read document by document; without it a file over the limit is refused, as a whole scan
    refuses it.
    """

    def __init__(self, files: Sequence[str], *, payload_format: str = "auto", jobs: int = 1,
                 per_document_limit: bool = True) -> None:
        self.files = list(files)
        self.payload_format = payload_format
        self.jobs = jobs
        self.per_document_limit = per_document_limit
        self.problems: list[Problem] = []
        self.plans_without_terraform = 0
        self.resources = 0  # how many were read so far

    def __iter__(self) -> Iterator[Resource]:
        from assertree.inputs.parallel import read_payloads

        limit = max_input_bytes()
        ways = [self._way(path, limit) for path in self.files]
        parsed = read_payloads([path for path, way in zip(self.files, ways, strict=True) if way is _WHOLE],
                               self.jobs)
        try:
            for path, way in zip(self.files, ways, strict=True):
                try:
                    if way is _WHOLE:
                        _, read = next(parsed)  # the files in the same order
                        resources: Iterator[Resource] | list[Resource] = self._payload_resources(read())
                    elif way is _LINES:
                        resources = ndjson_resources(path, self.problems)
                    else:
                        resources = yaml_stream_resources(path)
                    for resource in resources:
                        self.resources += 1
                        yield resource
                    del resources
                except AssertreeError as error:
                    self.problems.append(error.problem.located(Location(STDIN_SOURCE if path == STDIN else path)))
        finally:
            getattr(parsed, "close", lambda: None)()  # a generator: stops the workers when the scan stops early

    def _way(self, path: str, limit: int) -> str:
        """How a file is read: a line at a time, a YAML document at a time (a large regular file), or whole
        (everything else; a FIFO is read whole, as always)."""
        if is_ndjson(path, self.payload_format):
            return _LINES
        if path == STDIN:
            return _WHOLE
        from assertree.documents.reader import format_of

        if format_of(path) != "yaml":
            return _WHOLE
        try:
            status = os.stat(path)
        except OSError:
            return _WHOLE  # read_payload says why it cannot be read
        if not stat.S_ISREG(status.st_mode):
            return _WHOLE
        if status.st_size > limit:
            return _DOCUMENTS if self.per_document_limit else _WHOLE  # refused whole, as a whole scan does
        return _DOCUMENTS if status.st_size > STREAM_YAML_BYTES else _WHOLE

    def _payload_resources(self, payload: Payload) -> list[Resource]:
        from assertree.inputs.terraform import looks_like_plan

        self.plans_without_terraform += looks_like_plan(payload.value)
        return resources_from(payload)


_WHOLE, _LINES, _DOCUMENTS = "whole", "lines", "documents"


def yaml_stream_resources(path: str) -> Iterator[Resource]:
    """The resources of a YAML file read one document at a time (PyYAML's loader over the open file, with
    `assertree.documents.loaders.PayloadLoader`'s rules), as `resources_from` gives them for the file read
    whole: a stream's non-null documents, each one resource, or a lone document's value (a list: each
    item). The file is read twice when it may nest deeper than the 1024-level limit (an event pass first,
    as `check_nesting` makes on text); aliases are held to go-yaml's budget in each document; a document
    larger than ``ASSERTREE_MAX_INPUT_BYTES`` is an error. A bad document is a DocumentError: the
    documents before it have been checked already."""
    from assertree.documents.loaders import MAX_DEPTH, PayloadLoader, check_event_depth

    # the reader's own YAML errors, positions and document building
    from assertree.documents.yaml_documents import build_document, yaml_errors, yaml_locator

    indicators, aliases = _indicators(path)
    with yaml_errors(path):
        if indicators > MAX_DEPTH:
            with open(path, "rb") as events:
                check_event_depth(events)
        with open(path, "rb") as raw:
            budget = _DocumentBudget(raw, path)
            loader = PayloadLoader(budget)
            try:
                held: Document | None = None  # the first document, until a second one says it is a stream
                index = 0
                while loader.check_node():
                    node = loader.get_node()
                    value = build_document(PayloadLoader, node, may_alias=aliases)
                    budget.next_document()
                    if value is None:
                        continue
                    document = Document(value, path, index, node.start_mark.line + 1, yaml_locator(node))
                    if index == 0:
                        held = document
                    else:
                        if held is not None:
                            yield _stream_item(held)
                            held = None
                        yield _stream_item(document)
                    index += 1
            finally:
                loader.dispose()
    if held is not None:  # a lone document: its value is the payload, as when the file is read whole
        yield from resources_from(Payload(path, held.value, _positioned=[held]))


def _stream_item(document: Document) -> Resource:
    """One document of a YAML stream as the resource `resources_from` makes of it."""
    return Resource(document.value, document.path, document.index, origin=(document.index,),
                    file=_StreamDocument(document))


class _StreamDocument:
    """One document of a YAML stream, as the input its resource came from (`Payload.locate`'s contract:
    `steps` start at the stream, with the document's index)."""

    __slots__ = ("document",)

    def __init__(self, document: Document) -> None:
        self.document = document

    def locate(self, steps: Sequence[Any]) -> tuple[int, int] | None:
        document = self.document
        if not steps or steps[0] != document.index:
            return document.line, 1
        try:
            return document.locate(tuple(steps[1:]))
        except (ValueError, IndexError, RecursionError):
            return document.line, 1


class _DocumentBudget:
    """A binary file that fails (`DocumentError`) once one document has read more than
    ``ASSERTREE_MAX_INPUT_BYTES`` (counted from the end of the previous one, so a little early)."""

    def __init__(self, raw: BinaryIO, path: str) -> None:
        self.raw, self.path = raw, path
        self.limit = max_input_bytes()
        self.since = 0

    def read(self, size: int = -1) -> bytes:
        data = self.raw.read(size)
        self.since += len(data)
        if self.since > self.limit:
            raise DocumentError(f"a YAML document larger than {self.limit:,} bytes, the input limit (set "
                                f"{MAX_INPUT_BYTES_VARIABLE} to raise it)", source=self.path)
        return data

    def next_document(self) -> None:
        self.since = 0


def _indicators(path: str) -> tuple[int, bool]:
    """How many characters of a file can open a nested collection, and whether it may hold an alias
    (`may_alias`), read in chunks."""
    from assertree.documents.loaders import NESTING_INDICATORS

    indicators = [character.encode() for character in NESTING_INDICATORS]  # as `check_nesting` counts them
    count, anchors, stars = 0, False, False
    try:
        with open(path, "rb") as stream:
            while chunk := stream.read(_CHUNK):
                count += sum(chunk.count(indicator) for indicator in indicators)
                anchors = anchors or b"&" in chunk
                stars = stars or b"*" in chunk
    except OSError as error:
        raise payload_error(unreadable(error, path), "payload ") from None
    return count, anchors and stars
