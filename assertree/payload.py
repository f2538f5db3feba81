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
YAML. YAML is read with PyYAML's safe loader (never constructing objects),
keeping dates as the strings they were written as.
"""

from __future__ import annotations

import gc
from collections.abc import Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assertree.errors import PayloadError, UsageError
from assertree.jp.values import type_name
from assertree.results import Resource

STDIN = "-"
STDIN_SOURCE = "<stdin>"  # the source name of a payload read from standard input
YAML_SUFFIXES = (".yaml", ".yml")


@dataclass
class Payload:
    """One payload file as read: its value and whether it was a YAML stream of documents."""

    source: str
    value: Any
    documents: bool = False  # True when `value` is the list of a multi-document YAML stream


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


def freeze_loaded() -> None:
    """Move everything allocated so far out of the collector's reach (for one-shot CLI runs)."""
    gc.freeze()


PAYLOAD_SUFFIXES = (".json", ".yaml", ".yml")
_GLOB_CHARACTERS = frozenset("*?[")


def payload_files(arguments: Sequence[str]) -> list[str]:
    """The payload files named by ``--payload`` arguments, in order, without repeats.

    An argument is a file, ``-`` (standard input), a directory (every ``.json``,
    ``.yaml`` and ``.yml`` file under it, sorted) or a glob pattern (``**``
    included, for shells that do not expand it).
    """
    import glob

    found: list[str] = []
    for argument in arguments:
        path = Path(argument)
        if argument == STDIN or path.is_file():
            found.append(argument)
        elif path.is_dir():
            matches = sorted(
                str(p) for p in path.rglob("*") if p.is_file() and p.suffix.lower() in PAYLOAD_SUFFIXES
            )
            if not matches:
                raise PayloadError("no .json, .yaml or .yml files in this directory", source=argument)
            found.extend(matches)
        elif _GLOB_CHARACTERS & set(argument):
            matches = sorted(p for p in glob.glob(argument, recursive=True) if Path(p).is_file())
            if not matches:
                raise PayloadError("no file matches this pattern", source=argument)
            found.extend(matches)
        else:
            raise PayloadError("payload file not found", source=argument)
    if found.count(STDIN) > 1:
        raise UsageError("standard input ('-') can be read only once")
    return list(dict.fromkeys(found))


def read_payload(path: str, stdin: Any = None) -> Payload:
    """Read one payload file (``-`` for standard input)."""
    if path == STDIN:
        import sys

        stream = stdin if stdin is not None else sys.stdin.buffer
        return parse_payload(stream.read(), STDIN_SOURCE, kind=None)
    file = Path(path)
    try:
        data = file.read_bytes()
    except FileNotFoundError:
        raise PayloadError("payload file not found", source=path) from None
    except IsADirectoryError:
        raise PayloadError("payload is a directory, not a file", source=path) from None
    except OSError as error:
        raise PayloadError(f"cannot read payload: {error.strerror or error}", source=path) from None
    suffix = file.suffix.lower()
    kind = "json" if suffix == ".json" else "yaml" if suffix in YAML_SUFFIXES else None
    return parse_payload(data, path, kind=kind)


def parse_payload(data: bytes, source: str, kind: str | None) -> Payload:
    """Parse payload bytes as JSON, YAML, or (kind None) whichever they are."""
    if not data or data.isspace():
        raise PayloadError("payload is empty", source=source)
    if kind in ("json", None):
        try:
            return Payload(source, _parse_json(data))
        except PayloadError as error:
            if kind == "json":
                raise error.located(source=source) from None
    return _parse_yaml(data, source)


def _parse_json(data: bytes) -> Any:
    import orjson

    with collector_paused():
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError as error:
            line, column = _json_position(data, error.pos)
            reason = str(error).split(":", 1)[0]
            if reason == "depth limit exceeded":
                reason = "nested more than 1024 levels deep"
            raise PayloadError(f"invalid JSON: {reason}", line=line, column=column) from None
        except RecursionError:
            raise PayloadError("invalid JSON: nested too deeply") from None


def _json_position(data: bytes, offset: int) -> tuple[int, int]:
    head = data[:offset]
    line = head.count(b"\n") + 1
    return line, offset - (head.rfind(b"\n") + 1) + 1


def _parse_yaml(data: bytes, source: str) -> Payload:
    import yaml

    from assertree.yamlsafe import JSONSafeLoader, check_nesting

    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        raise PayloadError(f"payload is not UTF-8 text (byte {error.start})", source=source, line=line) from None
    try:
        check_nesting(text)
        with collector_paused():
            documents = [doc for doc in yaml.load_all(text, Loader=JSONSafeLoader) if doc is not None]
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark
        problem = error.problem or "invalid YAML"
        raise PayloadError(
            f"invalid YAML: {problem}",
            source=source,
            line=mark.line + 1 if mark else None,
            column=mark.column + 1 if mark else None,
        ) from None
    except (yaml.YAMLError, RecursionError) as error:
        raise PayloadError(f"invalid YAML: {str(error).splitlines()[0]}", source=source) from None
    if not documents:
        raise PayloadError("payload is empty (no YAML document)", source=source)
    if len(documents) == 1:
        return Payload(source, documents[0])
    return Payload(source, documents, documents=True)


def compile_preprocessors(expressions: Sequence[str]):
    """Compile ``--pre-process`` expressions up front, so a typo fails before any payload is read."""
    from assertree import jp

    compiled = []
    for text in expressions:
        try:
            expression = jp.compile(text)
        except jp.ParseError as error:
            raise UsageError(f"invalid --pre-process expression {text!r}: {error.located()}") from None
        if expression.problems:
            raise UsageError(f"invalid --pre-process expression {text!r}: {'; '.join(expression.problems)}")
        compiled.append(expression)
    return compiled


def resources_from(payload: Payload, preprocessors=()) -> list[Resource]:
    """The resources a payload holds: each item of a list (after pre-processing), or the value."""
    from assertree import jp

    value = payload.value
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
        resources = [Resource(item, payload.source, index, root=root) for index, item in enumerate(value)]
        if value is root:
            for resource in resources:
                resource.origin = (resource.document,)
        return resources
    return [Resource(value, payload.source, None, root=root, origin=() if value is root else None)]


def find_origin(root: Any, target: Any) -> tuple | None:
    """The keys/indexes leading from `root` to the very object `target` (identity, not equality).

    Pre-processing with JMESPath hands out the payload's own objects, so a
    resource can be traced back to its place in the file without knowing the
    expression. Breadth first, so shallow matches are found quickly.
    """
    if target is root:
        return ()
    if not isinstance(target, (dict, list)):
        return None
    queue: list[tuple[Any, tuple]] = [(root, ())]
    while queue:
        next_level = []
        for value, path in queue:
            items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
            for key, child in items:
                if child is target:
                    return (*path, key)
                if isinstance(child, (dict, list)):
                    next_level.append((child, (*path, key)))
        queue = next_level
    return None
