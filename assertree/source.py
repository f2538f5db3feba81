"""Reading YAML and JSON documents together with where each value was written.

Policies are small and every error about them should name a line, so they are
read through `load_documents`: each `Document` holds the value and can say
where any field path inside it starts (`Document.locate`). Reporters use the
same call, lazily, to point at a failing field in a payload file.

YAML is composed into nodes with PyYAML (the C composer when available) and
constructed with the safe constructor restricted to JSON values (see
`assertree.yamlsafe`); node marks give the positions. Duplicate keys are an
error: a policy with a repeated key would silently lose half of itself.

JSON is read with the standard library (exact values, duplicate keys an
error, no NaN). Positions in JSON are found on demand by walking the text
with the standard library's C scanner (`raw_decode` skips whole values at C
speed), remembering each container's member offsets, so locating many fields
in a large plan costs about one extra parse.
"""

from __future__ import annotations

import bisect
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from assertree.yamlsafe import JSONSafeLoader, check_nesting


class SourceError(Exception):
    """A file that cannot be read as YAML/JSON; `str()` is ``path:line:column: message``."""

    def __init__(self, message: str, path: str | None = None, line: int | None = None,
                 column: int | None = None) -> None:
        self.message = message
        self.path = path
        self.line = line
        self.column = column
        super().__init__(message)

    def __str__(self) -> str:
        where = ":".join(str(part) for part in (self.path, self.line, self.column) if part is not None)
        return f"{where}: {self.message}" if where else self.message


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


def load_documents(path: str | Path, text: str | None = None, *, keep_empty: bool = False) -> list[Document]:
    """Every document of a YAML stream (``.yaml``/``.yml``, and anything else) or a JSON file
    (``.json``). Comment-only YAML documents are skipped unless `keep_empty`. With `text`, that
    text is parsed and `path` only names it in messages."""
    name = str(path)
    if text is None:
        text = _read_text(Path(path))
    if Path(name).suffix.lower() == ".json":
        return [_json_document(text, name)]
    return _yaml_documents(text, name, keep_empty)


def _read_text(path: Path) -> str:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise SourceError("file not found", str(path)) from None
    except IsADirectoryError:
        raise SourceError("is a directory, not a file", str(path)) from None
    except OSError as error:
        raise SourceError(f"cannot read: {error.strerror or error}", str(path)) from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        column = error.start - (data.rfind(b"\n", 0, error.start) + 1) + 1
        raise SourceError(f"not UTF-8 text (byte {error.start})", str(path), line, column) from None


# -- YAML ----------------------------------------------------------------------------------------


class _Constructor(yaml.constructor.SafeConstructor):
    """Builds JSON values from composed nodes, with JSONSafeLoader's rules."""

    yaml_constructors = JSONSafeLoader.yaml_constructors


def _yaml_documents(text: str, name: str, keep_empty: bool) -> list[Document]:
    loader = JSONSafeLoader(text)
    documents = []
    try:
        check_nesting(text)
        index = 0
        while loader.check_node():
            node = loader.get_node()
            if node is None:  # pragma: no cover - check_node guarantees a node
                break
            _reject_duplicate_keys(node, name)
            value = _Constructor().construct_document(node)
            if value is None and _is_empty(node) and not keep_empty:
                continue
            documents.append(Document(value, name, index, node.start_mark.line + 1, _yaml_locator(node)))
            index += 1
        if keep_empty and not documents:
            documents.append(Document(None, name, 0, 1))
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        problem = error.problem or error.context or "invalid YAML"
        raise SourceError(
            f"invalid YAML: {problem}", name, mark.line + 1 if mark else None, mark.column + 1 if mark else None
        ) from None
    except yaml.YAMLError as error:
        raise SourceError(f"invalid YAML: {str(error).splitlines()[0]}", name) from None
    except RecursionError:
        raise SourceError("invalid YAML: nested too deeply", name) from None
    finally:
        loader.dispose()
    return documents


def _is_empty(node: yaml.Node) -> bool:
    return isinstance(node, yaml.ScalarNode) and node.tag == "tag:yaml.org,2002:null" and node.value in ("", "~")


def _reject_duplicate_keys(root: yaml.Node, name: str) -> None:
    stack = [root]
    seen_nodes: set[int] = set()
    while stack:
        node = stack.pop()
        if id(node) in seen_nodes:
            continue
        seen_nodes.add(id(node))
        if isinstance(node, yaml.MappingNode):
            keys: dict[tuple, yaml.Node] = {}
            for key_node, value_node in node.value:
                stack.append(value_node)
                if isinstance(key_node, yaml.ScalarNode):
                    if key_node.tag == "tag:yaml.org,2002:merge":
                        continue
                    identity = (key_node.tag, key_node.value)
                    if identity in keys:
                        first = keys[identity].start_mark.line + 1
                        raise SourceError(
                            f"duplicate key {key_node.value!r} (first defined on line {first})",
                            name, key_node.start_mark.line + 1, key_node.start_mark.column + 1,
                        )
                    keys[identity] = key_node
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)


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


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict:
    out: dict = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKey(key)
        out[key] = value
    return out


class _DuplicateKey(ValueError):
    def __init__(self, key: str) -> None:
        self.key = key
        super().__init__(key)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _json_document(text: str, name: str) -> Document:
    lines = _LineIndex(text)
    try:
        value = json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_reject_constant)
    except _DuplicateKey as error:
        offset = _find_key(text, error.key)
        line, column = lines.position(offset) if offset >= 0 else (None, None)
        raise SourceError(f"duplicate key {error.key!r}", name, line, column) from None
    except json.JSONDecodeError as error:
        raise SourceError(f"invalid JSON: {error.msg}", name, error.lineno, error.colno) from None
    except ValueError as error:
        raise SourceError(f"invalid JSON: {error}", name) from None
    except RecursionError:
        raise SourceError("invalid JSON: nested too deeply", name) from None
    start = len(text) - len(text.lstrip())
    first_line, _ = lines.position(start)
    return Document(value, name, 0, first_line, _JSONLocator(text, lines).locate)


def _find_key(text: str, key: str) -> int:
    """Offset of the second occurrence of a key (where a duplicate is reported)."""
    quoted = json.dumps(key)
    first = text.find(quoted)
    return text.find(quoted, first + 1) if first >= 0 else -1


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
