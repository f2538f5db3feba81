"""Request bodies of the two scan routes, checked field by field before anything runs.

kyverno-json binds bodies with Go's encoding/json (unknown fields ignored, a wrong
type is an error) and then checks that the payload (and, in the playground, the
policy) is not empty. Here every problem is a `RequestError` whose text says which
field is wrong and why; the app answers it with ``400 {"error": text}``.

assertree reads two fields kyverno-json does not have: ``bindings`` (an object of
extra ``$variables``, as ``scan --bindings``) and, in the playground, ``terraform``
(read the payload as a ``terraform show -json`` plan, as ``scan --terraform``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from assertree.documents.reader import parse_json
from assertree.errors import DocumentError


class RequestError(Exception):
    """A request the server cannot use; its text is the ``error`` of the 400 answer."""


@dataclass(frozen=True)
class ScanRequest:
    """``POST /api/scan``: a JSON payload for the loaded policies."""

    payload: Any
    preprocessors: tuple[str, ...] = ()
    bindings: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class PlaygroundRequest:
    """``POST /api/playground/scan``: payload and policy as text (YAML or JSON)."""

    payload: str
    policy: str
    preprocessors: tuple[str, ...] = ()
    bindings: dict[str, Any] = field(default_factory=dict)
    terraform: bool = False


def _body(data: bytes) -> dict[str, Any]:
    if not data.strip():
        raise RequestError("empty request body: send a JSON object")
    try:
        value = parse_json(data)
    except DocumentError as error:
        raise RequestError(f"request body is not valid JSON: {error}") from None
    if not isinstance(value, dict):
        found = "null" if value is None else type(value).__name__.replace("dict", "object").replace("list", "array")
        raise RequestError(f"request body must be a JSON object, not {found}")
    return value


def _strings(body: dict[str, Any], name: str) -> tuple[str, ...]:
    value = body.get(name)
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise RequestError(f"'{name}' must be a list of strings (JMESPath expressions)")
    return tuple(value)


def _bindings(body: dict[str, Any]) -> dict[str, Any]:
    value = body.get("bindings")
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise RequestError("'bindings' must be an object (name -> value)")
    return value


def _text(body: dict[str, Any], name: str, what: str) -> str:
    value = body.get(name)
    if value is None or value == "":
        raise RequestError(f"input {name} is null: send the {what} as text in '{name}'")
    if not isinstance(value, str):
        raise RequestError(f"'{name}' must be a string holding the {what} (YAML or JSON text)")
    return value


def parse_scan_request(data: bytes) -> ScanRequest:
    """The request of ``POST /api/scan``; `RequestError` when it cannot be used."""
    body = _body(data)
    if body.get("payload") is None:
        raise RequestError("input payload is null: send the document to check in 'payload'")
    return ScanRequest(body["payload"], _strings(body, "preprocessors"), _bindings(body))


def parse_playground_request(data: bytes) -> PlaygroundRequest:
    """The request of ``POST /api/playground/scan``; `RequestError` when it cannot be used."""
    body = _body(data)
    terraform = body.get("terraform", False)
    if not isinstance(terraform, bool):
        raise RequestError("'terraform' must be true or false")
    return PlaygroundRequest(
        payload=_text(body, "payload", "payload"),
        policy=_text(body, "policy", "policy"),
        preprocessors=_strings(body, "preprocessors"),
        bindings=_bindings(body),
        terraform=terraform,
    )
