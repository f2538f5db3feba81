"""Kubernetes' IP and CIDR libraries (k8s.io/apiserver/pkg/cel/library/ip.go, cidr.go) on `ipaddress`.

``ip(s)``, ``isIP(s)``, ``ip.isCanonical(s)`` and the address methods
``family``, ``isUnspecified``, ``isLoopback``, ``isLinkLocalMulticast``,
``isLinkLocalUnicast``, ``isGlobalUnicast``; ``cidr(s)``, ``isCIDR(s)`` and
the prefix methods ``containsIP``, ``containsCIDR``, ``ip``, ``masked``,
``prefixLength``. Kubernetes parses with Go's netip and refuses what it calls
ambiguous: IPv4-mapped IPv6 addresses and IPv6 zones, as here. The
predicates follow Go's netip definitions (``isGlobalUnicast`` is true for
private ranges; Python's ``is_global`` is not). ``string(ip)`` and
``string(cidr)`` go through `OPAQUE_STRING` (the library cannot add overloads
to the standard ``string``; `assertree.languages.cel.conversions` rewrites
the calls).
"""

from __future__ import annotations

import ipaddress

from assertree.languages.cel.conversions import OPAQUE_STRING
from assertree.languages.cel.engine import FunctionError
from assertree.languages.cel.functions.declare import Declaration, opaque, opaque_text, succeeds, tag_of

IP, CIDR = "ip", "cidr"

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Interface = ipaddress.IPv4Interface | ipaddress.IPv6Interface


def parse_ip(text: str) -> Address:
    if "%" in text:
        raise FunctionError(f"IP Address {text!r} with zone value is not allowed")
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        raise FunctionError(f"IP Address {text!r} parse error during conversion from string") from None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        raise FunctionError(f"IPv4-mapped IPv6 address {text!r} is not allowed")
    return address


def parse_cidr(text: str) -> Interface:
    address, slash, length = text.partition("/")
    if not slash or not length.isdigit() or (len(length) > 1 and length[0] == "0"):
        raise FunctionError(f"network address {text!r} parse error during conversion from string")
    parse_ip(address)
    try:
        return ipaddress.ip_interface(text)
    except ValueError:
        raise FunctionError(f"network address {text!r} parse error during conversion from string") from None


def _is_canonical(text: str) -> bool:
    return str(parse_ip(text)) == text


def _ip(value: dict) -> Address:
    return parse_ip(opaque_text(value, IP))


def _cidr(value: dict) -> Interface:
    return parse_cidr(opaque_text(value, CIDR))


def _global_unicast(address: Address) -> bool:
    """Go's ``netip.Addr.IsGlobalUnicast``."""
    if address == ipaddress.IPv4Address("255.255.255.255"):
        return False
    return not (address.is_unspecified or address.is_loopback or address.is_multicast or address.is_link_local)


def _link_local_multicast(address: Address) -> bool:
    if isinstance(address, ipaddress.IPv4Address):
        return address in ipaddress.IPv4Network("224.0.0.0/24")
    return address in ipaddress.IPv6Network("ff02::/16")


def _contains_ip(prefix: dict, other: dict | str) -> bool:
    network = _cidr(prefix).network
    address = parse_ip(other) if isinstance(other, str) else _ip(other)
    return address.version == network.version and address in network


def _contains_cidr(prefix: dict, other: dict | str) -> bool:
    network = _cidr(prefix).network
    inner = (parse_cidr(other) if isinstance(other, str) else _cidr(other)).network
    if isinstance(inner, ipaddress.IPv4Network) and isinstance(network, ipaddress.IPv4Network):
        return inner.subnet_of(network)
    if isinstance(inner, ipaddress.IPv6Network) and isinstance(network, ipaddress.IPv6Network):
        return inner.subnet_of(network)
    return False  # an IPv4 and an IPv6 network never contain one another


def _opaque_string(value: dict) -> str:
    tag = tag_of(value)
    if tag not in (IP, CIDR):
        raise FunctionError("no such overload: string applied to a map")
    return opaque_text(value, tag)


def _masked(prefix: dict) -> dict[str, str]:
    return opaque(CIDR, str(_cidr(prefix).network))


DECLARATIONS = (
    Declaration("ip", ("string",), "map", lambda text: opaque(IP, str(parse_ip(text)))),
    Declaration("isIP", ("string",), "bool", lambda text: succeeds(parse_ip, text)),
    Declaration("ip.isCanonical", ("string",), "bool", _is_canonical),
    Declaration("family", ("map",), "int", lambda a: _ip(a).version, member=True, receiver=IP),
    Declaration("isUnspecified", ("map",), "bool", lambda a: _ip(a).is_unspecified, member=True, receiver=IP),
    Declaration("isLoopback", ("map",), "bool", lambda a: _ip(a).is_loopback, member=True, receiver=IP),
    Declaration("isLinkLocalMulticast", ("map",), "bool", lambda a: _link_local_multicast(_ip(a)), member=True,
                receiver=IP),
    Declaration("isLinkLocalUnicast", ("map",), "bool", lambda a: _ip(a).is_link_local, member=True, receiver=IP),
    Declaration("isGlobalUnicast", ("map",), "bool", lambda a: _global_unicast(_ip(a)), member=True, receiver=IP),
    Declaration("cidr", ("string",), "map", lambda text: opaque(CIDR, str(parse_cidr(text)))),
    Declaration("isCIDR", ("string",), "bool", lambda text: succeeds(parse_cidr, text)),
    Declaration("containsIP", ("map", "string"), "bool", _contains_ip, member=True, receiver=CIDR),
    Declaration("containsIP", ("map", "map"), "bool", _contains_ip, member=True, receiver=CIDR),
    Declaration("containsCIDR", ("map", "string"), "bool", _contains_cidr, member=True, receiver=CIDR),
    Declaration("containsCIDR", ("map", "map"), "bool", _contains_cidr, member=True, receiver=CIDR),
    Declaration("ip", ("map",), "map", lambda p: opaque(IP, str(_cidr(p).ip)), member=True, receiver=CIDR),
    Declaration("masked", ("map",), "map", _masked, member=True, receiver=CIDR),
    Declaration("prefixLength", ("map",), "int", lambda p: _cidr(p).network.prefixlen, member=True, receiver=CIDR),
    Declaration(OPAQUE_STRING, ("map",), "string", _opaque_string),
)
