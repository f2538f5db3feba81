"""``assertree serve``: the REST API and the playground page over HTTP."""

from __future__ import annotations

from typing import Annotated

import typer

from assertree.cli.exit_codes import EXIT_OK
from assertree.cli.options import ParamsOption, UnboundOption


def serve(
    policy: Annotated[list[str] | None, typer.Option(
        "--policy", show_default=False,
        help="Policy file or directory for POST /api/scan (searched recursively; reloaded when it changes "
        "and on SIGHUP). Repeatable. Without it only the playground works.")] = None,
    host: Annotated[str, typer.Option(
        "--host", help="Address to listen on. Anything but a loopback address exposes the API to the network.")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="Port to listen on (0: any free port).")] = 8080,
    max_body_size: Annotated[int, typer.Option(
        "--max-body-size", help="Largest request body accepted, in bytes.")] = 2 * 1024 * 1024,
    watch: Annotated[bool, typer.Option(
        "--watch/--no-watch", help="Reload the policies when their files change.")] = True,
    cors: Annotated[list[str] | None, typer.Option(
        "--cors", show_default=False,
        help="Origin allowed to call the API from a browser page (e.g. https://example.com, or *). Repeatable.")
    ] = None,
    playground: Annotated[bool, typer.Option(
        "--playground/--no-playground", help="Serve the playground page at /.")] = True,
    access_log: Annotated[bool, typer.Option("--access-log/--no-access-log", help="Log every request.")] = True,
    params: ParamsOption = None,
    unbound: UnboundOption = False,
) -> None:
    """Serve kyverno-json's REST API (POST /api/scan, /api/playground/scan) and a playground page."""
    try:
        from assertree.serve import create_app, run
        from assertree.serve.app import LOOPBACK_HOSTS
    except ImportError as missing:
        from assertree.errors import UsageError

        raise UsageError(f"'assertree serve' needs the serve extra: pip install 'assertree[serve]' "
                         f"({missing.name} is missing)") from None
    from assertree.errors import UsageError

    if not 0 <= port <= 65535:
        raise UsageError(f"--port must be between 0 and 65535, not {port}")
    if max_body_size < 1:
        raise UsageError("--max-body-size must be at least 1 byte")
    loopback = host in LOOPBACK_HOSTS or host.startswith("127.")
    from assertree.cli.arguments import paths_from
    from assertree.languages.base import ScanContext

    context = ScanContext(run_unbound=unbound)
    if params:
        from assertree.inputs.params import load_params

        context.params = tuple(load_params(params))
    policies = paths_from(policy, "--policy")
    app = create_app(policies, max_body_size=max_body_size, watch=watch, cors_origins=cors or (),
                     allowed_hosts=(*LOOPBACK_HOSTS, host) if loopback else None, playground=playground,
                     context=context)
    store = app.state.store
    if store is not None:
        names = ", ".join(str(p) for p in policies)
        typer.echo(f"assertree: {len(store.current.policies)} policies, {store.current.rule_count} rules "
                   f"from {names}")
    run(app, host, port, access_log=access_log, on_reload=store.reload if store is not None else None)
    raise typer.Exit(EXIT_OK)
