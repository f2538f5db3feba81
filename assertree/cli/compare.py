"""``assertree compare``: a migration report, where a policy set and its CEL rewrite give different verdicts."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from assertree.cli.exit_codes import EXIT_BAD_INPUT, EXIT_FAILED, EXIT_OK
from assertree.cli.options import ExcludeOption, UserInfoOption, ValuesOption

EXAMPLES = """Examples:

  assertree compare --old best-practices/ --new best-practices-vpol/ manifests/

  assertree compare --old policies/ --new policies-cel/ --values values.yaml -o json k8s/*.yaml

  assertree compare --old old.yaml --new new.yaml --pair require-labels=require-labels-vp pod.yaml
"""


def compare(
    old: Annotated[list[str], typer.Option(
        "--old", "--policy", metavar="PATH", show_default=False,
        help="The policies in use (e.g. ClusterPolicies): a file, or a directory searched recursively. "
        "Repeatable.")],
    new: Annotated[list[str], typer.Option(
        "--new", "--policy-new", metavar="PATH", show_default=False,
        help="Their rewrites (ClusterPolicies with validate.cel, ValidatingPolicies ...). A new policy is the "
        "twin of the old one with the same name, or that name plus -cel or -vpol. Repeatable.")],
    resources: Annotated[list[str], typer.Argument(
        metavar="RESOURCE", show_default=False,
        help="Resource files, directories (searched for .json, .yaml, .yml), globs, or '-' for stdin.")],
    pair: Annotated[list[str] | None, typer.Option(
        "--pair", metavar="OLD=NEW", show_default=False,
        help="Pair two policies whose names do not match (namespaced policies: namespace/name). Repeatable.")
    ] = None,
    values: ValuesOption = None,
    user_info: UserInfoOption = None,
    context: Annotated[Path | None, typer.Option(
        "--context", metavar="FILE", show_default=False,
        help="Kyverno CLI context file (cli.kyverno.io/v1alpha1 Context): the resources and image data CEL "
        "policies look up, as 'kyverno test' reads a test's context file.")] = None,
    exceptions: Annotated[list[Path] | None, typer.Option(
        "--exceptions", metavar="PATH", show_default=False,
        help="PolicyException files or directories, given to both sides. Repeatable.")] = None,
    output: Annotated[str, typer.Option(
        "--output", "-o", metavar="text|json", help="Report format.")] = "text",
    strict: Annotated[bool, typer.Option(
        "--strict", metavar="",
        help="Also count 'skip' against 'not-selected' as a difference, and fail when a policy has no twin.")
    ] = False,
    exclude: ExcludeOption = None,
) -> None:
    """List the resources on which old policies and their rewrites give different verdicts: exit 0 when every
    verdict agrees, 1 when one differs, 2 when an input cannot be used or no policy has a twin."""

    from assertree.cli import process
    from assertree.cli.arguments import paths_from
    from assertree.cli.policies import load_policy_arguments
    from assertree.documents.paths import Exclude
    from assertree.errors import UsageError
    from assertree.inputs.kyverno_files import load_scan_context
    from assertree.inputs.resources import load_resources
    from assertree.testing.compare import compare as run_compare
    from assertree.testing.compare_report import FORMATS

    output = output.strip().lower()
    if output not in FORMATS:
        raise UsageError(f"unknown --output format {output!r} (choose from: {', '.join(FORMATS)})")
    pairs = _pairs(pair or [])
    excluded = Exclude.of(exclude)
    old_set = load_policy_arguments(paths_from(old, "--old"), exclude=excluded, option="--old")
    new_set = load_policy_arguments(paths_from(new, "--new"), exclude=excluded, option="--new")
    old_policies, new_policies = old_set.policies, new_set.policies
    loaded = load_resources(resources, freeze=process.one_shot, exclude=excluded)
    if loaded.problems or old_set.errors or new_set.errors:
        for problem in loaded.problems:
            print(f"assertree: error: {problem}", file=sys.stderr)
        raise typer.Exit(EXIT_BAD_INPUT)
    scan_context = load_scan_context(values=values, user_info=user_info, exceptions=exceptions or ())
    if context is not None:
        from assertree.languages.kyverno.cel_policies.environment import read_context_file

        scan_context = scan_context.replace(lookups=read_context_file(context))
    comparison = run_compare(loaded.resources, old_policies, new_policies, context=scan_context, pairs=pairs,
                             strict=strict)
    if not comparison.twins:
        raise UsageError("no --new policy is a twin of an --old one (same name, or name plus -cel/-vpol): "
                         "pair them with --pair OLD=NEW")
    sys.stdout.write(FORMATS[output](comparison))
    process.keep(loaded, comparison)  # a one-shot run ends without freeing them
    raise typer.Exit(EXIT_OK if comparison.agree else EXIT_FAILED)


def _pairs(texts: list[str]) -> dict[str, str]:
    from assertree.errors import UsageError

    pairs: dict[str, str] = {}
    for text in texts:
        old, sep, new = (part.strip() for part in text.partition("="))
        if not sep or not old or not new:
            raise UsageError(f"--pair {text!r}: expected OLD=NEW (two policy names)")
        if old in pairs:
            raise UsageError(f"--pair: old policy {old!r} is paired twice")
        pairs[old] = new
    return pairs
