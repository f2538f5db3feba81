"""``kyverno apply``'s inputs read as the Kyverno CLI 1.19 reads them, and its run, over assertree's engine.

What `load` reads (``commands/apply/command.go`` at kyverno/kyverno 111e07bb):

- policies from the paths given (``-`` is standard input): ClusterPolicy/Policy
  and the ``policies.kyverno.io`` kinds, read as a repository is
  (`assertree.languages.load.load_policy_set`: files that hold no policy are
  passed over, a policy that cannot run is named in one line, the others run);
- resources from ``--resource`` files, folders (their ``.yaml``/``.yml`` files,
  one level deep, as the CLI lists them) and ``-``, as the CLI reads manifests
  (`assertree.languages.kyverno.manifests`: go-yaml v2 scalars, a namespaced
  kind without a namespace in ``default``); a file that does not exist is the
  CLI's ``failed to load resources`` block and the others are read; a document
  without a kind is not a resource (the CLI stops there; the drop-in reports
  the file and reads the others);
- ``--target-resource`` files and folders, read as resources are: the
  existing objects ``mutate.targets`` rules patch;
- ``--json`` payloads as they are; exceptions from ``--exception`` files, from
  the resources (``--exceptions-with-resources``) or beside the policies
  (``--exceptions-within-policies``); a values file or ``--set`` variables, a
  user-info file, a CEL context file; CRD files for cluster-scoped kinds.

The resources and the targets make the fake cluster the CLI builds its client
from (``createFakeClientFromResources``, `ScanContext.cluster`): generate rules
clone from it, mutate-existing rules patch its objects. CEL lookups read the
context file only, as the CLI's fake context provider does offline.

`run` applies every policy to every resource in the CLI's order
(`assertree.testing.execute.process`) and keeps each response.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assertree.documents.paths import NO_EXCLUDE, Exclude
from assertree.errors import AssertreeError, PolicyError, Problem, Severity, UsageError
from assertree.languages.base import ScanContext
from assertree.languages.kubernetes.cluster import Cluster
from assertree.testing.responses import PolicyResponse, ResourceResponses

__all__ = ["ApplyInputs", "ApplyRun", "load", "run"]

STDIN = "-"
KYVERNO_GROUPS = ("kyverno.io", "policies.kyverno.io")


@dataclass
class ApplyInputs:
    """What one ``kyverno apply`` command line names, read."""

    policies: list[Any]  # compiled policies of the Kyverno CLI's kinds
    resources: list[Any]  # languages.kyverno.manifests.Manifest, in the order read (not deduplicated: the CLI's)
    payloads: list[Any]  # --json payloads, as Manifests
    context: ScanContext
    targets: list[Any] = field(default_factory=list)  # --target-resource objects, as Manifests
    exceptions: int = 0  # how many PolicyExceptions (the "with N exception(s)" of the header)
    missing: list[str] = field(default_factory=list)  # resource paths that do not exist (the CLI's block)
    problems: list[Problem] = field(default_factory=list)  # files that could not be used (exit 2)
    notes: list[Problem] = field(default_factory=list)  # policies that will not run, files passed over, ...

    @property
    def rules(self) -> int:
        """The header's rule count: a ClusterPolicy's rules with its autogen rules, one per other policy."""
        from assertree.kyverno_cli.responses import is_kyverno_policy

        return sum(len(item.policy.rules) if is_kyverno_policy(item.policy) else 1 for item in self.policies)


@dataclass
class ApplyRun:
    """Every response, resource by resource, in the CLI's order."""

    inputs: ApplyInputs
    resources: list[ResourceResponses]

    def responses(self) -> list[tuple[ResourceResponses, PolicyResponse]]:
        return [(item, response) for item in self.resources for response in item.responses]


@dataclass
class Sources:
    """The command line's files, as ``kyverno apply`` takes them (see the module docstring)."""

    policies: Sequence[str]
    resources: Sequence[str] = ()
    targets: Sequence[str] = ()  # --target-resource
    json_payloads: Sequence[str] = ()
    values_file: str | None = None
    variables: Sequence[str] = ()  # --set key=value
    user_info: str | None = None
    exceptions: Sequence[str] = ()
    exceptions_with_resources: bool = False
    exceptions_within_policies: bool = False
    context_file: str | None = None
    crd_paths: Sequence[str] = ()
    exclude: Exclude = NO_EXCLUDE


def load(sources: Sources, stdin: Any = None) -> ApplyInputs:
    """Read everything `sources` names; UsageError or PolicyError (exit 2) for what stops the command.
    `stdin` is a text stream read in place of standard input (which is read as every command reads it:
    capped, decoded as files are, a closed one named)."""
    from assertree.documents.reader import read_stdin_text

    read_stdin: Callable[[], str] = stdin.read if stdin is not None else read_stdin_text
    notes: list[Problem] = []
    policies = _policies(sources, read_stdin, notes)
    inputs = ApplyInputs(policies, [], [], ScanContext(), notes=notes)
    _resources(sources, inputs, read_stdin)
    inputs.targets = _targets(sources, inputs)
    for path in sources.json_payloads:
        inputs.payloads.extend(_payload(path, inputs.problems))
    exceptions = _exceptions(sources, inputs)
    inputs.exceptions = len(exceptions)
    inputs.context = _context(sources, exceptions)
    inputs.context.cluster = Cluster.of(manifest.value for manifest in (*inputs.resources, *inputs.targets))
    return inputs


def run(inputs: ApplyInputs, on_response: Any = None) -> ApplyRun:
    """Every policy on every resource, then on every JSON payload."""
    from assertree.testing.execute import process

    items = process(inputs.policies, inputs.resources + inputs.payloads, inputs.context, on_response)
    return ApplyRun(inputs, items)


# -- policies -------------------------------------------------------------------------------------


def _policies(sources: Sources, read_stdin: Callable[[], str], notes: list[Problem]) -> list[Any]:
    from assertree.languages.load import load_policy_set

    paths = []
    found: list[Any] = []
    for raw in sources.policies:
        if raw.startswith(("http://", "https://", "git@")):
            raise UsageError(f"{raw}: policies from a URL or a git repository need the network; assertree runs "
                             "offline: clone or download them and name the local path")
        if raw == STDIN:
            found.extend(_stdin_policies(read_stdin(), notes))
        else:
            paths.append(raw)
    if paths:
        policy_set = load_policy_set(paths, exclude=sources.exclude)
        if policy_set.errors:
            raise PolicyError.of(policy_set.errors[0])
        notes.extend([*policy_set.refused, *policy_set.not_run])
        note = policy_set.skipped_note()
        if note:
            notes.append(Problem(note, severity=Severity.NOTE))
        found.extend(policy_set.policies)
    kept: list[Any] = []
    for policy in found:
        group = str(getattr(policy.policy, "api_version", "") or policy.policy.document.get("apiVersion", ""))
        if group.split("/")[0] in KYVERNO_GROUPS:
            kept.append(policy)
            continue
        where = f"{policy.policy.source}: " if policy.policy.source else ""
        notes.append(Problem(f"{where}{policy.policy.kind} {policy.policy.name!r} is not a policy the Kyverno CLI "
                             "reads (check it with assertree scan)", severity=Severity.NOTE))
    if not kept:  # the CLI would print "Applying 0 policy rule(s)" and pass: assertree never passes unchecked
        for problem in notes:
            print(f"assertree: {problem.severity}: {problem}", file=sys.stderr)
        raise PolicyError(f"no policy in {', '.join(sources.policies)} can be run: nothing would be checked")
    return kept


def _stdin_policies(text: str, notes: list[Problem]) -> list[Any]:
    from assertree.documents.reader import load_documents
    from assertree.languages.load import compile_read
    from assertree.results import refused_rules

    out = []
    for document in load_documents("<stdin>", text):
        try:
            compiled = compile_read(document)
        except PolicyError as error:
            notes.append(error.problem.replace(severity=Severity.WARNING))
            continue
        notes.extend(refused.problem for refused in refused_rules(compiled))
        out.append(compiled)
    return out


# -- resources ------------------------------------------------------------------------------------


def resource_files(paths: Iterable[str], exclude: Exclude = NO_EXCLUDE) -> list[str]:
    """The files the resource paths name: a folder's ``.yaml``/``.yml`` files, one level deep and sorted (as
    the CLI lists a resource folder); files and ``-`` as they are; what `exclude` names left out."""
    out: list[str] = []
    for raw in paths:
        path = Path(raw)
        if raw != STDIN and path.is_dir():
            out.extend(str(file) for file in sorted(path.iterdir())
                       if file.is_file() and file.suffix in (".yaml", ".yml") and not exclude.matches(file, path))
        elif raw == STDIN or not exclude.matches(raw):
            out.append(raw)
    return out


def _resources(sources: Sources, inputs: ApplyInputs, read_stdin: Callable[[], str]) -> None:
    from assertree.languages.kyverno.manifests import parse_manifests, read_manifests

    for file in resource_files(sources.resources, sources.exclude):
        try:
            if file == STDIN:
                manifests = parse_manifests(read_stdin(), "<stdin>")
            elif not Path(file).exists():
                inputs.missing.append(file)
                continue
            else:
                manifests = read_manifests(file)
        except AssertreeError as error:
            inputs.problems.append(error.problem)
            continue
        kindless = next((manifest for manifest in manifests if not manifest.value.get("kind")), None)
        if kindless is not None:
            inputs.problems.append(Problem(f"document {kindless.document} has no kind: not a Kubernetes resource "
                                           "(the Kyverno CLI stops here; the other files are checked)",
                                           location=_where(file)))
            continue
        inputs.resources.extend(manifests)
    global_entries = [manifest for manifest in inputs.resources if manifest.value.get("kind") == "GlobalContextEntry"]
    if global_entries:  # the CLI takes them out of the resources to serve globalReference context entries
        inputs.resources = [manifest for manifest in inputs.resources if manifest not in global_entries]
        inputs.notes.append(Problem(f"{len(global_entries)} GlobalContextEntry resource(s) passed over: assertree "
                                    "serves globalReference entries from a values file", severity=Severity.NOTE))


def _targets(sources: Sources, inputs: ApplyInputs) -> list[Any]:
    """The ``--target-resource`` objects (files or folders, as resources are listed); a file that cannot be read
    is a problem (exit 2) and the others are read."""
    from assertree.languages.kyverno.manifests import read_manifests

    out: list[Any] = []
    for file in resource_files(sources.targets, sources.exclude):
        try:
            if file == STDIN:
                raise PolicyError("--target-resource: standard input is not a target file")
            out.extend(read_manifests(file))
        except AssertreeError as error:
            inputs.problems.append(error.problem)
    return out


def _where(file: str) -> Any:
    from assertree.errors import Location

    return Location("<stdin>" if file == STDIN else file)


def _payload(path: str, problems: list[Problem]) -> list[Any]:
    from assertree.inputs.payload import read_payload
    from assertree.languages.kyverno.manifests import Manifest

    try:
        payload = read_payload(path)
    except AssertreeError as error:
        problems.append(error.problem)
        return []
    if not isinstance(payload.value, dict):
        problems.append(Problem("a JSON payload must be an object", location=_where(path)))
        return []
    return [Manifest(payload.value, path, 0)]


# -- exceptions and context -----------------------------------------------------------------------


def _exceptions(sources: Sources, inputs: ApplyInputs) -> list[Any]:
    """The PolicyExceptions the command line names; a CEL PolicyException is named in a note (assertree
    applies the ``kyverno.io`` ones)."""
    from assertree.apply.policies import exceptions_beside
    from assertree.documents.reader import load_documents
    from assertree.languages.kyverno.exceptions import parse_exception
    from assertree.languages.kyverno.language import is_policy_exception

    documents: list[tuple[dict, str | None]] = []
    if sources.exceptions_with_resources:
        documents.extend((manifest.value, manifest.source) for manifest in inputs.resources)
    else:
        for path in sources.exceptions:
            if not Path(path).is_file():
                raise PolicyError("failed to load exceptions: file not found", source=path)
            documents.extend((document.value, path) for document in load_documents(path))
    if sources.exceptions_within_policies:
        paths = [path for path in sources.policies if path != STDIN]
        documents.extend((document, None) for document in exceptions_beside(paths, sources.exclude))
    out = []
    for value, source in documents:
        if is_policy_exception(value):
            out.append(parse_exception(value, source))
        elif isinstance(value, dict) and value.get("kind") == "PolicyException":
            inputs.notes.append(Problem(f"{source or 'a policy file'}: the {value.get('apiVersion')} PolicyException "
                                        f"{(value.get('metadata') or {}).get('name')!r} is not applied: assertree "
                                        "applies kyverno.io PolicyExceptions", severity=Severity.NOTE))
        elif not sources.exceptions_with_resources and source in sources.exceptions:
            raise PolicyError("not a PolicyException", source=source)
    return out


def _context(sources: Sources, exceptions: list[Any]) -> ScanContext:
    from assertree.inputs.kyverno_files import cluster_scoped_kinds
    from assertree.languages.kyverno.values import load_user_info, load_values, values_from_spec

    if sources.values_file and sources.variables:
        raise UsageError("pass the values either using set flag or values_file flag")
    values = load_values(sources.values_file) if sources.values_file else None
    if values is not None and not values.typed:
        raise PolicyError("values file uses a deprecated schema: add 'apiVersion: cli.kyverno.io/v1alpha1' and "
                          "'kind: Values'", source=sources.values_file)
    variables = parse_set(sources.variables)
    if variables:
        values = values_from_spec({"globalValues": variables}, "--set")
    user_info = load_user_info(sources.user_info) if sources.user_info else None
    context = ScanContext(values=values, user_info=user_info, exceptions=tuple(exceptions),
                          operation=(values.operation if values is not None else "") or "CREATE",
                          cluster_scoped=cluster_scoped_kinds(sources.crd_paths) if sources.crd_paths else frozenset())
    if sources.context_file:
        from assertree.languages.kyverno.cel_policies.environment import read_context_file

        context = context.replace(lookups=read_context_file(sources.context_file))
    return context


def parse_set(variables: Iterable[str]) -> dict[str, str]:
    """``--set key=value,...`` as the CLI parses it (``variables/parse.go``): trimmed, one ``=`` exactly, no
    empty part, no ``request.object.`` key, the first of a repeated key kept; the others are passed over
    (the CLI logs them at level 3; assertree says so on standard error)."""
    out: dict[str, str] = {}
    for raw in variables:
        parts = raw.strip().split("=")
        key, value = (parts[0].strip(), parts[1].strip()) if len(parts) == 2 else ("", "")
        if not key or not value or "request.object." in key or key in out:
            print(f"assertree: note: --set {raw!r} is ignored, as the Kyverno CLI ignores it (KEY=VALUE, one '=', "
                  "no request.object. key, each key once)", file=sys.stderr)
            continue
        out[key] = value
    return out


def missing_resource_block(path: str) -> str:
    """What the CLI prints for a resource file that does not exist (``failed to load resources``)."""
    rule = "-" * 70
    return f"\n{rule}\nfailed to load resources: {path}. \nerror: open {path}: no such file or directory\n{rule}\n"

