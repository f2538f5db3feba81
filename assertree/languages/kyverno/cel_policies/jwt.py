"""``jwt.Decode(token, key)`` of Kyverno's authorization policies (kyverno-authz pkg/cel/libs/jwt).

The token's signature is checked with `key` (a shared secret for the HS
algorithms, a PEM public key for RS, PS and ES), as jwx parses it with a
one-key set (``WithUseDefault``, the algorithm inferred from the key): a
token that is malformed or whose signature does not verify is an error. The
result is ``{"Claims": ..., "Valid": ...}``: the claims as a protobuf Struct
holds them (every number a double; times as Unix seconds), or null without
claims, and whether ``exp``/``nbf``/``iat`` hold now (no skew), as
``jwt.Validate`` judges. Written by hand on the standard library (HMAC) and
`cryptography` (already a dependency, for x509), to keep a JWT library out.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from typing import Any

from assertree.languages.cel.engine import FunctionError

__all__ = ["decode"]

_HASHES = {"256": hashlib.sha256, "384": hashlib.sha384, "512": hashlib.sha512}


def _part(text: str) -> bytes:
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except ValueError:
        raise FunctionError("failed to parse token: invalid base64") from None


def _verify(algorithm: str, signed: bytes, signature: bytes, key: str) -> bool:
    family, bits = algorithm[:2], algorithm[2:]
    if family == "HS" and bits in _HASHES:
        return hmac.compare_digest(hmac.new(key.encode(), signed, _HASHES[bits]).digest(), signature)
    if family in ("RS", "PS", "ES") and bits in _HASHES:
        from cryptography.exceptions import InvalidSignature
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa, utils

        try:
            public = serialization.load_pem_public_key(key.encode())
        except ValueError:
            raise FunctionError(f"failed to parse token: key is not usable for {algorithm}") from None
        digest = {"256": hashes.SHA256(), "384": hashes.SHA384(), "512": hashes.SHA512()}[bits]
        try:
            if family == "ES" and isinstance(public, ec.EllipticCurvePublicKey):
                half = len(signature) // 2
                der = utils.encode_dss_signature(int.from_bytes(signature[:half], "big"),
                                                 int.from_bytes(signature[half:], "big"))
                public.verify(der, signed, ec.ECDSA(digest))
            elif family in ("RS", "PS") and isinstance(public, rsa.RSAPublicKey):
                scheme = padding.PKCS1v15() if family == "RS" else padding.PSS(padding.MGF1(digest),
                                                                                padding.PSS.DIGEST_LENGTH)
                public.verify(signature, signed, scheme, digest)
            else:
                return False
        except InvalidSignature:
            return False
        return True
    raise FunctionError(f"failed to parse token: unsupported algorithm {algorithm!r}")


def _number(value: Any) -> Any:
    """A claim as a protobuf Struct holds it: numbers as doubles, lists and maps inside too."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, list):
        return [_number(item) for item in value]
    if isinstance(value, dict):
        return {str(key): _number(item) for key, item in value.items()}
    return value


def _valid(claims: dict, now: float) -> bool:
    def number(name: str) -> float | None:
        value = claims.get(name)
        return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None

    expires, not_before, issued = number("exp"), number("nbf"), number("iat")
    if expires is not None and now >= expires:
        return False
    if not_before is not None and now < not_before:
        return False
    return not (issued is not None and now < issued)


def decode(token: str, key: str) -> dict[str, Any]:
    """The decoded token: its claims and whether they are valid now; FunctionError when it does not verify."""
    parts = token.split(".")
    if len(parts) != 3:
        raise FunctionError("failed to parse token: invalid number of segments")
    try:
        header = json.loads(_part(parts[0]))
        claims = json.loads(_part(parts[1])) if parts[1] else {}
    except ValueError:
        raise FunctionError("failed to parse token: invalid JSON") from None
    if not isinstance(header, dict) or not isinstance(claims, dict):
        raise FunctionError("failed to parse token: invalid JSON")
    algorithm = str(header.get("alg") or "")
    if not _verify(algorithm, f"{parts[0]}.{parts[1]}".encode(), _part(parts[2]), key):
        raise FunctionError("failed to parse token: could not verify message using any of the signatures or keys")
    return {"Claims": _number(claims) if claims else None, "Valid": _valid(claims, time.time())}
