"""The HTTP application: kyverno-json's routes, the health route, the playground page.

    POST /api/scan              {"payload": <JSON>, "preprocessors": [...], "bindings"?: {...}}
    POST /api/playground/scan   {"payload": "<text>", "policy": "<text>", "preprocessors": [...],
                                 "bindings"?: {...}, "terraform"?: bool}
         both: ?format=text|json|sarif|junit|github for an assertree report instead,
               ?details=true for locations (the playground page asks for them),
               ?explain=true for how each failing or erroring result was reached
    GET  /api/health            {"status": "ok", "policies": {...} | null}
    GET  /api/languages         the policy languages this assertree reads
    GET  /                      the playground page; /static/... its scripts, styles and examples

Starlette (the ASGI toolkit FastAPI is built on; one dependency, anyio) routes the
requests; the scan runs in its worker threads so a long scan never stalls the
event loop (health checks keep answering). Bodies are read in chunks and refused
past `max_body_size` before they are parsed. A request a web page elsewhere
could send is refused before that (`origins`). Every error is JSON
``{"error": "..."}``: 400 for a request that cannot be used, 403 for one from
another origin, 404/405 for a wrong route or method, 413 for a body over the
limit, 415 for a body not sent as JSON, 500 (logged) for a bug.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from assertree.serve.origins import SameOriginOnly
from assertree.serve.policies import PolicyStore
from assertree.serve.requests import RequestError, parse_playground_request, parse_scan_request

LOG = logging.getLogger("assertree.serve")
STATIC = Path(__file__).parent / "static"
DEFAULT_MAX_BODY_SIZE = 2 * 1024 * 1024  # kyverno-json's --gin-max-body-size default
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1", "[::1]")
# The page may load and call only this server (CodeMirror sets element styles, hence 'unsafe-inline' for styles).
PAGE_POLICY = ("default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
               "connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'")
_MEDIA_TYPES = {"text": "text/plain; charset=utf-8", "github": "text/plain; charset=utf-8",
                "json": "application/json", "sarif": "application/sarif+json", "junit": "application/xml"}


class BodyTooLarge(Exception):
    """The request body is over the limit."""


async def read_body(request: Request, limit: int) -> bytes:
    """The request body, refused (`BodyTooLarge`) as soon as it is known to be over `limit` bytes."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise BodyTooLarge
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise BodyTooLarge
        chunks.append(chunk)
    return b"".join(chunks)


def error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


def create_app(policy_paths: Sequence[str | Path] = (), *, max_body_size: int = DEFAULT_MAX_BODY_SIZE,
               watch: bool = False, cors_origins: Sequence[str] = (),
               allowed_hosts: Sequence[str] | None = LOOPBACK_HOSTS, playground: bool = True,
               context: Any = None) -> Starlette:
    """The application. `policy_paths` are compiled now (PolicyError if they cannot be: the server
    must not start on bad policies); without them ``/api/scan`` answers 400 and only the playground
    works. `watch` reloads the policies when their files change. `allowed_hosts` are the Host
    headers accepted (loopback names by default: a page on another site cannot reach a local
    server through DNS rebinding); None accepts any. `cors_origins` may call the API from a browser.
    `context` is the `ScanContext` every scan runs with (parameter resources of admission policies ...)."""
    from assertree.documents.nesting import make_room_for_nesting

    make_room_for_nesting()  # the server's process: requests may nest as deep as files
    store = PolicyStore(policy_paths) if policy_paths else None

    async def scan_route(request: Request) -> Response:
        from assertree.serve.scanning import resources_of_value, run_scan

        if store is None:
            return error(400, "no policies loaded: start the server with --policy DIR, "
                              "or send the policy with the payload to /api/playground/scan")
        body = await read_body(request, max_body_size)
        scan_request = parse_scan_request(body)
        policies = store.current.policies  # one snapshot for the whole request

        def work():
            resources = resources_of_value(scan_request.payload, scan_request.preprocessors)
            return run_scan(resources, policies, scan_request.bindings, context, explain=_asked(request, "explain"))

        return await _answer(request, work)

    async def playground_route(request: Request) -> Response:
        from assertree.serve.scanning import compile_policy_text, resources_of_text, run_scan

        body = await read_body(request, max_body_size)
        play = parse_playground_request(body)

        def work():
            resources = resources_of_text(play.payload, play.preprocessors, terraform=play.terraform)
            return run_scan(resources, compile_policy_text(play.policy), play.bindings, context,
                            explain=_asked(request, "explain"))

        return await _answer(request, work)

    async def health_route(request: Request) -> Response:
        return JSONResponse({"status": "ok", "policies": store.health() if store is not None else None})

    async def languages_route(request: Request) -> Response:
        return JSONResponse({"languages": languages()})

    async def index_route(request: Request) -> Response:
        return FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-cache",
                                                            "Content-Security-Policy": PAGE_POLICY})

    routes: list[BaseRoute] = [
        Route("/api/scan", scan_route, methods=["POST"]),
        Route("/api/playground/scan", playground_route, methods=["POST"]),
        Route("/api/health", health_route, methods=["GET", "HEAD"]),
        Route("/api/languages", languages_route, methods=["GET"]),
    ]
    if playground:
        routes += [Route("/", index_route, methods=["GET", "HEAD"]),
                   Mount("/static", StaticFiles(directory=STATIC), name="static")]

    middleware = []
    if allowed_hosts is not None:
        middleware.append(Middleware(TrustedHostMiddleware, allowed_hosts=list(allowed_hosts)))
    if cors_origins:
        middleware.append(Middleware(CORSMiddleware, allow_origins=list(cors_origins),
                                     allow_methods=["GET", "POST", "HEAD"], allow_headers=["Content-Type"]))
    middleware.append(Middleware(SameOriginOnly, allowed_origins=list(cors_origins)))  # no cross-origin POST

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette):
        import anyio

        async with anyio.create_task_group() as tasks:
            stop = anyio.Event()
            if watch and store is not None:
                tasks.start_soon(store.watch, stop)
            yield
            stop.set()
            tasks.cancel_scope.cancel()

    app = Starlette(routes=routes, middleware=middleware, lifespan=lifespan, exception_handlers={
        RequestError: lambda request, exc: error(400, str(exc)),
        BodyTooLarge: lambda request, exc: error(413, f"request body is larger than {max_body_size} bytes"),
        HTTPException: _http_error,
        Exception: _internal_error,
    })
    app.state.store = store
    return app


async def _answer(request: Request, work) -> Response:
    """Run the scan in a worker thread and answer in the format asked for."""
    from assertree.report import FORMATS, render
    from assertree.serve.responses import results_of

    report_format = request.query_params.get("format")
    if report_format is not None and report_format not in FORMATS:
        raise RequestError(f"unknown format {report_format!r} (choose from: {', '.join(FORMATS)})")
    details = _asked(request, "details")
    result = await run_in_threadpool(work)
    if report_format is None:
        return JSONResponse(await run_in_threadpool(results_of, result, details=details))
    text = await run_in_threadpool(render, report_format, result)
    return Response(text, media_type=_MEDIA_TYPES[report_format])


def _asked(request: Request, name: str) -> bool:
    """Whether a yes/no query parameter (``?details=true``) is set."""
    return request.query_params.get(name, "").lower() in ("1", "true", "yes")


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    message = {404: "not found", 405: f"method {request.method} not allowed here"}.get(exc.status_code, exc.detail)
    return JSONResponse({"error": message}, status_code=exc.status_code, headers=exc.headers)


async def _internal_error(request: Request, exc: Exception) -> Response:
    LOG.error("internal error on %s %s", request.method, request.url.path, exc_info=exc)
    return error(500, f"internal error: {type(exc).__name__}: {exc} (please report this at the project's issue "
                      "tracker)")


def languages() -> list[dict[str, str]]:
    """The policy languages assertree reads: apiVersion group and what it reads there."""
    import importlib

    from assertree.languages.load import LANGUAGES

    found = []
    for group, module in LANGUAGES.items():
        description = getattr(importlib.import_module(module), "DESCRIPTION", group)
        found.append({"group": group, "description": description})
    return found
