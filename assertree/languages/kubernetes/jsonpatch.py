"""RFC 6902 JSON Patch as Kubernetes' Go code applies it (evanphx/json-patch), for Kyverno and for the apiserver.

Two callers, two sets of evanphx options:

- Kyverno's ``patchesJson6902`` (pkg/engine/mutate/patch/patchJSON6902.go: evanphx/json-patch v5.9.11 with
  ``SupportNegativeIndices``, ``AllowMissingPathOnRemove`` and ``EnsurePathExistsOnAdd``): `apply_patch`'s
  defaults. Those options are where Kyverno leaves RFC 6902, and why the `jsonpatch` package on PyPI
  (strict RFC 6902: no negative indexes, an error on a missing parent or a missing ``remove`` target) is
  not used; its operations would all need rewriting.
- A MutatingAdmissionPolicy's ``JSONPatch`` mutation (k8s.io/apiserver .../mutating/patch/json_patch.go:
  gopkg.in/evanphx/json-patch.v4 with its defaults): ``ensure_path=False, allow_missing=False``; a failed
  ``test`` raises `PatchTestFailed`, on which the apiserver keeps the object unpatched.

Kept from evanphx:

- ``add`` (with ``ensure_path``) creates missing parents: objects, or arrays (padded with nulls) when the
  next token is an index or ``-``; an existing ``null`` parent is replaced (in an array, a new element is
  inserted); without it, a missing parent is an error;
- ``remove`` of a missing key or index is a no-op with ``allow_missing``, else an error;
- indexes may be negative (``-1`` is the last element, and ``add`` at ``-1`` appends, as Kyverno documents);
  ``-`` appends; an index past the end is an error;
- ``replace`` needs the target to exist; ``test`` compares JSON values (a missing key equals null);
- the first token of a path that does not start with ``/`` is ignored (``a/b`` is ``/b``).

Bounded as the Kubernetes API server bounds a JSON patch (Kyverno sets no limit, so forty ``copy``
operations that each double a list would take gigabytes): at most `MAX_OPERATIONS` operations
(``maxJSONPatchOperations``), and at most `MAX_GROWTH` bytes of JSON text added by ``copy``
operations (``JSONPatchMaxCopyBytes``, which the apiserver sets as evanphx's ``AccumulatedCopySizeLimit``)
and by the nulls that pad a list to reach an index (``EnsurePathExistsOnAdd``, which Kubernetes does not
use). What ``add`` and ``replace`` add is already in the patch's text. Past a limit the patch is a
`PatchError`, raised before the work is done.
"""

from __future__ import annotations

import contextlib
import copy
import json
import re
from typing import Any

import orjson

from assertree.jp.errors import FunctionError
from assertree.jp.functions.goyaml import decode_yaml
from assertree.jp.values import JSONTooLongError, to_json

__all__ = ["PatchError", "PatchTestFailed", "apply_patch", "decode_patch", "json_equal"]

_INDEX = re.compile(r"[+-]?[0-9]+")
_INT64 = 2**63

MAX_OPERATIONS = 10_000
"""Operations in one patch (the Kubernetes API server's ``maxJSONPatchOperations``)."""
MAX_GROWTH = 3 * 1024 * 1024
"""Bytes of JSON text one patch may add by copies and list padding (Kubernetes' ``JSONPatchMaxCopyBytes``)."""
_NULL = len("null,")  # the JSON text one padding null adds


class PatchError(Exception):
    """The patch is invalid or does not apply; the text is evanphx's, as Kyverno reports it."""


class PatchTestFailed(PatchError):
    """A ``test`` operation failed (the apiserver then leaves the object as it was)."""


def json_equal(first: Any, second: Any, memo: dict[tuple[int, int], tuple[Any, Any, bool]] | None = None) -> bool:
    """Equality of JSON values as Go's encoding/json sees them after a round trip: numbers by value
    (``1`` equals ``1.0``), booleans apart from numbers.

    With `memo`, the answer for every pair of maps and of lists compared is kept (with the pair, so that
    their ids stay theirs), and a caller that asks again about parts of values it has compared, level by
    level (`assertree.apply.rewrite.merge`), gets it at once instead of walking each subtree again."""
    if isinstance(first, bool) or isinstance(second, bool):
        return isinstance(first, bool) and isinstance(second, bool) and first == second
    if isinstance(first, (int, float)) and isinstance(second, (int, float)):
        return float(first) == float(second)
    both_maps = isinstance(first, dict) and isinstance(second, dict)
    if both_maps or (isinstance(first, list) and isinstance(second, list)):
        known = memo.get((id(first), id(second))) if memo is not None else None
        if known is not None:
            return known[2]
        if both_maps:
            equal = first.keys() == second.keys() and all(json_equal(first[key], second[key], memo) for key in first)
        else:
            equal = len(first) == len(second) and all(json_equal(a, b, memo) for a, b in zip(first, second))
        if memo is not None:
            memo[(id(first), id(second))] = (first, second, equal)
        return equal
    if type(first) is not type(second):
        return False
    return first == second


def decode_patch(patch: str | list) -> list[dict]:
    """The operations of a ``patchesJson6902`` value (YAML or JSON text, or already a list)."""
    if isinstance(patch, str):
        if not patch:
            return []
        try:
            operations = json.loads(patch) if patch[0] == "[" else decode_yaml(patch)
        except ValueError as failure:
            raise PatchError(f"failed to decode patches: {failure}") from failure
        except FunctionError as failure:
            raise PatchError(f"failed to convert patchesJSON6902 to JSON: {failure}") from failure
    else:
        operations = patch
    if not isinstance(operations, list) or not all(isinstance(op, dict) for op in operations):
        raise PatchError("failed to decode patches: json: cannot unmarshal into Go value of type jsonpatch.Patch")
    for operation in operations:
        _validate(operation)
    return operations


def _validate(operation: dict) -> None:
    kind = operation.get("op")
    if kind in ("add", "replace"):
        if "value" not in operation:
            raise _invalid(operation, "failed to decode 'value': operation, missing value field: missing value")
    elif kind in ("move", "copy"):
        if not isinstance(operation.get("from"), str):
            raise _invalid(operation, "failed to decode 'from': operation, missing from field: missing value")
    elif kind not in ("remove", "test"):
        raise _invalid(operation, "unsupported operation")
    if not isinstance(operation.get("path"), str):
        raise _invalid(operation, "failed to decode 'path': operation missing path field: missing value")


def _invalid(operation: dict, reason: str) -> PatchError:
    text = json.dumps(operation, sort_keys=True, separators=(",", ":"))
    return PatchError(f"failed to decode patches: invalid operation {text}: {reason}")


def apply_patch(document: Any, operations: list[dict], *, ensure_path: bool = True,
                allow_missing: bool = True) -> Any:
    """`document` after `operations` (a new value; `document` is not changed). Raises PatchError,
    also past `MAX_OPERATIONS` or `MAX_GROWTH`.

    The defaults are Kyverno's options; ``ensure_path=False, allow_missing=False`` are evanphx v4's
    defaults, which the apiserver uses for a MutatingAdmissionPolicy's JSON patch.
    """
    if len(operations) > MAX_OPERATIONS:
        raise PatchError(f"the allowed maximum operations in a JSON patch is {MAX_OPERATIONS}, got {len(operations)}")
    growth = _Growth()
    try:
        root = [copy.deepcopy(document)]  # a box, so that "" can replace the whole document
        for operation in operations:
            kind = operation["op"]
            if kind == "add":
                _add(root, operation["path"], copy.deepcopy(operation["value"]), growth, ensure_path=ensure_path)
            elif kind == "remove":
                _remove(root, operation["path"], allow_missing=allow_missing)
            elif kind == "replace":
                _replace(root, operation["path"], copy.deepcopy(operation["value"]))
            elif kind == "move":
                _move(root, operation["from"], operation["path"])
            elif kind == "copy":
                _copy(root, operation["from"], operation["path"], growth)
            else:
                _test(root, operation["path"], operation.get("value"))
    except (RecursionError, MemoryError):
        raise PatchError("the patched document is too large or too deeply nested to build") from None
    return root[0]


class _Growth:
    """The JSON text copies and padding have added so far, held to `MAX_GROWTH`."""

    __slots__ = ("added",)

    def __init__(self) -> None:
        self.added = 0

    def add(self, amount: int, what: str) -> None:
        self.added += amount
        if self.added > MAX_GROWTH:
            raise PatchError(f"Unable to complete the {what}, the accumulated size increase of copy is "
                             f"{self.added}, exceeding the limit {MAX_GROWTH}")

    def copy_of(self, value: Any) -> Any:
        """A copy of `value`, its JSON text counted first. Made from that text when orjson can write it
        (many times faster than `copy.deepcopy`, and the same JSON value: the patch's values are JSON)."""
        if isinstance(value, (dict, list)):
            try:
                text = orjson.dumps(value)
            except TypeError:  # not for orjson (an integer past 64 bits, a key that is not a string)
                pass
            else:
                self.add(len(text), "copy")
                return orjson.loads(text)
        try:
            length = len(to_json(value))
        except JSONTooLongError:
            length = MAX_GROWTH + 1
        except ValueError:
            length = len(repr(value))
        self.add(length, "copy")
        return copy.deepcopy(value)


# ---- evanphx's containers ---------------------------------------------------------------------


def _unescape(token: str) -> str:
    return token.replace("~1", "/").replace("~0", "~")


def _atoi(token: str) -> int | None:
    """strconv.Atoi: optional sign, decimal digits, int64 range."""
    if not _INDEX.fullmatch(token):
        return None
    number = int(token)
    return number if -_INT64 <= number < _INT64 else None


def _get(container: Any, key: str) -> Any:
    """container.get: the child, or raise PatchError (missing key, bad index); "" is the container itself."""
    if key == "":
        return container
    if isinstance(container, dict):
        if key not in container:
            raise PatchError(f"unable to get nonexistent key: {key}: missing value")
        return container[key]
    index = _atoi(key)
    if index is None:
        raise PatchError(f'strconv.Atoi: parsing "{key}": invalid syntax')
    if index < 0:
        if index < -len(container):
            raise PatchError(f"Unable to access invalid index: {index}: invalid index referenced")
        index += len(container)
    if index >= len(container):
        raise PatchError(f"Unable to access invalid index: {index}: invalid index referenced")
    return container[index]


def _container_add(container: Any, key: str, value: Any) -> None:
    if isinstance(container, dict):
        container[key] = value
        return
    if key == "-":
        container.append(value)
        return
    index = _atoi(key)
    if index is None:
        reason = f'strconv.Atoi: parsing "{key}": invalid syntax'
        raise PatchError(f"value was not a proper array index: '{key}': {reason}")
    size = len(container) + 1
    if index >= size:
        raise PatchError(f"Unable to access invalid index: {index}: invalid index referenced")
    if index < 0:
        if index < -size:
            raise PatchError(f"Unable to access invalid index: {index}: invalid index referenced")
        index += size
    container.insert(index, value)


def _container_remove(container: Any, key: str, *, allow_missing: bool = True) -> None:
    if isinstance(container, dict):
        if key not in container and not allow_missing:
            raise PatchError(f"Unable to remove nonexistent key: {key}: missing value")
        container.pop(key, None)
        return
    index = _atoi(key)
    if index is None:
        raise PatchError(f'strconv.Atoi: parsing "{key}": invalid syntax')
    if not -len(container) <= index < len(container):
        if allow_missing:
            return
        raise PatchError(f"Unable to access invalid index: {index}: invalid index referenced")
    del container[index]


def _find_parent(root: list, path: str) -> tuple[Any, str] | None:
    """findObject: the container holding the path's last token, or None when a step is missing."""
    tokens = path.split("/")
    if len(tokens) < 2:
        return (root[0], "") if path == "" else None
    document = root[0]
    for token in tokens[1:-1]:
        try:
            child = _get(document, _unescape(token))
        except PatchError:
            return None
        if not isinstance(child, (dict, list)):
            return None
        document = child
    return document, _unescape(tokens[-1])


def _ensure_path(root: list, path: str, growth: _Growth) -> None:
    """ensurePathExists: create the missing parents of `path` (objects, or null-padded arrays)."""
    tokens = path.split("/")
    if len(tokens) < 2:
        return
    parts = tokens[1:]
    document = root[0]
    for position, part in enumerate(parts[:-1]):
        key = _unescape(part)
        try:
            target = _get(document, key)
        except PatchError:
            target = None
        if target is None:
            index = _atoi(part)
            if index is not None and isinstance(document, list) and index >= len(document) + 1:
                growth.add(_NULL * (index - len(document)), "padding")
                document.extend([None] * (index - len(document)))
            following = parts[position + 1]
            next_index = _atoi(following)
            if next_index is not None or following == "-":
                start = next_index or 0
                if start < -1:
                    raise PatchError(
                        f"Unable to ensure path for negative index other than -1: {start}: invalid index referenced"
                    )
                growth.add(_NULL * max(start, 0), "padding")
                created: Any = [None] * max(start, 0)
            else:
                created = {}
            with contextlib.suppress(PatchError):  # evanphx ignores this error, goes on in the detached node
                _container_add(document, part, created)  # evanphx adds the raw token, not the unescaped key
            document = created
        elif isinstance(target, (dict, list)):
            document = target
        else:
            raise PatchError("invalid state detected")


def _add(root: list, path: str, value: Any, growth: _Growth, *, ensure_path: bool) -> None:
    if path == "":
        if not isinstance(value, (dict, list)):
            raise PatchError("json: cannot unmarshal the value into the document")
        root[0] = value
        return
    if ensure_path:
        _ensure_path(root, path, growth)
    found = _find_parent(root, path)
    if found is None:
        raise PatchError(f'add operation does not apply: doc is missing path: "{path}": missing value')
    try:
        _container_add(found[0], found[1], value)
    except PatchError as failure:
        raise PatchError(f"error in add for path: '{path}': {failure}") from failure


def _remove(root: list, path: str, *, allow_missing: bool) -> None:
    found = _find_parent(root, path)
    if found is None:
        if allow_missing:
            return
        raise PatchError(f"remove operation does not apply: doc is missing path: \"{path}\": missing value")
    try:
        _container_remove(found[0], found[1], allow_missing=allow_missing)
    except PatchError as failure:
        raise PatchError(f"error in remove for path: '{path}': {failure}") from failure


def _replace(root: list, path: str, value: Any) -> None:
    if path == "":
        if not isinstance(value, (dict, list)):
            raise PatchError("replace operation value must be object or array")
        root[0] = value
        return
    found = _find_parent(root, path)
    if found is None:
        raise PatchError(f"replace operation does not apply: doc is missing path: {path}: missing value")
    container, key = found
    try:
        _get(container, key)
    except PatchError as failure:
        raise PatchError(f"replace operation does not apply: doc is missing key: {path}: missing value") from failure
    if isinstance(container, dict):
        container[key] = value
    else:
        index = _atoi(key)
        assert index is not None  # _get accepted it
        container[index] = value


def _move(root: list, source: str, path: str) -> None:
    if source == "":
        raise PatchError("unable to move entire document to another path: invalid state detected")
    found = _find_parent(root, source)
    if found is None:
        raise PatchError(f"move operation does not apply: doc is missing from path: {source}: missing value")
    try:
        value = _get(found[0], found[1])
        _container_remove(found[0], found[1])
    except PatchError as failure:
        raise PatchError(f"error in move for path: '{found[1]}': {failure}") from failure
    target = _find_parent(root, path)
    if target is None:
        raise PatchError(f"move operation does not apply: doc is missing destination path: {path}: missing value")
    if _holds(value, root, path):
        # RFC 6902 4.4: a location cannot be moved into one of its children. evanphx/json-patch does not check,
        # and the cycle it builds never ends when the resource is written out; refused here.
        raise PatchError(f"error in move for path: '{path}': {source} cannot be moved into itself")
    try:
        _container_add(target[0], target[1], value)
    except PatchError as failure:
        raise PatchError(f"error in move for path: '{path}': {failure}") from failure


def _holds(value: Any, root: list, path: str) -> bool:
    """Whether `value` is one of the containers `path` passes through (so adding it there makes a cycle)."""
    document = root[0]
    for token in path.split("/")[1:-1]:
        if document is value:
            return True
        try:
            document = _get(document, _unescape(token))
        except PatchError:
            return False
    return document is value


def _copy(root: list, source: str, path: str, growth: _Growth) -> None:
    found = _find_parent(root, source)
    if found is None:
        raise PatchError(f'copy operation does not apply: doc is missing from path: "{source}": missing value')
    try:
        value = _get(found[0], found[1])
    except PatchError as failure:
        raise PatchError(f"error in copy for from: '{source}': {failure}") from failure
    target = _find_parent(root, path)
    if target is None:
        raise PatchError(f"copy operation does not apply: doc is missing destination path: {path}: missing value")
    copied = growth.copy_of(value)  # counted (and refused) before it is added
    try:
        _container_add(target[0], target[1], copied)
    except PatchError as failure:
        raise PatchError(f"error while adding value during copy: {failure}") from failure


def _test(root: list, path: str, expected: Any) -> None:
    if path == "":
        if json_equal(root[0], expected):
            return
        raise PatchTestFailed(f"testing value {path} failed: test failed")
    found = _find_parent(root, path)
    if found is None:
        raise PatchError(f"test operation does not apply: is missing path: {path}: missing value")
    container, key = found
    if isinstance(container, dict):
        actual = container.get(key) if key else container
    else:
        try:
            actual = _get(container, key)
        except PatchError as failure:
            raise PatchError(f"error in test for path: '{path}': {failure}") from failure
    if actual is None or expected is None:
        if actual is None and expected is None:
            return
        raise PatchTestFailed(f"testing value {path} failed: test failed")
    if not json_equal(actual, expected):
        raise PatchTestFailed(f"testing value {path} failed: test failed")
