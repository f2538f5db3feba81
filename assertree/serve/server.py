"""Running the application: uvicorn on a socket bound here, SIGHUP reloading the policies.

uvicorn is the reference ASGI server (h11 for HTTP/1.1, graceful shutdown on
SIGINT/SIGTERM). The socket is bound before uvicorn starts so that the address
printed is the real one (port 0 picks a free port, which the tests use) and a
port already in use is an error before anything else happens.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import socket
import sys
from collections.abc import Callable
from typing import Any, TextIO

from assertree.errors import UsageError

LOG = logging.getLogger("assertree.serve")


def bind(host: str, port: int) -> socket.socket:
    """A listening TCP socket on host:port; UsageError when it cannot be had."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
        sock = socket.socket(family, kind, proto)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(1024)
    except OSError as error:
        raise UsageError(f"cannot listen on {host}:{port}: {error.strerror or error}") from None
    sock.set_inheritable(True)
    return sock


def url_of(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    return f"http://[{host}]:{port}/" if ":" in host else f"http://{host}:{port}/"


def run(app: Any, host: str = "127.0.0.1", port: int = 8080, *, access_log: bool = True,
        on_reload: Callable[[], Any] | None = None, out: TextIO | None = None) -> None:
    """Serve `app` until SIGINT/SIGTERM; SIGHUP calls `on_reload` (in a worker thread)."""
    import uvicorn

    out = out or sys.stdout
    _log_to_stderr()
    sock = bind(host, port)
    config = uvicorn.Config(app, log_level="info", access_log=access_log, lifespan="on", server_header=False,
                            timeout_graceful_shutdown=5)
    server = uvicorn.Server(config)

    async def main() -> None:
        loop = asyncio.get_running_loop()
        if on_reload is not None and hasattr(signal, "SIGHUP"):
            loop.add_signal_handler(signal.SIGHUP, lambda: loop.run_in_executor(None, on_reload))
        print(f"assertree: serving on {url_of(sock)} (playground at that address, API under /api)", file=out,
              flush=True)
        await server.serve(sockets=[sock])

    try:
        asyncio.run(main())
    finally:
        sock.close()


def _log_to_stderr() -> None:
    logger = logging.getLogger("assertree.serve")
    if not logger.handlers:
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("%(levelname)s:     %(message)s"))
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)
