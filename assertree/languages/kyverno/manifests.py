"""Kubernetes manifests read the way the Kyverno CLI reads them, for ``kyverno.io`` policies.

Kyverno (``kyverno apply`` / ``kyverno test``) reads resource files through
sigs.k8s.io/yaml, which parses with a YAML 1.1 reader (go-yaml v2) and turns the
result into JSON. That reading differs from PyYAML's safe loader in ways a
policy can see, so this module has its own resolver rather than the payload
reader kyverno-json uses:

- booleans are YAML 1.1's, *including* ``y``/``Y``/``n``/``N`` (PyYAML keeps
  those as strings) and ``yes``/``no``/``on``/``off``;
- integers accept ``0x``/``0o``/``0b``, a leading-zero octal and ``_``
  separators, but not PyYAML's base-60 form (``10:30`` stays a string);
- floats accept an exponent without a dot (``1e3``);
- timestamps stay strings; map keys become strings (``true:`` -> ``"true"``).

Then, as the CLI does before evaluation (each document is one resource, a
``kind: List`` too, as ``GetUnstructuredResources`` reads it), resources of
namespaced kinds without a namespace get
``default`` (built-in cluster-scoped kinds, from the CLI's discovery data, keep
none; unknown kinds such as CRDs are taken as namespaced, as the CLI does),
known map fields left empty (``labels:``) become ``{}``, and duplicates (same
group, kind, namespace and name) keep the first one.

Numbers: whole numbers are read as `int` (Go's int64 in an unstructured
object) and others as `float`; `to_float64` then converts every number to
`float`, as ``kyverno test`` does to each resource before evaluation
(`processor` code converts numeric values to float64). The difference is
visible to pattern leaves, which compare by Go type (see `operators`).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from assertree.documents.cache import DocumentCache
from assertree.documents.limits import may_alias
from assertree.documents.loaders import (
    build_value,
    check_nesting,
    check_table_resolvable,
    checked_scalar,
    table_resolve,
)
from assertree.documents.reader import read_text
from assertree.errors import DocumentError, PayloadError
from assertree.jp.values import type_name
from assertree.languages.kubernetes.resources import is_namespaced

_Base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

# Fields Kubernetes defines as maps: written empty (``labels:``) they are read as {} (the CLI's normalizeNilMaps).
_MAP_FIELDS = frozenset({"annotations", "labels", "matchLabels", "nodeSelector", "data", "stringData"})


class GoYAMLLoader(_Base):  # type: ignore[misc, valid-type]
    """PyYAML with go-yaml v2's implicit types (see the module docstring)."""

    resolve = table_resolve


GoYAMLLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers
            if tag not in ("tag:yaml.org,2002:bool", "tag:yaml.org,2002:int", "tag:yaml.org,2002:float",
                           "tag:yaml.org,2002:timestamp")]
    for first, resolvers in yaml.resolver.Resolver.yaml_implicit_resolvers.items()
}
GoYAMLLoader.add_implicit_resolver(
    "tag:yaml.org,2002:bool",
    re.compile(r"^(?:y|Y|yes|Yes|YES|n|N|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF)$"),
    list("yYnNtTfFoO"))
GoYAMLLoader.add_implicit_resolver(
    "tag:yaml.org,2002:int",
    re.compile(r"^(?:[-+]?0b[01_]+|[-+]?0o?[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+)$"),
    list("-+0123456789"))
GoYAMLLoader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"),
    list("-+0123456789."))

check_table_resolvable(GoYAMLLoader)

_BOOLS = {"y": True, "yes": True, "true": True, "on": True, "n": False, "no": False, "false": False, "off": False}


def _construct_bool(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> bool:
    return _BOOLS[loader.construct_scalar(node).lower()]


def _construct_int(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> int:
    text = loader.construct_scalar(node).replace("_", "")
    sign = -1 if text.startswith("-") else 1
    digits = text.lstrip("+-")
    if digits.startswith(("0b", "0B")):
        value = int(digits[2:], 2)
    elif digits.startswith(("0x", "0X")):
        value = int(digits[2:], 16)
    elif digits.startswith(("0o", "0O")):
        value = int(digits[2:], 8)
    elif len(digits) > 1 and digits.startswith("0"):
        value = int(digits, 8)
    else:
        value = int(digits)
    return sign * value


def _construct_float(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> float:
    text = loader.construct_scalar(node).lower()
    if text.endswith(".inf"):
        return float("-inf") if text.startswith("-") else float("inf")
    if text == ".nan":
        return float("nan")
    return float(text)


def _construct_string(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> str:
    return loader.construct_scalar(node)


def _construct_mapping(loader: yaml.SafeLoader, node: yaml.MappingNode) -> dict:
    if not isinstance(node, yaml.MappingNode):  # `!!map 1`: PyYAML's merge-key flattening would fail unlocated
        raise yaml.constructor.ConstructorError(None, None, f"expected a mapping node, but found {node.id}",
                                                node.start_mark)
    loader.flatten_mapping(node)
    out: dict[str, Any] = {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        out[_key_text(key)] = loader.construct_object(value_node, deep=True)
    return out


def _key_text(key: Any) -> str:
    """JSON has only string keys: sigs.k8s.io/yaml writes other scalars as their text."""
    if isinstance(key, str):
        return key
    if isinstance(key, bool):
        return "true" if key else "false"
    if key is None:
        return "null"
    if isinstance(key, float) and key.is_integer():
        return str(int(key))
    return str(key)


def _refuse(loader: yaml.SafeLoader, node: yaml.Node):
    raise yaml.constructor.ConstructorError(None, None, f"the YAML type {node.tag} has no JSON equivalent",
                                            node.start_mark)


for _tag, _construct in (("bool", _construct_bool), ("int", _construct_int), ("float", _construct_float)):
    # an explicit tag on text it does not fit (`!!int x`, `!!bool maybe`) is a located YAML error, as in go-yaml
    GoYAMLLoader.add_constructor(f"tag:yaml.org,2002:{_tag}", checked_scalar(_construct))
GoYAMLLoader.add_constructor("tag:yaml.org,2002:timestamp", _construct_string)
GoYAMLLoader.add_constructor("tag:yaml.org,2002:map", _construct_mapping)
for _tag in ("binary", "set", "omap", "pairs"):
    GoYAMLLoader.add_constructor(f"tag:yaml.org,2002:{_tag}", _refuse)


@dataclass(slots=True)
class Manifest:
    """One Kubernetes resource read from a file: its JSON value and where it was written."""

    value: dict
    source: str | None
    document: int  # index of the YAML document in the file

    @property
    def key(self) -> tuple[str, str, str, str]:
        """(apiVersion, kind, namespace, name): how ``kyverno test`` names a resource."""
        metadata = self.value.get("metadata") or {}
        return (str(self.value.get("apiVersion") or ""), str(self.value.get("kind") or ""),
                str(metadata.get("namespace") or ""), str(metadata.get("name") or ""))


_GO_SCALARS = {f"tag:yaml.org,2002:{tag}": GoYAMLLoader.yaml_constructors[f"tag:yaml.org,2002:{tag}"]
               for tag in ("bool", "int", "float", "timestamp")}


def go_yaml_documents(text: str) -> list[Any]:
    """Every document of a YAML stream read by `GoYAMLLoader`, as ``yaml.load_all`` gives them (None for
    an empty one); PyYAML's errors propagate, and so do the reader's limits (`assertree.documents.limits`:
    nesting over 1024 levels, go-yaml's alias budget), located. A document that cannot hold an alias is
    built in one walk (`assertree.documents.loaders.build_value`, with this loader's constructors),
    which declines what it does not handle to the loader's own constructor: the same values, about twice
    as fast."""
    check_nesting(text)  # libyaml's composer recurses in C: a deep enough document would crash the process
    loader = GoYAMLLoader(text)
    aliases = may_alias(text)
    documents = []
    try:
        while loader.check_node():  # an alias bomb is refused here: it would expand in every walk after this one
            documents.append(build_value(loader, loader.get_node(), _GO_SCALARS, _key_text, may_alias=aliases))
    finally:
        loader.dispose()
    return documents


def parse_manifests(text: str, source: str | None = None) -> list[Manifest]:
    """The resources in a YAML (or JSON) stream, normalised as the Kyverno CLI normalises them.

    A stream read before comes from the cache of documents (`assertree.documents.cache`, by the hash of the
    text: the values go-yaml's reading gave, before normalising), so a test suite run again parses no YAML."""
    key = text.encode("utf-8", "surrogatepass")
    documents = _MANIFEST_CACHE.get(key)
    packed = None
    if type(documents) is not list:
        documents = _parse_go_yaml(text, source)
        packed = _MANIFEST_CACHE.pack(documents)  # before `normalise` changes them
    manifests: list[Manifest] = []
    for index, document in enumerate(documents):
        if document is None:
            continue
        if not isinstance(document, dict):
            raise PayloadError(f"document {index} is not a Kubernetes resource (a mapping)", source=source)
        if not is_kubernetes_object(document):
            raise PayloadError(f"document {index} is not a Kubernetes resource: its metadata is a "
                               f"JSON {type_name(document['metadata'])}, not a mapping", source=source)
        manifests.append(Manifest(normalise(document), source, index))
    if packed is not None:
        _MANIFEST_CACHE.put_packed(key, packed)
    return manifests


_MANIFEST_CACHE = DocumentCache("manifests", [str(Path(__file__).resolve()),
                                              str(Path(__file__).resolve().parents[2] / "documents")])
"""Kubernetes manifests read before (`parse_manifests`): the values go-yaml's reading gave."""


def _parse_go_yaml(text: str, source: str | None) -> list[Any]:
    """`go_yaml_documents`, its errors as located PayloadErrors."""
    try:
        return go_yaml_documents(text)
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        raise PayloadError(f"invalid YAML: {error.problem or error.context}", source=source,
                           line=mark.line + 1 if mark else None, column=mark.column + 1 if mark else None) from None
    except yaml.YAMLError as error:
        raise PayloadError(f"invalid YAML: {str(error).splitlines()[0]}", source=source) from None


def read_manifests(path: str | Path) -> list[Manifest]:
    """The resources in the file at `path` (see `parse_manifests`)."""
    return parse_manifests(read_input_text(path, "resource"), str(path))


def read_input_text(path: str | Path, what: str) -> str:
    """The text of a file a Kyverno input names (`what`: resource, values, context), read as every input
    is (`assertree.documents.reader.read_text`: a FIFO, the size limit, UTF-16/32), or a PayloadError."""
    try:
        return read_text(path)
    except DocumentError as error:
        raise input_file_error(error, what) from None


def input_file_error(error: DocumentError, what: str) -> PayloadError:
    """A reader's error for a file a Kyverno input names, saying which (``cannot read resource file: ...``)."""
    problem = error.problem
    return PayloadError(f"cannot read {what} file: {problem.message}", source=problem.location.source,
                        line=problem.location.line, column=problem.location.column)


def is_kubernetes_object(value: Any) -> bool:
    """Whether `value` can be a Kubernetes object: a mapping whose ``metadata``, when there, is one too (the
    language reads names, namespaces and labels from it; the API server refuses anything else)."""
    if not isinstance(value, dict):
        return False
    metadata = value.get("metadata")
    return metadata is None or isinstance(metadata, dict)


def normalise(resource: dict) -> dict:
    """`resource` with the CLI's defaults: a namespace for namespaced kinds, {} for empty map fields."""
    _fill_maps(resource)
    metadata = resource.get("metadata")
    if metadata is not None and not isinstance(metadata, dict):
        return resource
    if not (metadata or {}).get("namespace") and is_namespaced(resource.get("apiVersion"), resource.get("kind")):
        if metadata is None:
            metadata = resource["metadata"] = {}
        metadata["namespace"] = "default"
    return resource


def with_default_namespace(value: Any, cluster_scoped: frozenset[tuple[str, str]] = frozenset()) -> Any:
    """`value` in ``default`` when it is a Kubernetes object (it has a kind) of a namespaced kind without a
    namespace, as ``kyverno apply`` reads it; else `value` itself. A copy of the top level and of
    ``metadata`` only: the payload a scan read is not changed, so its reports still show it as written."""
    if not isinstance(value, dict) or not isinstance(value.get("kind"), str) or not value["kind"]:
        return value
    metadata = value.get("metadata")
    if metadata is None:
        metadata = {}
    elif not isinstance(metadata, dict) or metadata.get("namespace"):
        return value
    if not is_namespaced(value.get("apiVersion"), value["kind"], cluster_scoped):
        return value
    return {**value, "metadata": {**metadata, "namespace": "default"}}


def unique(manifests: Iterable[Manifest]) -> list[Manifest]:
    """First of each (group, kind, namespace, name), in file order: the CLI drops later duplicates."""
    seen: set[tuple[str, str, str, str]] = set()
    out = []
    for manifest in manifests:
        api_version, kind, namespace, name = manifest.key
        group = api_version.split("/", 1)[0] if "/" in api_version else ""
        key = (group, kind, namespace, name)
        if key not in seen:
            seen.add(key)
            out.append(manifest)
    return out


_SCALARS = frozenset({str, int, float, bool, type(None)})


def copy_json(value: Any) -> Any:
    """A deep copy of JSON data, several times faster than `copy.deepcopy` (no memo: Go's documents share
    nothing either); a value of any other type is deep-copied as usual."""
    kind = type(value)
    if kind is dict:
        return {key: copy_json(item) for key, item in value.items()}
    if kind is list:
        return [copy_json(item) for item in value]
    if kind in _SCALARS:
        return value
    return copy.deepcopy(value)


def to_float64(value: Any) -> Any:
    """`value` with every number (not bools) as `float`: the CLI's float64 conversion of resources."""
    kind = type(value)
    if kind is dict:
        return {key: to_float64(item) for key, item in value.items()}
    if kind is str or kind is float or kind is bool or value is None:
        return value
    if kind is list:
        return [to_float64(item) for item in value]
    if isinstance(value, dict):
        return {key: to_float64(item) for key, item in value.items()}
    if isinstance(value, list):
        return [to_float64(item) for item in value]
    if type(value) is int:
        return float(value)
    return value


def _fill_maps(value: Any) -> None:
    if isinstance(value, dict):
        for key, item in value.items():
            if item is None and key in _MAP_FIELDS:
                value[key] = {}
            else:
                _fill_maps(item)
    elif isinstance(value, list):
        for item in value:
            if isinstance(item, dict):
                _fill_maps(item)
