"""Resources the proof runs both policies on, made from the tests' resources and from what a rule reads.

A rule reads some fields (the keys of its patterns, the ``{{ }}`` chains of
its conditions and foreach lists) and mentions some values (pattern leaves,
condition values). For each resource the rule applies to, every field it
reads is varied: removed, set to null, set to a value of another kind (a
text, a number, a boolean), set to each value the rule mentions near it and
to their neighbours (each side of an operator's boundary: ``>=2Gi`` gives
``2Gi``, ``2147483649``, ``2147483647``...), and, where it holds a list,
emptied or given one more item. A Pod the rule applies to is also wrapped
in the controllers Kyverno's autogen derives rules for (Deployment,
CronJob, ...), so the autogen of both policies is compared too.

For a built-in kind only objects the API server would admit are made: no
nulls (it drops them), no value of another kind (a number may still stand
for a numeric text: quantities and ports take both), and the fields it
requires (``spec``, ``containers`` and each container's ``name`` and
``image`` ...) are never removed. Objects of other kinds (custom resources,
whose schema may leave a value open) also get nulls and texts, numbers and
booleans in place of each other. Never made, for any kind: a list or a map
replaced by a value of another kind (structural schemas refuse them), and
values holding ``*`` or ``?`` that the rule does not mention.

Everything is deterministic and bounded (`LIMIT` variants per resource).
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from assertree.languages.kyverno.anchors import parse_anchor
from assertree.languages.kyverno.operators import parse_quantity
from assertree.languages.kyverno.wildcard import contains_wildcard, match

__all__ = ["LIMIT", "Reads", "reads_of", "variants", "wrapped_in_controllers"]

LIMIT = 240
_ANY = "*"
Path = tuple[str, ...]


@dataclass
class Reads:
    """The fields a rule reads (paths from the resource, ``*`` for every list item), and per field the values
    it mentions."""

    paths: dict[Path, list[Any]] = field(default_factory=dict)

    def add(self, path: Path, values: Iterable[Any] = ()) -> None:
        known = self.paths.setdefault(path, [])
        for value in values:
            if not any(type(value) is type(seen) and value == seen for seen in known):
                known.append(value)


def reads_of(rule: dict) -> Reads:
    """What `rule` (a ClusterPolicy rule) reads and mentions."""
    reads = Reads()
    validate = rule.get("validate") or {}
    if isinstance(validate, dict):
        for key in ("pattern", "anyPattern"):
            if validate.get(key) is not None:
                for pattern in validate[key] if key == "anyPattern" and isinstance(validate[key], list) \
                        else [validate[key]]:
                    _pattern_reads(pattern, (), reads)
        _conditions_reads((validate.get("deny") or {}).get("conditions") if isinstance(validate.get("deny"), dict)
                          else None, {}, reads)
        for entry in validate.get("foreach") or []:
            _foreach_reads(entry, {}, reads)
    mutate = rule.get("mutate") or {}
    if isinstance(mutate, dict) and isinstance(mutate.get("patchStrategicMerge"), dict):
        _pattern_reads(mutate["patchStrategicMerge"], (), reads)  # the fields it sets, and their values
    _conditions_reads(rule.get("preconditions"), {}, reads)
    return reads


def _pattern_reads(pattern: Any, at: Path, reads: Reads) -> None:
    from assertree.migrate.convert.leaves import probe_values

    if isinstance(pattern, dict):
        for key, value in pattern.items():
            anchor = parse_anchor(str(key).strip())
            name = anchor.key if anchor.kind is not None else str(key)
            _pattern_reads(value, (*at, name), reads)
        if not pattern:
            reads.add(at)
        return
    if isinstance(pattern, list):
        for item in pattern[:1]:
            _pattern_reads(item, (*at, _ANY), reads)
        reads.add(at)
        return
    values = [value for value in probe_values(pattern) if not isinstance(value, list | dict)]
    if isinstance(pattern, str):
        # texts drawn from the pattern first (its own text only when it has no operators), then other texts
        generic = probe_values(None)
        values.sort(key=lambda value: (any(type(value) is type(item) and value == item for item in generic),
                                       not isinstance(value, str)))
    else:
        values.insert(0, pattern)
    reads.add(at, values)


def _conditions_reads(block: Any, names: dict[str, Path], reads: Reads) -> None:
    conditions: list[Any] = []
    if isinstance(block, list):
        conditions = block
    elif isinstance(block, dict):
        conditions = list(block.get("any") or []) + list(block.get("all") or [])
    for condition in conditions:
        if not isinstance(condition, dict):
            continue
        key, value = condition.get("key"), condition.get("value")
        for path, final in _template_paths(key, names):
            reads.add(path, _mentioned(value) if final else ())
        for path, final in _template_paths(value, names):
            reads.add(path, _mentioned(key) if final else ())
        for side, other in ((key, value), (value, key)):
            _images_reads(side, other, reads)


def _images_reads(text: Any, other: Any, reads: Reads) -> None:
    """Kyverno's ``images.<containers>...`` reads the containers' images: probe images made of the parts the
    condition mentions (a registry, a tag, a name)."""
    if not isinstance(text, str):
        return
    for kind in sorted(set(re.findall(r"images\.(containers|initContainers|ephemeralContainers)\b", text))):
        images = ["nginx", "nginx:latest", "nginx:1.25", "ghcr.io/org/app:1", "localhost:5000/app",
                  "nginx@sha256:" + "a" * 64]
        for part in _mentioned(other):
            if isinstance(part, str) and part and "*" not in part and "?" not in part:
                images.extend([f"{part}/app:1", f"app:{part}", f"{part}:1", f"{part}/org/app"])
        reads.add(("spec", kind, _ANY, "image"), images)


def _mentioned(value: Any) -> list[Any]:
    """Values a condition mentions, and their neighbours (numbers +-1, texts without wildcards)."""
    out: list[Any] = []
    for item in value if isinstance(value, list) else [value]:
        if isinstance(item, str) and "{{" in item:
            continue
        if isinstance(item, bool) or item is None:
            out.append(item)
        elif isinstance(item, int | float):
            out.extend([item, item + 1, item - 1])
        elif isinstance(item, str):
            out.extend([item, item.replace("*", "").replace("?", ""), item.replace("*", "x").replace("?", "y")])
    return out


def _foreach_reads(entry: Any, names: dict[str, Path], reads: Reads) -> None:
    if not isinstance(entry, dict) or not isinstance(entry.get("list"), str):
        return
    lists = _expression_paths(entry["list"], names)
    finals = [path for path, final in lists if final]
    element = (*finals[0], _ANY) if finals else None
    inner = dict(names)
    if element is not None:
        inner["element"] = element
    for path, _final in lists:
        reads.add(path)
    for key in ("pattern", "anyPattern"):
        if entry.get(key) is not None and element is not None:
            patterns = entry[key] if key == "anyPattern" and isinstance(entry[key], list) else [entry[key]]
            for pattern in patterns:
                _pattern_reads(pattern, element, reads)
    _conditions_reads(entry.get("preconditions"), inner, reads)
    deny = entry.get("deny")
    _conditions_reads(deny.get("conditions") if isinstance(deny, dict) else None, inner, reads)
    for nested in entry.get("foreach") or []:
        _foreach_reads(nested, inner, reads)


def _template_paths(text: Any, names: dict[str, Path]) -> list[tuple[Path, bool]]:
    if not isinstance(text, str) or "{{" not in text:
        return []
    out: list[tuple[Path, bool]] = []
    position = 0
    while True:
        start = text.find("{{", position)
        if start < 0:
            return out
        end = text.find("}}", start)
        if end < 0:
            return out
        out.extend(_expression_paths(text[start + 2:end].lstrip("-"), names))
        position = end + 2


def _expression_paths(expression: str, names: dict[str, Path]) -> list[tuple[Path, bool]]:
    """The resource fields a JMESPath expression reads (``request.object.spec.x`` -> ``spec.x``), each with
    whether the expression's value comes from it (the values a condition compares go there only)."""
    from assertree.jp.errors import JMESPathError
    from assertree.jp.parser import parse

    try:
        tree = parse(expression.strip())
    except JMESPathError:
        return []
    roots = {"request.object": (), "request.oldObject": (), **{name: path for name, path in names.items()}}
    out: list[Path] = []
    final = _walk(tree, None, roots, out)
    return [(path, path == final) for path in out]


def _chain(node: Any) -> list[str] | None:
    if node.type == "field":
        return [str(node.value)]
    if node.type == "subexpression" and node.children[1].type == "field":
        left = _chain(node.children[0])
        return None if left is None else [*left, str(node.children[1].value)]
    return None


def _walk(node: Any, current: Path | None, roots: dict[str, Path], out: list[Path]) -> Path | None:
    """Record the paths `node` reads; return the path its value comes from, when it is one."""
    if node.type in ("field", "subexpression") and current is None:
        chain = _chain(node)
        if chain is not None:
            for length in range(len(chain), 0, -1):
                name = ".".join(chain[:length])
                if name in roots:
                    path = (*roots[name], *chain[length:])
                    out.append(path)
                    return path
            return None
    if node.type == "field" and current is not None:
        path = (*current, str(node.value))
        out.append(path)
        return path
    if node.type == "subexpression":
        left = _walk(node.children[0], current, roots, out)
        return _walk(node.children[1], left, roots, out) if left is not None else None
    if node.type in ("projection", "filter_projection", "value_projection"):
        left = _walk(node.children[0], current, roots, out)
        item = (*left, _ANY) if left is not None else None
        if item is not None:
            if node.type == "filter_projection":
                _walk(node.children[2], item, roots, out)
            return _walk(node.children[1], item, roots, out) or item
        return None
    if node.type == "flatten":
        return _walk(node.children[0], current, roots, out)
    if node.type in ("identity", "current"):
        return current
    for child in node.children:
        _walk(child, current, roots, out)
    return None


# -- variants -------------------------------------------------------------------------------------------------


_WRONG = ("x", 3, True)


# Fields every admitted object of a built-in kind has (required, or filled in by the API server's defaults before
# admission): never removed or emptied in a probe.
_REQUIRED = (("metadata",), ("metadata", "name"), ("metadata", "namespace"), ("kind",), ("apiVersion",), ("spec",),
             ("template",), ("spec", "replicas"), ("spec", "restartPolicy"), ("spec", "dnsPolicy"),
             ("spec", "terminationGracePeriodSeconds"), ("spec", "schedulerName"), ("imagePullPolicy",),
             ("terminationMessagePath",), ("terminationMessagePolicy",),
             ("jobTemplate",), ("containers",), ("containers", _ANY, "name"), ("containers", _ANY, "image"),
             ("initContainers", _ANY, "name"), ("initContainers", _ANY, "image"),
             ("ephemeralContainers", _ANY, "name"), ("ephemeralContainers", _ANY, "image"),
             ("volumes", _ANY, "name"), ("env", _ANY, "name"), ("imagePullSecrets", _ANY, "name"),
             ("topologySpreadConstraints", _ANY, "whenUnsatisfiable"),
             ("topologySpreadConstraints", _ANY, "topologyKey"), ("topologySpreadConstraints", _ANY, "maxSkew"))


def _required(path: Path) -> bool:
    return any(path[-len(suffix):] == suffix for suffix in _REQUIRED) or path in (("spec",), ("metadata",))


def variants(resource: dict, reads: Reads, limit: int = LIMIT, *,
             admissible: bool = False) -> Iterator[tuple[dict, str]]:
    """(resource, what changed) for each variant of `resource` the rule's reads call for, at most `limit`.
    With `admissible` (a built-in kind) only objects the API server would accept: no nulls (it drops them),
    no value of another kind, required fields kept."""
    produced = 0
    seen: set[str] = {_fingerprint(resource)}
    for path, values in reads.paths.items():
        for changed, text in _path_variants(resource, path, values, admissible):
            print_ = _fingerprint(changed)
            if print_ in seen:
                continue
            seen.add(print_)
            yield changed, text
            produced += 1
            if produced >= limit:
                return


def _fingerprint(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def _path_variants(resource: dict, path: Path, values: list[Any],
                   admissible: bool) -> Iterator[tuple[dict, str]]:
    where = _positions(resource, path)
    required = admissible and _required(path)
    label = ".".join(path)
    if not where:
        # the field is absent: create it with each value the rule mentions
        for value in values[:12]:
            if admissible and (value is None or not _same_kind(value, values[0]) or (required and value == "")
                               or not _fits(path, value)):
                continue  # a new field of an admitted object holds what the rule puts or expects there
            changed = copy.deepcopy(resource)
            if _create(changed, path, value):
                yield changed, f"{label} = {_text(value)}"
        return
    for position in where[:2]:
        current = _get(resource, position)
        here = ".".join(str(step) for step in position)
        if not required:
            yield _set(resource, position, _DELETE), f"{here} removed"
        if not isinstance(current, dict | list) and not admissible:
            yield _set(resource, position, None), f"{here} = null"
        for value in values[:16]:
            fits = _same_kind(value, current) and _fits(path, value)
            if isinstance(value, dict | list) or (admissible and not fits) or (required and value == ""):
                continue
            yield _set(resource, position, value), f"{here} = {_text(value)}"
        for value in _WRONG if not admissible and not isinstance(current, dict | list) else ():
            if type(value) is not type(current):
                yield _set(resource, position, value), f"{here} = {_text(value)} (another kind)"
        if isinstance(current, list) and not required:
            yield _set(resource, position, []), f"{here} = []"
            if current:
                extra = copy.deepcopy(current[0])
                if isinstance(extra, dict) and isinstance(extra.get("name"), str):
                    extra["name"] += "-2"  # names are keys: an admitted list holds each once
                yield _set(resource, position, [*current, extra]), f"{here}: one more item"


_DELETE = object()


def _fits(path: Path, value: Any) -> bool:
    """Whether an admitted object may hold `value` at `path` (resource amounts are quantities)."""
    if len(path) >= 3 and path[-3] == "resources" and path[-2] in ("limits", "requests"):
        return (isinstance(value, int | float) and not isinstance(value, bool)) or (
            isinstance(value, str) and parse_quantity(value) is not None)
    return True


def _same_kind(value: Any, current: Any) -> bool:
    """Whether `value` may stand where `current` is in an admitted object (numbers and numeric text stand
    for each other: quantities and ports take both)."""
    if current is None:
        return True
    if isinstance(current, bool) or isinstance(value, bool):
        return isinstance(current, bool) and isinstance(value, bool)
    if isinstance(current, int | float) or isinstance(value, int | float):
        return isinstance(current, int | float) and isinstance(value, int | float | str)
    return type(value) is type(current)


def _positions(value: Any, path: Path, at: tuple = ()) -> list[tuple]:
    """Concrete positions (keys and list indexes) of `path` in `value`."""
    if not path:
        return [at]
    step, rest = path[0], path[1:]
    if step == _ANY:
        if not isinstance(value, list):
            return []
        out: list[tuple] = []
        for index, item in enumerate(value[:3]):
            out.extend(_positions(item, rest, (*at, index)))
        return out
    if isinstance(value, dict) and step in value:
        return _positions(value[step], rest, (*at, step))
    if isinstance(value, dict) and _wildcard_key(at, step):
        # a wildcard label/annotation key of a pattern stands for the keys it matches (Kyverno picks one)
        return [found for key in value if match(step, str(key)) for found in _positions(value[key], rest, (*at, key))]
    return []


def _wildcard_key(at: tuple, step: Any) -> bool:
    return bool(at) and at[-1] in ("labels", "annotations") and isinstance(step, str) and contains_wildcard(step)


def _get(value: Any, position: tuple) -> Any:
    for step in position:
        value = value[step]
    return value


def _set(resource: dict, position: tuple, new: Any) -> dict:
    changed = copy.deepcopy(resource)
    target: Any = changed
    for step in position[:-1]:
        target = target[step]
    last = position[-1]
    if new is _DELETE:
        if isinstance(target, dict):
            target.pop(last, None)
        else:
            del target[last]
    else:
        target[last] = copy.deepcopy(new)
    return changed


_NAMED_LISTS = {"containers": {"name": "probe", "image": "probe:1.0"},
                "initContainers": {"name": "probe-init", "image": "probe:1.0"},
                "ephemeralContainers": {"name": "probe-debug", "image": "probe:1.0"},
                "volumes": {"name": "probe"}, "env": {"name": "PROBE"}}


def _create(resource: dict, path: Path, value: Any) -> bool:
    """`path` made in `resource` with `value` at its end (a new list item gets the fields its list requires)."""
    target: Any = resource
    for index, step in enumerate(path[:-1]):
        following = path[index + 1]
        if step == _ANY:
            if not isinstance(target, list):
                return False
            if not target:
                seed = _NAMED_LISTS.get(str(path[index - 1]) if index else "", {})
                target.append(copy.deepcopy(seed) if following != _ANY else [])
            target = target[0]
            continue
        if not isinstance(target, dict):
            return False
        if step not in target or target[step] is None:
            target[step] = [] if following == _ANY else {}
        target = target[step]
    last = path[-1]
    if _wildcard_key(path[:-1], last):  # a key the wildcard matches (none holds `*` itself)
        last = str(last).replace("*", "x").replace("?", "y")
    if last == _ANY:
        if not isinstance(target, list):
            return False
        target.append(copy.deepcopy(value))
        return True
    if not isinstance(target, dict):
        return False
    target[last] = copy.deepcopy(value)
    return True


def _text(value: Any) -> str:
    return json.dumps(value, default=str)


# -- Pod controllers -----------------------------------------------------------------------------------------

_TEMPLATES = {
    "DaemonSet": ("apps/v1", ("spec", "template")),
    "Deployment": ("apps/v1", ("spec", "template")),
    "Job": ("batch/v1", ("spec", "template")),
    "StatefulSet": ("apps/v1", ("spec", "template")),
    "ReplicaSet": ("apps/v1", ("spec", "template")),
    "ReplicationController": ("v1", ("spec", "template")),
    "CronJob": ("batch/v1", ("spec", "jobTemplate", "spec", "template")),
}


def wrapped_in_controllers(pod: dict, kinds: Iterable[str]) -> Iterator[tuple[dict, str]]:
    """`pod` as the template of each controller kind in `kinds` (as Kyverno's autogen sees controllers)."""
    metadata = pod.get("metadata") or {}
    template: dict[str, Any] = {"metadata": {key: copy.deepcopy(value) for key, value in metadata.items()
                                             if key in ("labels", "annotations")}}
    if "spec" in pod:
        template["spec"] = copy.deepcopy(pod["spec"])
    for kind in kinds:
        if kind not in _TEMPLATES:
            continue
        api_version, where = _TEMPLATES[kind]
        body: dict[str, Any] = template
        for step in reversed(where[1:]):
            body = {step: body}
        out = {"apiVersion": api_version, "kind": kind,
               "metadata": {"name": metadata.get("name", "pod"),  # the Pod's values (by name) apply to it
                            **({"namespace": metadata["namespace"]} if metadata.get("namespace") else {})},
               where[0]: body}
        yield out, f"as the template of a {kind}"
