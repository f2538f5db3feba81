"""``assertree scan``: check payloads against policies."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from assertree.cli import EXIT_FAILED, EXIT_OK


def scan(
    payload: Annotated[list[str], typer.Option(
        "--payload", "-p", help="Payload file (JSON or YAML; '-' for stdin). Repeatable.",
        show_default=False)],
    policy: Annotated[list[Path], typer.Option(
        "--policy", help="Policy file or directory (searched recursively). Repeatable.", show_default=False)],
    bindings: Annotated[Path | None, typer.Option(
        "--bindings", help="YAML/JSON file of extra variables, usable as $name.", show_default=False)] = None,
    pre_process: Annotated[list[str] | None, typer.Option(
        "--pre-process", help="JMESPath expression applied to each payload before the scan. Repeatable.",
        show_default=False)] = None,
    labels: Annotated[list[str] | None, typer.Option(
        "--labels", help="Only run policies whose labels match this selector (e.g. 'env=prod,team in (a,b)').",
        show_default=False)] = None,
    output: Annotated[str, typer.Option("--output", "-o", help="Report format: text or json.")] = "text",
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Print only failed and errored rules.")] = False,
) -> None:
    """Check payloads against ValidatingPolicy files; exit 1 if any rule fails."""
    from assertree.engine import scan as run_scan
    from assertree.errors import PayloadError, PolicyError, UsageError
    from assertree.labels import selector_from
    from assertree.payload import compile_preprocessors, freeze_loaded, read_payload, resources_from
    from assertree.policy.load import load_policies
    from assertree.report import FORMATS, render

    if output not in FORMATS:
        raise UsageError(f"unknown --output format {output!r} (choose from: {', '.join(FORMATS)})")
    preprocessors = compile_preprocessors(pre_process or [])
    selector = selector_from(labels or [])
    policies = load_policies(*policy, selector=selector)
    if not policies:
        where = ", ".join(str(p) for p in policy)
        detail = " match the --labels selector" if selector else " were found"
        raise PolicyError(f"no policies{detail} in {where}: nothing would be checked")
    binding_values = None
    if bindings is not None:
        loaded = read_payload(str(bindings))
        if not isinstance(loaded.value, dict) or loaded.documents:
            raise PayloadError("the bindings file must hold one mapping of names to values", source=str(bindings))
        binding_values = loaded.value
    resources = []
    for path in payload:
        resources.extend(resources_from(read_payload(path), preprocessors))
    freeze_loaded()
    result = run_scan(resources, policies, binding_values)
    sys.stdout.write(render(output, result, bindings=binding_values, quiet=quiet))
    raise typer.Exit(EXIT_FAILED if result.failed else EXIT_OK)
