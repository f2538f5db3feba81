"""The one reader of JSON and YAML files: policies, payloads and report locations.

Every input goes through here, so suffixes, file-read errors, the translation
of parse errors into ``file:line:column`` and the repeated-key rule are
decided once:

* ``.json`` is JSON, ``.yaml``/``.yml`` a YAML stream, anything else (and
  standard input) JSON when it parses as JSON, else YAML;
* YAML mappings must not repeat a key (as Go's yaml.v3, which kyverno-json
  reads payloads with); in JSON the last value of a repeated key wins (as
  orjson and Go's encoding/json);
* YAML builds JSON values only (`assertree.documents.loaders`); payloads are read
  as kyverno-json reads them (yaml.v3: YAML 1.2 scalars, string keys, unknown
  tags as plain values: ``payload=True``), policies as its policy loader does;
* text is UTF-8, UTF-16 or UTF-32: a byte-order mark says which, and without
  one the zero bytes of the first characters do (RFC 4627, section 3; the YAML
  1.2 spec detects encodings the same way); anything else is a located error
  naming the encoding tried.

Two ways to read, one result. `parse_values` is the fast path for payloads:
orjson, and libyaml's C loader, with the garbage collector paused (parsed JSON
cannot form cycles), no positions kept; a payload YAML document that cannot
hold an alias is built in one walk (`assertree.documents.loaders.build_value`), which leaves anything unusual
to PyYAML's constructor (with it, small manifests parse in two thirds of the time). `load_documents` keeps positions
(its YAML documents are built the same way):
each `Document` can say where any field path inside it starts, for policy
errors and, lazily, for reports that point at a failing field of a payload.
JSON positions are found on demand by walking the text: keys are read with the
standard library's C string scanner, and values are skipped without being
built, by a regular expression that jumps from bracket to bracket over strings
(building them, as ``raw_decode`` did, cost three times a parse on a 35 MB plan).
`positions_only` skips parsing the value at all, for a file already parsed.

Hostile input (`assertree.documents.limits`): YAML is held to go-yaml's alias
budget and refuses an anchor that contains itself, on both paths; a file or
standard input larger than ``ASSERTREE_MAX_INPUT_BYTES`` (512 MiB) is an error
before it fills memory; a FIFO (a shell's ``<(command)``) is read, and one that
no process writes to is an error after FIFO_WRITER_TIMEOUT, never a hang.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import json
import os
import re
import stat
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

from assertree.documents.collector import collector_paused
from assertree.documents.document import Document
from assertree.documents.limits import (
    MAX_INPUT_BYTES_VARIABLE,
    MAX_NESTING,
    json_nesting_at,
    json_too_deep_at,
    max_input_bytes,
    orjson_nesting,
)
from assertree.errors import DocumentError

__all__ = ["JSON_SUFFIXES", "SUFFIXES", "YAML_SUFFIXES", "Document", "JSONError", "collector_paused", "decode_text",
           "encoding_of", "format_of", "is_plain_utf8", "load_documents", "parse_json", "parse_values", "read_bytes",
           "read_stdin_text", "read_stream", "read_text", "skip_json_value", "unreadable"]

JSON_SUFFIXES = (".json",)
YAML_SUFFIXES = (".yaml", ".yml")
SUFFIXES = JSON_SUFFIXES + YAML_SUFFIXES
"""The files a directory of policies or payloads is searched for."""


def format_of(name: str) -> str | None:
    """``"json"``, ``"yaml"``, or None when the name does not say (then JSON is tried first)."""
    suffix = os.path.splitext(name)[1].lower()  # a str operation: called once per payload file
    return "json" if suffix in JSON_SUFFIXES else "yaml" if suffix in YAML_SUFFIXES else None


FIFO_WRITER_TIMEOUT = 10.0
"""Seconds a FIFO with no process writing to it is waited for (``mkfifo f; writer > f & assertree ... f``
may start the reader first); then it is an error, never a hang."""
_CHUNK = 1 << 20


def _too_large(limit: int, name: str) -> DocumentError:
    return DocumentError(f"larger than {limit:,} bytes, the input limit (set {MAX_INPUT_BYTES_VARIABLE} "
                         "to raise it)", source=name)


def read_stream(stream: Any, name: str, limit: int | None = None) -> bytes:
    """Everything a binary stream (standard input) holds, read in chunks: a DocumentError naming `name`
    as soon as it passes `limit` bytes (`max_input_bytes` when None), so ``head -c 3G /dev/zero |
    assertree scan -`` stops early rather than filling memory."""
    limit = max_input_bytes() if limit is None else limit
    chunks: list[bytes] = []
    total = 0
    while True:
        chunk = stream.read(min(_CHUNK, limit + 1 - total))
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        total += len(chunk)
        if total > limit:
            raise _too_large(limit, name)


def stdin_bytes(name: str = "<stdin>") -> Any:
    """Standard input's binary stream; a DocumentError naming `name` when the process has none
    (``assertree scan -p - <&-``: Python sets a closed descriptor's stream to None)."""
    import sys

    stream = sys.stdin
    if stream is None or getattr(stream, "closed", False):
        raise DocumentError("standard input is closed: nothing to read", source=name)
    return getattr(stream, "buffer", stream)


def read_stdin_text(name: str = "<stdin>") -> str:
    """Standard input as text, capped as `read_stream` caps it (UTF-8/16/32 as `decode_text` reads files);
    a stream without bytes underneath (a test's StringIO) is read as the text it is."""
    import sys

    binary = stdin_bytes(name)
    if binary is not sys.stdin:
        return decode_text(read_stream(binary, name), name)
    limit = max_input_bytes()
    text = sys.stdin.read(limit + 1)
    if len(text) > limit:
        raise _too_large(limit, name)
    return text


def _read_fifo(path: str, limit: int) -> bytes:
    """A FIFO's bytes (``<(terraform show -json plan)`` is one). Opened without blocking: a read then
    says whether a writer is there (EAGAIN: wait for its data as for standard input) or not (end of
    file: wait up to FIFO_WRITER_TIMEOUT for one, as `select` reports none until a writer comes)."""
    import select

    descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    with os.fdopen(descriptor, "rb", buffering=0) as stream:
        first = b""
        try:
            first = os.read(descriptor, _CHUNK)
        except BlockingIOError:  # a writer, no data yet
            pass
        else:
            if not first:
                ready, _, _ = select.select([descriptor], [], [], FIFO_WRITER_TIMEOUT)
                if not ready:
                    raise DocumentError(f"no process wrote to this FIFO within {FIFO_WRITER_TIMEOUT:g} seconds",
                                        source=path)
        os.set_blocking(descriptor, True)
        if len(first) > limit:
            raise _too_large(limit, path)
        return first + read_stream(stream, path, limit - len(first))


def read_bytes(path: str | Path) -> bytes:
    """The bytes of a file (a regular file, or a FIFO such as a shell's ``<(command)``); a DocumentError
    naming it when it cannot be read or holds more than `max_input_bytes`."""
    name = str(path)
    limit = max_input_bytes()
    try:
        status = os.stat(path)
        if stat.S_ISFIFO(status.st_mode) or stat.S_ISCHR(status.st_mode):
            return _read_fifo(name, limit)
        if status.st_size > limit:
            raise _too_large(limit, name)
        with open(path, "rb") as stream:
            return stream.read()
    except OSError as error:
        raise unreadable(error, name) from None


def unreadable(error: OSError, name: str) -> DocumentError:
    """Why the file `name` could not be opened or read, as a DocumentError naming it."""
    if isinstance(error, FileNotFoundError):
        return DocumentError("file not found", source=name)
    if isinstance(error, IsADirectoryError):
        return DocumentError("is a directory, not a file", source=name)
    return DocumentError(f"cannot read: {error.strerror or error}", source=name)


def encoding_of(data: bytes) -> str:
    """The encoding of JSON or YAML bytes: a byte-order mark's, else the one the zero bytes among the
    first four give (``json.detect_encoding``: RFC 4627's table), else UTF-8."""
    return json.detect_encoding(data[:4]) if data[:4] else "utf-8"


def is_plain_utf8(data: bytes) -> bool:
    """Whether `data` can go to a UTF-8-only parser as it is (no byte-order mark, no UTF-16/32)."""
    return encoding_of(data) == "utf-8"


_ENCODING_NAMES = {"utf-8": "UTF-8", "utf-8-sig": "UTF-8", "utf-16": "UTF-16", "utf-16-le": "UTF-16LE",
                   "utf-16-be": "UTF-16BE", "utf-32": "UTF-32", "utf-32-le": "UTF-32LE", "utf-32-be": "UTF-32BE"}


def read_text(path: str | Path) -> str:
    """The text of a file as every input is read: `read_bytes` (a FIFO, the size limit), then `decode_text`
    (UTF-8, UTF-16 or UTF-32); a located DocumentError naming the file otherwise."""
    return decode_text(read_bytes(path), str(path))


def decode_text(data: bytes, name: str) -> str:
    """`data` as text (UTF-8, UTF-16 or UTF-32, with or without a byte-order mark, see the module
    docstring); a located error naming the encoding otherwise."""
    encoding = encoding_of(data)
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as error:
        label = _ENCODING_NAMES.get(encoding, encoding)
        if encoding.startswith("utf-8"):
            line = data[: error.start].count(b"\n") + 1
            column = error.start - (data.rfind(b"\n", 0, error.start) + 1) + 1
            raise DocumentError(f"not {label} text (byte {error.start}): save the file as UTF-8",
                                source=name, line=line, column=column) from None
        text = data[: error.start].decode(encoding, errors="replace")
        line = text.count("\n") + 1
        column = len(text) - (text.rfind("\n") + 1) + 1
        raise DocumentError(f"not valid {label} text (byte {error.start}): save the file as UTF-8",
                            source=name, line=line, column=column) from None


def load_documents(path: str | Path, text: str | None = None, *, keep_empty: bool = False,
                   payload: bool = False, positions_only: bool = False, value: Any = None,
                   data: bytes | None = None) -> list[Document]:
    """Every document of a file, with positions: one JSON document, or a YAML stream (as
    `format_of` decides; a name that does not say is JSON when it parses as JSON). Comment-only
    YAML documents are skipped unless `keep_empty`. With `text` (or the file's bytes, `data`), that
    text is parsed and `path` only names it in messages. `payload` reads YAML as kyverno-json reads payloads.
    `positions_only` (for text already parsed and known to be valid) does not parse a JSON document
    again: its value is the `value` given (the parsed one, which also speeds positions up), and only
    its positions are prepared (from ASCII `data` without decoding it: a plan's 35 MB cost 40 ms to
    decode and encode again)."""
    name = str(path)
    kind = format_of(name)
    if positions_only and data is not None and text is None and is_plain_utf8(data) and data.isascii():
        start = _start_of(data)
        if kind == "json" or (kind is None and data[start : start + 1] in (b"{", b"[")):
            return [_json_document(None, name, positions_only=True, value=value, data=data)]
    if text is None:
        text = read_text(path) if data is None else decode_text(data, name)
    start = _start_of(text)
    if positions_only and (kind == "json" or (kind is None and text[start : start + 1] in ("{", "["))):
        return [_json_document(text, name, positions_only=True, value=value)]
    if kind == "json":
        return [_json_document(text, name)]
    if kind is None:
        try:
            return [_json_document(text, name)]
        except DocumentError:
            pass
    from assertree.documents.yaml_documents import yaml_documents  # PyYAML only when YAML is read

    return yaml_documents(text, name, keep_empty, payload=payload)


# -- the fast path -------------------------------------------------------------------------------


def parse_values(data: bytes, name: str, kind: str | None, *, payload: bool = False) -> list[Any]:
    """The values of a file's bytes, without positions: one for JSON, one per non-empty YAML
    document. `kind` is "json", "yaml", or None to try JSON first. `payload` reads YAML as
    kyverno-json reads payloads (`assertree.documents.loaders.PayloadLoader`)."""
    if not is_plain_utf8(data):
        data = decode_text(data, name).encode()  # orjson and the fast path read UTF-8 only
    if kind in ("json", None):
        try:
            return [parse_json(data)]
        except DocumentError as error:
            if kind == "json":
                decode_text(data, name)  # bytes that are not UTF-8 are that error, where it is (not the parser's)
                raise error.located(source=name) from None
    from assertree.documents.yaml_documents import yaml_values  # PyYAML only when YAML is read

    return yaml_values(decode_text(data, name), name, payload=payload)


def parse_json(data: bytes) -> Any:
    """The value of JSON text (UTF-8 bytes); raises DocumentError with the line and column.

    orjson parses; assertree's nesting limit (`limits.MAX_NESTING`) holds whichever orjson is installed
    (`limits.orjson_nesting`): the usual orjson refuses exactly what assertree refuses, and a parse error is
    told apart as that limit by counting, not by orjson's wording; an orjson without the limit is followed
    by assertree's own check, one with a lower limit by the standard library's parser.
    """
    import orjson

    with collector_paused():
        try:
            value = orjson.loads(data)
        except orjson.JSONDecodeError as error:
            if json_nesting_at(data, error.pos) > MAX_NESTING:
                _fail_json(data, error.pos, f"nested more than {MAX_NESTING} levels deep")
            if orjson_nesting() != "lower":
                _fail_json(data, error.pos, str(error).split(":", 1)[0])
            value = _standard_json(data)
        except RecursionError:
            _fail_json(data, 0, "nested too deeply")
    if orjson_nesting() != "same":
        offset = json_too_deep_at(data)
        if offset is not None:
            _fail_json(data, offset, f"nested more than {MAX_NESTING} levels deep")
    return value


class JSONError(DocumentError):
    """JSON that `parse_json` refuses; `offset` is the byte of `data` the problem was found at."""

    def __init__(self, message: str, *, offset: int, line: int, column: int) -> None:
        super().__init__(message, line=line, column=column)
        self.offset = offset


def _fail_json(data: bytes, offset: int, reason: str) -> NoReturn:
    line, column = _byte_position(data, offset)
    raise JSONError(f"invalid JSON: {reason}", offset=offset, line=line, column=column) from None


def _standard_json(data: bytes) -> Any:
    """`parse_json`'s fallback where orjson refuses what assertree reads (an orjson with a lower nesting limit)."""
    import json
    import sys

    room = max(sys.getrecursionlimit(), 4 * MAX_NESTING + 200)  # its C parser counts a level as a recursion
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(room)
    try:
        return json.loads(data, parse_constant=_reject_constant)
    except json.JSONDecodeError as error:
        _fail_json(data, len(error.doc[:error.pos].encode()), error.msg)  # a character offset in the text
    except (RecursionError, ValueError) as error:
        _fail_json(data, 0, str(error) or "nested too deeply")
    finally:
        sys.setrecursionlimit(limit)


def _byte_position(data: bytes, offset: int) -> tuple[int, int]:
    head = data[:offset]
    line = head.count(b"\n") + 1
    return line, offset - (head.rfind(b"\n") + 1) + 1


# -- JSON ----------------------------------------------------------------------------------------


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _json_document(text: str | None, name: str, *, positions_only: bool = False, value: Any = None,
                   data: bytes | None = None) -> Document:
    """The one document of a JSON text; with `positions_only`, of a text already parsed (its `value` given),
    which may be given as its ASCII bytes, `data`, instead."""
    if not positions_only:
        assert text is not None
        try:
            value = json.loads(text, parse_constant=_reject_constant)
        except json.JSONDecodeError as error:
            raise DocumentError(f"invalid JSON: {error.msg}", source=name, line=error.lineno,
                                column=error.colno) from None
        except ValueError as error:
            raise DocumentError(f"invalid JSON: {error}", source=name) from None
        except RecursionError:
            raise DocumentError("invalid JSON: nested too deeply", source=name) from None
    locator = _JSONLocator(text, value, data)
    first_line = locator.lines.positions([locator.start])[0][0]  # counts the leading spaces' line breaks only
    return Document(value, name, 0, first_line, locator.locate, locator.locate_all)


def _start_of(text: str | bytes) -> int:
    """The offset of the first character that is not JSON white space (not ``text.lstrip()``: a copy of a
    35 MB plan to count its first spaces)."""
    leading = (_LEADING_SPACE if isinstance(text, str) else _LEADING_SPACE_BYTES).match(text)  # type: ignore[arg-type]
    return leading.end() if leading else 0


class _LineIndex:
    """(line, column) of offsets in a text (str, or ASCII bytes). The line starts are listed on the first
    single question (a bisect each then); a batch (`positions`) counts the line breaks between its offsets
    in order instead, so that placing a report's findings in a large file reads it once, in C, and lists
    nothing."""

    def __init__(self, text: str | bytes) -> None:
        self.text = text
        self.newline: Any = "\n" if isinstance(text, str) else b"\n"
        self.starts: list[int] | None = None

    def position(self, offset: int) -> tuple[int, int]:
        if self.starts is None:
            text, newline, starts = self.text, self.newline, [0]
            position = text.find(newline)
            while position >= 0:
                starts.append(position + 1)
                position = text.find(newline, position + 1)
            self.starts = starts
        line = bisect.bisect_right(self.starts, offset) - 1
        return line + 1, offset - self.starts[line] + 1

    def positions(self, offsets: list[int]) -> list[tuple[int, int]]:
        """`position` of each offset."""
        if self.starts is not None:
            return [self.position(offset) for offset in offsets]
        text, newline, found = self.text, self.newline, {}
        line, at, last_break = 1, 0, -1
        for offset in sorted(set(offsets)):
            newest = text.rfind(newline, at, offset)
            if newest >= 0:  # (a one-line plan has none: then the count is not made)
                line += text.count(newline, at, newest + 1)
                last_break = newest
            found[offset] = (line, offset - last_break)
            at = offset
        return [found[offset] for offset in offsets]


_WHITESPACE = " \t\n\r"
_SPACE_BYTES = (b" ", b"\t", b"\n", b"\r", b"")
_LEADING_SPACE = re.compile(r"[ \t\n\r]*")
_LEADING_SPACE_BYTES = re.compile(rb"[ \t\n\r]*")
# everything up to the next bracket outside a string, and that bracket
_TO_BRACKET = re.compile(r'[^"\[\]{}]*(?:"(?:[^"\\]|\\.)*"[^"\[\]{}]*)*([\[\]{}])')
_SCALAR = re.compile(r'[^,\]}\s]+')
_SKIP_DEPTH = 32


def _container_pattern(depth: int) -> str:
    """A regular expression for a JSON object or array nested at most `depth` deep: the regex engine
    then skips a whole value in C. Possessive quantifiers: JSON never needs backtracking."""
    string = r'"[^"\\]*+(?:\\.[^"\\]*+)*+"'
    other = r'[^"\[\]{}]++'
    pattern = rf'[\[{{](?:{other}|{string})*+[\]}}]'
    for _ in range(depth - 1):
        pattern = rf'[\[{{](?:{other}|{string}|{pattern})*+[\]}}]'
    return pattern


@functools.cache
def _container() -> re.Pattern[str]:
    """The compiled `_container_pattern`: compiled on first use (3-8 ms), as most runs never skip a container."""
    return re.compile(_container_pattern(_SKIP_DEPTH))


def skip_json_value(text: str, offset: int) -> int:
    """The offset just past the JSON value starting at `offset`, found without building it."""
    first = text[offset : offset + 1]
    if first == '"':
        return json.decoder.scanstring(text, offset + 1)[1]  # type: ignore[attr-defined]
    if first not in ("{", "["):
        match = _SCALAR.match(text, offset)
        return match.end() if match else offset
    whole = _container().match(text, offset)
    if whole is not None:
        return whole.end()
    depth, position, step = 0, offset, _TO_BRACKET.match  # nested deeper than _container() reaches
    while True:
        match = step(text, position)
        if match is None:
            raise ValueError("unbalanced JSON brackets")
        depth += 1 if match.group(1) in "[{" else -1
        position = match.end()
        if depth == 0:
            return position


def _child(container: Any, step: Any) -> Any:
    """`container[step]` when there is one (lists by index, objects by key), else None."""
    if isinstance(container, dict):
        return container.get(step) if isinstance(step, str) else None
    if isinstance(container, list) and isinstance(step, int) and 0 <= step < len(container):
        return container[step]
    return None


class _Spelled:
    """What `_JSONLocator`'s fast path knows of one container that the text spells as orjson does: the
    container (and an object's keys, in order); where members start (`indexes`, sorted, and `offsets`: the
    first member's start is taken, every other one was checked); where the members found start their values
    (`values`); the members whose value was entered, a container of its own (`entered`: its offset); and
    where the container ends, once known. A member's index is looked up when asked (`at`): a container is
    entered for one step or two, so an index of all its keys cost more than it saved."""

    __slots__ = ("container", "end", "entered", "indexes", "keys", "offsets", "values")

    def __init__(self, container: dict | list, first: int) -> None:
        self.container = container
        self.keys: list | None = list(container) if type(container) is dict else None  # an object's keys
        self.indexes, self.offsets = [0], [first]
        self.values: dict[int, int] = {}
        self.entered: dict[int, int] = {}
        self.end: int | None = None

    def at(self, step: Any) -> int | None:
        """The index of member `step` (an object's key, a list's position), or None when it has none."""
        keys = self.keys
        if keys is not None:
            return keys.index(step) if isinstance(step, str) and step in self.container else None
        return int(step) if isinstance(step, int) and 0 <= step < len(self.container) else None

    def run(self, first: int, stop: int) -> dict | list:
        """Members `first` to `stop` (excluded), as a container of the same kind (to be spelled)."""
        container = self.container
        if isinstance(container, dict):
            return dict(itertools.islice(container.items(), first, stop))
        return container[first:stop]


_Steps = tuple[dict, list]  # a trie of the paths asked for: ({step: its _Steps}, the numbers of the paths ending here)


class _JSONLocator:
    """Offsets of JSON values by path, found by walking the text and skipping values in C.

    One walk for many paths (`locate_all`, what a report asks with every finding it writes): the paths
    are merged into a trie, which is walked in the text's order, each container read once for all the
    steps asked of it, whatever order the paths came in.

    Lazy: a container's members are read only as far as the step asked for (a plan's
    ``planned_values`` is found without skipping ``resource_changes``), and what was read is kept
    for the next question. With a repeated key the first occurrence is the one located.

    Fast path, given the parsed `value` and ASCII text: compact JSON (``terraform show -json``) is often
    exactly what orjson writes, so the members before a step are spelled with orjson, all in one call
    (a slice of the list, or of the object's items), compared with the file's text at that offset (a
    memory comparison in C), and jumped over: a plan's 10,000 resources, of which a report asks about
    every failing one, cost one orjson call per run of resources between two failing ones, and no Python
    step per resource. A member whose value was entered is not spelled again to get past it: its end is
    found from inside (`_value_end`), so each byte before the last position asked for is spelled once.
    Offsets found so far are kept (`_Spelled`), so the next question starts from the nearest one.

    It must never change a position: a complete run of JSON members that the text spells out exactly
    ends exactly where that spelling ends, and each member found is checked to start where the arithmetic
    says (its key's spelling and a colon, or an item that is not a space). When the spellings differ
    (indentation, ``\u003c`` escapes, ``1e5``) that container's text is walked, where a value the text
    spells as orjson does is still skipped in one comparison (`_skip`).
    """

    def __init__(self, text: str | None, value: Any = None, data: bytes | None = None) -> None:
        """`text`, or its ASCII bytes (`data`, then `text` is None and decoded only if the walk needs it)."""
        if text is not None:
            self.text = text  # the walk's text (else `text` decodes `data` when first needed)
            # with ASCII text, str offsets are byte offsets: orjson's bytes compare without decoding
            data = text.encode() if value is not None and text.isascii() else None
        self.data = data
        self.lines = _LineIndex(text if text is not None else data)  # type: ignore[arg-type]
        self.start = _start_of(self.lines.text)
        self.value = value
        # container offset -> [{key or index: (key offset, value offset)}, next position, next index, done]
        self.members: dict[int, list] = {}
        self.spelled: dict[int, _Spelled | None] = {}  # container offset -> the fast path's offsets (None: walked)

    @functools.cached_property
    def text(self) -> str:
        """The text, for the walk (decoded from `data` the first time it is needed)."""
        return (self.data or b"").decode("ascii")

    def locate(self, path: tuple) -> tuple[int, int]:
        """(line, column) of the node at `path`: a member's key, an item's value, the deepest one that the
        text has; the document's start for the empty path."""
        return self.lines.position(self._marks([path])[0])

    def locate_all(self, paths: Sequence[tuple]) -> list[tuple[int, int]]:
        """`locate` of each of `paths`, in one walk (see the class docstring)."""
        return self.lines.positions(self._marks(paths))

    def _marks(self, paths: Sequence[tuple]) -> list[int]:
        """The offset each path leads to (see `locate`)."""
        root: _Steps = ({}, [])
        for number, path in enumerate(paths):
            node = root
            for step in path:
                children = node[0]
                child = children.get(step)
                if child is None:
                    child = children[step] = ({}, [])
                node = child
            node[1].append(number)
        marks = [0] * len(paths)
        start = self.start
        for number in root[1]:
            marks[number] = start
        # an explicit stack (paths may be as deep as any document): (container offset, value, mark, steps
        # still to take in it, last first in the text's order as far as known)
        stack = [self._opened(start, self.value, start, root[0], marks)]
        while stack:
            offset, value, mark, pending = stack[-1]
            if not pending:
                stack.pop()
                continue
            at, step, (children, ends) = pending.pop()
            found = self._spelled_member(offset, at) if at is not None else None
            if found is None:
                found = self._member(offset, step, value)
            if found is None:  # the text has no such member: every path through it ends at the container
                _end_at((children, ends), mark, marks)
                continue
            key_offset, value_offset = found
            for number in ends:
                marks[number] = key_offset
            if children:
                child = _child(value, step)
                stack.append(self._opened(value_offset, child, key_offset, children, marks))
                spelled = self.spelled.get(offset)
                if at is not None and spelled is not None and self.spelled.get(value_offset) is not None:
                    spelled.entered[at] = value_offset
        return marks

    def _opened(self, offset: int, value: Any, mark: int, children: dict, marks: list[int]) -> tuple:
        """A container to take `children` steps in: with the fast path, the steps it has in the text's
        order (its members' indexes; steps it has not end their paths at `mark` at once), else as asked."""
        data = self.data
        if data is not None and data[offset : offset + 1] not in (b"{", b"["):  # a scalar: no member (no text walked)
            for node in children.values():
                _end_at(node, mark, marks)
            return offset, value, mark, []
        spelled = self._spelled(offset, value) if data is not None else None
        if spelled is None:
            return offset, value, mark, [(None, step, node) for step, node in children.items()]
        pending, absent = [], []
        for step, node in children.items():
            at = spelled.at(step)
            if at is None:
                absent.append(node)
            else:
                pending.append((at, step, node))
        # not in the parsed value, so not in the text, when the text is that value's spelling all through: the
        # value of a repeated key is its last occurrence's, and the first one is the one located
        if absent and self._value_end(offset) is None:
            self.spelled[offset] = None
            return offset, value, mark, [(None, step, node) for step, node in children.items()]
        for node in absent:
            _end_at(node, mark, marks)
        if len(pending) > 1:
            pending.sort(key=_first, reverse=True)
        return offset, value, mark, pending

    def _spelled(self, offset: int, container: Any) -> _Spelled | None:
        """The fast path's record of the container at `offset` (made on first use), or None when it is
        not one the fast path can follow (not a non-empty container spelled from its first byte on)."""
        spelled = self.spelled.get(offset, False)
        if spelled is False:
            data = self.data
            assert data is not None
            kind = type(container)
            opener = b"{" if kind is dict else b"[" if kind is list else None
            if not container or data[offset : offset + 1] != opener or data[offset + 1 : offset + 2] in _SPACE_BYTES:
                spelled = None
            else:
                spelled = _Spelled(container, offset + 1)
            self.spelled[offset] = spelled
        return spelled  # type: ignore[return-value]

    def _spelled_member(self, offset: int, at: int) -> tuple[int, int] | None:
        """(key offset, value offset) of member `at` of the container at `offset` by the fast path, or None
        when the text does not spell it as orjson does (from then on that container is walked)."""
        import orjson

        spelled = self.spelled.get(offset)
        if spelled is None:
            return None
        value_offset = spelled.values.get(at)
        if value_offset is not None:
            return spelled.offsets[bisect.bisect_left(spelled.indexes, at)], value_offset
        data = self.data
        assert data is not None
        position = self._spelled_offset(spelled, at)
        if position is not None and spelled.keys is None:
            value_offset = position if data[position : position + 1] not in _SPACE_BYTES else None
        elif position is not None:
            key = orjson.dumps(spelled.keys[at])  # type: ignore[index]
            value_offset = position + len(key) + 1
            if not (data.startswith(key, position) and data[value_offset - 1 : value_offset] == b":"
                    and data[value_offset : value_offset + 1] not in _SPACE_BYTES):
                value_offset = None
        if position is None or value_offset is None:
            self.spelled[offset] = None
            return None
        spelled.values[at] = value_offset
        return position, value_offset

    def _spelled_offset(self, spelled: _Spelled, at: int) -> int | None:
        """Where member `at` starts, from the nearest member before it whose start is known: past it (from
        inside, when its value was entered) and the members between, spelled in one orjson call, which
        must be the text's bytes there, followed by a comma."""
        indexes, offsets = spelled.indexes, spelled.offsets
        nearest = bisect.bisect_right(indexes, at) - 1
        first, position = indexes[nearest], offsets[nearest]
        if first == at:
            return position
        entered = spelled.entered.get(first)
        if entered is not None:
            end = self._value_end(entered)
            if end is None or self.data[end : end + 1] != b",":  # type: ignore[index]
                return None
            first, position = first + 1, end + 1
        if first < at:
            end = self._spelled_run(spelled, first, at, position)
            if end is None or self.data[end : end + 1] != b",":  # type: ignore[index]
                return None
            position = end + 1
        indexes.insert(nearest + 1, at)
        offsets.insert(nearest + 1, position)
        return position

    def _spelled_run(self, spelled: _Spelled, first: int, stop: int, position: int) -> int | None:
        """Where the members `first` to `stop` (excluded) end when the text at `position` spells them as
        orjson does (without the comma after them), else None."""
        import orjson

        try:
            inner = orjson.dumps(spelled.run(first, stop))[1:-1]
        except (TypeError, orjson.JSONEncodeError):
            return None
        return position + len(inner) if self.data.startswith(inner, position) else None  # type: ignore[union-attr]

    def _value_end(self, offset: int) -> int | None:
        """Where the entered container at `offset` ends (past its closer), found from inside it: its last
        member known, then the rest spelled; None when the text does not spell it as orjson does."""
        data = self.data
        assert data is not None
        chain: list[_Spelled] = []  # the container, its last member's value when that was entered, ...
        spelled = self.spelled.get(offset)
        while spelled is not None and spelled.end is None:
            chain.append(spelled)
            entered = spelled.entered.get(spelled.indexes[-1])
            if entered is None:
                break
            spelled = self.spelled.get(entered)
        if spelled is None:
            return None
        for spelled in reversed(chain):  # innermost first: each end is where its parent's last member ends
            last, position, count = spelled.indexes[-1], spelled.offsets[-1], len(spelled.container)
            entered = spelled.entered.get(last)
            if entered is not None:
                inner = self.spelled.get(entered)
                end = inner.end if inner is not None else None
                if end is not None and last + 1 < count:
                    end = self._spelled_run(spelled, last + 1, count, end + 1) if data[end : end + 1] == b"," else None
            else:
                end = self._spelled_run(spelled, last, count, position)
            closer = b"}" if spelled.keys is not None else b"]"
            if end is None or data[end : end + 1] != closer:
                return None
            spelled.end = end + 1
        return self.spelled[offset].end  # type: ignore[union-attr]

    def _skip(self, offset: int, value: Any) -> int:
        if isinstance(value, (dict, list)) and value:
            import orjson

            try:
                spelled = orjson.dumps(value)
            except (TypeError, orjson.JSONEncodeError):
                spelled = b""
            if self.data is not None:
                if spelled and self.data.startswith(spelled, offset):
                    return offset + len(spelled)
            elif spelled:
                text = spelled.decode()
                if self.text.startswith(text, offset):
                    return offset + len(text)
        return skip_json_value(self.text, offset)

    def _skip_space(self, offset: int) -> int:
        text = self.text
        while offset < len(text) and text[offset] in _WHITESPACE:
            offset += 1
        return offset

    def _member(self, offset: int, step: Any, container: Any = None) -> tuple[int, int] | None:
        """(key offset, value offset) of member `step` of the container at `offset`, or None: the walk
        over the text."""
        state = self.members.get(offset)
        text = self.text
        opener = text[offset : offset + 1]
        if state is None:
            if opener not in ("{", "["):
                return None
            state = self.members[offset] = [{}, self._skip_space(offset + 1), 0, False]
        children, position, index, done = state
        if step in children or done:
            return children.get(step)
        closer = "}" if opener == "{" else "]"
        while position < len(text) and text[position] != closer:
            if opener == "{":
                key_offset = position
                # the json module's own string reader; public in json.decoder, absent from typeshed
                key, position = json.decoder.scanstring(text, position + 1)  # type: ignore[attr-defined]
                position = self._skip_space(position) + 1  # the ':'
                value_offset = self._skip_space(position)
                children.setdefault(key, (key_offset, value_offset))
            else:
                key = index
                value_offset = position
                children[index] = (value_offset, value_offset)
                index += 1
            position = self._skip(value_offset, _child(container, key))
            position = self._skip_space(position)
            if text[position : position + 1] == ",":
                position = self._skip_space(position + 1)
            if key == step:
                state[1:] = [position, index, False]
                return children[key]
        state[1:] = [position, index, True]
        return children.get(step)


def _first(pending: tuple) -> int:
    return pending[0]


def _end_at(node: _Steps, mark: int, marks: list[int]) -> None:
    """Every path ending at `node` or below it ends at `mark`."""
    rest = [node]
    while rest:
        children, ends = rest.pop()
        for number in ends:
            marks[number] = mark
        rest.extend(children.values())
