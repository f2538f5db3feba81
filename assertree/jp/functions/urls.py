"""Kyverno's `is_external_url`, decided from the URL alone, and Go's URL parser it needs.

Kyverno parses the URL with Go's `net/url` (its errors surface to users) and
looks at the host name. An IP literal is internal when loopback (127/8,
``::1``) or private (10/8, 172.16/12, 192.168/16, fc00::/7), as Go's
``IsLoopback``/``IsPrivate`` say; every other address, link-local and
documentation ranges included, is external. A host *name* Kyverno resolves
with the system resolver. assertree never touches the network, so a policy
gives the same answer on every machine, and instead decides from the name:

* internal: ``localhost`` and ``*.localhost``; single-label names (``redis``,
  ``my-service``: cluster services and intranet hosts); names under the
  special-use or customary private suffixes ``local``, ``localdomain``,
  ``internal``, ``intranet``, ``corp``, ``lan``, ``home.arpa`` and ``svc``
  (Kubernetes ``name.namespace.svc`` and ``….svc.cluster.local``);
* external: every other name. A name that only resolves to a private address
  in some network (``name.namespace``, split-horizon DNS) is external here.

A URL with no host name (``example.com/x`` without a scheme, ``mailto:a@b``)
is an error, as the failed lookup of an empty name is in Kyverno.

`parse_url` reproduces Go's ``url.Parse`` (scheme, opaque form, userinfo,
``[v6]:port`` hosts, percent-decoding rules and error texts); `x509_decode`
uses it for certificate URIs too.
"""

from __future__ import annotations

import ipaddress
from typing import NamedTuple

from assertree.jp.errors import FunctionError
from assertree.jp.registry import function
from assertree.jp.values import go_quote

_LOOPBACK_OR_PRIVATE = tuple(
    ipaddress.ip_network(net)
    for net in ("127.0.0.0/8", "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "::1/128", "fc00::/7")
)
_INTERNAL_SUFFIXES = ("localhost", "local", "localdomain", "internal", "intranet", "corp", "lan", "home.arpa", "svc")

_HEX = frozenset("0123456789abcdefABCDEF")
_ALNUM = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
_USERINFO = _ALNUM | frozenset("-._:~!$&'()*+,;=%@")
_HOST_ALLOWED = _ALNUM | frozenset("!$&'()*+,;=:[]<>\"-._~")


class URLError(ValueError):
    """A URL Go's parser rejects; the text is Go's ``url.Error`` text."""


class URL(NamedTuple):
    """The fields of Go's ``url.URL``; `user` is None, or the (name, password or None) pair."""

    scheme: str = ""
    opaque: str = ""
    user: tuple[str, str | None] | None = None
    host: str = ""
    path: str = ""
    raw_path: str = ""
    omit_host: bool = False
    force_query: bool = False
    raw_query: str = ""
    fragment: str = ""
    raw_fragment: str = ""

    @property
    def hostname(self) -> str:
        """The host without port and brackets, as Go's ``URL.Hostname``."""
        host = self.host
        colon = host.rfind(":")
        if colon >= 0 and _valid_port(host[colon:]):
            host = host[:colon]
        if host.startswith("[") and host.endswith("]"):
            host = host[1:-1]
        return host



def parse_url(raw: str) -> URL:
    """Go's ``url.Parse``: raise URLError (``parse "RAW": reason``) where Go fails."""
    text, hash_sign, fragment = raw.partition("#")
    try:
        fields = _parse(text)
    except ValueError as error:
        raise URLError(f"parse {go_quote(text)}: {error}") from None
    if hash_sign and fragment:
        try:
            decoded = _unescape(fragment, "fragment")
        except ValueError as error:
            raise URLError(f"parse {go_quote(raw)}: {error}") from None
        fields["fragment"] = decoded
        if _escape(decoded, "fragment") != fragment:
            fields["raw_fragment"] = fragment
    return URL(**fields)


def _parse(raw: str) -> dict:
    if any(ord(c) < 0x20 or c == "\x7f" for c in raw):
        raise ValueError("net/url: invalid control character in URL")
    if raw == "*":
        return {"path": "*"}
    fields: dict = {}
    scheme, rest = _scheme(raw)
    fields["scheme"] = scheme = scheme.lower()
    if rest.endswith("?") and rest.count("?") == 1:
        fields["force_query"] = True
        rest = rest[:-1]
    else:
        rest, _, fields["raw_query"] = rest.partition("?")
    if not rest.startswith("/"):
        if scheme:
            fields["opaque"] = rest
            return fields
        if ":" in rest.partition("/")[0]:
            raise ValueError("first path segment in URL cannot contain colon")
    if (scheme or not rest.startswith("///")) and rest.startswith("//"):
        authority, slash, path = rest[2:].partition("/")
        rest = slash + path
        fields["user"], fields["host"] = _authority(authority)
    elif scheme and rest.startswith("/"):
        fields["omit_host"] = True
    fields["path"] = _unescape(rest, "path")
    if _escape(fields["path"], "path") != rest:
        fields["raw_path"] = rest
    return fields


def _scheme(raw: str) -> tuple[str, str]:
    for i, c in enumerate(raw):
        if c.isascii() and c.isalpha():
            continue
        if c.isascii() and (c.isdigit() or c in "+-."):
            if i == 0:
                return "", raw
            continue
        if c == ":":
            if i == 0:
                raise ValueError("missing protocol scheme")
            return raw[:i], raw[i + 1 :]
        return "", raw
    return "", raw


def _authority(authority: str) -> tuple[tuple[str, str | None] | None, str]:
    at = authority.rfind("@")
    host = _host(authority[at + 1 :])
    if at < 0:
        return None, host
    userinfo = authority[:at]
    if not set(userinfo) <= _USERINFO:
        raise ValueError("net/url: invalid userinfo")
    name, colon, password = userinfo.partition(":")
    return (_unescape(name, "user"), _unescape(password, "user") if colon else None), host


def _host(host: str) -> str:
    if host.startswith("["):
        end = host.rfind("]")
        if end < 0:
            raise ValueError("missing ']' in host")
        port = host[end + 1 :]
        if not _valid_port(port):
            raise ValueError(f"invalid port {go_quote(port)} after host")
        zone = host.find("%25", 0, end)
        if zone >= 0:
            return _unescape(host[:zone], "host") + _unescape(host[zone:end], "zone") + _unescape(host[end:], "host")
    else:
        colon = host.rfind(":")
        if colon >= 0 and not _valid_port(host[colon:]):
            raise ValueError(f"invalid port {go_quote(host[colon:])} after host")
    return _unescape(host, "host")


def _valid_port(port: str) -> bool:
    return port == "" or (port[0] == ":" and all(c in "0123456789" for c in port[1:]))


def _unescape(text: str, mode: str) -> str:
    """Go's percent-decoding for one URL part, with its per-part rejections."""
    if "%" not in text and mode not in ("host", "zone"):
        return text
    data = text.encode("utf-8", "surrogatepass")
    out = bytearray()
    i = 0
    while i < len(data):
        byte = data[i]
        if byte == 0x25:  # %
            triple = data[i : i + 3].decode("utf-8", "replace")
            if i + 2 >= len(data) or chr(data[i + 1]) not in _HEX or chr(data[i + 2]) not in _HEX:
                raise ValueError(f"invalid URL escape {go_quote(triple)}")
            value = int(data[i + 1 : i + 3], 16)
            if mode == "host" and value < 0x80 and triple != "%25":
                raise ValueError(f"invalid URL escape {go_quote(triple)}")
            if (
                mode == "zone"
                and triple != "%25"
                and value != 0x20
                and value < 0x80
                and chr(value) not in _HOST_ALLOWED
            ):
                raise ValueError(f"invalid URL escape {go_quote(triple)}")
            out.append(value)
            i += 3
            continue
        if mode in ("host", "zone") and byte < 0x80 and chr(byte) not in _HOST_ALLOWED:
            raise ValueError(f"invalid character {go_quote(chr(byte))} in host name")
        out.append(byte)
        i += 1
    return out.decode("utf-8", "surrogateescape")


def _escape(text: str, mode: str) -> str:
    """Go's percent-encoding of a path or fragment (to decide whether Raw* is needed)."""
    keep = _ALNUM | frozenset("-_.~$&+,/:;=@")
    if mode == "fragment":
        keep |= frozenset("?!()*")
    out = []
    for byte in text.encode("utf-8", "surrogateescape"):
        char = chr(byte)
        out.append(char if byte < 0x80 and char in keep else f"%{byte:02X}")
    return "".join(out)


def is_internal_ip(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    """Go's ``IsLoopback() || IsPrivate()``; IPv4-mapped IPv6 addresses count as IPv4."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return any(address in network for network in _LOOPBACK_OR_PRIVATE if network.version == address.version)


def parse_ip(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """Go's ``net.ParseIP``: dotted IPv4 without leading zeros, or IPv6 without a zone."""
    if "%" in text:
        return None
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


def _internal_name(name: str) -> bool:
    name = name.lower().removesuffix(".")
    if "." not in name:
        return True
    return any(name == suffix or name.endswith("." + suffix) for suffix in _INTERNAL_SUFFIXES)


@function("is_external_url(url: string) -> boolean")
def is_external_url(url):
    """False for loopback/private IP literals and local names, true otherwise; never resolves names."""
    try:
        host = parse_url(url).hostname
    except URLError as error:
        raise FunctionError(str(error)) from None
    # Go's ParseIP rejects a zone ("fe80::1%eth0"), but the lookup then returns that address.
    address = parse_ip(host.partition("%")[0])
    if address is not None:
        return not is_internal_ip(address)
    if not host:
        raise FunctionError.kyverno("is_external_url", f"no host name in URL {go_quote(url)}")
    return not _internal_name(host)
