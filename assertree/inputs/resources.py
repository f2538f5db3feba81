"""From payload arguments to the resources a scan checks: the library's `load_resources`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from assertree.inputs.payload import compile_preprocessors, freeze_loaded, payload_files, read_payload, resources_from
from assertree.inputs.terraform import looks_like_plan, plan_resources
from assertree.results import Resource


@dataclass
class LoadedResources:
    """The resources of every payload, and what a report needs to know about how they were read."""

    resources: list[Resource] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    plans_without_terraform: int = 0  # plans read as one payload: a hint for "nothing was checked"


def load_resources(paths: Sequence[str], *, terraform: bool = False, include_deleted: bool = False,
                   pre_process: Sequence[str] = (), freeze: bool = False) -> LoadedResources:
    """Every resource of the payloads named (files, directories, globs, ``-``).

    `terraform` reads each payload as a ``terraform show -json`` plan (one
    resource per planned resource, `include_deleted` adds those destroyed);
    `pre_process` expressions pick resources out of each payload; `freeze`
    moves what was parsed out of the garbage collector's sight (one-shot runs).
    """
    preprocessors = compile_preprocessors(pre_process)
    loaded = LoadedResources(files=payload_files(paths))
    for path in loaded.files:
        payload = read_payload(path)
        if freeze:
            freeze_loaded()
        if terraform:
            loaded.resources.extend(plan_resources(payload.value, payload.source, include_deleted=include_deleted,
                                                   file=payload))
        else:
            loaded.plans_without_terraform += looks_like_plan(payload.value) and not preprocessors
            loaded.resources.extend(resources_from(payload, preprocessors))
    return loaded
