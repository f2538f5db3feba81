"""The one reader of JSON and YAML files: policies, payloads and report locations.

Every input goes through here, so suffixes, file-read errors, the translation
of parse errors into ``file:line:column`` and the repeated-key rule are
decided once:

* ``.json`` is JSON, ``.yaml``/``.yml`` a YAML stream, anything else (and
  standard input) JSON when it parses as JSON, else YAML;
* YAML mappings must not repeat a key (as Go's yaml.v3, which kyverno-json
  reads payloads with); in JSON the last value of a repeated key wins (as
  orjson and Go's encoding/json);
* YAML builds JSON values only (`assertree.documents.loaders`).

Two ways to read, one result. `parse_values` is the fast path for payloads:
orjson, and libyaml's C loader, with the garbage collector paused (parsed JSON
cannot form cycles), no positions kept. `load_documents` keeps positions:
each `Document` can say where any field path inside it starts, for policy
errors and, lazily, for reports that point at a failing field of a payload.
JSON positions are found on demand by walking the text with the standard
library's C scanner (`raw_decode` skips whole values at C speed).
"""

from __future__ import annotations

import bisect
import gc
import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from assertree.documents.loaders import JSONSafeLoader, check_nesting
from assertree.errors import DocumentError

JSON_SUFFIXES = (".json",)
YAML_SUFFIXES = (".yaml", ".yml")
SUFFIXES = JSON_SUFFIXES + YAML_SUFFIXES
"""The files a directory of policies or payloads is searched for."""


def format_of(name: str) -> str | None:
    """``"json"``, ``"yaml"``, or None when the name does not say (then JSON is tried first)."""
    suffix = Path(name).suffix.lower()
    return "json" if suffix in JSON_SUFFIXES else "yaml" if suffix in YAML_SUFFIXES else None


@dataclass
class Document:
    """One document of a file, with positions."""

    value: Any
    path: str
    index: int
    line: int
    _locator: Any = field(default=None, repr=False)

    def locate(self, field_path: Sequence[str | int]) -> tuple[int, int]:
        """(line, column), 1-based, of the node at `field_path` (a map entry: its key), or of the
        deepest existing ancestor when the path does not exist."""
        if self._locator is None:
            return self.line, 1
        return self._locator(tuple(field_path))


def read_bytes(path: str | Path) -> bytes:
    """The bytes of a file; a DocumentError naming it when it cannot be read."""
    try:
        return Path(path).read_bytes()
    except FileNotFoundError:
        raise DocumentError("file not found", source=str(path)) from None
    except IsADirectoryError:
        raise DocumentError("is a directory, not a file", source=str(path)) from None
    except OSError as error:
        raise DocumentError(f"cannot read: {error.strerror or error}", source=str(path)) from None


def decode_text(data: bytes, name: str) -> str:
    """`data` as text (UTF-8, with or without a byte-order mark); a located error otherwise."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        column = error.start - (data.rfind(b"\n", 0, error.start) + 1) + 1
        raise DocumentError(f"not UTF-8 text (byte {error.start})", source=name, line=line, column=column) from None


def load_documents(path: str | Path, text: str | None = None, *, keep_empty: bool = False) -> list[Document]:
    """Every document of a file, with positions: one JSON document, or a YAML stream (as
    `format_of` decides; a name that does not say is JSON when it parses as JSON). Comment-only
    YAML documents are skipped unless `keep_empty`. With `text`, that text is parsed and `path`
    only names it in messages."""
    name = str(path)
    if text is None:
        text = decode_text(read_bytes(path), name)
    kind = format_of(name)
    if kind == "json":
        return [_json_document(text, name)]
    if kind is None:
        try:
            return [_json_document(text, name)]
        except DocumentError:
            pass
    return _yaml_documents(text, name, keep_empty)


# -- the fast path -------------------------------------------------------------------------------


@contextmanager
def collector_paused():
    """Pause the cyclic garbage collector (restored afterwards, even on error)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def parse_values(data: bytes, name: str, kind: str | None) -> list[Any]:
    """The values of a file's bytes, without positions: one for JSON, one per non-empty YAML
    document. `kind` is "json", "yaml", or None to try JSON first."""
    if kind in ("json", None):
        try:
            return [_fast_json(data)]
        except DocumentError as error:
            if kind == "json":
                raise error.located(source=name) from None
    return _fast_yaml(data, name)


def _fast_json(data: bytes) -> Any:
    import orjson

    with collector_paused():
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError as error:
            line, column = _byte_position(data, error.pos)
            reason = str(error).split(":", 1)[0]
            if reason == "depth limit exceeded":
                reason = "nested more than 1024 levels deep"
            raise DocumentError(f"invalid JSON: {reason}", line=line, column=column) from None
        except RecursionError:
            raise DocumentError("invalid JSON: nested too deeply") from None


def _byte_position(data: bytes, offset: int) -> tuple[int, int]:
    head = data[:offset]
    line = head.count(b"\n") + 1
    return line, offset - (head.rfind(b"\n") + 1) + 1


def _fast_yaml(data: bytes, name: str) -> list[Any]:
    text = decode_text(data, name)
    with _yaml_errors(name):
        check_nesting(text)
        with collector_paused():
            return [document for document in yaml.load_all(text, Loader=JSONSafeLoader) if document is not None]
    raise AssertionError("unreachable")  # pragma: no cover - _yaml_errors re-raises


@contextmanager
def _yaml_errors(name: str) -> Iterator[None]:
    """Turn PyYAML's errors into one located DocumentError."""
    try:
        yield
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        problem = error.problem or error.context or "invalid YAML"
        raise DocumentError(
            f"invalid YAML: {problem}", source=name,
            line=mark.line + 1 if mark else None, column=mark.column + 1 if mark else None,
        ) from None
    except yaml.YAMLError as error:
        raise DocumentError(f"invalid YAML: {str(error).splitlines()[0]}", source=name) from None
    except RecursionError:
        raise DocumentError("invalid YAML: nested too deeply", source=name) from None


# -- YAML ----------------------------------------------------------------------------------------


class _Constructor(yaml.constructor.SafeConstructor):
    """Builds JSON values from composed nodes, with JSONSafeLoader's rules."""

    yaml_constructors = JSONSafeLoader.yaml_constructors
    construct_mapping = JSONSafeLoader.construct_mapping


def _yaml_documents(text: str, name: str, keep_empty: bool) -> list[Document]:
    loader = JSONSafeLoader(text)
    documents = []
    try:
        with _yaml_errors(name):
            check_nesting(text)
            index = 0
            while loader.check_node():
                node = loader.get_node()
                if node is None:  # pragma: no cover - check_node guarantees a node
                    break
                value = _Constructor().construct_document(node)
                if value is None and _is_empty(node) and not keep_empty:
                    continue
                documents.append(Document(value, name, index, node.start_mark.line + 1, _yaml_locator(node)))
                index += 1
            if keep_empty and not documents:
                documents.append(Document(None, name, 0, 1))
    finally:
        loader.dispose()
    return documents


def _is_empty(node: yaml.Node) -> bool:
    return isinstance(node, yaml.ScalarNode) and node.tag == "tag:yaml.org,2002:null" and node.value in ("", "~")


def _yaml_locator(root: yaml.Node):
    def locate(path: tuple) -> tuple[int, int]:
        node, mark = root, root.start_mark
        for step in path:
            if isinstance(node, yaml.MappingNode):
                for key_node, value_node in node.value:
                    if isinstance(key_node, yaml.ScalarNode) and key_node.value == str(step):
                        node, mark = value_node, key_node.start_mark
                        break
                else:
                    break
            elif isinstance(node, yaml.SequenceNode) and isinstance(step, int) and 0 <= step < len(node.value):
                node = node.value[step]
                mark = node.start_mark
            else:
                break
        return mark.line + 1, mark.column + 1

    return locate


# -- JSON ----------------------------------------------------------------------------------------


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _json_document(text: str, name: str) -> Document:
    lines = _LineIndex(text)
    try:
        value = json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as error:
        raise DocumentError(f"invalid JSON: {error.msg}", source=name, line=error.lineno,
                            column=error.colno) from None
    except ValueError as error:
        raise DocumentError(f"invalid JSON: {error}", source=name) from None
    except RecursionError:
        raise DocumentError("invalid JSON: nested too deeply", source=name) from None
    start = len(text) - len(text.lstrip())
    first_line, _ = lines.position(start)
    return Document(value, name, 0, first_line, _JSONLocator(text, lines).locate)


class _LineIndex:
    def __init__(self, text: str) -> None:
        self.starts = [0]
        position = text.find("\n")
        while position >= 0:
            self.starts.append(position + 1)
            position = text.find("\n", position + 1)

    def position(self, offset: int) -> tuple[int, int]:
        line = bisect.bisect_right(self.starts, offset) - 1
        return line + 1, offset - self.starts[line] + 1


_WHITESPACE = " \t\n\r"


class _JSONLocator:
    """Offsets of JSON values by path, found by walking the text and skipping values in C."""

    def __init__(self, text: str, lines: _LineIndex) -> None:
        self.text = text
        self.lines = lines
        self.decoder = json.JSONDecoder()
        self.members: dict[int, dict] = {}  # container offset -> {key or index: (key offset, value offset)}

    def locate(self, path: tuple) -> tuple[int, int]:
        offset = self._skip_space(0)
        mark = offset
        for step in path:
            children = self._children(offset)
            entry = children.get(step) if children is not None else None
            if entry is None:
                break
            mark, offset = entry
        return self.lines.position(mark)

    def _skip_space(self, offset: int) -> int:
        text = self.text
        while offset < len(text) and text[offset] in _WHITESPACE:
            offset += 1
        return offset

    def _children(self, offset: int) -> dict | None:
        if offset in self.members:
            return self.members[offset]
        text = self.text
        opener = text[offset : offset + 1]
        if opener not in ("{", "["):
            return None
        children: dict = {}
        position = self._skip_space(offset + 1)
        index = 0
        closer = "}" if opener == "{" else "]"
        while position < len(text) and text[position] != closer:
            if opener == "{":
                key_offset = position
                key, position = json.decoder.scanstring(text, position + 1)
                position = self._skip_space(position) + 1  # the ':'
                value_offset = self._skip_space(position)
                children[key] = (key_offset, value_offset)
            else:
                value_offset = position
                children[index] = (value_offset, value_offset)
                index += 1
            _, position = self.decoder.raw_decode(text, value_offset)
            position = self._skip_space(position)
            if text[position : position + 1] == ",":
                position = self._skip_space(position + 1)
        self.members[offset] = children
        return children
