"""Writing new values into a YAML (or JSON) file's text, changing only what differs.

A fix is for people to review, so the written file should differ from the
original exactly where the values differ. Three layers make sure of that:

- documents of a YAML stream whose value did not change are copied byte for
  byte (their text is never parsed for writing, let alone re-emitted);
- a changed document goes through ruamel.yaml's round-trip mode, which keeps
  comments, key order, quoting and flow/block style, anchors, blank lines and
  the text of unchanged scalars; only the nodes whose values differ are
  replaced (`merge`), so unchanged lines keep their text, and their position
  up to the first change;
- the written document is read back the way the Kyverno CLI reads manifests
  (`languages.kyverno.manifests`) and must give the new value; when it does not
  (a shared anchor that was changed in one place, say), the document is written
  afresh from the value, and if even that does not read back, the file is
  refused rather than written wrong.

ruamel writes single spaces (``key:   value`` becomes ``key: value``, ``[a,  b]``
becomes ``[a, b]``): a line that differs from the original only so is put
back as it was (and the result re-read). What is not kept: each changed
document gets one mapping indent, sequence indent and dash offset (guessed
from the document; one that mixes styles comes out in its most common one);
new keys go to the end of their mapping; a comment on a list item moves with
the item when a mutation reorders the list. New strings that YAML 1.1
(Kubernetes' reader) would take for something else (``yes``, ``on``,
``0755``) are quoted. JSON files are written with `json.dumps`: key order and
indent width kept, inline layout not.

PyYAML's dumper would drop comments and re-flow every document; ruamel.yaml is
the maintained round-trip YAML library, hence the dependency.
"""

from __future__ import annotations

import copy
import difflib
import io
import json
import re
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import yaml

from assertree.errors import AssertreeError
from assertree.languages.kyverno.manifests import GoYAMLLoader, go_yaml_documents, normalise, to_float64
from assertree.languages.kyverno.mutate.compare import json_equal

__all__ = ["document_spans", "new_document", "rewrite_json", "rewrite_stream"]

Change = tuple[Any, Any]  # (value the document was read as, value to write)


class RewriteError(AssertreeError):
    """A document whose new value cannot be written so that it reads back as that value."""


@dataclass(frozen=True, slots=True)
class Span:
    """Where one document of a YAML stream is in its text: ``text[body_start:body_end]`` is its content,
    without the ``---`` line (and the comment on it) and without a ``...`` end marker."""

    body_start: int
    body_end: int


_MARKER_TAIL = re.compile(r"[ \t]*(?:#[^\n]*)?\n")


def document_spans(text: str) -> list[Span]:
    """One `Span` per document of the stream, null documents included (their index is the manifest index)."""
    spans: list[Span] = []
    start = 0
    for event in yaml.parse(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
        if isinstance(event, yaml.DocumentStartEvent) and event.end_mark is not None:
            start = event.end_mark.index
            if event.explicit:
                tail = _MARKER_TAIL.match(text, start)
                if tail:
                    start = tail.end()
        elif isinstance(event, yaml.DocumentEndEvent) and event.start_mark is not None:
            spans.append(Span(start, max(start, event.start_mark.index)))
    return spans


def rewrite_stream(text: str, changes: Mapping[int, Change], *, source: str | None = None) -> str:
    """`text` (a YAML stream) with document ``i`` rewritten to hold ``changes[i][1]``; every other
    document, and everything between documents, is kept as it was."""
    if not changes:
        return text
    spans = document_spans(text)
    pieces: list[str] = []
    position = 0
    for index, span in enumerate(spans):
        if index not in changes:
            continue
        old, new = changes[index]
        pieces.append(text[position:span.body_start])
        pieces.append(_rewrite_document(text[span.body_start:span.body_end], old, new, source, index))
        position = span.body_end
    pieces.append(text[position:])
    return "".join(pieces)


def new_document(value: Any) -> str:
    """`value` written as a new YAML document (a generated resource): block style, two-space indents, strings
    YAML 1.1 would misread quoted, whole floats as integers; it reads back, as Kubernetes reads it, as `value`."""
    written = _dump(_fresh(value), 2, 2, 0)
    if not _reads_as(written, value):
        raise RewriteError("a generated resource cannot be written as YAML that reads back as itself")
    return written


def rewrite_json(text: str, old: Any, new: Any) -> str:
    """A JSON document's text holding `new`: key order and unchanged values kept, indented as `text` was."""
    merged = merge(json.loads(text), old, new, _plain)
    indent = re.search(r"\n([ \t]+)\S", text)
    return json.dumps(merged, indent=indent.group(1) if indent else 2, ensure_ascii=False) + "\n"


# -- one document ---------------------------------------------------------------------------------


ROUND_TRIP_DEPTH = 64
"""Documents nested deeper than this are written afresh, not through ruamel's round trip: ruamel's scanner
checks every open flow collection at every token, so its time grows with the square of the nesting (a list
nested 1,000 deep took 20 s to load). No hand-written Kubernetes manifest comes near it."""


def _rewrite_document(body: str, old: Any, new: Any, source: str | None, index: int) -> str:
    shallow = not _deeper_than(old, ROUND_TRIP_DEPTH)
    written = _round_trip(body, old, new) if shallow else None
    if written is None:
        # ruamel could not say it (an anchor shared with an unchanged place, keys it refuses): write the
        # value afresh, onto the plain document so that defaults the reader added stay unwritten
        raw = _unshared(yaml.load(body, Loader=GoYAMLLoader))
        indentation = _file_indentation(body) if shallow else (2, 2, 0)
        written = _dump(_fresh(merge(raw, old, new, _plain)), *indentation)
        if not _reads_as(written, new):
            raise RewriteError(f"document {index} cannot be written so that it reads back as the mutated "
                               "resource", source=source)
    lead = body[:len(body) - len(body.lstrip("\n"))]
    if not body.endswith("\n"):
        written = written.rstrip("\n")
    return lead + written.lstrip("\n") if lead else written


def _round_trip(body: str, old: Any, new: Any) -> str | None:
    """The document rewritten through ruamel's round-trip tree, or None when that cannot be done exactly."""
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    loader = YAML(typ="rt")
    loader.preserve_quotes = True
    try:
        root = loader.load(body)
        indentation = _indentation(root)
        written = _dump(merge(root, old, new, _fresh), *indentation)
    except YAMLError:  # e.g. duplicate keys, which the Kubernetes reader accepts (the last one wins)
        return None
    if not _reads_as(written, new):
        return None
    restored = _restore_spacing(body, written)
    return restored if restored != written and _reads_as(restored, new) else written


def _deeper_than(value: Any, depth: int) -> bool:
    """Whether `value` nests more than `depth` maps and lists (looked at level by level, never further)."""
    level = [value]
    for _ in range(depth + 1):
        level = [child for item in level if isinstance(item, dict | list)
                 for child in (item.values() if isinstance(item, dict) else item)]
        if not level:
            return False
    return True


def _file_indentation(body: str) -> tuple[int, int, int]:
    """`_indentation` of a document ruamel may refuse to load (then ruamel's own style)."""
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    loader = YAML(typ="rt")
    loader.allow_duplicate_keys = True
    try:
        return _indentation(loader.load(body))
    except YAMLError:
        return 2, 2, 0


def _restore_spacing(original: str, written: str) -> str:
    """`written` with each line that differs from its counterpart in `original` only in spacing (ruamel
    writes ``key: value`` and ``[a, b]`` with single spaces) put back as it was. The caller re-reads the
    result, so a line that only looked the same is never kept."""
    old_lines, new_lines = original.splitlines(keepends=True), written.splitlines(keepends=True)
    matcher = difflib.SequenceMatcher(None, [_spacing(line) for line in old_lines],
                                      [_spacing(line) for line in new_lines], autojunk=False)
    out: list[str] = []
    for tag, old_start, old_end, new_start, new_end in matcher.get_opcodes():
        out.extend(old_lines[old_start:old_end] if tag == "equal" else new_lines[new_start:new_end])
    return "".join(out)


def _spacing(line: str) -> str:
    """A line with its indentation kept and every other run of spaces made one (none at flow brackets)."""
    body = line.lstrip(" ")
    squeezed = re.sub(r"[ \t]+", " ", body.strip())
    return line[:len(line) - len(body)] + re.sub(r" ?([\[\]{},]) ?", r"\1", squeezed)


def _unshared(value: Any) -> Any:
    """`value` with every alias its own copy (the reader shares one object between an anchor and its aliases)."""
    if isinstance(value, dict):
        return {key: _unshared(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_unshared(item) for item in value]
    return value


def _dump(value: Any, mapping: int, sequence: int, offset: int) -> str:
    from ruamel.yaml import YAML

    dumper = YAML(typ="rt")
    dumper.preserve_quotes = True
    dumper.width = 1 << 16  # never re-wrap a long line
    dumper.indent(mapping=mapping, sequence=sequence, offset=offset)
    out = io.StringIO()
    dumper.dump(value, out)
    return out.getvalue()


def _reads_as(text: str, expected: Any) -> bool:
    """Whether `text` reads, as the Kyverno CLI reads a manifest, as `expected`."""
    try:
        documents = [item for item in go_yaml_documents(text) if item is not None]
    except yaml.YAMLError:
        return False
    if len(documents) != 1 or not isinstance(documents[0], dict):
        return False
    wanted = normalise(copy.deepcopy(expected)) if isinstance(expected, dict) else expected
    return json_equal(to_float64(normalise(documents[0])), to_float64(wanted))


def _indentation(root: Any) -> tuple[int, int, int]:
    """The document's mapping indent, sequence indent and dash offset (ruamel's three settings), as the
    most common of each among its nested block collections; ruamel's defaults when it has none."""
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    mappings: Counter[int] = Counter()
    sequences: Counter[tuple[int, int]] = Counter()
    stack = [root]
    while stack:
        node = stack.pop()
        if isinstance(node, CommentedMap):
            for key, child in node.items():
                key_line, key_column = node.lc.key(key)
                if isinstance(child, CommentedMap) and child and child.lc.line > key_line:
                    mappings[child.lc.col - key_column] += 1
                elif isinstance(child, CommentedSeq) and child and child.lc.line > key_line:
                    item_column = child.lc.item(0)[1]
                    sequences[(item_column - key_column, child.lc.col - key_column)] += 1
                stack.append(child)
        elif isinstance(node, CommentedSeq):
            stack.extend(node)
    mapping = mappings.most_common(1)[0][0] if mappings else 2
    sequence, offset = sequences.most_common(1)[0][0] if sequences else (2, 0)
    return max(mapping, 1), max(sequence, offset + 2), max(offset, 0)


# -- merging new values onto the nodes of the old ones --------------------------------------------


def merge(node: Any, old: Any, new: Any, fresh: Callable[[Any], Any], memo: dict | None = None) -> Any:
    """A node holding `new`, made from `node` (the written form of `old`) wherever old and new agree.

    Mappings keep their keys' order and nodes, drop removed keys and append new ones; lists pair each
    new item with an equal old item, else one with the same ``name``, else the one at its position,
    and merge into it; anything else that differs is `fresh` (the new value in the writer's types).
    `memo` keeps the comparisons of one merge (`json_equal`), so that asking again at each level of a deep
    value does not compare its subtrees again (a thousand levels took seconds).
    """
    memo = {} if memo is None else memo
    if json_equal(old, new, memo):
        return node
    if isinstance(new, dict) and isinstance(old, dict) and isinstance(node, dict):
        keys = {_key_text(key): key for key in node}
        for key in old:
            if key not in new and key in keys:
                del node[keys[key]]
        for key, value in new.items():
            if key in keys and key in old:
                merged = merge(node[keys[key]], old[key], value, fresh, memo)
                if merged is not node[keys[key]]:
                    node[keys[key]] = merged
            elif key in keys:  # the written form has it, the value read did not: cannot be
                node[keys[key]] = fresh(value)
            elif not (key in old and json_equal(old[key], value, memo)):  # a default the reader added stays out
                node[key] = fresh(value)
        return node
    if isinstance(new, list) and isinstance(old, list) and isinstance(node, list) and len(node) == len(old):
        return _merge_list(node, old, new, fresh, memo)
    return fresh(new)


def _merge_list(node: list, old: list, new: list, fresh: Callable[[Any], Any], memo: dict) -> list:
    pairs = _pair_items(old, new, memo)
    if all(pairs[position] == position for position in range(len(new))) and len(new) == len(old):
        for position, value in enumerate(new):
            merged = merge(node[position], old[position], value, fresh, memo)
            if merged is not node[position]:
                node[position] = merged
        return node
    items = [fresh(value) if (paired := pairs[position]) is None
             else merge(node[paired], old[paired], value, fresh, memo) for position, value in enumerate(new)]
    comments = getattr(getattr(node, "ca", None), "items", None)
    moved = {position: comments[paired] for position in range(len(new))
             if comments and (paired := pairs[position]) is not None and paired in comments}
    del node[:]
    node.extend(items)
    if comments is not None:
        comments.clear()
        comments.update(moved)
    return node


def _pair_items(old: list, new: list, memo: dict) -> dict[int, int | None]:
    """For each position of `new`, the position of the old item it continues (or None: a new item)."""
    free = list(range(len(old)))
    pairs: dict[int, int | None] = {}
    for position, value in enumerate(new):  # equal items first, in order
        found = next((index for index in free if json_equal(old[index], value, memo)), None)
        if found is not None:
            free.remove(found)
        pairs[position] = found
    for position, value in enumerate(new):  # then an item with the same name (Kubernetes' merge key)
        if pairs[position] is None and isinstance(value, dict) and "name" in value:
            found = next((index for index in free if isinstance(old[index], dict)
                          and json_equal(old[index].get("name"), value["name"])), None)
            if found is not None:
                free.remove(found)
                pairs[position] = found
    for position in range(len(new)):  # then the item at the same position
        if pairs[position] is None and position in free and not _named_elsewhere(old[position], new):
            free.remove(position)
            pairs[position] = position
    return pairs


def _named_elsewhere(item: Any, new: list) -> bool:
    """Whether an old item has a name that some new item carries (so it is not merely at the same place)."""
    return isinstance(item, dict) and "name" in item and any(
        isinstance(value, dict) and json_equal(value.get("name"), item["name"]) for value in new)


def _key_text(key: Any) -> Any:
    """A written key as the JSON key the reader made of it (sigs.k8s.io/yaml writes scalars as text)."""
    if isinstance(key, str):
        return key
    if isinstance(key, bool):
        return "true" if key else "false"
    return "null" if key is None else str(key)


# -- new values in the writer's types -------------------------------------------------------------

_READER = GoYAMLLoader("")
_STRING = "tag:yaml.org,2002:str"


def _fresh(value: Any) -> Any:
    """`value` as ruamel round-trip objects: block collections; strings that YAML 1.1 would read as
    something else quoted; multi-line strings as literal blocks; whole floats as integers."""
    from ruamel.yaml.comments import CommentedMap, CommentedSeq
    from ruamel.yaml.scalarstring import DoubleQuotedScalarString, LiteralScalarString

    if isinstance(value, dict):
        mapping = CommentedMap()
        for key, item in value.items():
            mapping[_fresh(key)] = _fresh(item)
        return mapping
    if isinstance(value, list):
        return CommentedSeq(_fresh(item) for item in value)
    if isinstance(value, str):
        if "\n" in value and _literal_block_keeps(value):
            return LiteralScalarString(value)
        if not value.isprintable() or _READER.resolve(yaml.ScalarNode, value, (True, False)) != _STRING:
            return DoubleQuotedScalarString(value)
        return value
    return _plain(value)


def _literal_block_keeps(text: str) -> bool:
    """Whether a ``|`` block says `text` exactly: printable lines without trailing blanks, a first line
    that does not start with one (that would need an indentation indicator), at most one final newline."""
    lines = text[:-1].split("\n") if text.endswith("\n") else text.split("\n")
    return (bool(lines[0]) and not lines[0][0].isspace() and bool(lines[-1])
            and all(line.isprintable() and line == line.rstrip() for line in lines))


def _plain(value: Any) -> Any:
    """A new value for a JSON document: whole floats as integers (as Go's encoding/json prints them)."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**63:
        return int(value)
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    return value
