"""``kyverno apply -o PATH``: mutated and generated resources written to a file or a folder instead of printed.

As the CLI decides (``commands/apply/log.go``, ``printOutput``): a path ending
in ``.yaml`` or ``.yml`` is one file that gets every mutated (and generated)
resource, each followed by ``---`` and an empty line; any other path is a
folder (created) with one ``NAME-mutated.yaml`` per resource and one
``POLICY-generated.yaml`` per policy that generated resources. Each file is
written whole, through
`assertree.writes` (the CLI truncates the file first, then appends to it
resource by resource, and never truncates a folder's files, so a second run
appends to the first's; assertree writes each file afresh).
"""

from __future__ import annotations

from pathlib import Path

from assertree.kyverno_cli.apply_output import mutated_document
from assertree.kyverno_cli.goyaml import marshal
from assertree.testing.responses import PolicyResponse, ResourceResponses

__all__ = ["MutateLog"]


class MutateLog:
    """The files one run writes: filled by `add` as mutate responses come, written by `write`."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.is_folder = path.suffix not in (".yaml", ".yml")
        self.files: dict[Path, list[str]] = {} if self.is_folder else {path: []}

    def add(self, item: ResourceResponses, response: PolicyResponse) -> None:
        target = self.path / f"{item.name}-mutated.yaml" if self.is_folder else self.path
        self.files.setdefault(target, []).append(mutated_document(response))

    def add_generated(self, response: PolicyResponse, resource: object) -> None:
        """One generated resource (of `response`'s policy): its YAML, ``---`` and an empty line."""
        target = self.path / f"{response.policy.name}-generated.yaml" if self.is_folder else self.path
        self.files.setdefault(target, []).append(marshal(resource) + "---\n\n")

    def write(self) -> None:
        from assertree.writes import WriteError, write_file

        try:
            (self.path if self.is_folder else self.path.parent).mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise WriteError(f"failed to create file/folder ({error.strerror or error})", source=str(self.path)) \
                from None
        for file, parts in self.files.items():
            write_file(file, "".join(parts), "the mutated and generated resources")


