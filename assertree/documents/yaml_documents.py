"""YAML streams read into JSON values, with or without positions: the YAML half of `assertree.documents.reader`.

Kept apart so that PyYAML (about 10 ms to import, its reader compiling a large
Unicode class) is imported only when a YAML file is read: a scan of JSON
payloads against cached policies (`assertree.documents.cache`) never needs it.
The reader imports this module on first use; it imports nothing of the reader's.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import yaml

from assertree.documents.collector import collector_paused
from assertree.documents.document import Document
from assertree.documents.limits import may_alias
from assertree.documents.loaders import (
    PAYLOAD_SCALARS,
    JSONSafeLoader,
    PayloadLoader,
    build_value,
    check_nesting,
)
from assertree.errors import DocumentError


def yaml_values(text: str, name: str, *, payload: bool = False) -> list[Any]:
    """The values of a YAML stream's non-empty documents, without positions (`reader.parse_values`'s YAML);
    `payload` reads it as kyverno-json reads payloads."""
    loader = PayloadLoader if payload else JSONSafeLoader
    with yaml_errors(name):
        check_nesting(text)
        aliases = may_alias(text)
        values = []
        reader = loader(text)
        try:
            with collector_paused():
                while reader.check_node():
                    value = build_document(loader, reader.get_node(), may_alias=aliases)
                    if value is not None:
                        values.append(value)
        finally:
            reader.dispose()
        return values
    raise AssertionError("unreachable")  # pragma: no cover - yaml_errors re-raises


@contextmanager
def yaml_errors(name: str) -> Iterator[None]:
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


class _PayloadConstructor(yaml.constructor.SafeConstructor):
    """Builds JSON values from composed nodes, with PayloadLoader's rules."""

    yaml_constructors = PayloadLoader.yaml_constructors
    construct_mapping = PayloadLoader.construct_mapping


_JSON_SCALARS = {tag: JSONSafeLoader.yaml_constructors[tag]
                 for tag in ("tag:yaml.org,2002:int", "tag:yaml.org,2002:float", "tag:yaml.org,2002:bool",
                             "tag:yaml.org,2002:timestamp")}
_BUILDS: dict[type, tuple[type, dict[str, Any], Any]] = {  # loader: (its constructor, the walk's scalars, keys)
    JSONSafeLoader: (_Constructor, _JSON_SCALARS, lambda key: key),  # keys are their values
    PayloadLoader: (_PayloadConstructor, PAYLOAD_SCALARS, None),  # keys are the text written
}


def build_document(loader_type: type, node: yaml.Node, *, may_alias: bool) -> Any:
    """A composed document's value with `loader_type`'s rules (`build_value`: one walk, or PyYAML's
    constructor after the alias budget when the text `may_alias`)."""
    constructor, scalars, key_of = _BUILDS[loader_type]
    return build_value(constructor(), node, scalars, key_of, may_alias=may_alias)


def yaml_documents(text: str, name: str, keep_empty: bool, *, payload: bool = False) -> list[Document]:
    """Every document of a YAML stream with positions (`reader.load_documents`'s YAML); comment-only documents
    are skipped unless `keep_empty`."""
    loader_type = PayloadLoader if payload else JSONSafeLoader
    loader = loader_type(text)
    documents = []
    try:
        with yaml_errors(name):
            check_nesting(text)
            aliases = may_alias(text)
            index = 0
            while loader.check_node():
                node = loader.get_node()
                if node is None:  # pragma: no cover - check_node guarantees a node
                    break
                value = build_document(loader_type, node, may_alias=aliases)
                if value is None and _is_empty(node) and not keep_empty:
                    continue
                documents.append(Document(value, name, index, node.start_mark.line + 1, yaml_locator(node)))
                index += 1
            if keep_empty and not documents:
                documents.append(Document(None, name, 0, 1))
    finally:
        loader.dispose()
    return documents


def _is_empty(node: yaml.Node) -> bool:
    return isinstance(node, yaml.ScalarNode) and node.tag == "tag:yaml.org,2002:null" and node.value in ("", "~")


def yaml_locator(root: yaml.Node):
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
