"""A large plan read for its planned resources only, when no policy of the scan reads ``change``.

``scan --terraform`` gives each planned resource the ``change`` of its ``resource_changes`` entry
(`assertree.inputs.terraform`). That member is half of a plan's bytes (19 of 35 MB at 10,000 resources),
``prior_state`` and ``configuration`` another tenth, and most Terraform policies read neither: when every
policy says which fields of a resource it reads (`assertree.languages.base.fields_read_by`) and ``change``
is not one of them, a plan of `assertree.inputs.payload`'s size for it is read for ``planned_values`` only
(`assertree.documents.members`). ``resource_changes`` is still checked for what the adapter checks (each
entry an object, its ``change`` an object, ``actions`` a list, ``address`` a string), so a plan that a
whole read refuses is refused all the same, by the whole read, with its located error.

Whatever reads a resource whole after the scan (a finding with no identifier is fingerprinted by its
content) first asks `complete`, which parses ``resource_changes`` then and gives each resource its
``change``: the resource is then what a whole read gives. A payload that may be a Terraform state, or a plan
without ``terraform_version``, is read whole (`needs_whole`): what it is decides the error, not a part.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from assertree.documents.members import Members, parse_members
from assertree.documents.reader import parse_json
from assertree.results import Resource

__all__ = ["complete", "needs_whole", "planned_members"]


@cache
def _change_entries() -> Any:
    """The shape `terraform.changes_by_address` checks of ``resource_changes``, as a msgspec type."""
    import msgspec

    change = msgspec.defstruct("Change", [("actions", list[Any] | None, None)])
    entry = msgspec.defstruct("Entry", [("change", change), ("address", str | None, None)])
    return list[entry] | None  # type: ignore[valid-type]


PLANNED = Members(("planned_values", "terraform_version", "values", "lineage"),
                  checked=(("resource_changes", _change_entries),))
"""What a plan is read for: ``values`` and ``lineage`` are a state's (`needs_whole`)."""


def planned_members(fields: frozenset[str] | None, *, include_deleted: bool) -> Members | None:
    """What to read a plan for when its resources are read for `fields` (None: any): `PLANNED` when
    ``change`` is not one of them (and no destroyed resource is added from its change), else None."""
    if fields is None or "change" in fields or include_deleted:
        return None
    return PLANNED


def needs_whole(value: Any) -> bool:
    """Whether a plan read for `PLANNED` must be read whole to be told apart (a state, not a plan)."""
    return "terraform_version" not in value or "values" in value or "lineage" in value


def complete(resources: list[Resource], data: bytes, source: str, file: Any) -> None:
    """Give `resources` (a plan's, read for `PLANNED` from `data`) the ``change`` of their address."""
    from assertree.inputs.terraform import attach_changes

    plan = parse_members(data, ("resource_changes",))
    attach_changes(resources, plan if plan is not None else parse_json(data), source, file)
