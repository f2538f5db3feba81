"""``assertree scan``: check payloads against policies."""

# No `from __future__ import annotations` here: typer reads the command's annotations, and as strings it
# evaluates each of them twice per run (~10 ms for scan's two dozen options).

import os
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from assertree.cli.exit_codes import EXIT_BAD_INPUT, EXIT_FAILED, EXIT_OK
from assertree.cli.explain import ExplainOption
from assertree.cli.options import ExcludeOption, ParamsOption, UnboundOption, UserInfoOption, ValuesOption

EXAMPLES = """Examples:

  assertree scan k8s/ --policy policies/

  assertree scan --terraform plan.json --policy policies/ -o text -o sarif=results.sarif

  assertree scan -q --policy policies/ deploy.yaml service.yaml    (as the pre-commit hook runs it)

  assertree scan deploy.yaml --policy policies/ --explain            (how each failure was reached)
"""


def scan(
    policy: Annotated[list[str], typer.Option(
        "--policy", metavar="PATH", show_default=False,
        help="A policy file, or a directory searched recursively. Repeatable.")],
    payloads: Annotated[list[str] | None, typer.Argument(
        metavar="PAYLOAD", show_default=False,
        help="Payload files, directories or globs, as with --payload (how pre-commit passes the changed files).")
    ] = None,
    payload: Annotated[list[str] | None, typer.Option(
        "--payload", "-p", metavar="PATH", show_default=False,
        help="A JSON/YAML file, a directory (searched for .json, .yaml, .yml), a glob, or '-' for stdin. "
        "Repeatable.")] = None,
    bindings: Annotated[Path | None, typer.Option(
        "--bindings", metavar="FILE", show_default=False,
        help="YAML/JSON file of extra variables, usable as $name.")] = None,
    values: ValuesOption = None,
    user_info: UserInfoOption = None,
    exceptions: Annotated[list[Path] | None, typer.Option(
        "--exceptions", metavar="PATH", show_default=False,
        help="PolicyException files or directories: kyverno.io/v2 ones exempt matching resources from the named "
        "rules; policies.kyverno.io ones from the CEL policies their policyRefs name (skip, or pass with "
        "reportResult: pass; an expired one is not applied). Repeatable.")] = None,
    params: ParamsOption = None,
    unbound: UnboundOption = False,
    pre_process: Annotated[list[str] | None, typer.Option(
        "--pre-process", metavar="EXPR", show_default=False,
        help="JMESPath expression applied to each payload before the scan. Repeatable.")] = None,
    terraform: Annotated[bool, typer.Option(
        "--terraform", metavar="", help="Read payloads as 'terraform show -json' plans: one resource per planned "
        "resource, from every module, with its change.")] = False,
    include_deleted: Annotated[bool, typer.Option(
        "--include-deleted", metavar="", help="With --terraform, also check resources the plan destroys.")] = False,
    payload_format: Annotated[str, typer.Option(
        "--payload-format", metavar="auto|ndjson",
        help="How payloads are read: auto (by suffix: .ndjson and .jsonl are JSON Lines, one resource per line; "
        "else JSON or YAML), or ndjson (every payload, standard input included, is JSON Lines). JSON Lines is "
        "always scanned as with --stream.")] = "auto",
    stream: Annotated[bool, typer.Option(
        "--stream", metavar="",
        help="Check one resource at a time and write the reports as results arrive, in bounded memory. This is "
        "the default of every scan without --terraform or --pre-process (which need whole payloads: with "
        "either, --stream is an error). What it still changes: ASSERTREE_MAX_INPUT_BYTES caps each YAML "
        "document rather than each file. The reports are the same.")] = False,
    jobs: Annotated[int | None, typer.Option(
        "--jobs", "-j", metavar="N", show_default=False,
        help="Use N processes (default: one per CPU): payload files are parsed in parallel (one process for a few "
        "dozen files or fewer), and the resources of a --terraform or --pre-process payload are checked in "
        "parallel when there are 150,000 resource-rule pairs or more and a CPU is idle. The reports are the same "
        "for every N.")] = None,
    labels: Annotated[list[str] | None, typer.Option(
        "--labels", metavar="SELECTOR", show_default=False,
        help="Only run policies whose labels match this selector (e.g. 'env=prod,team in (a,b)').")] = None,
    output: Annotated[list[str] | None, typer.Option(
        "--output", "-o", metavar="FORMAT[=FILE]", show_default=False,
        help="Report FORMAT, to stdout or to FILE. FORMAT: text (default), json, sarif, junit, github. Repeatable; "
        "at most one to stdout.")] = None,
    color: Annotated[str, typer.Option(
        "--color", metavar="auto|always|never",
        help="Colour in text output: auto (on a terminal, unless NO_COLOR is set), always, never.")
    ] = "auto",
    quiet: Annotated[bool, typer.Option(
        "--quiet", "-q", metavar="",
        help="Print only file errors, failed and errored rules, and the totals.")] = False,
    soft_fail: Annotated[bool, typer.Option(
        "--soft-fail", metavar="", help="Exit 0 even when rules fail (bad input still exits 2).")] = False,
    fail_on_empty: Annotated[bool, typer.Option(
        "--fail-on-empty", metavar="", help="Exit 1 when no rule applied to any resource: nothing was checked.")
    ] = False,
    kyverno_json: Annotated[bool, typer.Option(
        "--kyverno-json", metavar="",
        help="Reports as kyverno-json writes them: its error wording, no totals line, and '-o json' exactly as "
        "'kyverno-json scan --output json' prints it (a list of reports, whole resources and policies).")] = False,
    exclude: ExcludeOption = None,
    crd: Annotated[list[Path] | None, typer.Option(
        "--crd", metavar="PATH", show_default=False,
        help="CustomResourceDefinition files or folders: their cluster-scoped kinds keep no namespace when "
        "kyverno.io policies check them (other kinds without one are in 'default', as in kyverno apply). "
        "Repeatable.")] = None,
    fail_on: Annotated[str | None, typer.Option(
        "--fail-on", metavar="LEVEL", show_default=False,
        help="Fail only on policies of this severity or above (critical, high, medium, low, info; from the "
        "policies.kyverno.io/severity annotation): failures below it are warnings in every report. A policy "
        "without a severity always fails.")] = None,
    baseline: Annotated[Path | None, typer.Option(
        "--baseline", metavar="FILE", show_default=False,
        help="Findings in this file (written by --write-baseline) are reported as baselined and do not fail "
        "the scan; its findings that are gone are listed as fixed.")] = None,
    write_baseline: Annotated[Path | None, typer.Option(
        "--write-baseline", metavar="FILE", show_default=False,
        help="Write every finding of this scan to FILE as a baseline and exit 0 (2 for bad input).")] = None,
    explain: ExplainOption = False,
) -> None:
    """Check JSON/YAML payloads against policies: exit 0 when every rule passes, 1 when one fails or errors, 2
    when an input cannot be used (each unreadable payload file is reported, the others are still checked)."""
    from assertree.cli import process

    with process.starting():  # until the policies are compiled: what it makes lives as long as the scan
        ahead = _read_ahead([*(payload or []), *(payloads or [])], stream=stream, payload_format=payload_format)
        from assertree.cli.arguments import paths_from
        from assertree.cli.explain import explaining
        from assertree.cli.outputs import parse_outputs, write_outputs
        from assertree.cli.policies import load_policy_arguments
        from assertree.documents.collector import collector_paused
        from assertree.documents.paths import Exclude
        from assertree.engine.scan import scan as run_scan
        from assertree.errors import UsageError
        from assertree.inputs.kyverno_files import load_scan_context
        from assertree.inputs.parallel import default_jobs
        from assertree.inputs.payload import compile_preprocessors, payload_files
        from assertree.inputs.resources import load_resources
        from assertree.report.options import ReportOptions

        payload = [*(payload or []), *(payloads or [])]
        if not payload:
            raise UsageError("give at least one payload (--payload FILE, or files after the options)")
        if include_deleted and not terraform:
            raise UsageError("--include-deleted only applies with --terraform")
        if payload_format not in ("auto", "ndjson"):
            raise UsageError(f"unknown --payload-format {payload_format!r} (choose from: auto, ndjson)")
        if color not in ("auto", "always", "never"):
            raise UsageError(f"unknown --color {color!r} (choose from: auto, always, never)")
        if jobs is not None and jobs < 1:
            raise UsageError(f"--jobs must be a number of processes, 1 or more (got {jobs})")
        steps, known = _finding_steps(fail_on, baseline, write_baseline)
        outputs = parse_outputs(output or ["text"])
        compile_preprocessors(pre_process or [])  # a typo fails before any file is read
        selector = None
        if labels:  # the selectors' module only then: start-up time
            from assertree.languages.selectors import selector_from

            selector = selector_from(labels)
        excluded = Exclude.of(exclude)
        files = payload_files(payload, excluded)  # a missing payload fails before the policies are compiled
        streamed = _streamed(files, stream=stream, payload_format=payload_format, terraform=terraform,
                             pre_process=bool(pre_process))
        policy_set = load_policy_arguments(paths_from(policy, "--policy"), selector=selector, exclude=excluded,
                                           quiet=quiet)
    policies = policy_set.policies
    binding_values = None
    if bindings is not None:  # the bindings' module only then: start-up time
        from assertree.inputs.bindings import load_bindings

        binding_values = load_bindings(bindings)
    use_color = color == "always" or (color == "auto" and sys.stdout.isatty() and not os.environ.get("NO_COLOR"))
    context = explaining(load_scan_context(values=values, user_info=user_info, exceptions=exceptions or (),
                                           bindings=binding_values,
                                           crds=paths_from([str(p) for p in crd or []], "--crd")), explain)
    if params:
        from assertree.inputs.params import load_params

        context.params = tuple(load_params(params))
    context.run_unbound = unbound
    _warn_admission(policies, context.params, unbound=unbound)
    if context.exceptions:  # the exceptions' module only then: start-up time
        from assertree.findings.exceptions import Exempting

        steps.exempting = Exempting.of(context.exceptions)
    processes = jobs if jobs is not None else default_jobs()
    if streamed:
        from assertree.cli.streamed import scan_streamed

        options = ReportOptions(quiet=quiet, color=use_color, bindings=binding_values,
                                multiple_sources=len(files) > 1, kyverno_json=kyverno_json, baseline=known)
        result, loaded = scan_streamed(files, policies, context, outputs, options, payload_format=payload_format,
                                       jobs=processes, per_document_limit=stream, steps=steps)
        counted = result
    else:
        loaded = load_resources(files, terraform=terraform, include_deleted=include_deleted,
                                pre_process=pre_process or (), freeze=process.one_shot, payload_format=payload_format,
                                jobs=processes, fields=_fields_read(policies, context, terraform=terraform,
                                                                    kyverno_json=kyverno_json))
        del ahead  # its bytes were taken, or the file was not read after all: the thread is done either way
        result = run_scan(loaded.resources, policies, context=context, jobs=processes, freeze=process.one_shot)
        if loaded.unfinished and any(not found.identifier for found in result.results):
            loaded.complete()  # a finding without an identifier is fingerprinted by its whole resource
        steps.apply(result.results)
        options = ReportOptions(quiet=quiet, color=use_color, bindings=binding_values,
                                multiple_sources=len(loaded.files) > 1, problems=tuple(loaded.problems),
                                kyverno_json=kyverno_json, baseline=known)
        with collector_paused():  # reports make no cycles worth a pass (the passes were 5 ms of SARIF's at 10k)
            counted = write_outputs(outputs, result, options)  # the totals: what was checked, without another pass
    process.keep(loaded, result, policies)  # a one-shot run ends without freeing them
    empty = _warn_empty(policies)
    if not (loaded.problems and not loaded.resources):  # when no file could be read, that is the news
        _warn_unchecked(counted, loaded.plans_without_terraform, quiet=quiet)
    if loaded.problems or policy_set.errors:
        raise typer.Exit(EXIT_BAD_INPUT)
    if steps.recorder is not None and write_baseline is not None:
        count = steps.recorder.write(write_baseline)
        print(f"assertree: wrote {count} finding{'s' if count != 1 else ''} to the baseline {write_baseline}",
              file=sys.stderr)
        raise typer.Exit(EXIT_OK)
    if known is not None and known.fixed():
        fixed = len(known.fixed())
        print(f"assertree: note: {fixed} finding{'s' if fixed != 1 else ''} of the baseline {known.path} "
              f"{'are' if fixed != 1 else 'is'} fixed: write it again with --write-baseline to drop "
              f"{'them' if fixed != 1 else 'it'}", file=sys.stderr)
    if result.failed and not soft_fail:
        raise typer.Exit(EXIT_FAILED)
    if fail_on_empty and not result.results:
        print("assertree: nothing was checked (--fail-on-empty)", file=sys.stderr)
        raise typer.Exit(EXIT_FAILED)
    if fail_on_empty and empty:
        print(f"assertree: {empty} polic{'ies' if empty != 1 else 'y'} without rules checked nothing "
              "(--fail-on-empty)", file=sys.stderr)
        raise typer.Exit(EXIT_FAILED)
    raise typer.Exit(EXIT_OK)


def _fields_read(policies: list, context: Any, *, terraform: bool, kyverno_json: bool) -> frozenset[str] | None:
    """The fields of a resource this scan reads before its results are known: the policies', unless a
    report or exception reads whole resources (``--kyverno-json`` prints them; an exception's conditions may
    read anything). Asked for --terraform only, where it lets a large plan be read for them alone."""
    if not terraform or kyverno_json or context.exceptions:
        return None
    from assertree.languages.base import fields_read_by

    return fields_read_by(policies)


def _read_ahead(arguments: list[str], *, stream: bool, payload_format: str):
    """One large payload file read in a thread while the command imports what it needs and loads the policies
    (`assertree.inputs.ahead`): only when the scan reads it whole (one file, not standard input, not JSON Lines,
    not --stream). Returns what holds the read (None: nothing read ahead), to be kept while the file is wanted."""
    if len(arguments) != 1 or stream or payload_format != "auto":
        return None
    from assertree.inputs.formats import is_ndjson
    from assertree.inputs.payload import STDIN

    if arguments[0] == STDIN or is_ndjson(arguments[0]):
        return None
    from assertree.inputs.ahead import read_ahead

    return read_ahead(arguments[0])


def _finding_steps(fail_on: str | None, baseline: Path | None, write_baseline: Path | None):
    """The findings steps of ``--fail-on``, ``--baseline`` and ``--write-baseline`` (`assertree.findings`), and
    the baseline read back (None without --baseline)."""
    from assertree.errors import UsageError
    from assertree.findings.steps import FindingSteps

    level = known = recorder = None
    if fail_on is not None:
        from assertree.findings.severity import check_level

        try:
            level = check_level(fail_on)
        except ValueError as error:
            raise UsageError(f"--fail-on: {error}") from None
    if baseline is not None or write_baseline is not None:  # the baselines' module only then: start-up time
        from assertree.findings.baseline import Baseline, Recorder

        known = Baseline.read(baseline) if baseline is not None else None
        recorder = Recorder() if write_baseline is not None else None
    return FindingSteps(level, known, recorder), known


def _streamed(files: list[str], *, stream: bool, payload_format: str, terraform: bool, pre_process: bool) -> bool:
    """Whether the scan streams (`assertree.cli.streamed`), in bounded memory and with the same reports:
    when asked (--stream), for JSON Lines, and by default for two or more payload files (a directory, a
    pre-commit hook's files), unless --terraform or --pre-process needs whole payloads (then asking for
    --stream, or JSON Lines among the payloads, is an error). One JSON or YAML file is read whole: streaming
    it holds the same memory (its value is one payload) and was no faster (measured, 10,000 resources)."""
    from assertree.inputs.formats import is_ndjson

    if not (terraform or pre_process):
        return stream or len(files) > 1 or any(is_ndjson(file, payload_format) for file in files)
    from assertree.errors import UsageError

    if stream or any(is_ndjson(file, payload_format) for file in files):
        why = "--stream" if stream else "JSON Lines payloads"
        raise UsageError(f"{why}: --terraform and --pre-process need whole payloads; JSON Lines and --stream "
                         "check each resource as it is read")
    return False


def _warn_admission(policies, params, *, unbound: bool) -> None:
    """One line per admission policy that no binding names (Kubernetes would not run it; --unbound runs it), and
    per binding whose params are not among --params (the policy never runs for it, or always refuses)."""
    if not any(str((item.policy.document or {}).get("apiVersion", "")).startswith("admissionregistration.k8s.io/")
               for item in policies):
        return
    from assertree.languages.admission.language import unbound as unbound_policies
    from assertree.languages.admission.language import without_params

    def where(policy) -> str:
        line = getattr(policy, "line", None)
        return f"{policy.source}:{line}" if policy.source and line else policy.source or "<policy>"

    for policy in [] if unbound else unbound_policies(policies):
        print(f"assertree: warning: {where(policy)}: {policy.kind} {policy.name!r} is not bound: no "
              f"{policy.binding_kind} names it, so Kubernetes would not run it; its results are skips (--unbound "
              "runs it as if bound)", file=sys.stderr)
    for policy, binding in without_params(policies, params):
        api_version, kind = policy.param_kind
        print(f"assertree: warning: {where(policy)}: {policy.kind} {policy.name!r}: binding {binding.name!r} takes "
              f"params of kind {kind} ({api_version}), and --params gave none", file=sys.stderr)


def _warn_empty(policies) -> int:
    """Warn, one line per policy, about each policy without rules (``rules: []``: it loads, as in
    kyverno-json, but checks nothing); returns how many there were."""
    from assertree.languages.load import NO_RULES
    from assertree.results import refused_rules

    empty = [item.policy for item in policies if not item.policy.rules and not refused_rules(item)]
    for policy in empty:
        line = getattr(policy, "line", None)
        where = f"{policy.source}:{line}" if policy.source and line else policy.source or "<policy>"
        print(f"assertree: warning: {where}: policy {policy.name!r}: {NO_RULES}", file=sys.stderr)
    return len(empty)


def _warn_unchecked(result, plans_without_flag: int, *, quiet: bool = False) -> None:
    """Never pass silently: say that nothing was checked; and, unless `quiet`, in one line, which rules
    applied to no resource at all. `result` is the scan's `Tally` (or a `ScanResult`: ``results`` and
    ``unmatched_rules()`` mean the same on both)."""
    unmatched = result.unmatched_rules()
    if not unmatched:
        return
    if not result.results:
        hint = ""
        if plans_without_flag:
            hint = (" The payload is a Terraform plan: add --terraform to check each planned resource "
                    "(or --pre-process to pick resources out of it).")
        print(f"assertree: warning: no rule applied to any resource: nothing was checked.{hint}", file=sys.stderr)
        return
    if quiet:
        return
    from assertree.errors import shorten

    names = shorten(", ".join(f"{policy.name}/{rule.name}" for policy, rule in unmatched), 160)
    count = f"{len(unmatched)} rule{'s' if len(unmatched) != 1 else ''}"
    print(f"assertree: note: {count} applied to no resource: {names}", file=sys.stderr)
