"""x509_decode on certificates built here with `cryptography`, beyond the shared vectors."""

from __future__ import annotations

import base64
import datetime
import ipaddress
from functools import cache

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from assertree import jp

START = datetime.datetime(2024, 1, 2, 3, 4, 5, tzinfo=datetime.UTC)


@cache
def rsa_key():
    return rsa.generate_private_key(public_exponent=65537, key_size=1024)


def decode(pem: bytes):
    return jp.search("x509_decode(@)", pem.decode())


def fails_with(pem: str, message: str) -> None:
    with pytest.raises(jp.JMESPathError) as caught:
        jp.search("x509_decode(@)", pem)
    assert message in str(caught.value)


def certificate(key=None, extensions=(), serial=0x1234):
    key = key or rsa_key()
    name = x509.Name(
        [
            x509.NameAttribute(NameOID.COUNTRY_NAME, "DE"),
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Acme"),
            x509.NameAttribute(NameOID.COMMON_NAME, "acme.test"),
        ]
    )
    builder = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(serial)
        .not_valid_before(START)
        .not_valid_after(START + datetime.timedelta(days=1))
    )
    for extension, critical in extensions:
        builder = builder.add_extension(extension, critical=critical)
    return builder.sign(key, hashes.SHA256()).public_bytes(serialization.Encoding.PEM)


RICH = [
    (
        x509.SubjectAlternativeName(
            [
                x509.DNSName("a.acme.test"),
                x509.IPAddress(ipaddress.ip_address("10.0.0.1")),
                x509.IPAddress(ipaddress.ip_address("2001:db8::1")),
                x509.UniformResourceIdentifier("spiffe://acme.test/ns/default/sa/web"),
                x509.RFC822Name("ops@acme.test"),
            ]
        ),
        False,
    ),
    (x509.BasicConstraints(ca=True, path_length=0), True),
    (
        x509.KeyUsage(
            digital_signature=True,
            content_commitment=False,
            key_encipherment=True,
            data_encipherment=False,
            key_agreement=False,
            key_cert_sign=True,
            crl_sign=False,
            encipher_only=False,
            decipher_only=False,
        ),
        True,
    ),
    (x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH, x509.ObjectIdentifier("1.2.3.4")]), False),
    (
        x509.AuthorityInformationAccess(
            [
                x509.AccessDescription(x509.OID_OCSP, x509.UniformResourceIdentifier("http://ocsp.acme.test")),
                x509.AccessDescription(x509.OID_CA_ISSUERS, x509.UniformResourceIdentifier("http://ca.acme.test")),
            ]
        ),
        False,
    ),
    (
        x509.CRLDistributionPoints(
            [x509.DistributionPoint([x509.UniformResourceIdentifier("http://crl.acme.test")], None, None, None)]
        ),
        False,
    ),
    (x509.CertificatePolicies([x509.PolicyInformation(x509.ObjectIdentifier("2.23.140.1.2.1"), None)]), False),
    (
        x509.NameConstraints(
            permitted_subtrees=[x509.DNSName("acme.test"), x509.IPAddress(ipaddress.ip_network("10.0.0.0/8"))],
            excluded_subtrees=[x509.RFC822Name("evil.test")],
        ),
        True,
    ),
    (x509.SubjectKeyIdentifier(b"\x01\x02\x03"), False),
    (x509.InhibitAnyPolicy(0), True),
    (x509.PolicyConstraints(require_explicit_policy=2, inhibit_policy_mapping=None), True),
    (x509.UnrecognizedExtension(x509.ObjectIdentifier("1.2.3.99"), b"\x05\x00"), True),
]


@pytest.fixture(scope="module")
def rich():
    return decode(certificate(extensions=RICH))


@pytest.mark.parametrize(
    ("field", "expected"),
    [
        ("Version", 3),
        ("SerialNumber", 0x1234),
        ("SignatureAlgorithm", 4),
        ("PublicKeyAlgorithm", 1),
        ("NotBefore", "2024-01-02T03:04:05Z"),
        ("DNSNames", ["a.acme.test"]),
        ("IPAddresses", ["10.0.0.1", "2001:db8::1"]),
        ("EmailAddresses", ["ops@acme.test"]),
        ("BasicConstraintsValid", True),
        ("IsCA", True),
        ("MaxPathLen", 0),
        ("MaxPathLenZero", True),
        ("KeyUsage", 1 | 4 | 32),
        ("ExtKeyUsage", [1]),
        ("UnknownExtKeyUsage", [[1, 2, 3, 4]]),
        ("OCSPServer", ["http://ocsp.acme.test"]),
        ("IssuingCertificateURL", ["http://ca.acme.test"]),
        ("CRLDistributionPoints", ["http://crl.acme.test"]),
        ("PolicyIdentifiers", [[2, 23, 140, 1, 2, 1]]),
        ("Policies", ["2.23.140.1.2.1"]),
        ("PermittedDNSDomainsCritical", True),
        ("PermittedDNSDomains", ["acme.test"]),
        ("PermittedIPRanges", [{"IP": "10.0.0.0", "Mask": base64.b64encode(b"\xff\0\0\0").decode()}]),
        ("ExcludedEmailAddresses", ["evil.test"]),
        ("SubjectKeyId", base64.b64encode(b"\x01\x02\x03").decode()),
        ("InhibitAnyPolicy", 0),
        ("InhibitAnyPolicyZero", True),
        ("RequireExplicitPolicy", 2),
        ("InhibitPolicyMapping", 0),
        ("InhibitPolicyMappingZero", False),
        ("UnhandledCriticalExtensions", [[1, 2, 3, 99]]),
        ("AuthorityKeyId", None),
        ("ExtraExtensions", None),
    ],
)
def test_fields_go_derives_from_extensions(rich, field, expected):
    assert rich[field] == expected


def test_names_and_uris_follow_go_struct_encoding(rich):
    assert rich["Subject"]["Country"] == ["DE"]
    assert rich["Subject"]["CommonName"] == "acme.test"
    assert rich["Subject"]["Locality"] is None and rich["Subject"]["SerialNumber"] == ""
    assert [n["Type"] for n in rich["Subject"]["Names"]] == [[2, 5, 4, 6], [2, 5, 4, 10], [2, 5, 4, 3]]
    (uri,) = rich["URIs"]
    assert uri["Scheme"] == "spiffe" and uri["Host"] == "acme.test" and uri["Path"] == "/ns/default/sa/web"
    assert uri["User"] is None and uri["OmitHost"] is False
    assert [e["Critical"] for e in rich["Extensions"]][:3] == [False, True, True]


def test_without_basic_constraints_max_path_len_is_zero():
    plain = decode(certificate())
    assert (plain["MaxPathLen"], plain["BasicConstraintsValid"], plain["Extensions"]) == (0, False, None)


def test_big_serial_numbers_stay_exact():
    serial = 520089955419326249038486015063014459614455897759
    assert decode(certificate(serial=serial))["SerialNumber"] == serial


def test_a_request_has_its_own_field_set():
    request = (
        x509.CertificateSigningRequestBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "web")]))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName("web.test")]), critical=False)
        .sign(rsa_key(), hashes.SHA256())
        .public_bytes(serialization.Encoding.PEM)
    )
    decoded = decode(request)
    assert decoded["Version"] == 0
    assert decoded["DNSNames"] == ["web.test"]
    assert [e["Id"] for e in decoded["Extensions"]] == [[2, 5, 29, 17]]
    (attribute,) = decoded["Attributes"]
    assert attribute["Type"] == [1, 2, 840, 113549, 1, 9, 14]
    assert attribute["Value"][0][0]["Type"] == [2, 5, 29, 17]
    assert "RawTBSCertificateRequest" in decoded and "Issuer" not in decoded


@pytest.mark.parametrize(
    ("pem", "message"),
    [
        ("", "failed to decode PEM block"),
        ("-----BEGIN CERTIFICATE-----\n!!!\n-----END CERTIFICATE-----\n", "failed to decode PEM block"),
        ("-----BEGIN X509 CRL-----\nMAA=\n-----END X509 CRL-----\n", "neither contains a CERTIFICATE"),
        ("-----BEGIN CERTIFICATE-----\nMAA=\n-----END CERTIFICATE-----\n", "x509: malformed certificate"),
    ],
)
def test_errors(pem, message):
    fails_with(pem, message)


def test_only_rsa_keys_are_accepted():
    key = ec.generate_private_key(ec.SECP256R1())
    fails_with(certificate(key=key).decode(), "certificate should use rsa algorithm")


def test_text_before_the_block_is_skipped():
    pem = certificate()
    assert decode(b"some preamble\n" + pem)["Raw"] == decode(pem)["Raw"]
