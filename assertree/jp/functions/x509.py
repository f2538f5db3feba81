"""Kyverno's `x509_decode`: a PEM certificate or CSR as Go's `crypto/x509` structs in JSON.

Kyverno parses the PEM block with Go's `crypto/x509`, requires an RSA key,
replaces `PublicKey` with ``{"N": "<decimal>", "E": <int>}`` and returns Go's
JSON encoding of the struct. Users write policies against those field names
(``Subject.CommonName``, ``NotAfter``, ``KeyUsage``, ``MaxPathLen`` ...), so
this module produces the same object: every exported field of the newest Go
release (``Policies``, ``InhibitAnyPolicy`` … ``PolicyMappings`` included),
nil slices as null, byte strings as padded base64, OIDs as integer arrays,
Go's enum numbers, times as RFC 3339 UTC.

The `cryptography` package checks that the DER is a well-formed certificate
or request and decodes names, times and the signature algorithm; the fields
Go derives from extensions (and the raw parts Go keeps, such as
`RawSubjectPublicKeyInfo`) are read from the DER itself with a small TLV
reader, so they are the certificate's own bytes, never a re-encoding.

One deliberate difference: `SerialNumber` is the exact integer. kyverno-json
round-trips the JSON through float64 and loses digits of long serials.
Parse errors of malformed DER are reported as ``x509: malformed certificate``
(Go names the failing part; `cryptography` does not).
"""

from __future__ import annotations

import base64
import ipaddress
import re
import warnings
from datetime import datetime
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:  # cryptography is imported on first use: a scan that decodes no certificate never pays for it
    from cryptography import x509 as cx509
    from cryptography.hazmat.primitives import hashes

from assertree.jp.errors import FunctionError
from assertree.jp.functions.urls import URLError, parse_url
from assertree.jp.registry import function

# -- a minimal DER reader --------------------------------------------------------------------------

_SEQUENCE, _SET, _INTEGER, _BOOLEAN, _OCTETS, _BITS, _OID, _NULL = 0x30, 0x31, 0x02, 0x01, 0x04, 0x03, 0x06, 0x05
_STRING_TAGS = {0x0C: "utf-8", 0x13: "ascii", 0x16: "ascii", 0x12: "ascii", 0x14: "latin-1", 0x1E: "utf-16-be"}


class _Tlv(NamedTuple):
    tag: int  # the identifier octet (class, constructed bit and tag number below 31)
    body: bytes
    raw: bytes  # the whole element, header included


class _Malformed(ValueError):
    pass


def _read(data: bytes, pos: int = 0) -> tuple[_Tlv, int]:
    if pos + 2 > len(data) or data[pos] & 0x1F == 0x1F:
        raise _Malformed("truncated element or high tag number")
    tag, length, header = data[pos], data[pos + 1], pos + 2
    if length & 0x80:
        count = length & 0x7F
        if count == 0 or count > 4 or header + count > len(data):
            raise _Malformed("bad length")
        length = int.from_bytes(data[header : header + count], "big")
        header += count
    end = header + length
    if end > len(data):
        raise _Malformed("truncated element")
    return _Tlv(tag, data[header:end], data[pos:end]), end


def _one(data: bytes, tag: int | None = None) -> _Tlv:
    element, end = _read(data)
    if end != len(data) or (tag is not None and element.tag != tag):
        raise _Malformed("unexpected element")
    return element


def _children(body: bytes) -> list[_Tlv]:
    items, pos = [], 0
    while pos < len(body):
        item, pos = _read(body, pos)
        items.append(item)
    return items


def _oid(body: bytes) -> list[int]:
    arcs: list[int] = []
    value = 0
    for byte in body:
        value = (value << 7) | (byte & 0x7F)
        if not byte & 0x80:
            arcs.append(value)
            value = 0
    if not arcs:
        raise _Malformed("empty object identifier")
    first = arcs[0]
    head = [min(first // 40, 2), first - 40 * min(first // 40, 2)]
    return head + arcs[1:]


def _int(body: bytes) -> int:
    return int.from_bytes(body, "big", signed=True)


def _b64(data: bytes | None) -> str | None:
    return None if data is None else base64.b64encode(data).decode("ascii")


def _dotted(arcs: list[int]) -> str:
    return ".".join(map(str, arcs))


# -- Go's enumerations -----------------------------------------------------------------------------

_SIGNATURE_ALGORITHMS = {
    "1.2.840.113549.1.1.2": 1,
    "1.2.840.113549.1.1.4": 2,
    "1.2.840.113549.1.1.5": 3,
    "1.3.14.3.2.29": 3,
    "1.2.840.113549.1.1.11": 4,
    "1.2.840.113549.1.1.12": 5,
    "1.2.840.113549.1.1.13": 6,
    "1.2.840.10040.4.3": 7,
    "2.16.840.1.101.3.4.3.2": 8,
    "1.2.840.10045.4.1": 9,
    "1.2.840.10045.4.3.2": 10,
    "1.2.840.10045.4.3.3": 11,
    "1.2.840.10045.4.3.4": 12,
    "1.3.101.112": 16,
}
_RSA_PSS = "1.2.840.113549.1.1.10"
_PSS_BY_HASH = {"sha256": 13, "sha384": 14, "sha512": 15}
_RSA_KEY = "1.2.840.113549.1.1.1"
_EXT_KEY_USAGES = {
    "2.5.29.37.0": 0,
    "1.3.6.1.5.5.7.3.1": 1,
    "1.3.6.1.5.5.7.3.2": 2,
    "1.3.6.1.5.5.7.3.3": 3,
    "1.3.6.1.5.5.7.3.4": 4,
    "1.3.6.1.5.5.7.3.5": 5,
    "1.3.6.1.5.5.7.3.6": 6,
    "1.3.6.1.5.5.7.3.7": 7,
    "1.3.6.1.5.5.7.3.8": 8,
    "1.3.6.1.5.5.7.3.9": 9,
    "1.3.6.1.4.1.311.10.3.3": 10,
    "2.16.840.1.113730.4.1": 11,
    "1.3.6.1.4.1.311.2.1.22": 12,
    "1.3.6.1.4.1.311.61.1.1": 13,
}
# pkix.Name's convenience fields, by the last arc of 2.5.4.N.
_NAME_FIELDS = {6: "Country", 10: "Organization", 11: "OrganizationalUnit", 7: "Locality", 8: "Province"}
_NAME_FIELDS.update({9: "StreetAddress", 17: "PostalCode"})
_EXTENSION_REQUEST = "1.2.840.113549.1.9.14"
# Extensions Go's parser understands; other critical ones land in UnhandledCriticalExtensions.
_HANDLED = {f"2.5.29.{n}" for n in (14, 15, 17, 19, 30, 31, 32, 33, 35, 36, 37, 54)} | {"1.3.6.1.5.5.7.1.1"}


# -- PEM -------------------------------------------------------------------------------------------

_PEM = re.compile(
    r"(?:^|\n)-----BEGIN (?P<type>[^\n]*?)-----[ \t\r]*\n(?P<body>.*?)(?:^|\n)-----END (?P=type)-----",
    re.DOTALL,
)


def _pem_block(text: str) -> tuple[str, bytes] | None:
    """The first decodable PEM block as (type, DER), skipping text before it, as Go's pem.Decode."""
    for match in _PEM.finditer(text):
        body = match.group("body")
        if ":" in body.partition("\n")[0]:  # RFC 1421 headers end at the first blank line
            body = body.partition("\n\n")[2] if "\n\n" in body else ""
        try:
            der = base64.b64decode("".join(body.split()), validate=True)
        except ValueError:
            continue
        return match.group("type"), der
    return None


# -- names, times, keys ----------------------------------------------------------------------------


def _name(name: cx509.Name) -> dict[str, Any]:
    """pkix.Name after FillFromRDNSequence: convenience fields and every attribute in `Names`."""
    result: dict[str, Any] = {field: None for field in _NAME_FIELDS.values()}
    result.update({"SerialNumber": "", "CommonName": "", "Names": None, "ExtraNames": None})
    names = []
    for rdn in name.rdns:
        for attribute in rdn:
            value = attribute.value
            if not isinstance(value, str):
                raise FunctionError("x509: invalid RDN value: unsupported string type")
            arcs = [int(arc) for arc in attribute.oid.dotted_string.split(".")]
            names.append({"Type": arcs, "Value": value})
            if len(arcs) == 4 and arcs[:3] == [2, 5, 4]:
                if arcs[3] == 3:
                    result["CommonName"] = value
                elif arcs[3] == 5:
                    result["SerialNumber"] = value
                elif arcs[3] in _NAME_FIELDS:
                    result[_NAME_FIELDS[arcs[3]]] = (result[_NAME_FIELDS[arcs[3]]] or []) + [value]
    result["Names"] = names or None
    return result


def _time(moment: datetime) -> str:
    text = f"{moment.year:04d}-{moment.month:02d}-{moment.day:02d}T{moment.hour:02d}:{moment.minute:02d}"
    text += f":{moment.second:02d}"
    if moment.microsecond:
        text += f".{moment.microsecond:06d}".rstrip("0")
    return text + "Z"


def _rsa_key(spki: bytes) -> dict[str, Any]:
    """{"N": decimal modulus, "E": exponent} from a PKCS#1 RSA SubjectPublicKeyInfo."""
    try:
        _, bits = _children(_one(spki, _SEQUENCE).body)
        if bits.tag != _BITS or not bits.body or bits.body[0] != 0:
            raise _Malformed("bad key bit string")
        modulus, exponent = _children(_one(bits.body[1:], _SEQUENCE).body)
        if modulus.tag != _INTEGER or exponent.tag != _INTEGER:
            raise _Malformed("bad key")
        n, e = _int(modulus.body), _int(exponent.body)
    except ValueError:
        raise FunctionError("failed to parse subject public key info") from None
    if n <= 0 or not 0 < e < 2**31:
        raise FunctionError("failed to parse subject public key info")
    return {"N": str(n), "E": e}


def _key_algorithm(spki: bytes) -> str:
    algorithm = _children(_one(spki, _SEQUENCE).body)[0]
    return _dotted(_oid(_children(algorithm.body)[0].body))


def _signature_algorithm(oid: str, hash_algorithm: hashes.HashAlgorithm | None) -> int:
    if oid == _RSA_PSS:
        return _PSS_BY_HASH.get(hash_algorithm.name if hash_algorithm else "", 0)
    return _SIGNATURE_ALGORITHMS.get(oid, 0)


def _hash_or_none(document: cx509.Certificate | cx509.CertificateSigningRequest) -> hashes.HashAlgorithm | None:
    from cryptography.exceptions import UnsupportedAlgorithm

    try:
        return document.signature_hash_algorithm
    except UnsupportedAlgorithm:  # a signature OID cryptography does not know
        return None


# -- extensions ------------------------------------------------------------------------------------


def _extension_list(encoded: bytes) -> list[tuple[list[int], bool, bytes]]:
    """(oid, critical, value) for each Extension of a DER ``Extensions`` SEQUENCE."""
    extensions = []
    for item in _children(_one(encoded, _SEQUENCE).body):
        parts = _children(item.body)
        critical = len(parts) == 3 and parts[1].tag == _BOOLEAN and parts[1].body != b"\x00"
        extensions.append((_oid(parts[0].body), critical, parts[-1].body))
    return extensions


def _general_names(encoded: bytes, fields: dict[str, Any]) -> bool:
    """Add the DNS, email, IP and URI entries of GeneralNames to `fields`; True if any was found."""
    found = False
    for name in _children(_one(encoded, _SEQUENCE).body):
        kind = name.tag & 0x1F
        if kind == 1:
            fields["EmailAddresses"] = (fields["EmailAddresses"] or []) + [name.body.decode("latin-1")]
        elif kind == 2:
            fields["DNSNames"] = (fields["DNSNames"] or []) + [name.body.decode("latin-1")]
        elif kind == 6:
            fields["URIs"] = (fields["URIs"] or []) + [_uri(name.body.decode("latin-1"))]
        elif kind == 7:
            if len(name.body) not in (4, 16):
                raise FunctionError(f"x509: cannot parse IP address of length {len(name.body)}")
            fields["IPAddresses"] = (fields["IPAddresses"] or []) + [_ip_text(name.body)]
        else:
            continue
        found = True
    return found


def _uri(text: str) -> dict[str, Any]:
    """A URI as Go's JSON encoding of url.URL."""
    try:
        url = parse_url(text)
    except URLError as error:
        raise FunctionError(f"x509: cannot parse URI {text!r}: {error}") from None
    return {
        "Scheme": url.scheme,
        "Opaque": url.opaque,
        "User": None if url.user is None else {},  # Go's Userinfo has no exported fields
        "Host": url.host,
        "Path": url.path,
        "RawPath": url.raw_path,
        "OmitHost": url.omit_host,
        "ForceQuery": url.force_query,
        "RawQuery": url.raw_query,
        "Fragment": url.fragment,
        "RawFragment": url.raw_fragment,
    }


def _ip_text(raw: bytes) -> str:
    """net.IP's text: IPv4 (also IPv4-mapped IPv6) dotted, IPv6 compressed."""
    if len(raw) == 4:
        return str(ipaddress.IPv4Address(raw))
    address = ipaddress.IPv6Address(raw)
    return str(address.ipv4_mapped or address)


def _name_constraints(value: bytes, fields: dict[str, Any]) -> bool:
    """Fill the Permitted*/Excluded* fields; True when a constraint type Go does not handle occurs."""
    unhandled = False
    for subtrees in _children(_one(value, _SEQUENCE).body):
        prefix = "Permitted" if subtrees.tag & 0x1F == 0 else "Excluded"
        for subtree in _children(subtrees.body):
            base = _children(subtree.body)[0]
            kind = base.tag & 0x1F
            item: str | dict[str, str | None]
            if kind == 2:
                key, item = f"{prefix}DNSDomains", base.body.decode("latin-1")
            elif kind == 1:
                key, item = f"{prefix}EmailAddresses", base.body.decode("latin-1")
            elif kind == 6:
                key, item = f"{prefix}URIDomains", base.body.decode("latin-1")
            elif kind == 7 and len(base.body) in (8, 32):
                half = len(base.body) // 2
                key = f"{prefix}IPRanges"
                item = {"IP": _ip_text(base.body[:half]), "Mask": _b64(base.body[half:])}
            else:
                unhandled = True
                continue
            fields[key] = (fields[key] or []) + [item]
    return unhandled


def _apply_extension(arcs: list[int], critical: bool, value: bytes, fields: dict[str, Any]) -> bool:
    """Set the certificate fields Go derives from one extension; False when Go leaves it unhandled."""
    oid = _dotted(arcs)
    if oid == "2.5.29.15":
        bits = _one(value, _BITS).body
        usage = 0
        for i in range(8 * (len(bits) - 1)):
            if bits[1 + i // 8] >> (7 - i % 8) & 1:
                usage |= 1 << i
        fields["KeyUsage"] = usage
    elif oid == "2.5.29.19":
        parts = _children(_one(value, _SEQUENCE).body)
        fields["BasicConstraintsValid"] = True
        fields["IsCA"] = bool(parts and parts[0].tag == _BOOLEAN and parts[0].body != b"\x00")
        path_len = next((_int(p.body) for p in parts if p.tag == _INTEGER), -1)
        fields["MaxPathLen"] = path_len
        fields["MaxPathLenZero"] = path_len == 0
    elif oid == "2.5.29.17":
        return _general_names(value, fields)
    elif oid == "2.5.29.14":
        fields["SubjectKeyId"] = _b64(_one(value, _OCTETS).body)
    elif oid == "2.5.29.35":
        for part in _children(_one(value, _SEQUENCE).body):
            if part.tag == 0x80:
                fields["AuthorityKeyId"] = _b64(part.body)
    elif oid == "2.5.29.37":
        for purpose in _children(_one(value, _SEQUENCE).body):
            purpose_arcs = _oid(purpose.body)
            known = _EXT_KEY_USAGES.get(_dotted(purpose_arcs))
            if known is None:
                fields["UnknownExtKeyUsage"] = (fields["UnknownExtKeyUsage"] or []) + [purpose_arcs]
            else:
                fields["ExtKeyUsage"] = (fields["ExtKeyUsage"] or []) + [known]
    elif oid == "2.5.29.30":
        fields["PermittedDNSDomainsCritical"] = critical
        return not _name_constraints(value, fields)
    elif oid == "2.5.29.31":
        for point in _children(_one(value, _SEQUENCE).body):
            for part in _children(point.body):
                if part.tag != 0xA0:
                    continue
                for full_name in _children(part.body):
                    for general in _children(full_name.body) if full_name.tag == 0xA0 else []:
                        if general.tag & 0x1F == 6:
                            urls = fields["CRLDistributionPoints"] or []
                            fields["CRLDistributionPoints"] = urls + [general.body.decode("latin-1")]
    elif oid == "1.3.6.1.5.5.7.1.1":
        for access in _children(_one(value, _SEQUENCE).body):
            method, location = _children(access.body)
            if location.tag & 0x1F != 6:
                continue
            key = {"1.3.6.1.5.5.7.48.1": "OCSPServer", "1.3.6.1.5.5.7.48.2": "IssuingCertificateURL"}.get(
                _dotted(_oid(method.body))
            )
            if key:
                fields[key] = (fields[key] or []) + [location.body.decode("latin-1")]
    elif oid == "2.5.29.32":
        for policy in _children(_one(value, _SEQUENCE).body):
            policy_arcs = _oid(_children(policy.body)[0].body)
            fields["PolicyIdentifiers"] = (fields["PolicyIdentifiers"] or []) + [policy_arcs]
            fields["Policies"] = (fields["Policies"] or []) + [_dotted(policy_arcs)]
    elif oid == "2.5.29.33":
        for mapping in _children(_one(value, _SEQUENCE).body):
            issuer, subject = _children(mapping.body)
            entry = {
                "IssuerDomainPolicy": _dotted(_oid(issuer.body)),
                "SubjectDomainPolicy": _dotted(_oid(subject.body)),
            }
            fields["PolicyMappings"] = (fields["PolicyMappings"] or []) + [entry]
    elif oid == "2.5.29.36":
        for part in _children(_one(value, _SEQUENCE).body):
            name = {0x80: "RequireExplicitPolicy", 0x81: "InhibitPolicyMapping"}.get(part.tag)
            if name:
                fields[name] = _int(part.body)
                fields[name + "Zero"] = fields[name] == 0
    elif oid == "2.5.29.54":
        fields["InhibitAnyPolicy"] = _int(_one(value, _INTEGER).body)
        fields["InhibitAnyPolicyZero"] = fields["InhibitAnyPolicy"] == 0
    return oid in _HANDLED


# -- certificates and requests ---------------------------------------------------------------------

_CERTIFICATE_DEFAULTS: dict[str, Any] = {
    "KeyUsage": 0,
    "ExtraExtensions": None,
    "UnhandledCriticalExtensions": None,
    "ExtKeyUsage": None,
    "UnknownExtKeyUsage": None,
    "BasicConstraintsValid": False,
    "IsCA": False,
    "MaxPathLen": 0,
    "MaxPathLenZero": False,
    "SubjectKeyId": None,
    "AuthorityKeyId": None,
    "OCSPServer": None,
    "IssuingCertificateURL": None,
    "DNSNames": None,
    "EmailAddresses": None,
    "IPAddresses": None,
    "URIs": None,
    "PermittedDNSDomainsCritical": False,
    "PermittedDNSDomains": None,
    "ExcludedDNSDomains": None,
    "PermittedIPRanges": None,
    "ExcludedIPRanges": None,
    "PermittedEmailAddresses": None,
    "ExcludedEmailAddresses": None,
    "PermittedURIDomains": None,
    "ExcludedURIDomains": None,
    "CRLDistributionPoints": None,
    "PolicyIdentifiers": None,
    "Policies": None,
    "InhibitAnyPolicy": 0,
    "InhibitAnyPolicyZero": False,
    "InhibitPolicyMapping": 0,
    "InhibitPolicyMappingZero": False,
    "RequireExplicitPolicy": 0,
    "RequireExplicitPolicyZero": False,
    "PolicyMappings": None,
}


def decode_certificate(der: bytes) -> dict[str, Any]:
    """Go's JSON of an RSA x509.Certificate, PublicKey replaced by {"N", "E"}."""
    from cryptography import x509 as cx509
    from cryptography.utils import CryptographyDeprecationWarning

    try:
        with warnings.catch_warnings():  # Go accepts a zero serial number, cryptography warns about it
            warnings.simplefilter("ignore", CryptographyDeprecationWarning)
            certificate = cx509.load_der_x509_certificate(der)
        tbs = certificate.tbs_certificate_bytes
        parts = _children(_one(tbs, _SEQUENCE).body)
        version = _int(_one(parts[0].body, _INTEGER).body) if parts[0].tag == 0xA0 else 0
        if parts[0].tag == 0xA0:
            parts = parts[1:]
        serial = _int(_one(parts[0].raw, _INTEGER).body)
        issuer, subject, spki = parts[2].raw, parts[4].raw, parts[5].raw
        extension_block = next((p.body for p in parts[6:] if p.tag == 0xA3), None)
        names = (_name(certificate.issuer), _name(certificate.subject))
        validity = (certificate.not_valid_before_utc, certificate.not_valid_after_utc)
        signature_algorithm = _signature_algorithm(
            certificate.signature_algorithm_oid.dotted_string, _hash_or_none(certificate)
        )
        key_algorithm = _key_algorithm(spki)
    except (ValueError, IndexError):
        raise FunctionError("x509: malformed certificate") from None
    if serial < 0:
        raise FunctionError("x509: negative serial number")
    if key_algorithm != _RSA_KEY:
        raise FunctionError("certificate should use rsa algorithm")
    public_key = _rsa_key(spki)
    result: dict[str, Any] = {
        "Raw": _b64(der),
        "RawTBSCertificate": _b64(tbs),
        "RawSubjectPublicKeyInfo": _b64(spki),
        "RawSubject": _b64(subject),
        "RawIssuer": _b64(issuer),
        "Signature": _b64(certificate.signature),
        "SignatureAlgorithm": signature_algorithm,
        "PublicKeyAlgorithm": 1,
        "PublicKey": public_key,
        "Version": version + 1,
        "SerialNumber": serial,
        "Issuer": names[0],
        "Subject": names[1],
        "NotBefore": _time(validity[0]),
        "NotAfter": _time(validity[1]),
        "Extensions": None,
        **_CERTIFICATE_DEFAULTS,
    }
    if extension_block is not None:
        _apply_extensions(extension_block, result, certificate=True)
    return result


def _apply_extensions(encoded: bytes, fields: dict[str, Any], *, certificate: bool) -> None:
    try:
        extensions = _extension_list(encoded)
        fields["Extensions"] = [
            {"Id": arcs, "Critical": critical, "Value": _b64(value)} for arcs, critical, value in extensions
        ] or None
        for arcs, critical, value in extensions:
            if not certificate:
                if _dotted(arcs) == "2.5.29.17":
                    _general_names(value, fields)
                continue
            if not _apply_extension(arcs, critical, value, fields) and critical:
                fields["UnhandledCriticalExtensions"] = (fields["UnhandledCriticalExtensions"] or []) + [arcs]
    except (ValueError, IndexError):
        raise FunctionError("x509: malformed extension") from None


def decode_request(der: bytes) -> dict[str, Any]:
    """Go's JSON of an RSA x509.CertificateRequest, PublicKey replaced by {"N", "E"}."""
    from cryptography import x509 as cx509

    try:
        request = cx509.load_der_x509_csr(der)
        tbs = request.tbs_certrequest_bytes
        version_part, subject, spki, *rest = _children(_one(tbs, _SEQUENCE).body)
        attributes = next((p.body for p in rest if p.tag == 0xA0), b"")
        subject_name = _name(request.subject)
        signature_algorithm = _signature_algorithm(
            request.signature_algorithm_oid.dotted_string, _hash_or_none(request)
        )
        key_algorithm = _key_algorithm(spki.raw)
    except (ValueError, IndexError):
        raise FunctionError("x509: malformed certificate request") from None
    if key_algorithm != _RSA_KEY:
        raise FunctionError("certificate should use rsa algorithm")
    result: dict[str, Any] = {
        "Raw": _b64(der),
        "RawTBSCertificateRequest": _b64(tbs),
        "RawSubjectPublicKeyInfo": _b64(spki.raw),
        "RawSubject": _b64(subject.raw),
        "Version": _int(version_part.body),
        "Signature": _b64(request.signature),
        "SignatureAlgorithm": signature_algorithm,
        "PublicKeyAlgorithm": 1,
        "PublicKey": _rsa_key(spki.raw),
        "Subject": subject_name,
        "Attributes": None,
        "Extensions": None,
        "ExtraExtensions": None,
        "DNSNames": None,
        "EmailAddresses": None,
        "IPAddresses": None,
        "URIs": None,
    }
    try:
        raw_attributes = _children(attributes)
    except ValueError:
        raise FunctionError("x509: malformed certificate request") from None
    result["Attributes"] = [a for a in map(_attribute, raw_attributes) if a is not None] or None
    for attribute in raw_attributes:
        parts = _children(attribute.body)
        if _dotted(_oid(parts[0].body)) == _EXTENSION_REQUEST and _children(parts[1].body):
            _apply_extensions(_children(parts[1].body)[0].raw, result, certificate=False)
    return result


def _attribute(attribute: _Tlv) -> dict[str, Any] | None:
    """A CSR attribute as Go's pkix.AttributeTypeAndValueSET, or None where Go's decoder skips it."""
    try:
        kind, values = _children(attribute.body)
        if values.tag != _SET:
            return None
        sets = []
        for value in _children(values.body):
            if value.tag != _SEQUENCE:
                return None
            entries = []
            for entry in _children(value.body):
                parts = _children(entry.body) if entry.tag == _SEQUENCE else []
                if len(parts) < 2 or parts[0].tag != _OID:
                    return None
                entries.append({"Type": _oid(parts[0].body), "Value": _any_value(parts[1])})
            sets.append(entries)
        return {"Type": _oid(kind.body), "Value": sets}
    except ValueError:
        return None


def _any_value(element: _Tlv) -> Any:
    """What Go's asn1 decoder puts in an `any` field: strings, integers, OIDs, bytes; else null."""
    if element.tag in _STRING_TAGS:
        return element.body.decode(_STRING_TAGS[element.tag], "replace")
    if element.tag == _INTEGER:
        return _int(element.body)
    if element.tag == _OID:
        return _oid(element.body)
    if element.tag == _OCTETS:
        return _b64(element.body)
    return None


@function("x509_decode(pem: string) -> object")
def x509_decode(pem):
    """The certificate or CSR in a PEM block as Go's x509 struct (RSA keys only)."""
    block = _pem_block(pem)
    if block is None:
        raise FunctionError("failed to decode PEM block")
    kind, der = block
    if kind == "CERTIFICATE":
        return decode_certificate(der)
    if kind == "CERTIFICATE REQUEST":
        return decode_request(der)
    raise FunctionError("PEM block neither contains a CERTIFICATE or CERTIFICATE REQUEST")
