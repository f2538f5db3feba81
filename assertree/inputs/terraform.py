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
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from assertree.errors import PayloadError
from assertree.results import Resource


def looks_like_plan(value: Any) -> bool:
    """Whether a payload is a ``terraform show -json`` plan."""
    return isinstance(value, dict) and "planned_values" in value and (
        "terraform_version" in value or "resource_changes" in value
    )


def _module_resources(module: dict, path: tuple) -> Iterator[tuple[dict, tuple]]:
    """Every resource of a planned_values module and, recursively, of its child modules,
    with its position in the plan document."""
    for index, resource in enumerate(module.get("resources") or ()):
        if isinstance(resource, dict):
            yield resource, (*path, "resources", index)
    for index, child in enumerate(module.get("child_modules") or ()):
        if isinstance(child, dict):
            yield from _module_resources(child, (*path, "child_modules", index))


def plan_resources(plan: Any, source: str | None = None, *, include_deleted: bool = False,
                   file: Any = None) -> list[Resource]:
    """The resources of a plan, each joined with its change; see the module docstring. `file` is the
    payload the plan was read from (reports ask it where a field is)."""
    if not looks_like_plan(plan):
        raise PayloadError(
            "--terraform expects a plan from 'terraform show -json' (with planned_values and "
            "resource_changes)",
            source=source,
        )
    changes = {
        change.get("address"): change
        for change in plan.get("resource_changes") or ()
        if isinstance(change, dict)
    }
    resources = []
    root_module = (plan.get("planned_values") or {}).get("root_module") or {}
    for resource, origin in _module_resources(root_module, ("planned_values", "root_module")):
        item = dict(resource)
        change = changes.get(resource.get("address"))
        if change is not None:
            item["change"] = change.get("change")
        resources.append(_resource(item, source, plan, origin, file))
    if include_deleted:
        for position, change in enumerate(plan.get("resource_changes") or ()):
            actions = (change.get("change") or {}).get("actions") or []
            if actions == ["delete"]:
                resources.append(_resource(_deleted(change), source, plan, ("resource_changes", position), file))
    return resources


def _deleted(change: dict) -> dict:
    """A resource being destroyed, shaped like a planned_values resource."""
    details = change.get("change") or {}
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
