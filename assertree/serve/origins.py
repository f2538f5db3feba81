"""Refusing what a web page elsewhere could make a local server do: requests sent cross-origin.

A browser lets any page send a "simple" request to any address without asking
first (no CORS preflight): a POST whose body is ``text/plain``, form data or
multipart. A page the user visits could so make ``assertree serve`` on
127.0.0.1 evaluate what it sends (it cannot read the answer, but the work is
done). The server therefore refuses, before any body is read:

- a request that changes nothing is never refused (GET, HEAD, OPTIONS: the
  CORS preflight is answered, or not, by Starlette's CORS middleware);
- any other request whose body is not declared JSON (``Content-Type:
  application/json`` or ``application/*+json``): 415. A browser sends that
  content type cross-origin only after a preflight, which the server answers
  only for ``--cors`` origins;
- one whose ``Origin`` (browsers send it with every POST) is not the server's
  own address (the ``Host`` it was reached at) nor a ``--cors`` origin: 403;
- one whose ``Sec-Fetch-Site`` (sent by current browsers) says ``cross-site``
  or ``same-site`` (another port of localhost is the same site, not the same
  origin), unless its ``Origin`` is a ``--cors`` origin: 403.

Clients that are not browsers (curl, scripts, CI) send neither header and
only need the JSON content type. Written by hand: Starlette's CORS middleware
adds headers to answers; it does not refuse requests.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

from starlette.datastructures import Headers
from starlette.responses import JSONResponse

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
_DEFAULT_PORTS = {"http": 80, "https": 443}


def refusal(method: str, headers: Headers, allowed_origins: Sequence[str] = ()) -> tuple[int, str] | None:
    """(status, reason) when the request must be refused, else None."""
    if method in SAFE_METHODS:
        return None
    media_type = headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if media_type != "application/json" and not (media_type.startswith("application/") and
                                                  media_type.endswith("+json")):
        shown = f"'{media_type}'" if media_type else "none"
        return 415, (f"send the request body as JSON with 'Content-Type: application/json' (got {shown}): a "
                     "page on another site could send any other type without asking first")
    origin = headers.get("origin")
    allowed = "*" in allowed_origins or (origin is not None and origin in allowed_origins)
    if origin is not None and not allowed and not _same_origin(origin, headers.get("host", "")):
        return 403, (f"request from the page at {origin} refused: only this server's own pages may call it "
                     "(start it with --cors ORIGIN to let another origin in)")
    site = headers.get("sec-fetch-site", "").lower()
    if site in ("cross-site", "same-site") and not allowed:
        return 403, (f"request from another site refused (Sec-Fetch-Site: {site}): only this server's own pages "
                     "may call it (start it with --cors ORIGIN to let another origin in)")
    return None


def _same_origin(origin: str, host: str) -> bool:
    """Whether `origin` (``scheme://host[:port]``) names the address in `host` (``host[:port]``)."""
    try:
        parts = urlsplit(origin)
        origin_port = parts.port or _DEFAULT_PORTS.get(parts.scheme)
        reached = urlsplit(f"{parts.scheme}://{host}")
        host_port = reached.port or _DEFAULT_PORTS.get(parts.scheme)
    except ValueError:  # a port that is not a number, a malformed host
        return False
    if parts.scheme not in _DEFAULT_PORTS or not parts.hostname or not reached.hostname:
        return False  # "null" (a sandboxed frame, a file), or anything else that is not a web address
    return (parts.hostname.lower(), origin_port) == (reached.hostname.lower(), host_port)


class SameOriginOnly:
    """ASGI middleware: `refusal` answered with ``{"error": reason}`` before the application sees the request."""

    def __init__(self, app: Any, allowed_origins: Sequence[str] = ()) -> None:
        self.app = app
        self.allowed_origins = tuple(allowed_origins)

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            refused = refusal(scope["method"], Headers(scope=scope), self.allowed_origins)
            if refused is not None:
                status, reason = refused
                await JSONResponse({"error": reason}, status_code=status)(scope, receive, send)
                return
        await self.app(scope, receive, send)
