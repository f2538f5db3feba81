"""``assertree apply``: fix resource files with mutate rules, write what generate rules create, and patch the
existing resources (``--target``) mutate-existing rules change; write, show or diff the result."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from assertree.cli.exit_codes import EXIT_FAILED, EXIT_OK
from assertree.cli.options import ExcludeOption, ParamsOption, UnboundOption, UserInfoOption, ValuesOption

if TYPE_CHECKING:
    from assertree.apply import FileChange

EXAMPLES = """Examples:

  assertree apply --diff --policy mutate/ k8s/          (exit 1 when something would change)

  assertree apply --policy mutate/ -o fixed/ k8s/

  assertree apply --policy mutate/ -o fixed.yaml deploy.yaml

  assertree apply --in-place --policy mutate/ --values values.yaml deploy.yaml

  assertree apply --policy generate/ -o out/ namespaces.yaml     (out/<policy>-generated.yaml)

  assertree apply --policy sync/ --target secrets.yaml --diff trigger.yaml
"""


def apply(
    resources: Annotated[list[str], typer.Argument(
        metavar="RESOURCE", show_default=False,
        help="Resource files (YAML or JSON), directories (searched for .json, .yaml, .yml), globs, or '-' "
        "for standard input.")],
    policy: Annotated[list[str] | None, typer.Option(
        "--policy", show_default=False,
        help="Policy file or directory with mutate rules (searched recursively). Repeatable.")] = None,
    values: ValuesOption = None,
    user_info: UserInfoOption = None,
    target: Annotated[list[str] | None, typer.Option(
        "--target", show_default=False,
        help="Existing resources (files or directories) that mutate-existing rules (mutate.targets) patch and "
        "generate rules clone from; patched ones are written like the resource files. Repeatable.")] = None,
    params: ParamsOption = None,
    unbound: UnboundOption = False,
    output: Annotated[Path | None, typer.Option(
        "--output", "-o", show_default=False,
        help="Write every resource file, changed or not, under this directory (created if needed); with one "
        "resource file, a path ending in .yaml, .yml or .json (or an existing file) is the file to write.")] = None,
    diff: Annotated[bool, typer.Option(
        "--diff", help="Print a unified diff of what would change; exit 1 if anything would.")] = False,
    in_place: Annotated[bool, typer.Option("--in-place", help="Rewrite the changed files.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Print only rule errors on stderr.")] = False,
    exclude: ExcludeOption = None,
) -> None:
    """Apply the mutate rules of Kyverno policies, Kyverno MutatingPolicies and Kubernetes
    MutatingAdmissionPolicies to resource files: the fixed YAML on stdout, under -o DIR, in place, or as a
    diff. Unchanged parts of a file keep their text. What generate rules create follows on stdout, goes to
    DIR/<policy>-generated.yaml, or shows as new files in the diff."""
    from assertree.apply import apply_to_text, load_mutate_policies
    from assertree.apply.files import read_text_file
    from assertree.apply.generated import generated_files
    from assertree.apply.targets import patched_target_files, read_target_files
    from assertree.cli.arguments import paths_from
    from assertree.cli.outputs import write_stdout
    from assertree.documents.paths import Exclude
    from assertree.errors import UsageError
    from assertree.inputs.payload import STDIN, STDIN_SOURCE, payload_files
    from assertree.languages.kubernetes.cluster import Cluster
    from assertree.languages.kyverno.manifests import parse_manifests, to_float64
    from assertree.writes import write_file, write_files

    if not policy:
        raise UsageError("give at least one --policy file or directory")
    if sum((output is not None, diff, in_place)) > 1:
        raise UsageError("choose one of -o/--output, --diff and --in-place")
    excluded = Exclude.of(exclude)
    files = payload_files(resources, excluded)
    target_files = payload_files(target, excluded) if target else []
    one_file = output is not None and names_a_file(output)
    if STDIN in files and (in_place or (output is not None and not one_file)):
        raise UsageError("standard input ('-') can only be written to stdout, to one -o FILE or diffed")
    if STDIN in target_files:
        raise UsageError("--target files must be files or directories, not standard input ('-')")
    both = {str(Path(file).resolve()) for file in files} & {str(Path(file).resolve()) for file in target_files}
    if both:
        raise UsageError(f"{sorted(both)[0]} is both a resource file and a --target file")
    if output is not None and one_file:
        _check_output_file(output, files)
        if output.resolve() in {Path(file).resolve() for file in target_files}:
            raise UsageError(f"-o {output} would overwrite a --target file (use --in-place to rewrite them)")
    loaded = load_mutate_policies(paths_from(policy, "--policy"), values=values, user_info=user_info,
                                  exclude=excluded, params=params or (), run_unbound=unbound)
    if loaded.found is not None:
        from assertree.cli.policies import tell_refused

        tell_refused(loaded.found, quiet=quiet)
    texts = {file: read_text_file(file) if file != STDIN else _stdin() for file in files}
    existing = read_target_files(target_files)
    # what exists: the resources and the --target files (CEL lookups read them too)
    cluster = Cluster.of([to_float64(item.value) for file, text in texts.items()
                          for item in parse_manifests(text, file if file != STDIN else STDIN_SOURCE)]
                         + [value for item in existing for value in item.values])
    loaded.context.cluster = cluster
    if loaded.context.lookups is None:
        from assertree.languages.kyverno.cel_policies.environment import Lookups

        loaded.context.lookups = Lookups(cluster=cluster, source="--target")
    changes = [apply_to_text(text, file if file != STDIN else STDIN_SOURCE, loaded.policies, context=loaded.context)
               for file, text in texts.items()]
    target_changes = patched_target_files(existing, cluster)
    generated = generated_files(item for change in changes for item in change.applied)
    destinations = _targets(resources + (target or []), files + target_files, output,
                            [file.name for file in generated]) if output is not None and not one_file else {}
    _tell(changes, quiet)
    _tell_targets(target_changes, quiet)
    _tell_generated(generated, quiet, written=not in_place and not diff)
    if diff:
        from assertree.apply.files import unified_diff

        write_stdout("".join(change.diff() for change in [*changes, *target_changes])
                     + "".join(unified_diff("", file.text, file.name, new_file=True) for file in generated))
    elif in_place:  # every changed file is made ready before the first replaces its original
        write_files(((change.path, change.new_text) for change in [*changes, *target_changes] if change.changed),
                    "the fixed file")
    elif output is not None and one_file:
        write_file(output, _joined(changes, target_changes, generated), "the fixed resources")
    elif output is not None:  # folders are made as the files are written
        write_files([*((destinations[change.path], change.new_text) for change in [*changes, *target_changes]),
                     *((output / file.name, file.text) for file in generated)], "the fixed file")
    else:
        write_stdout(_joined(changes, target_changes, generated))
    failed = any(item.errors for change in changes for item in change.applied)
    if failed or (diff and (any(change.changed for change in [*changes, *target_changes]) or generated)):
        raise typer.Exit(EXIT_FAILED)
    raise typer.Exit(EXIT_OK)


def _stdin() -> str:
    from assertree.documents.reader import read_stdin_text
    from assertree.inputs.payload import STDIN_SOURCE

    return read_stdin_text(STDIN_SOURCE)  # capped, as payloads are


FILE_SUFFIXES = (".yaml", ".yml", ".json")


def names_a_file(output: Path) -> bool:
    """``-o PATH`` names one file when PATH is there and is not a folder, or is not there and ends in .yaml,
    .yml or .json (as ``kyverno apply -o`` tells a file from a folder); else a folder."""
    if output.exists() or output.is_symlink():
        return not output.is_dir()
    return output.suffix.lower() in FILE_SUFFIXES


def _joined(changes: list[FileChange], target_changes: Sequence[FileChange] = (), generated: Sequence[Any] = ()) -> str:
    """Every file's result, whole, separated by ``---`` lines (what stdout gets; ``-o FILE`` gets one): the
    resource files, then the --target files that changed, then the generated resources."""
    outputs = [change.new_text for change in changes] + [change.new_text for change in target_changes
                                                         if change.changed] + [file.text for file in generated]
    return "---\n".join(text if text.endswith("\n") or not text else text + "\n" for text in outputs)


def _check_output_file(output: Path, files: list[str]) -> None:
    """``-o FILE`` takes one resource file (or standard input), never an input itself (that is --in-place)."""
    from assertree.errors import UsageError
    from assertree.inputs.payload import STDIN

    if len(files) > 1:
        raise UsageError(f"-o {output} names a file, and {len(files)} resource files were given: -o takes a "
                         "folder for several files")
    if output.resolve() in {Path(file).resolve() for file in files if file != STDIN}:
        raise UsageError(f"-o {output} would overwrite an input file (use --in-place to rewrite inputs)")


def _targets(arguments: list[str], files: list[str], output: Path, generated: list[str]) -> dict[str, Path]:
    """Where each file goes under `output`: its path below the directory argument that found it, or its
    name; two files with one target, or a target that is an input file, is a usage error (the generated
    files, ``<policy>-generated.yaml``, take their names first)."""
    from assertree.errors import UsageError

    directories = [Path(argument).resolve() for argument in arguments if Path(argument).is_dir()]
    inputs = {Path(file).resolve() for file in files}
    targets: dict[str, Path] = {}
    taken: dict[Path, str] = {output / name: f"the resources generated ({name})" for name in generated}
    for name in generated:
        if (output / name).resolve() in inputs:
            raise UsageError(f"-o {output} would overwrite the input {output / name} with generated resources")
    for file in files:
        resolved = Path(file).resolve()
        below = next((directory for directory in directories if resolved.is_relative_to(directory)), None)
        target = output / (resolved.relative_to(below) if below is not None else Path(file).name)
        if target.resolve() in inputs:
            raise UsageError(f"-o {output} would overwrite the input {file} (use --in-place to rewrite inputs)")
        if target in taken:
            raise UsageError(f"{file} and {taken[target]} would both be written to {target}")
        taken[target] = file
        targets[file] = target
    return targets


def _tell(changes: list[FileChange], quiet: bool) -> None:
    """One line on stderr per changed resource (the rules that patched it) and per rule error."""
    for change in changes:
        for item in change.applied:
            where = f"{change.path}#{item.document}" if len(change.applied) > 1 else change.path
            metadata = item.original.get("metadata") if isinstance(item.original, dict) else None
            name = f"{item.original.get('kind')}/{(metadata or {}).get('name')}" if isinstance(
                item.original, dict) else "resource"
            for result in item.errors:
                print(f"assertree: error: {where}: {name}: {result.policy.name}/{result.rule.name}: "
                      f"{result.message or result.error}", file=sys.stderr)
            if item.changed and not quiet:
                rules = ", ".join(f"{result.policy.name}/{result.rule.name}" for result in item.applied_rules)
                print(f"assertree: {where}: {name}: mutated by {rules}", file=sys.stderr)
    if not quiet and not any(change.changed for change in changes):
        print("assertree: no resource changed", file=sys.stderr)


def _tell_targets(changes: list[FileChange], quiet: bool) -> None:
    """One line on stderr per target file that existing-resource rules patched."""
    if quiet:
        return
    for change in changes:
        if change.changed:
            print(f"assertree: {change.path}: existing resources patched (mutate.targets)", file=sys.stderr)


def _tell_generated(generated: list, quiet: bool, *, written: bool) -> None:
    """One line on stderr per policy that generated resources (and, with --in-place, that they are not written)."""
    for file in generated:
        if not quiet:
            print(f"assertree: {file.name}: {file.count} generated resource{'s' if file.count != 1 else ''}",
                  file=sys.stderr)
    if generated and not written:
        print("assertree: note: generated resources are written with -o DIR (or shown on stdout)", file=sys.stderr)
