"""Starting a real ``assertree serve`` process for the tests in this folder, and stopping it.

The server binds 127.0.0.1 on a free port (``--port 0``) and prints its address; every test
talks to it over HTTP. Its log goes to a file (a full pipe would stall the server).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx

HERE = Path(__file__).parent
REPO = HERE.parents[1]
RUN_SERVER = HERE / "run_server.py"
STARTUP_SECONDS = 20


@dataclass
class Server:
    url: str
    process: subprocess.Popen
    log: Path

    def client(self, **options) -> httpx.Client:
        return httpx.Client(base_url=self.url, timeout=20, **options)

    def log_text(self) -> str:
        return self.log.read_text(errors="replace")


def start_command(*args: str) -> list[str]:
    return [sys.executable, str(RUN_SERVER), "--host", "127.0.0.1", "--port", "0", "--no-access-log", *args]


@contextlib.contextmanager
def running_server(*args: str) -> Iterator[Server]:
    """A server started with `args`; stopped (SIGTERM, then SIGKILL) when the block ends."""
    log = Path(tempfile.mkstemp(prefix="assertree-serve-", suffix=".log")[1])
    with log.open("w") as log_file:
        process = subprocess.Popen(start_command(*args), stdout=subprocess.PIPE, stderr=log_file, text=True,
                                   cwd=REPO, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        url = _address(process, log)
        _wait_until_up(url)
        yield Server(url, process, log)
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if process.stdout is not None:
            process.stdout.close()
        log.unlink(missing_ok=True)


def _address(process: subprocess.Popen, log: Path) -> str:
    found: list[str] = []

    def read() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            if "serving on " in line:
                found.append(line.split("serving on ", 1)[1].split()[0])
                return

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(STARTUP_SECONDS)
    if not found:
        process.kill()
        raise AssertionError(f"the server did not start (exit {process.poll()}):\n{log.read_text()}")
    return found[0]


def _wait_until_up(url: str) -> None:
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        with contextlib.suppress(httpx.TransportError):
            if httpx.get(url + "api/health", timeout=2).status_code == 200:
                return
        time.sleep(0.05)
    raise AssertionError("the server never answered /api/health")


def wait_for(condition, seconds: float = 10.0, step: float = 0.1) -> bool:
    """Poll `condition` until it is true or `seconds` pass (bounded, never forever)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(step)
    return condition()


def call_app(app, method: str, url: str, **options) -> httpx.Response:
    """One request to an application in this process (no socket), for what needs no running server."""
    import asyncio

    async def call() -> httpx.Response:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
            return await client.request(method, url, **options)

    return asyncio.run(call())
