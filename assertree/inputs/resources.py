"""From payload arguments to the resources a scan checks: the library's `load_resources`.

One bad file never stops a scan: a payload that cannot be read, decoded, parsed
or turned into resources becomes a located `Problem` of that file in
`LoadedResources.problems`, and every other file is still read. Reporters show
those problems beside the results, and the CLI exits 2 at the end when there are
any. Only arguments that name nothing (a missing path, an empty directory) stop
the command up front: they are mistakes on the command line, not in a file.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from assertree.documents.paths import Exclude
from assertree.errors import AssertreeError, Location, Problem
from assertree.inputs.formats import is_ndjson
from assertree.inputs.parallel import read_payloads
from assertree.inputs.payload import (
    STDIN,
    STDIN_SOURCE,
    Payload,
    collector_paused,
    compile_preprocessors,
    freeze_loaded,
    parse_payload,
    payload_files,
    resources_from,
)
from assertree.inputs.terraform import looks_like_plan, plan_resources
from assertree.records import ValueRecord
from assertree.results import Resource

if TYPE_CHECKING:
    from assertree.documents.members import Members


class LoadedResources(ValueRecord, uncompared=("unfinished",)):
    """The resources of every payload, the files that could not be used, and what a report needs
    to know about how they were read."""

    resources: list[Resource]
    files: list[str]
    plans_without_terraform: int  # plans read as one payload: a hint for "nothing was checked"
    problems: list[Problem]  # one per payload file that could not be used
    unfinished: list[tuple[Payload, list[Resource]]]  # plans read without their changes (`complete`)

    __slots__ = ("files", "plans_without_terraform", "problems", "resources", "unfinished")

    def __init__(
            self, resources: list[Resource] | None = None, files: list[str] | None = None,
            plans_without_terraform: int = 0, problems: list[Problem] | None = None,
    ) -> None:
        self.resources = [] if resources is None else resources
        self.files = [] if files is None else files
        self.plans_without_terraform = plans_without_terraform
        self.problems = [] if problems is None else problems
        self.unfinished = []

    def complete(self) -> None:
        """Make every resource what a whole read of its file gives: the plans read for the fields the
        policies read (`load_resources`'s `fields`) gain their changes (`assertree.inputs.plan_reading`)."""
        if not self.unfinished:
            return
        from assertree.inputs.plan_reading import complete

        with collector_paused():
            for payload, resources in self.unfinished:
                assert payload.data is not None  # a partial read keeps the bytes it was read from
                complete(resources, payload.data, payload.source, payload)
        self.unfinished = []


def looks_like_state(value: object) -> bool:
    """Whether a payload is a Terraform state (the ``.tfstate`` file, or ``terraform show -json``
    without a plan), which ``--terraform`` cannot read."""
    if not isinstance(value, dict) or "planned_values" in value:
        return False
    return ("lineage" in value and "resources" in value) or ("values" in value and "terraform_version" in value)


STATE_HINT = ("this is a Terraform state, not a plan: --terraform reads plans "
              "('terraform plan -out plan.tfplan && terraform show -json plan.tfplan > plan.json'); "
              "to check a state, drop --terraform and pick its resources with "
              "--pre-process 'values.root_module.resources'")


def load_resources(paths: Sequence[str], *, terraform: bool = False, include_deleted: bool = False,
                   pre_process: Sequence[str] = (), freeze: bool = False,
                   payload_format: str = "auto", jobs: int = 1, exclude: Iterable[str] = (),
                   fields: frozenset[str] | None = None) -> LoadedResources:
    """Every resource of the payloads named (files, directories, globs, ``-``).

    `terraform` reads each payload as a ``terraform show -json`` plan (one
    resource per planned resource, `include_deleted` adds those destroyed);
    `pre_process` expressions pick resources out of each payload; `freeze`
    moves what was parsed out of the garbage collector's sight (one-shot runs).
    A JSON Lines file (``.ndjson``/``.jsonl``, or every payload with `payload_format` ``"ndjson"``) gives
    one resource per line, as it is (`assertree.inputs.stream`), and one problem per bad line.
    A file that cannot be used is a problem in `LoadedResources.problems`, never
    an exception; a path that names nothing raises `PayloadError`. `jobs` > 1 parses
    files in that many worker processes (`assertree.inputs.parallel`), with the same result. `exclude`
    patterns leave files and folders out (`assertree.documents.paths`). `fields`: the top-level fields of a
    resource the caller will read (None: any); with `terraform`, a large plan may then be read for those
    only, and its resources are what a whole read gives after `LoadedResources.complete`.
    """
    preprocessors = compile_preprocessors(pre_process)
    loaded = LoadedResources(files=payload_files(paths, Exclude.of(exclude)))
    # The collector stays paused for every file: a pass over millions of fresh dicts costs as much as
    # parsing them. With `freeze`, they leave its sight before it resumes, so no pass ever runs over them.
    with collector_paused():
        lines = {path for path in loaded.files if is_ndjson(path, payload_format)}
        members = _planned_members(fields, include_deleted) if terraform else _members_read(preprocessors)
        parsed = read_payloads([path for path in loaded.files if path not in lines], jobs, members=members)
        payload = None  # the last one read: a one-shot run never frees it (`freeze_loaded`)
        for path in loaded.files:
            try:
                if path in lines:
                    from assertree.inputs.stream import ndjson_resources  # JSON Lines only: start-up time

                    loaded.resources.extend(ndjson_resources(path, loaded.problems))
                    continue
                _, read = next(parsed)  # the files in the same order
                payload = None
                payload = read()
                _add_payload(loaded, payload, terraform, include_deleted, preprocessors)
            except AssertreeError as error:
                loaded.problems.append(error.problem.located(Location(STDIN_SOURCE if path == STDIN else path)))
        if freeze:
            freeze_loaded(payload)
    return loaded


def _members_read(preprocessors: Sequence[Any]) -> Members | None:
    """The top-level members of a payload object the first ``--pre-process`` expression reads (the others
    read what it gives), or None when it may read more, or there is none."""
    if not preprocessors:
        return None
    from assertree.documents.members import Members
    from assertree.jp.fields import fields_read

    names = fields_read(preprocessors[0])
    return Members(names) if names is not None else None


def _planned_members(fields: frozenset[str] | None, include_deleted: bool) -> Members | None:
    """What a plan is read for (`assertree.inputs.plan_reading`); None (whole) when the fields are not known."""
    if fields is None:  # decided without an import
        return None
    from assertree.inputs.plan_reading import planned_members

    return planned_members(fields, include_deleted=include_deleted)


def _add_payload(loaded: LoadedResources, payload: Payload, terraform: bool, include_deleted: bool,
                 preprocessors: Sequence[Any]) -> None:
    if payload.empty:
        return
    if terraform:
        unfinished = payload.partial
        if unfinished:
            from assertree.inputs.plan_reading import needs_whole

            if needs_whole(payload.value):
                assert payload.data is not None  # a partial read keeps the bytes it was read from
                payload = parse_payload(payload.data, payload.source, kind="json")
                unfinished = False
        if looks_like_state(payload.value):
            raise AssertreeError(STATE_HINT, source=payload.source)
        resources = plan_resources(payload.value, payload.source, include_deleted=include_deleted, file=payload)
        loaded.resources.extend(resources)
        if unfinished:
            loaded.unfinished.append((payload, resources))
    else:
        loaded.plans_without_terraform += looks_like_plan(payload.value) and not preprocessors
        loaded.resources.extend(resources_from(payload, preprocessors))
