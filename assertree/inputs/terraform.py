"""Terraform plans (``terraform show -json``) as resources, for ``scan --terraform``.

A plan lists what will exist in ``planned_values.root_module``, with nested
``child_modules`` to any depth, and what will change in ``resource_changes``.
Each planned resource becomes one resource to check, keeping its own fields
(``address``, ``mode``, ``type``, ``name``, ``index``, ``values``, ...) and
gaining ``change`` from its ``resource_changes`` entry (``actions``,
``after_unknown``, ...), so a policy written for kyverno-json's
``--pre-process planned_values.root_module.resources`` runs unchanged and can
also look at ``change.actions``.

Resources being destroyed are not in ``planned_values``; they are left out
unless `include_deleted` is set, in which case each is built from its
``resource_changes`` entry with its last known values (``change.before``).
The adapter is opt-in: a kyverno-json policy may be written against the whole
plan document, so a plan scanned without ``--terraform`` stays one payload.

Plans come from pull requests, so their shape is checked as it is walked: a
field of the wrong type (``resource_changes`` a string, ``root_module`` a
list, a ``change`` that is not an object) is a `PayloadError` naming the
field path and pointing at its line (``plan.json:3:23: resource_changes: must
be a list, not a string``). What Terraform itself leaves out or writes as
null (no ``resource_changes``, no ``child_modules``, ``root_module: null``)
reads as empty.
"""

from __future__ import annotations

from typing import Any, NoReturn

from assertree.errors import PayloadError
from assertree.results import Resource

_JSON_TYPES: dict[type, str] = {dict: "an object", list: "a list", str: "a string", bool: "a boolean",
                                 int: "a number", float: "a number", type(None): "null"}


def looks_like_plan(value: Any) -> bool:
    """Whether a payload is a ``terraform show -json`` plan."""
    return isinstance(value, dict) and "planned_values" in value and (
        "terraform_version" in value or "resource_changes" in value
    )


class _Shape:
    """Reads fields of one plan, raising a located PayloadError when one has the wrong type."""

    def __init__(self, source: str | None, file: Any) -> None:
        self.source = source
        self.file = file

    def field(self, container: dict, key: str, path: tuple, expected: type, *, optional: bool = True) -> Any:
        """``container[key]`` when it is an `expected`; its empty form when absent or null (if `optional`)."""
        value = container.get(key)
        if value is None and optional:
            return expected()
        if not isinstance(value, expected):
            self.fail((*path, key), f"must be {_JSON_TYPES[expected]}, not {_type_name(value)}")
        return value

    def item(self, value: Any, path: tuple, expected: type) -> Any:
        """An element of a list, which must be an `expected`."""
        if not isinstance(value, expected):
            self.fail(path, f"must be {_JSON_TYPES[expected]}, not {_type_name(value)}")
        return value

    def fail(self, path: tuple, message: str) -> NoReturn:
        line = column = None
        locate = getattr(self.file, "locate", None)
        if locate is not None:
            position = locate(path)
            if position is not None:
                line, column = position
        raise PayloadError(message, source=self.source, line=line, column=column, path=path)


def _type_name(value: Any) -> str:
    return _JSON_TYPES.get(type(value), type(value).__name__)


def _modules(shape: _Shape, root: dict, root_path: tuple) -> list[tuple[list, tuple]]:
    """The resources list of a planned_values module and of each of its child modules to any depth, in
    document order (a module's resources, then each child's), with the module's position in the plan.

    Walked with an explicit stack: a plan nests modules as deep as its author likes."""
    found = []
    stack = [(root, root_path)]
    while stack:
        module, path = stack.pop()
        found.append((shape.field(module, "resources", path, list), path))
        children = shape.field(module, "child_modules", path, list)
        for index in reversed(range(len(children))):
            child_path = (*path, "child_modules", index)
            stack.append((shape.item(children[index], child_path, dict), child_path))
    return found


def _address(shape: _Shape, entry: dict, path: tuple) -> str | None:
    """An entry's ``address``: a string, or None when absent."""
    address = entry.get("address")
    if address is not None and not isinstance(address, str):
        shape.fail((*path, "address"), f"must be a string, not {_type_name(address)}")
    return address


def plan_resources(plan: Any, source: str | None = None, *, include_deleted: bool = False,
                   file: Any = None) -> list[Resource]:
    """The resources of a plan, each joined with its change; see the module docstring. `file` is the
    payload the plan was read from (reports ask it where a field is; errors point into it).

    Each planned resource is a shallow copy that gains ``change``: the plan itself stays as the file spells
    it, which is what lets reports find positions in it quickly (`assertree.documents.reader`'s locator
    compares the file's text with the value's own JSON; 10,000 copies cost a few milliseconds)."""
    if not looks_like_plan(plan):
        raise PayloadError(
            "--terraform expects a plan from 'terraform show -json' (with planned_values and "
            "resource_changes)",
            source=source,
        )
    shape = _Shape(source, file)
    entries = shape.field(plan, "resource_changes", (), list)
    changes = changes_by_address(entries, shape)
    resources: list[Resource] = []
    append, change_of = resources.append, changes.get
    planned = shape.field(plan, "planned_values", (), dict)
    root_module = shape.field(planned, "root_module", ("planned_values",), dict)
    for listed, path in _modules(shape, root_module, ("planned_values", "root_module")):
        for index, resource in enumerate(listed):
            origin = (*path, "resources", index)
            if type(resource) is not dict:
                shape.item(resource, origin, dict)  # raises, naming the field
            item = dict(resource)
            address = item.get("address")
            if address is not None and type(address) is not str:
                _address(shape, item, origin)  # raises, naming the field
            change = change_of(address)
            if change is not None:
                item["change"] = change
            append(Resource(item, source, None, plan, origin, address, file))  # positional: 10,000 calls
    if include_deleted:
        for position, entry in enumerate(entries):
            if entry["change"].get("actions") == ["delete"]:
                resources.append(_resource(_deleted(entry), source, plan, ("resource_changes", position), file))
    return resources


def changes_by_address(entries: list, shape: _Shape) -> dict[str | None, dict]:
    """Each ``resource_changes`` entry's ``change`` by its address (the last entry of an address wins),
    each entry's shape checked."""
    changes: dict[str | None, dict] = {}
    for position, entry in enumerate(entries):
        # checked inline, 10,000 times on a big plan; the shape calls only run to word the error
        details = entry.get("change") if type(entry) is dict else None
        actions = details.get("actions") if type(details) is dict else None
        address = entry.get("address") if details is not None else None
        if details is None or type(details) is not dict or (actions is not None and type(actions) is not list) or (
                address is not None and type(address) is not str):
            path = ("resource_changes", position)
            shape.item(entry, path, dict)
            details = shape.field(entry, "change", path, dict, optional=False)
            shape.field(details, "actions", (*path, "change"), list)
            address = _address(shape, entry, path)
        changes[address] = details
    return changes


def attach_changes(resources: list[Resource], plan: Any, source: str | None = None, file: Any = None) -> None:
    """Give each planned resource of `resources` (`plan_resources` of a plan read without its
    ``resource_changes``) the ``change`` of its address in `plan` (which has them), in place."""
    shape = _Shape(source, file)
    changes = changes_by_address(shape.field(plan, "resource_changes", (), list), shape)
    for resource in resources:
        change = changes.get(resource.value.get("address"))
        if change is not None:
            resource.value["change"] = change


def _deleted(change: dict) -> dict:
    """A resource being destroyed, shaped like a planned_values resource."""
    details = change["change"]
    item = {
        key: change[key]
        for key in ("address", "mode", "type", "name", "index", "provider_name")
        if key in change
    }
    item["values"] = details.get("before")
    item["change"] = details
    return item


def _resource(item: dict, source: str | None, plan: Any, origin: tuple, file: Any) -> Resource:
    resource = Resource(item, source, None, root=plan, origin=origin, file=file)
    resource.default_identifier = item.get("address")
    return resource
