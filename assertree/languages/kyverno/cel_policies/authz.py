"""Authorization ValidatingPolicies (``evaluation.mode: HTTP`` or ``Envoy``): a check request in, a response out.

Kyverno's authorization server (github.com/kyverno/kyverno-authz, pkg/engine/
compiler, pkg/cel/libs/authz) runs ValidatingPolicies against HTTP requests
or Envoy ``CheckRequest``s; ``kyverno test`` feeds them ``httpPayloads`` and
``envoyPayloads`` (cmd/cli/kubectl-kyverno/processor/authz_processor.go).
Such a policy's validations do not return booleans but responses:

- HTTP: ``http.Allowed()``, ``http.Denied(reason)``, each ``.Response()``;
  ``object.attributes.Header(name)`` and ``.QueryParam(name)`` read the request
  (headers by their canonical MIME name, as Go's ``textproto`` reads them);
- Envoy: ``envoy.Allowed()``, ``envoy.Denied(code)``, ``envoy.Header(k, v)``,
  ``envoy.QueryParam(k, v)`` and the builders ``WithBody``, ``WithHeader``,
  ``WithoutHeader``, ``WithResponseHeader``, ``WithQueryParam``,
  ``WithoutQueryParam``, ``KeepEmptyValue``, ``Response``, ``WithMessage``,
  ``WithMetadata``;
- both: ``jwt.Decode(token, key)`` (`jwt`).

The stand-ins are typed ``dyn``: a response is a message in Kyverno, which
``null`` may stand for (``cond ? null : envoy.Allowed().Response()``).

Evaluation (``compiledPolicy.evaluateRules``): the match conditions (an error
is an ERROR under ``failurePolicy: Fail``, else the request does not match),
then each validation in order: an error is an ERROR, null goes on, the first
response decides: PASS "request allowed", FAIL "request denied ...". No
response is a SKIP "request does not match". The CLI compiles these policies
without exceptions, and so does this module. Responses travel as opaque
stand-ins (`functions.declare`) whose text is their JSON.

The check request is the payload file as JSON. An Envoy request is read as
protojson reads it (camelCase or proto names), its ``attributes.request.http``
given the fields an unset proto field has (empty strings and maps), so that
``object.attributes.request.http.headers['x']`` reads as it does on the
proto message.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from functools import cache
from typing import Any

from assertree.languages.cel.engine import CelError, Environment
from assertree.languages.cel.functions.declare import Declaration, build, opaque, opaque_text, tag_of
from assertree.languages.kyverno.cel_policies.conditions import check_conditions
from assertree.languages.kyverno.cel_policies.jwt import decode
from assertree.results import ERROR, FAIL, PASS, SKIP

__all__ = ["MODES", "authz_environment", "check_request", "evaluate_request"]

MODES = ("HTTP", "Envoy")
_EXTENSIONS = ("optional", "strings", "sets", "lists", "math", "encoders", "bindings")


def _data(value: dict, tag: str) -> dict:
    return json.loads(opaque_text(value, tag))


def _make(tag: str, data: Mapping[str, Any]) -> dict[str, str]:
    return opaque(tag, json.dumps(data, sort_keys=True))


def _canonical_header(name: str) -> str:
    """Go's ``textproto.CanonicalMIMEHeaderKey``: ``x-user-id`` -> ``X-User-Id``."""
    if not re.fullmatch(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+", name):
        return name
    return "-".join(part[:1].upper() + part[1:].lower() for part in name.split("-"))


def _header(attributes: Mapping, name: str) -> list[str]:
    headers = attributes.get("header") if isinstance(attributes, Mapping) else None
    values = headers.get(_canonical_header(name)) if isinstance(headers, Mapping) else None
    return [str(value) for value in values] if isinstance(values, list) else []


def _query(attributes: Mapping, name: str) -> list[str]:
    query = attributes.get("query") if isinstance(attributes, Mapping) else None
    values = query.get(name) if isinstance(query, Mapping) else None
    return [str(value) for value in values] if isinstance(values, list) else []


HTTP_DECLARATIONS = (
    Declaration("http.Allowed", (), "dyn", lambda: _make("httpok", {})),
    Declaration("http.Denied", ("string",), "dyn", lambda reason: _make("httpdenied", {"reason": reason})),
    Declaration("Header", ("map", "string"), "list", _header, member=True),
    Declaration("QueryParam", ("map", "string"), "list", _query, member=True),
    Declaration("Response", ("map",), "dyn", lambda ok: _make("httpresponse", {"ok": _data(ok, "httpok")}),
                member=True, receiver="httpok"),
    Declaration("Response", ("map",), "dyn",
                lambda denied: _make("httpresponse", {"denied": _data(denied, "httpdenied")}),
                member=True, receiver="httpdenied"),
)


def _envoy_ok() -> dict:
    return _make("envoyok", {"headers": [], "headersToRemove": [], "responseHeadersToAdd": [],
                             "queryParametersToSet": [], "queryParametersToRemove": []})


def _with(tag: str, key: str, item: Callable[..., Any]) -> Callable[..., dict]:
    """A builder appending `item(*args)` to the list `key` of a `tag` response."""
    def call(response: dict, *args: Any) -> dict:
        data = _data(response, tag)
        data[key] = [*data.get(key, []), item(*args)]
        return _make(tag, data)

    return call


def _header_option(value: Any, *rest: Any) -> dict:
    if rest:  # (key, value)
        return {"header": {"key": str(value), "value": str(rest[0])}, "keepEmptyValue": False}
    return _data(value, "envoyheader")


def _query_option(value: Any, *rest: Any) -> dict:
    if rest:
        return {"key": str(value), "value": str(rest[0])}
    return _data(value, "envoyquery")


def _keep_empty(header: dict, keep: bool = True) -> dict:
    data = _data(header, "envoyheader")
    data["keepEmptyValue"] = bool(keep)
    return _make("envoyheader", data)


def _set(tag: str, key: str) -> Callable[[dict, Any], dict]:
    def call(response: dict, value: Any) -> dict:
        data = _data(response, tag)
        data[key] = value
        return _make(tag, data)

    return call


ENVOY_DECLARATIONS = (
    Declaration("envoy.Allowed", (), "dyn", _envoy_ok),
    Declaration("envoy.Denied", ("int",), "dyn",
                lambda code: _make("envoydenied", {"status": {"code": code}, "headers": [], "body": ""})),
    Declaration("envoy.Header", ("string", "string"), "dyn",
                lambda key, value: _make("envoyheader", _header_option(key, value))),
    Declaration("envoy.QueryParam", ("string", "string"), "dyn",
                lambda key, value: _make("envoyquery", _query_option(key, value))),
    Declaration("WithBody", ("map", "string"), "dyn", _set("envoydenied", "body"), member=True,
                receiver="envoydenied"),
    *(Declaration("WithHeader", params, "dyn", _with(tag, "headers", _header_option), member=True, receiver=tag)
      for tag in ("envoyok", "envoydenied") for params in (("map", "map"), ("map", "string", "string"))),
    Declaration("WithoutHeader", ("map", "string"), "dyn", _with("envoyok", "headersToRemove", str), member=True,
                receiver="envoyok"),
    *(Declaration("WithResponseHeader", params, "dyn", _with("envoyok", "responseHeadersToAdd", _header_option),
                  member=True, receiver="envoyok") for params in (("map", "map"), ("map", "string", "string"))),
    *(Declaration("WithQueryParam", params, "dyn", _with("envoyok", "queryParametersToSet", _query_option),
                  member=True, receiver="envoyok") for params in (("map", "map"), ("map", "string", "string"))),
    Declaration("WithoutQueryParam", ("map", "string"), "dyn", _with("envoyok", "queryParametersToRemove", str),
                member=True, receiver="envoyok"),
    Declaration("KeepEmptyValue", ("map",), "dyn", _keep_empty, member=True, receiver="envoyheader"),
    Declaration("KeepEmptyValue", ("map", "bool"), "dyn", _keep_empty, member=True, receiver="envoyheader"),
    Declaration("Response", ("map",), "dyn", lambda ok: _make("envoyresponse", {"ok": _data(ok, "envoyok")}),
                member=True, receiver="envoyok"),
    Declaration("Response", ("map",), "dyn",
                lambda denied: _make("envoyresponse", {"denied": _data(denied, "envoydenied")}),
                member=True, receiver="envoydenied"),
    Declaration("WithMessage", ("map", "string"), "dyn", _set("envoyresponse", "message"), member=True,
                receiver="envoyresponse"),
    Declaration("WithMetadata", ("map", "map"), "dyn", _set("envoyresponse", "dynamicMetadata"), member=True,
                receiver="envoyresponse"),
)


JWT_DECLARATIONS = (Declaration("jwt.Decode", ("string", "string"), "dyn", lambda token, key: decode(token, key)),)


@cache
def authz_environment(mode: str) -> Environment:
    """The environment of an authorization policy in `mode` (HTTP or Envoy)."""
    from assertree.languages.cel.functions import KYVERNO
    from assertree.languages.kyverno.cel_policies.environment import FUNCTIONS

    declarations = (*(HTTP_DECLARATIONS if mode == "HTTP" else ENVOY_DECLARATIONS), *JWT_DECLARATIONS)
    return Environment(name=f"policies.kyverno.io/{mode}", variables=("object", "variables"),
                       extensions=_EXTENSIONS, functions=(*KYVERNO, *FUNCTIONS, *build(declarations)),
                       cross_type_numeric_comparisons=True)


# ---------------------------------------------------------------- requests

_ENVOY_HTTP_FIELDS = {"id": "", "method": "", "headers": {}, "path": "", "host": "", "scheme": "", "query": "",
                      "fragment": "", "size": 0, "protocol": "", "body": "", "raw_body": ""}


def _snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])([A-Z])", lambda found: "_" + found.group(1).lower(), name)


_USER_MAPS = frozenset({"headers", "context_extensions", "filter_metadata"})  # keys chosen by users: kept


def _proto_names(value: Any) -> Any:
    """protojson's lowerCamel field names as the proto's own (``rawBody`` -> ``raw_body``)."""
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            name = _snake(key)
            out[name] = item if name in _USER_MAPS else _proto_names(item)
        return out
    if isinstance(value, list):
        return [_proto_names(item) for item in value]
    return value


def check_request(mode: str, payload: Any) -> dict:
    """The check request a payload file holds, as the policy's ``object`` reads it; ValueError if unusable."""
    if not isinstance(payload, dict):
        raise ValueError("a check request must be a JSON object")
    if mode == "HTTP":
        raw = payload.get("attributes")
        attributes: dict = raw if isinstance(raw, dict) else {}
        filled = {"method": "", "header": {}, "host": "", "protocol": "", "contentLength": 0, "body": "",
                  "scheme": "", "path": "", "query": {}, "fragment": "", **attributes}
        return {**payload, "attributes": filled}
    request = _proto_names(payload)
    attributes = request.setdefault("attributes", {})
    inner = attributes.setdefault("request", {}) if isinstance(attributes, dict) else {}
    if isinstance(inner, dict):
        inner["http"] = {**_ENVOY_HTTP_FIELDS, **(inner.get("http") or {})}
    return request


def evaluate_request(spec: Any, request: dict, lookups: Any = None) -> tuple[str, str]:
    """(status, message) of an authorization policy (compiled `spec`) on one check request."""
    data = {"object": request}
    check = check_conditions(spec.match_conditions, data, lookups)
    if check.false is not None:
        return SKIP, "request does not match"
    if check.errors:
        return (ERROR, check.message()) if spec.failure_policy == "Fail" else (SKIP, "request does not match")
    for _validation, program, _message in spec.validations:
        try:
            response = program.evaluate(data, lookups)
        except CelError as failure:
            return (ERROR, failure.message) if spec.failure_policy == "Fail" else (SKIP, "request does not match")
        if response is None:
            continue
        return _decision(response)
    return SKIP, "request does not match"


def _decision(response: Any) -> tuple[str, str]:
    tag = tag_of(response)
    if tag not in ("httpresponse", "envoyresponse"):
        return ERROR, f"rule result is expected to be a check response, got {tag or type(response).__name__}"
    data = _data(response, tag)
    if "ok" in data:
        return PASS, "request allowed"
    denied = data.get("denied") or {}
    if tag == "envoyresponse":
        return FAIL, f"request denied with status code {(denied.get('status') or {}).get('code', 0)}"
    return FAIL, f"request denied, reason: {denied.get('reason', '')}"

