"""The strategic merge Kyverno applies: kustomize's kyaml ``merge2``, not apimachinery's.

Kyverno's ``patchStrategicMerge`` (pkg/engine/mutate/patch/strategicMergePatch.go) runs the
kustomize ``patchstrategicmerge`` filter, i.e. ``merge2.Merge(patch, resource,
ListIncreaseDirection=Prepend)`` from sigs.k8s.io/kustomize/kyaml v0.21.1 (kyaml/yaml/merge2,
kyaml/yaml/walk). It differs from ``kubectl patch --type strategic`` in ways a resource shows:

- a merged list puts the patch's elements first, then the resource's other elements;
- lists are merged only where kyaml's built-in Kubernetes v1.21.2 schema says so
  (`assertree.languages.kubernetes.merge_schema`);
  lists of unknown kinds (CRDs) are replaced; merge keys are never guessed;
- ``$patch: delete|replace|merge`` work on maps and list elements; ``$retainKeys`` and
  ``$setElementOrder`` are not understood and are copied like any other key;
- ``null`` deletes a key; a ``null`` already in the resource is kept;
- kyaml's own quirks, kept because Kyverno's results carry them: an element of a merged list that
  lacks the merge key, or is null, collapses the list (appendListNode's ``ElementSetter`` with no
  values), empty maps and nulls are dropped from merged lists, keys compare as YAML text (``80`` and
  ``"80"`` are the same port).

No PyPI library implements kyaml's walk (the `kubernetes` client has no strategic merge; Python
"strategic merge" helpers follow apimachinery, if anything), so this is a port by hand, written
against kyaml's source and kept close to its structure so differences can be checked line by line.
Values are JSON values (dict, list, str, int, float, bool, None); maps of the resource and patch
are updated in place, as kyaml updates its nodes, so callers pass copies.
"""

from __future__ import annotations

import math
import re
from typing import Any

import yaml

from assertree.languages.kubernetes.merge_schema import (
    Schema,
    element_schema,
    field_schema,
    merge_strategy,
    merges_elements,
    resource_schema,
)


class MergeError(Exception):
    """The patch cannot be merged into the resource (kyaml's error text, as Kyverno reports it)."""


class _Absent:
    """No node at all (a nil RNode): a key that is not there, or a cleared result."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "ABSENT"


class _KeptNull:
    """A null of the resource that the patch does not mention: kyaml keeps it (MakePersistentNullNode)."""

    __slots__ = ()


ABSENT: Any = _Absent()
_KEEP_NULL: Any = _KeptNull()

_DELETE, _REPLACE, _MERGE = "delete", "replace", "merge"
_DIRECTIVE_KEY = "$patch"


def strategic_merge(resource: dict, patch: dict) -> dict:
    """`resource` with `patch` merged into it the way Kyverno's kyaml merge does (both are changed).

    Raises MergeError where kyaml returns an error (a map patched with a list, an unknown
    ``$patch`` directive, a ``$patch: delete`` of the whole resource).
    """
    result = _walk(resource, patch, None)
    if result is ABSENT:
        raise MergeError("filter cannot create or delete objects")
    if result is None or result is _KEEP_NULL:
        return {}
    return result


# ---- values as kyaml sees them -------------------------------------------------------------------


def scalar_text(value: Any) -> str:
    """The text of a scalar node parsed from Go's JSON (``yaml.Node.Value``); "" for maps and lists."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if value is None:
        return "null"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isfinite(value) and value == int(value) and abs(value) < 1e21:
            return str(int(value))
        return repr(value)
    return ""


def _is_null(value: Any) -> bool:
    """yaml.IsMissingOrNull: no node, or a null one."""
    return value is ABSENT or value is None or value is _KEEP_NULL


def _nil_or_empty_text(value: Any) -> str:
    """A merge-key value as ElementValuesList reads it: "" for null, empty maps and empty lists."""
    if _is_null(value) or value == {} or value == []:
        return ""
    return scalar_text(value)


def _kind_name(value: Any) -> str:
    if isinstance(value, dict):
        return "MappingNode"
    if isinstance(value, list):
        return "SequenceNode"
    return "ScalarNode"


def _kind_error(expected: str, value: Any) -> MergeError:
    contents = yaml.safe_dump(value, default_flow_style=False, sort_keys=False)
    return MergeError(f"wrong node kind: expected {expected} but got {_kind_name(value)}: node contents:\n{contents}")


_YAML12_INT = re.compile(r"[-+]?[0-9]+")
_YAML12_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?")


def _text_to_scalar(text: str) -> Any:
    """A plain scalar written from `text` and read back by yaml.v3 (kyaml's NewScalarRNode): YAML 1.2 core."""
    if text in ("true", "True", "TRUE", "false", "False", "FALSE"):
        return text.lower() == "true"
    if text in ("null", "Null", "NULL", "~"):
        return None
    if _YAML12_INT.fullmatch(text):
        return int(text)
    if _YAML12_FLOAT.fullmatch(text):
        return float(text)
    return text


# ---- the walk (kyaml/yaml/walk) ---------------------------------------------------------------


def _schema_for(dest: Any, origin: Any, schema: Schema | None) -> Schema | None:
    """Walker.GetSchema: the schema handed down, else the schema of an object's own apiVersion/kind."""
    if schema is not None:
        return schema
    for node in (dest, origin):
        if not isinstance(node, dict):
            continue
        api_version, kind = node.get("apiVersion", ABSENT), node.get("kind", ABSENT)
        api_text = "" if _nil_or_empty_text(api_version) == "" else scalar_text(api_version)
        kind_text = "" if _nil_or_empty_text(kind) == "" else scalar_text(kind)
        if api_text and kind_text:
            found = resource_schema(api_text, kind_text)
            if found is not None:
                return found
    return None


def _walk(dest: Any, origin: Any, schema: Schema | None) -> Any:
    """Walker.Walk on the sources [dest, origin]: the merged value, ABSENT to clear, None to null."""
    if origin is ABSENT and type(dest) is dict:
        return _walk_untouched(dest, _schema_for(dest, origin, schema))
    return _walk_both(dest, origin, schema)


# Fast path: most of a resource is not mentioned by the patch (a patch of a label leaves the whole spec),
# and kyaml walks it all the same. On a map the patch does not reach, the walk changes nothing but its
# lists merged by key (where kyaml's quirks may drop elements); everything else comes out as it went in.
# So a map the patch does not mention is walked by `_walk_untouched`, which visits only the maps and merged
# lists below it and leaves other values alone. This must never change a result; a property test in
# tests/kyverno/test_mutate_strategic.py holds it to the general walk on random resources and patches.


def _walk_untouched(dest: dict, schema: Schema | None) -> dict:
    """``_walk_both(dest, ABSENT, schema)`` of a map: the map itself, with its maps and merged lists walked (in
    the general walk's order of keys, so that of two lists kyaml cannot merge the same one is reported)."""
    below = [key for key, value in dest.items() if isinstance(value, (dict, list))]
    for key in sorted(below, key=str) if len(below) > 1 else below:  # scalars and nulls are kept as they are
        value = dest[key]
        child = field_schema(schema, key) if schema is not None else None
        if type(value) is dict:
            _walk_untouched(value, _schema_for(value, ABSENT, child))  # the same map, walked in place
        else:  # a list: the general walk (a list, never ABSENT or null, since the resource has one)
            dest[key] = _walk_both(value, ABSENT, child)
    return dest


def _walk_both(dest: Any, origin: Any, schema: Schema | None) -> Any:
    """`_walk` on both sources (the general path)."""
    schema = _schema_for(dest, origin, schema)
    first = next((node for node in (dest, origin) if not _is_null(node)), ABSENT)
    if first is ABSENT:
        return _walk_map(dest, origin, schema)  # kyaml walks empty nodes as maps
    expected = type(first) if isinstance(first, (dict, list)) else None
    for node in (dest, origin):
        if _is_null(node):
            continue
        node_kind = type(node) if isinstance(node, (dict, list)) else None
        if node_kind is not expected:
            raise _kind_error(_kind_name(first), node)
    if isinstance(first, dict):
        return _walk_map(dest, origin, schema)
    if isinstance(first, list):
        if schema is not None and merges_elements(schema):
            return _walk_associative_list(dest, origin, schema)
        return origin if origin is not ABSENT else dest  # a list without merge strategy is replaced
    return origin if origin is not ABSENT else dest  # scalars: the patch wins


def _directive(node: Any, *, strict: bool) -> str:
    """determineSmpDirective: the ``$patch`` of a patch node, removed from it once read."""
    if node is ABSENT:
        return _MERGE
    if isinstance(node, list):
        return _list_directive(node)
    if isinstance(node, dict):
        if _DIRECTIVE_KEY not in node:
            return _MERGE
        value = scalar_text(node[_DIRECTIVE_KEY])
        if value in (_DELETE, _REPLACE, _MERGE):
            del node[_DIRECTIVE_KEY]
            return value
        if strict:
            raise MergeError(f"unknown patch strategy '{value}'")
        return ""
    if strict:
        raise MergeError(f"no implemented strategic merge patch strategy for '{_tag(node)}' ('{scalar_text(node)}')")
    return ""


def _tag(node: Any) -> str:
    if node is None or node is _KEEP_NULL:
        return "!!null"
    if isinstance(node, bool):
        return "!!bool"
    if isinstance(node, int):
        return "!!int"
    if isinstance(node, float):
        return "!!float"
    return "!!str"


def _list_directive(patch: list) -> str:
    """The ``{$patch: ...}`` element of a list patch: the directive for the whole list."""
    marker = next((item for item in patch if isinstance(item, dict) and _DIRECTIVE_KEY in item), None)
    if marker is None or len(marker) > 1:
        return _MERGE
    value = scalar_text(marker[_DIRECTIVE_KEY])
    if value not in (_DELETE, _REPLACE, _MERGE):
        raise MergeError(f"unknown patch strategy '{value}'")
    _element_setter(patch, ABSENT, [_DIRECTIVE_KEY], [value])
    return value


def _visit_map(dest: Any, origin: Any) -> Any:
    """Merger.VisitMap: which node becomes the merged map."""
    if _is_null(dest):
        if _directive(origin, strict=False) == _DELETE:
            return ABSENT
        if origin is ABSENT and dest is not ABSENT:
            return _KEEP_NULL
        return origin
    return _by_directive(dest, origin)


def _by_directive(dest: Any, origin: Any) -> Any:
    """Both visitors, once the resource has a value: null clears it, then ``$patch`` decides."""
    if origin is None:
        return ABSENT
    directive = _directive(origin, strict=True)
    if directive == _DELETE:
        return ABSENT
    if directive == _REPLACE:
        return origin
    return dest


def _walk_map(dest: Any, origin: Any, schema: Schema | None) -> Any:
    merged = _visit_map(dest, origin)
    if merged is ABSENT or not isinstance(merged, dict):
        return merged
    names = set(merged)
    if isinstance(origin, dict):
        names.update(origin)
    for key in sorted(names, key=str):  # Go sorts the field names; JSON keys are strings
        child = field_schema(schema, key) if schema is not None else None
        value = _walk(merged.get(key, ABSENT), origin.get(key, ABSENT) if isinstance(origin, dict) else ABSENT, child)
        if value is ABSENT or value is None:
            merged.pop(key, None)
        elif value is _KEEP_NULL:
            merged[key] = None
        else:
            merged[key] = value
    return merged


def _visit_associative_list(dest: Any, origin: Any) -> Any:
    """Merger.VisitList for a merged list."""
    if _is_null(dest):
        return origin
    return _by_directive(dest, origin)


def _walk_associative_list(dest: Any, origin: Any, schema: Schema) -> Any:
    merged = _visit_associative_list(dest, origin)
    if merged is ABSENT or not isinstance(merged, list):
        return merged
    _, keys = merge_strategy(schema)
    if keys:
        fast = _keyed_elements(merged, origin, keys)
        if fast is not None:
            return _merge_keyed(*fast, merged, schema, keys)
    if len(merged) + (len(origin) if isinstance(origin, list) else 0) > MAX_GENERAL_ELEMENTS:
        raise MergeError(f"cannot merge a list of more than {MAX_GENERAL_ELEMENTS:,} elements whose merge keys "
                         f"({', '.join(keys) or 'the values themselves'}) are missing, repeated or patched with "
                         "$patch, assertree's limit")
    values = _element_values(merged, origin, list(keys))
    if values or keys:
        return _set_associative_elements(values, list(keys), merged, origin, schema)
    return _set_associative_elements(_element_primitive_values(merged, origin), [""], merged, origin, schema)


# ---- lists whose elements all have their own merge keys: merged through an index ---------------
#
# Fast path: the general path below is kyaml's, element by element, each step a scan of the list,
# so merging n elements takes time in n² (2,000 containers took 8 s). When every element of both
# lists is a map holding every merge key with a scalar value of its own (the usual case: containers
# by name), no two share their keys, and none holds a ``$patch`` directive, that path reduces to:
# each key's elements merged (the patch's keys first), an element merged to nothing dropped, and the
# resource's elements laid out after the patch's (for several keys, kyaml removes and appends them
# again, so they go last in their own order). This must never change a result; a property test in
# tests/kyverno/test_mutate_strategic.py holds it to the general path.

MAX_GENERAL_ELEMENTS = 1_000
"""Elements of the two lists together that the general path merges (its time grows as the square)."""


def _keyed_elements(dest: list, origin: Any, keys: tuple[str, ...]) -> tuple[dict, dict] | None:
    """Each list's elements by their key texts, or None when the fast path does not apply."""
    indexes: list[dict[tuple[str, ...], dict]] = []
    for source in (dest, origin if isinstance(origin, list) else []):
        index: dict[tuple[str, ...], dict] = {}
        for element in source:
            if not isinstance(element, dict) or not element or _DIRECTIVE_KEY in element:
                return None
            texts = []
            for key in keys:
                value = element.get(key, ABSENT)
                if isinstance(value, (dict, list)) or _is_null(value):
                    return None
                text = scalar_text(value)
                if not text:
                    return None
                texts.append(text)
            identity = tuple(texts)
            if identity in index:
                return None
            index[identity] = element
        indexes.append(index)
    return indexes[0], indexes[1]


def _merge_keyed(dest_index: dict, origin_index: dict, dest: list, schema: Schema, keys: tuple[str, ...]) -> Any:
    elements = element_schema(schema)
    order = list(origin_index) + [identity for identity in dest_index if identity not in origin_index]
    items: list = []
    removed: set[tuple[str, ...]] = set()
    for identity in order:
        value = _walk(dest_index.get(identity, ABSENT), origin_index.get(identity, ABSENT), elements)
        if _is_null(value) or value == {}:
            removed.add(identity)
            continue
        if isinstance(value, dict):
            for key, text in zip(keys, identity, strict=True):
                if key not in value:
                    value[key] = _text_to_scalar(text)
        items.append(value)
    if not order:  # two empty lists: the resource's stays
        return dest
    if len(keys) == 1:
        return items
    kept = [element for identity, element in dest_index.items() if identity not in removed]
    in_dest = {identity for identity in dest_index if identity not in removed}
    laid_out = [item for item, identity in zip(items, (i for i in order if i not in removed), strict=True)
                if identity not in in_dest]
    return laid_out + kept


def _element_values(dest: list, origin: Any, keys: list[str]) -> list[list[str]]:
    """The merge-key values of every element, the patch's first (kyaml's Prepend order), deduplicated."""
    found: list[list[str]] = []
    seen: set[tuple[str, ...]] = set()
    for source in (origin, dest):
        if not isinstance(source, list):
            continue
        for element in source:
            values = [_nil_or_empty_text(element.get(key, ABSENT)) if isinstance(element, dict) else "" for key in keys]
            if values and tuple(values) not in seen:
                seen.add(tuple(values))
                found.append(values)
    return found


def _element_primitive_values(dest: list, origin: Any) -> list[list[str]]:
    found: list[list[str]] = []
    seen: set[str] = set()
    for source in (origin, dest):
        if not isinstance(source, list):
            continue
        for element in source:
            text = scalar_text(element)
            if text not in seen:
                seen.add(text)
                found.append([text])
    return found


def _validate_keys(valid: set[str], values: list[str], keys: list[str]) -> tuple[list[str], list[str]]:
    """Keep the merge keys some element has a value for (`valid`: secondary keys such as ``protocol`` may be
    absent)."""
    if not valid:
        return keys, values
    return [key for key in keys if key in valid], [
        value for index, value in enumerate(values) if value != "" or keys[index] in valid
    ]


def _match(first: list[str], second: list[str]) -> tuple[bool, list[str]]:
    if len(first) != len(second):
        return False, []
    common = False
    merged: list[str] = []
    for one, other in zip(first, second):
        if one == other:
            common = True
            merged.append(one)
            continue
        if one and other:
            return False, []
        merged.append(one or other)
    return common, merged


def _merge_values(values_list: list[list[str]]) -> list[list[str]]:
    """Two key tuples that differ only where one is empty name the same element (port 80 vs 80/TCP)."""
    for i in range(len(values_list)):
        first = values_list[i]
        for j in range(len(values_list)):
            matched, merged = _match(first, values_list[j])
            if matched:
                values_list[i] = merged
                values_list[j] = merged
    return values_list


def _set_associative_elements(
    values_list: list[list[str]], keys: list[str], dest: list, origin: Any, schema: Schema
) -> Any:
    """setAssociativeSequenceElements: merge element by element, then lay out patch-first."""
    items: list = []
    elements = element_schema(schema)
    if len(keys) > 1:
        values_list = _merge_values(values_list)
    valid_keys: list[str] = keys
    valid = {keys[index] for entry in values_list for index, value in enumerate(entry) if value != ""}
    for values in values_list:
        if not values:
            continue
        valid_keys, valid_values = _validate_keys(valid, values, keys)
        pair_keys, pair_values = _validate_keys(
            {valid_keys[index] for index, value in enumerate(valid_values) if value != ""}, valid_values, valid_keys)
        sources = _element_list(dest, pair_keys, pair_values), _element_list(origin, pair_keys, pair_values)
        value = _walk(*sources, elements)
        removed = False
        for index, key in enumerate(valid_keys):
            if _is_null(value) or value == {}:
                _element_setter(dest, ABSENT, valid_keys, valid_values)
                removed = True
            elif isinstance(value, dict) and key not in value and valid_values[index] != "":
                value[key] = _text_to_scalar(valid_values[index])
        if removed:
            continue
        _element_setter(items, value, valid_keys, valid_values)
    if values_list:
        dest = _append_list_node(items, dest, valid_keys)
    if _is_null(dest):
        return ABSENT
    return dest


def _element_list(source: Any, keys: list[str], values: list[str]) -> Any:
    """RNode.ElementList: the first element whose keys have these values (as text)."""
    if not isinstance(source, list):
        return ABSENT
    keys = keys or [""]
    values = values or [""]
    if not keys[0]:
        return next((element for element in source if scalar_text(element) == values[0]), ABSENT)
    for element in source:
        if not isinstance(element, dict):
            continue
        if all(key in element and scalar_text(element[key]) == value for key, value in zip(keys, values)):
            return element
    return ABSENT


def _field_matches(element: Any, name: str, value: str) -> bool:
    """FieldMatcher{Name, StringValue}: an empty value matches any element that has the field."""
    if _is_null(element):
        return False
    if not name:
        if isinstance(element, (dict, list)):
            raise _kind_error("ScalarNode", element)
        return scalar_text(element) == value
    if not isinstance(element, dict):
        raise _kind_error("MappingNode", element)
    if name not in element:
        return False
    return not value or scalar_text(element[name]) == value


def _element_setter(target: list, element: Any, keys: list[str], values: list[str]) -> None:
    """yaml.ElementSetter: replace the elements matching keys=values with `element`, or delete them (ABSENT).

    Null and empty-map elements are dropped on the way, and with no values every element that is
    not matched is dropped too: kyaml's behaviour, which Kyverno inherits.
    """
    keys = keys or [""]
    mapping_setter = bool(keys[0]) and bool(values) and bool(values[0])
    kept: list = []
    matched = False
    for existing in target:
        if _is_null(existing) or existing == {}:
            continue
        if not isinstance(existing, dict) and mapping_setter:
            kept.append(existing)
            continue
        found = True
        last = False
        for index, key in enumerate(keys):
            if index < len(values):
                last = _field_matches(existing, key, values[index])
            if not last:
                found = False
                break
        if not found:
            if values:
                kept.append(existing)
            continue
        matched = True
        if element is ABSENT:
            continue
        kept.append(element)
    target[:] = kept
    if _is_null(element):
        return
    if not matched:
        target.append(element)


def _append_list_node(target: list, source: list, keys: list[str]) -> list:
    """appendListNode: the resource's elements after the patch's, each replacing its merged twin."""
    for element in list(source):
        if not keys or not keys[0]:
            _element_setter(target, element, [""], [scalar_text(element)])
            continue
        values: list[str] = []
        for key in keys:
            if _is_null(element):
                target.append(element)
                continue
            if not isinstance(element, dict):
                raise _kind_error("MappingNode", element)
            if key not in element:
                target.append(element)
                continue
            values.append(scalar_text(element[key]))
        if len(keys) > 1:
            _element_setter(target, ABSENT, keys, values)
        _element_setter(target, element, keys, values)
    return target
