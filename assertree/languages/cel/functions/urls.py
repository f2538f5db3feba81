"""Kubernetes' URL library (k8s.io/apiserver/pkg/cel/library/urls.go) on `urllib.parse`.

``url(s)``, ``isURL(s)`` and ``getScheme``, ``getHost``, ``getHostname``,
``getPort``, ``getEscapedPath``, ``getQuery``. Kubernetes parses with Go's
``url.ParseRequestURI``: an absolute URL or an absolute path; a ``#`` is no
fragment separator there (request URIs carry none), so it stays in the path.
"""

from __future__ import annotations

from urllib.parse import parse_qs, quote, unquote, urlsplit

from assertree.languages.cel.engine import FunctionError
from assertree.languages.cel.functions.declare import Declaration, opaque, opaque_text, succeeds

TAG = "url"

__all__ = ["DECLARATIONS", "parse_request_uri"]


def parse_request_uri(text: str):
    """`text` split as Go's ``url.ParseRequestURI`` accepts it; FunctionError (a ValueError) otherwise."""
    try:
        parts = urlsplit(text, allow_fragments=False)
    except ValueError as error:
        raise FunctionError(f"URL parse error during conversion from string: {error}") from None
    if not (parts.scheme or text.startswith("/")) or any(c.isspace() for c in text):
        raise FunctionError(f"URL parse error during conversion from string: {text!r}")
    return parts


def _url(value: dict):
    return parse_request_uri(opaque_text(value, TAG))


def _hostname(value: dict) -> str:
    host = _url(value).netloc.rpartition("@")[2]
    if host.startswith("["):
        return host[1:].partition("]")[0]
    return host.partition(":")[0]


def _port(value: dict) -> str:
    host = _url(value).netloc.rpartition("@")[2]
    after = host.partition("]")[2] if host.startswith("[") else host
    return after.partition(":")[2] if ":" in after else ""


def _query(value: dict) -> dict[str, list[str]]:
    return parse_qs(_url(value).query, keep_blank_values=True)


DECLARATIONS = (
    Declaration("url", ("string",), "map", lambda text: (parse_request_uri(text), opaque(TAG, text))[1]),
    Declaration("isURL", ("string",), "bool", lambda text: succeeds(parse_request_uri, text)),
    Declaration("getScheme", ("map",), "string", lambda u: _url(u).scheme, member=True, receiver=TAG),
    Declaration("getHost", ("map",), "string", lambda u: _url(u).netloc.rpartition("@")[2], member=True,
                receiver=TAG),
    Declaration("getHostname", ("map",), "string", _hostname, member=True, receiver=TAG),
    Declaration("getPort", ("map",), "string", _port, member=True, receiver=TAG),
    Declaration("getEscapedPath", ("map",), "string", lambda u: quote(unquote(_url(u).path), safe="/:@!$&'()*+,;="),
                member=True, receiver=TAG),
    Declaration("getQuery", ("map",), "map", _query, member=True, receiver=TAG),
)
