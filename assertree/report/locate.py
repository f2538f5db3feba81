"""Where a result points in the payload files: (file, line, column), for reporters that annotate code.

The engine keeps no positions (a large plan parsed with orjson has none), so a
reporter that needs a line asks here after the scan, and this asks the input
the resource came from (`Resource.file`, an `assertree.inputs.payload.Payload`),
which parses its kept text once more with positions, through the same reader,
the first time one of its resources is asked about. The walk: the resource's
place in its document (`Resource.origin_path()`), then the field error's steps
inside the resource (`FieldError.payload_steps`).

A report asks for all its findings at once (`Locator.results`): the paths are
grouped by file and each file places all of its paths in one walk of its text
(`Payload.locate_all`), rather than one walk from the top per finding.

Fallbacks, from best to least: the failing field; its deepest ancestor that the
file has (a missing key points at its parent); the resource's own start; line 1
when the resource cannot be placed in its file; no line for an input with no
text (a Python value). A report never fails because a location is unknown.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from assertree.errors import Location
from assertree.inputs.payload import STDIN_SOURCE, Payload
from assertree.results import FieldError, Resource, RuleResult, Violation, fill_origins

Wanted = tuple[Resource, FieldError | None, tuple]  # a resource, the field error in it, or the steps to a field


class Locator:
    """Locates results for one report."""

    def results(self, found: Sequence[tuple[RuleResult, Violation | None]]) -> list[Location | None]:
        """`result` of each (result, violation), each payload file walked once for all of them."""
        return self.fields([wanted(result, violation) for result, violation in found])

    def result(self, result: RuleResult, violation: Violation | None = None) -> Location | None:
        """Where a violation of `result` is (its first field error, or its own steps), or the resource itself."""
        return self.fields([wanted(result, violation)])[0]

    def field(self, resource: Resource, error: FieldError | None = None, *, steps: tuple = ()) -> Location | None:
        """Where `error`'s field (or the field at `steps`) is in `resource`'s file (the resource's start
        without either); None for a resource that came from no file (a Python value, standard input)."""
        return self.fields([(resource, error, steps)])[0]

    def fields(self, asked: Sequence[Wanted]) -> list[Location | None]:
        """`field` of each (resource, error, steps), each payload file walked once for all of them."""
        out: list[Location | None] = [None] * len(asked)
        by_file: dict[int, tuple[Any, list[tuple[int, str, tuple | None]]]] = {}
        fill_origins(resource for resource, _, _ in asked)  # one walk of each root for all
        for number, (resource, error, steps) in enumerate(asked):
            source, file = resource.source, resource.file
            if source is None or source == STDIN_SOURCE or file is None:
                continue
            origin = resource.origin  # `origin_path` as `fill_origins` found it (None: searched, not there)
            path = None if origin is None else (*origin, *(error.payload_steps if error is not None else steps))
            by_file.setdefault(id(file), (file, []))[1].append((number, source, path))
        for file, paths in by_file.values():
            steps_of = [() if path is None else path for _, _, path in paths]
            if len(steps_of) > 1 and isinstance(file, Payload):
                places = file.locate_all(steps_of)
            else:  # one path: the file's own index of lines (a batch counts the lines up to its offsets)
                places = [file.locate(steps) for steps in steps_of]
            for (number, source, path), found in zip(paths, places, strict=True):
                if path is None:  # not part of its document: the file's first line, when it has lines
                    out[number] = Location(source, 1 if found else None, 1 if found else None)
                else:
                    out[number] = Location(source) if found is None else Location(source, *found)
        return out


def wanted(result: RuleResult, violation: Violation | None = None) -> Wanted:
    """What `Locator.result` places: a violation's first field error, or its own steps, or the resource."""
    if violation is not None and not violation.errors and violation.steps is not None:
        return result.resource, None, violation.steps
    return result.resource, violation.errors[0] if violation is not None and violation.errors else None, ()
