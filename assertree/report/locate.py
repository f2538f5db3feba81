"""Where a result points in the payload files: (file, line, column), for reporters that annotate code.

The engine keeps no positions (a large plan parsed with orjson has none), so a
reporter that needs a line asks here after the scan, and this asks the input
the resource came from (`Resource.file`, an `assertree.inputs.payload.Payload`),
which parses its kept text once more with positions, through the same reader,
the first time one of its resources is asked about. The walk: the resource's
place in its document (`Resource.origin_path()`), then the field error's steps
inside the resource (`FieldError.payload_steps`).

Fallbacks, from best to least: the failing field; its deepest ancestor that the
file has (a missing key points at its parent); the resource's own start; line 1
when the resource cannot be placed in its file; no line for an input with no
text (a Python value). A report never fails because a location is unknown.
"""

from __future__ import annotations

from assertree.errors import Location
from assertree.inputs.payload import STDIN_SOURCE
from assertree.results import FieldError, Resource, RuleResult, Violation


class Locator:
    """Locates results for one report."""

    def result(self, result: RuleResult, violation: Violation | None = None) -> Location | None:
        """Where a violation of `result` is (its first field error, or its own steps), or the resource itself."""
        if violation is not None and not violation.errors and violation.steps is not None:
            return self.field(result.resource, steps=violation.steps)
        error = violation.errors[0] if violation is not None and violation.errors else None
        return self.field(result.resource, error)

    def field(self, resource: Resource, error: FieldError | None = None, *, steps: tuple = ()) -> Location | None:
        """Where `error`'s field (or the field at `steps`) is in `resource`'s file (the resource's start
        without either); None for a resource that came from no file (a Python value, standard input)."""
        source, file = resource.source, resource.file
        if source is None or source == STDIN_SOURCE or file is None:
            return None
        origin = resource.origin_path()
        if origin is None:
            found = file.locate(())
            return Location(source, 1 if found else None, 1 if found else None)
        found = file.locate((*origin, *(error.payload_steps if error is not None else steps)))
        if found is None:
            return Location(source)
        return Location(source, *found)
