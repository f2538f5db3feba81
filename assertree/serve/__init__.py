"""``assertree serve``: kyverno-json's REST API and a playground page, on your own machine.

Routes (kyverno-json's shapes, `assertree.serve.app` lists them all):

    POST /api/scan             {"payload": <JSON>, "preprocessors": [...]}  against the policies loaded at start
    POST /api/playground/scan  {"payload": "<text>", "policy": "<text>", "preprocessors": [...]}
    GET  /api/health           whether the server is up and which policies it holds
    GET  /                     the playground page (every script and stylesheet served from here)

Answers are ``{"results": [{"policy", "rule", "identifier", "result", "message"}]}``;
bad requests are ``400 {"error": "..."}``. The stack is Starlette (routing, requests)
on uvicorn (the HTTP server); both are the ``serve`` extra, imported only by this package.
"""

from __future__ import annotations

from assertree.serve.app import create_app
from assertree.serve.server import run

__all__ = ["create_app", "run"]
