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

Limits: ``ASSERTREE_MAX_INPUT_BYTES`` caps one line (or one YAML document), not
the whole file, which is never held in memory; a longer line is a problem of
its own and is skipped without being kept. In a YAML stream the nesting and
alias limits apply to each document, as when the file is read whole.

`ResourceStream` is the streamed scan's input (``assertree scan --stream``):
every payload, one resource at a time, in the order a whole scan lists them.
A YAML file is read document by document (`yaml_stream_resources`), a JSON
file whole (it is one value), then its resources are let go.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, BinaryIO

from assertree.documents.limits import MAX_INPUT_BYTES_VARIABLE, max_input_bytes
from assertree.documents.reader import Document
from assertree.errors import AssertreeError, DocumentError, Location, PayloadError, Problem
from assertree.inputs.payload import STDIN, STDIN_SOURCE, Payload, read_payload, resources_from
from assertree.results import Resource

NDJSON_SUFFIXES = (".ndjson", ".jsonl")
_BOM = b"\xef\xbb\xbf"
_CHUNK = 1 << 20

__all__ = ["NDJSON_SUFFIXES", "LinePayload", "ResourceStream", "is_ndjson", "ndjson_resources",
           "yaml_stream_resources"]


def is_ndjson(path: str, payload_format: str = "auto") -> bool:
    """Whether a payload is read as JSON Lines: its suffix says so, or ``--payload-format ndjson``."""
    return payload_format == "ndjson" or Path(path).suffix.lower() in NDJSON_SUFFIXES


class LinePayload:
    """One line of a JSON Lines file, as the input a resource came from: it says where a field of the
    resource is (`locate`, as `assertree.inputs.payload.Payload.locate`), reading only its own line."""

    __slots__ = ("_positioned", "document", "line", "source", "text", "value")

    def __init__(self, source: str, line: int, text: str, value: Any, document: int) -> None:
        self.source, self.line, self.text, self.value, self.document = source, line, text, value, document
        self._positioned: Document | None = None  # the line with positions, prepared on the first question

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
        import sys

        yield from _lines(stdin if stdin is not None else sys.stdin.buffer, STDIN_SOURCE, problems)
        return
    try:
        stream = open(path, "rb")  # noqa: SIM115  (only the opening's errors are the file's; `with` below)
    except FileNotFoundError:
        raise PayloadError("payload file not found", source=path) from None
    except IsADirectoryError:
        raise PayloadError("payload is a directory, not a file", source=path) from None
    except OSError as error:
        raise PayloadError(f"cannot read payload: {error.strerror or error}", source=path) from None
    with stream:
        yield from _lines(stream, path, problems)


def _lines(stream: BinaryIO, source: str, problems: list[Problem]) -> Iterator[Resource]:
    import orjson

    limit = max_input_bytes()
    number = 0  # line number, from 1
    index = -1  # position among the non-blank lines
    while True:
        try:
            data = stream.readline(limit + 1)
        except OSError as error:
            problems.append(Problem(f"cannot read payload: {error.strerror or error}", Location(source, number + 1)))
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
            problems.append(Problem(f"line longer than {limit:,} bytes, the input limit (set "
                                    f"{MAX_INPUT_BYTES_VARIABLE} to raise it)", Location(source, number)))
            continue
        if data.isspace():
            continue
        index += 1
        try:
            value = orjson.loads(data)
        except orjson.JSONDecodeError as error:
            reason = str(error).split(":", 1)[0]
            if reason == "depth limit exceeded":
                reason = "nested more than 1024 levels deep"
            problems.append(Problem(f"invalid JSON: {reason}", Location(source, number, _column(data, error.pos))))
            continue
        if not isinstance(value, dict):
            from assertree.jp.values import type_name

            column = 1 + len(data) - len(data.lstrip())
            problems.append(Problem(f"a JSON Lines payload holds one JSON object (a resource) per line, found "
                                    f"{type_name(value)}", Location(source, number, column)))
            continue
        text = data.decode("utf-8").rstrip("\r\n")
        yield Resource(value, source, index, origin=(index,), file=LinePayload(source, number, text, value, index))


def _column(data: bytes, offset: int) -> int:
    """The 1-based column (in characters) of byte `offset` of a line."""
    return len(data[:offset].decode("utf-8", errors="replace")) + 1


class ResourceStream:
    """Every resource of some payload files, one at a time, for a streamed scan.

    Iterate it once; `problems` collects the files (and lines) that could not be used as they are met, as
    `assertree.inputs.resources.LoadedResources.problems` does, and `plans_without_terraform` counts
    the Terraform plans read as one payload.
    """

    def __init__(self, files: Sequence[str], *, payload_format: str = "auto") -> None:
        self.files = list(files)
        self.payload_format = payload_format
        self.problems: list[Problem] = []
        self.plans_without_terraform = 0
        self.resources = 0  # how many were read so far

    def __iter__(self) -> Iterator[Resource]:
        for path in self.files:
            try:
                for resource in self._resources(path):
                    self.resources += 1
                    yield resource
            except AssertreeError as error:
                self.problems.append(error.problem.located(Location(STDIN_SOURCE if path == STDIN else path)))

    def _resources(self, path: str) -> Iterator[Resource]:
        if is_ndjson(path, self.payload_format):
            yield from ndjson_resources(path, self.problems)
            return
        from assertree.documents.reader import format_of

        if format_of(path) == "yaml" and Path(path).is_file():  # a FIFO is read whole, as always
            yield from yaml_stream_resources(path)
            return
        from assertree.inputs.terraform import looks_like_plan

        payload = read_payload(path)
        self.plans_without_terraform += looks_like_plan(payload.value)
        yield from resources_from(payload)


def yaml_stream_resources(path: str) -> Iterator[Resource]:
    """The resources of a YAML file read one document at a time (PyYAML's loader over the open file, with
    `assertree.documents.loaders.PayloadLoader`'s rules), as `resources_from` gives them for the file read
    whole: a stream's non-null documents, each one resource, or a lone document's value (a list: each
    item). The file is read twice when it may nest deeper than the 1024-level limit (an event pass first,
    as `check_nesting` makes on text); aliases are held to go-yaml's budget in each document; a document
    larger than ``ASSERTREE_MAX_INPUT_BYTES`` is an error. A bad document is a DocumentError: the
    documents before it have been checked already."""

    from assertree.documents.limits import check_aliases
    from assertree.documents.loaders import MAX_DEPTH, PayloadLoader
    from assertree.documents.reader import _yaml_errors, _yaml_locator  # the reader's own YAML errors, positions

    indicators, aliases = _indicators(path)
    with _yaml_errors(path):
        if indicators > MAX_DEPTH:
            _check_depth(path, MAX_DEPTH)
        with open(path, "rb") as raw:
            budget = _DocumentBudget(raw, path)
            loader = PayloadLoader(budget)
            try:
                held: Document | None = None  # the first document, until a second one says it is a stream
                index = 0
                while loader.check_node():
                    node = loader.get_node()
                    if aliases:
                        check_aliases(node)
                    value = loader.construct_document(node)
                    budget.next_document()
                    if value is None:
                        continue
                    document = Document(value, path, index, node.start_mark.line + 1, _yaml_locator(node))
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
    count, anchors, stars = 0, False, False
    try:
        with open(path, "rb") as stream:
            while chunk := stream.read(_CHUNK):
                count += sum(chunk.count(indicator) for indicator in (b"[", b"{", b"-", b":", b"?"))
                anchors = anchors or b"&" in chunk
                stars = stars or b"*" in chunk
    except FileNotFoundError:
        raise PayloadError("payload file not found", source=path) from None
    except OSError as error:
        raise PayloadError(f"cannot read payload: {error.strerror or error}", source=path) from None
    return count, anchors and stars


def _check_depth(path: str, limit: int) -> None:
    """A located YAML error when a collection in the file nests deeper than `limit` (libyaml's composer
    would recurse in C until the process crashed); its parser keeps a stack of its own."""
    import yaml

    from assertree.documents.loaders import JSONSafeLoader

    depth = 0
    with open(path, "rb") as stream:
        for event in yaml.parse(stream, Loader=JSONSafeLoader):
            if isinstance(event, yaml.CollectionStartEvent):
                depth += 1
                if depth > limit:
                    raise yaml.MarkedYAMLError(problem=f"nested more than {limit} levels deep",
                                               problem_mark=event.start_mark)  # type: ignore[arg-type]
            elif isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
