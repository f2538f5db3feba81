"""``assertree kyverno apply`` and ``assertree kyverno test``: the Kyverno CLI 1.19's command lines, run by assertree.

Every flag of ``kyverno apply`` and ``kyverno test`` at kyverno/kyverno 111e07bb
(``cmd/cli/kubectl-kyverno/commands/{apply,test}/command.go``) is here: honoured,
accepted where the CLI itself does nothing with it offline (``--namespace``,
``--concurrent``, ... only change how ``--cluster`` reads a cluster), or refused
with one line saying why (`REFUSED`: what needs a cluster, a registry, git or the
network). Flags are read as the CLI's (pflag) reads them: a list flag also takes
comma-separated values (``-r a.yaml,b.yaml``), and a boolean flag ``=true`` or
``=false`` (`pflag_arguments`). Output and exit codes are the CLI's
(`assertree.kyverno_cli`); what cannot be used is one ``assertree:`` line on
standard error and exit 2, as in every assertree command.
"""

# No `from __future__ import annotations` here: typer reads the command's annotations.

import csv
import os
import sys
from pathlib import Path
from typing import Annotated

import typer

from assertree.cli.exit_codes import EXIT_BAD_INPUT, EXIT_FAILED, EXIT_OK

APPLY_EXAMPLES = """Examples:

  assertree kyverno apply best-practices/ --resource k8s/deployment.yaml --resource k8s/service.yaml

  assertree kyverno apply policies/ -r manifests/ --audit-warn --warn-exit-code 3

  assertree kyverno apply policy.yaml -r pod.yaml --policy-report --output-format json
"""

TEST_EXAMPLES = """Examples:

  assertree kyverno test .

  assertree kyverno test . --test-case-selector "policy=disallow-latest-tag, rule=require-image-tag"
"""

REFUSED = {
    "--cluster": "reads the resources of a live cluster; assertree works offline on files: export them "
                 "(kubectl get ... -o yaml) and pass them with --resource",
    "--kubeconfig": "names a cluster to read; assertree works offline on files (see --resource)",
    "--context": "names a kubeconfig context; assertree works offline on files (see --resource)",
    "--registry": "fetches image data from registries; assertree works offline: give that data in a values "
                  "file (-f) or a CEL context file (--context-file)",
    "--git-branch": "clones a git repository; assertree works offline: clone it, then name the local folder",
    "--username": "authenticates to a git repository; assertree works offline: clone it, then name the local folder",
    "--password": "authenticates to a git repository; assertree works offline: clone it, then name the local folder",
    "--parameter-resource": "feeds ValidatingAdmissionPolicy/MutatingAdmissionPolicy parameters, which "
                            "assertree does not read yet",
    "--http-payload": "feeds HTTP authorization ValidatingPolicies, which assertree does not run",
    "--envoy-payload": "feeds Envoy authorization ValidatingPolicies, which assertree does not run",
}
"""Flags whose work assertree cannot do offline, with the reason printed when one is given."""

APPLY_BOOLEANS = ("--cluster", "-c", "--policy-report", "-p", "--stdin", "-i", "--registry", "--audit-warn",
                  "--warn-no-pass", "--remove-color", "--detailed-results", "--table", "-t", "--continue-on-fail",
                  "--exceptions-with-resources", "--exceptions-within-resources", "--exceptions-within-policies",
                  "--generate-exceptions", "--cluster-wide-resources", "--continue-on-error", "--show-performance")
TEST_BOOLEANS = ("--registry", "--fail-only", "--remove-color", "--detailed-results", "--require-tests")


def pflag_arguments(args: list[str], booleans: tuple[str, ...]) -> list[str]:
    """`args` as click reads them, from pflag's forms: ``--table=true`` is ``--table``, ``--table=false``
    leaves the flag out (its default), as the Kyverno CLI reads boolean flags."""
    out = []
    for arg in args:
        name, equals, value = arg.partition("=")
        if equals and name in booleans:
            if value.lower() in ("true", "t", "1"):
                out.append(name)
            elif value.lower() not in ("false", "f", "0"):
                out.append(arg)  # click says what is wrong
            continue
        out.append(arg)
    return out


def _list(values: list[str] | None) -> list[str]:
    """A pflag string-slice: every value given, each split at commas as CSV (``"a,b"`` is two)."""
    out: list[str] = []
    for value in values or ():
        out.extend(item for row in csv.reader([value]) for item in row)
    return out


def _color(remove_color: bool) -> bool:
    return not remove_color and sys.stdout.isatty() and not os.environ.get("NO_COLOR")


def _refuse(given: dict[str, object]) -> None:
    from assertree.errors import UsageError

    for flag, value in given.items():
        if value:
            raise UsageError(f"{flag} {REFUSED[flag]}")


def _tell(problems, *, quiet: bool = False) -> None:
    from assertree.errors import Severity

    for problem in problems:
        if problem.severity != Severity.NOTE or not quiet:
            print(f"assertree: {problem.severity}: {problem}", file=sys.stderr)


def apply(
    policies: Annotated[list[str] | None, typer.Argument(
        metavar="POLICY", show_default=False,
        help="Policy files or folders (searched recursively), or '-' for standard input.")] = None,
    resource: Annotated[list[str] | None, typer.Option(
        "--resource", "-r", metavar="PATH", show_default=False,
        help="Resource files, or folders (their .yaml/.yml files), or '-' for standard input. Repeatable, "
        "comma-separated.")] = None,
    resources: Annotated[list[str] | None, typer.Option(
        "--resources", metavar="PATH", show_default=False, help="Same as --resource.")] = None,
    json_payload: Annotated[list[str] | None, typer.Option(
        "--json", metavar="PATH", show_default=False, help="JSON payload files (for ValidatingPolicies in JSON "
        "mode).")] = None,
    http_payload: Annotated[list[str] | None, typer.Option(
        "--http-payload", metavar="PATH", show_default=False, help="Refused: " + REFUSED["--http-payload"])] = None,
    envoy_payload: Annotated[list[str] | None, typer.Option(
        "--envoy-payload", metavar="PATH", show_default=False, help="Refused: " + REFUSED["--envoy-payload"])
    ] = None,
    target_resource: Annotated[list[str] | None, typer.Option(
        "--target-resource", "--target-resources", metavar="PATH", show_default=False,
        help="Existing resources (files, or folders: their .yaml/.yml files) that mutate-existing rules "
        "(mutate.targets) patch; generate rules may clone from them. Repeatable, comma-separated.")] = None,
    cluster: Annotated[bool, typer.Option("--cluster", "-c", help="Refused: " + REFUSED["--cluster"])] = False,
    output: Annotated[str | None, typer.Option(
        "--output", "-o", metavar="PATH", show_default=False,
        help="Write mutated resources to this file (.yaml/.yml) or folder instead of printing them.")] = None,
    userinfo: Annotated[str | None, typer.Option(
        "--userinfo", "-u", metavar="FILE", show_default=False,
        help="User info file (cli.kyverno.io/v1alpha1 UserInfo): roles, cluster roles, subjects.")] = None,
    set_: Annotated[list[str] | None, typer.Option(
        "--set", "-s", metavar="KEY=VALUE", show_default=False,
        help="Variables for the policies (comma-separated); not with --values-file.")] = None,
    values_file: Annotated[str | None, typer.Option(
        "--values-file", "-f", metavar="FILE", show_default=False,
        help="Values file (cli.kyverno.io/v1alpha1 Values) for policy variables.")] = None,
    context_file: Annotated[str | None, typer.Option(
        "--context-file", metavar="FILE", show_default=False,
        help="Context file (cli.kyverno.io/v1alpha1 Context) for CEL policies' lookups.")] = None,
    policy_report: Annotated[bool, typer.Option(
        "--policy-report", "-p", help="Print an openreports.io/v1alpha1 policy report.")] = False,
    output_format: Annotated[str, typer.Option(
        "--output-format", metavar="yaml|json", help="Format of the policy report.")] = "yaml",
    namespace: Annotated[str | None, typer.Option(
        "--namespace", "-n", metavar="NAME", show_default=False,
        help="Accepted; as in the Kyverno CLI it only matters with --cluster.")] = None,
    stdin: Annotated[bool, typer.Option(
        "--stdin", "-i", help="Print mutated resources only (to pipe them to kubectl).")] = False,
    registry: Annotated[bool, typer.Option("--registry", help="Refused: " + REFUSED["--registry"])] = False,
    kubeconfig: Annotated[str | None, typer.Option(
        "--kubeconfig", metavar="FILE", show_default=False, help="Refused: " + REFUSED["--kubeconfig"])] = None,
    kube_context: Annotated[str | None, typer.Option(
        "--context", metavar="NAME", show_default=False, help="Refused: " + REFUSED["--context"])] = None,
    git_branch: Annotated[str | None, typer.Option(
        "--git-branch", "-b", metavar="BRANCH", show_default=False, help="Refused: " + REFUSED["--git-branch"])
    ] = None,
    username: Annotated[str | None, typer.Option(
        "--username", metavar="NAME", show_default=False, help="Refused: " + REFUSED["--username"])] = None,
    password: Annotated[str | None, typer.Option(
        "--password", metavar="TEXT", show_default=False, help="Refused: " + REFUSED["--password"])] = None,
    audit_warn: Annotated[bool, typer.Option(
        "--audit-warn", help="Report failures of Audit policies as warnings.")] = False,
    warn_exit_code: Annotated[int, typer.Option(
        "--warn-exit-code", metavar="N", help="Exit code when there are warnings and no failure or error.")] = 0,
    warn_no_pass: Annotated[bool, typer.Option(
        "--warn-no-pass", help="Exit with --warn-exit-code when no resource passed a policy.")] = False,
    remove_color: Annotated[bool, typer.Option("--remove-color", help="No colour (none is written when the "
                                                                       "output is not a terminal).")] = False,
    detailed_results: Annotated[bool, typer.Option(
        "--detailed-results", help="With --table, a MESSAGE column.")] = False,
    table: Annotated[bool, typer.Option("--table", "-t", help="Print the results as a table.")] = False,
    parameter_resource: Annotated[list[str] | None, typer.Option(
        "--parameter-resource", metavar="PATH", show_default=False,
        help="Refused: " + REFUSED["--parameter-resource"])] = None,
    exception: Annotated[list[str] | None, typer.Option(
        "--exception", "-e", "--exceptions", metavar="FILE", show_default=False,
        help="PolicyException files. Repeatable, comma-separated.")] = None,
    continue_on_fail: Annotated[bool, typer.Option(
        "--continue-on-fail", help="Accepted: assertree always goes on with the other resources.")] = False,
    exceptions_with_resources: Annotated[bool, typer.Option(
        "--exceptions-with-resources", "--exceptions-within-resources",
        help="Take PolicyExceptions from the resources instead of --exception.")] = False,
    exceptions_within_policies: Annotated[bool, typer.Option(
        "--exceptions-within-policies", help="Also take PolicyExceptions from the policy paths.")] = False,
    generate_exceptions: Annotated[bool, typer.Option(
        "--generate-exceptions", help="Print a PolicyException for each failure.")] = False,
    generated_exception_ttl: Annotated[str, typer.Option(
        "--generated-exception-ttl", metavar="DURATION", help="The cleanup TTL label of generated exceptions.")
    ] = "720h0m0s",
    cluster_wide_resources: Annotated[bool, typer.Option(
        "--cluster-wide-resources", help="Accepted; as in the Kyverno CLI it only matters with --cluster.")] = False,
    concurrent: Annotated[int, typer.Option(
        "--concurrent", metavar="N", help="Accepted; it only matters with --cluster.")] = 1,
    batch_size: Annotated[int, typer.Option(
        "--batch-size", metavar="N", help="Accepted; it only matters with --cluster.")] = 100,
    continue_on_error: Annotated[bool, typer.Option(
        "--continue-on-error", help="Accepted; it only matters with --cluster.")] = True,
    show_performance: Annotated[bool, typer.Option(
        "--show-performance", help="Accepted; it only matters with --cluster.")] = False,
    crd_paths: Annotated[list[str] | None, typer.Option(
        "--crd-paths", "--crd-path", metavar="PATH", show_default=False,
        help="CRD files: their cluster-scoped kinds keep no namespace. Repeatable, comma-separated.")] = None,
    exclude: Annotated[list[str] | None, typer.Option(
        "--exclude", metavar="GLOB", show_default=False,
        help="assertree's own: leave out policy and resource files and folders that GLOB names. Repeatable.")
    ] = None,
) -> None:
    """Apply policies to resources, as 'kyverno apply' (Kyverno CLI 1.19) does, with its flags, output and exit
    codes."""
    from assertree.cli.outputs import write_stdout
    from assertree.documents.paths import Exclude
    from assertree.errors import UsageError
    from assertree.jp.functions.duration import format_duration, parse_duration
    from assertree.kyverno_cli import apply_output
    from assertree.kyverno_cli import policy_report as reports
    from assertree.kyverno_cli.apply import Sources, load, missing_resource_block, run
    from assertree.kyverno_cli.mutate_log import MutateLog
    from assertree.kyverno_cli.responses import count

    _refuse({"--cluster": cluster, "--kubeconfig": kubeconfig, "--context": kube_context, "--registry": registry,
             "--git-branch": git_branch, "--username": username, "--password": password,
             "--parameter-resource": parameter_resource,
             "--http-payload": http_payload, "--envoy-payload": envoy_payload})
    resource_paths, json_paths = _list(resource) + _list(resources), _list(json_payload)
    if values_file and set_:
        raise UsageError("pass the values either using set flag or values_file flag")
    if not policies:
        raise UsageError("require policy")
    if "-" in policies and "-" in resource_paths:
        raise UsageError("a stdin pipe can be used for either policies or resources, not both")
    if resource_paths and json_paths:
        raise UsageError("both resource and json files can not be used together, use one or the other")
    if not resource_paths and not json_paths:
        raise UsageError("resource file(s) or cluster required")
    if output_format not in ("yaml", "json"):
        raise UsageError(f"unknown --output-format {output_format!r} (choose from: yaml, json)")
    try:
        ttl = format_duration(parse_duration(generated_exception_ttl))
    except Exception as error:  # noqa: BLE001  (Go's wording of a bad duration, as one line)
        raise UsageError(f"--generated-exception-ttl {generated_exception_ttl!r}: {error}") from None
    sources = Sources(policies=policies, resources=resource_paths, targets=_list(target_resource),
                      json_payloads=json_paths, values_file=values_file,
                      variables=_list(set_), user_info=userinfo, exceptions=_list(exception),
                      exceptions_with_resources=exceptions_with_resources,
                      exceptions_within_policies=exceptions_within_policies, context_file=context_file,
                      crd_paths=_list(crd_paths), exclude=Exclude.of(exclude))
    mutate_log = MutateLog(Path(output)) if output else None
    inputs = load(sources)
    _tell(inputs.notes)
    text: list[str] = []
    if not policy_report:
        text.extend(missing_resource_block(path) for path in inputs.missing)
    if not (stdin or policy_report or generate_exceptions):
        text.append(apply_output.header(inputs))

    def on_response(item, response) -> None:
        if apply_output.prints_mutation(response):
            if mutate_log is not None:
                mutate_log.add(item, response)
            text.append(apply_output.mutated(response, stdin=stdin, to_file=mutate_log is not None))
        for resource in apply_output.generated_resources(response):
            if mutate_log is not None:
                mutate_log.add_generated(response, resource)
            text.append(apply_output.generated(response, resource, stdin=stdin, to_file=mutate_log is not None))

    result = run(inputs, on_response)
    counts = count((response for _, response in result.responses()), audit_warn=audit_warn)
    if policy_report:
        text.append(reports.reports_text(result, audit_warn=audit_warn, output_format=output_format))
    elif generate_exceptions:
        text.append(reports.exceptions_text(result, audit_warn=audit_warn, output_format=output_format, ttl=ttl))
    elif table:
        text.append(apply_output.table(result, detailed=detailed_results, audit_warn=audit_warn,
                                       color=_color(remove_color)))
    else:
        text.append(apply_output.results(result, counts, audit_warn=audit_warn))
    code, said = apply_output.exit_code(counts, warn_exit_code=warn_exit_code, warn_no_pass=warn_no_pass)
    text.append(said)
    if mutate_log is not None:
        mutate_log.write()
    write_stdout("".join(text))
    for problem in inputs.problems:
        print(f"assertree: error: {problem}", file=sys.stderr)
    raise typer.Exit(EXIT_BAD_INPUT if inputs.problems else code)


def test(
    paths: Annotated[list[str], typer.Argument(
        metavar="PATH", show_default=False, help="Folders searched for Test files (or Test files).")],
    file_name: Annotated[str, typer.Option("--file-name", "-f", metavar="NAME", help="Test file name.")
                         ] = "kyverno-test.yaml",
    git_branch: Annotated[str | None, typer.Option(
        "--git-branch", "-b", metavar="BRANCH", show_default=False, help="Refused: " + REFUSED["--git-branch"])
    ] = None,
    test_case_selector: Annotated[str, typer.Option(
        "--test-case-selector", "-t", metavar="SELECTOR", help="Which results to check.")
    ] = "policy=*,rule=*,resource=*",
    output_format: Annotated[str, typer.Option(
        "--output-format", "-o", metavar="json|yaml|markdown|junit", show_default=False,
        help="Print the rows in this format instead of tables.")] = "",
    registry: Annotated[bool, typer.Option("--registry", help="Refused: " + REFUSED["--registry"])] = False,
    fail_only: Annotated[bool, typer.Option("--fail-only", help="Print only the failed rows, together.")] = False,
    remove_color: Annotated[bool, typer.Option("--remove-color", help="No colour (none is written when the "
                                                                       "output is not a terminal).")] = False,
    detailed_results: Annotated[bool, typer.Option(
        "--detailed-results", help="A MESSAGE column.")] = False,
    require_tests: Annotated[bool, typer.Option("--require-tests", help="Fail when no test is found.")] = False,
    exclude: Annotated[list[str] | None, typer.Option(
        "--exclude", metavar="GLOB", show_default=False,
        help="assertree's own: leave out test files and folders that GLOB names. Repeatable.")] = None,
) -> None:
    """Run Kyverno test files as 'kyverno test' (Kyverno CLI 1.19) does, with its flags, output and exit codes."""
    from assertree.cli.outputs import write_stdout
    from assertree.documents.paths import Exclude
    from assertree.errors import UsageError
    from assertree.kyverno_cli.selector import Selector
    from assertree.kyverno_cli.test_output import FORMATS, TestCommand, TestOptions

    _refuse({"--git-branch": git_branch, "--registry": registry})
    for path in paths:
        if path.startswith(("http://", "https://", "git@")):
            raise UsageError(f"{path}: a git repository needs the network; assertree works offline: clone it, "
                             "then name the local folder")
    if output_format and output_format not in FORMATS:
        raise UsageError("invalid format, expected (json, yaml, markdown, junit)")
    selector = Selector.parse(test_case_selector)
    options = TestOptions(file_name=file_name, selector=selector, output_format=output_format, fail_only=fail_only,
                          detailed=detailed_results, color=_color(remove_color or bool(output_format)),
                          exclude=Exclude.of(exclude))
    command = TestCommand(paths, options)
    for text in command:
        write_stdout(text)
    if not command.found:
        if require_tests:
            print("Error: no tests found", file=sys.stderr)
            raise typer.Exit(EXIT_FAILED)
        if selector.errors:
            print(f"Error: {selector.errors[0]}", file=sys.stderr)
            raise typer.Exit(EXIT_FAILED)
        print("assertree: note: nothing was tested (--require-tests makes that a failure)", file=sys.stderr)
        raise typer.Exit(EXIT_OK)
    if command.failed:
        print(f"Error: {command.failed} tests failed", file=sys.stderr)
        raise typer.Exit(EXIT_FAILED)
    raise typer.Exit(EXIT_OK)
