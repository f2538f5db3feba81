"""Kyverno's decoding and hashing: base64_decode/encode, parse_json, parse_yaml, sha256, sha1, md5.

Strings are UTF-8 bytes to Go: both directions go through `conversions.utf8_bytes`
and `conversions.go_string`.

`base64_decode` is written by hand because Go's decoder differs from
Python's in what users see: padding is required, line breaks anywhere are
skipped, and errors name the byte offset Go reports
(``illegal base64 data at input byte N``).

`parse_yaml` is sigs.k8s.io/yaml's reading of YAML, in `goyaml`.
"""

from __future__ import annotations

import base64
import hashlib

from assertree.jp.errors import FunctionError
from assertree.jp.functions.conversions import go_string, utf8_bytes
from assertree.jp.functions.kyverno_json import decode_json
from assertree.jp.registry import function

# -- base64 ----------------------------------------------------------------------------------------

_SEXTETS = {
    byte: value for value, byte in enumerate(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
}
_PAD = ord("=")
_LINE_BREAKS = (ord("\r"), ord("\n"))


class Base64Error(ValueError):
    """Go's ``illegal base64 data at input byte N``."""

    def __init__(self, offset: int) -> None:
        super().__init__(f"illegal base64 data at input byte {offset}")


def _skip_line_breaks(data: bytes, position: int) -> int:
    while position < len(data) and data[position] in _LINE_BREAKS:
        position += 1
    return position


def _quantum_bytes(sextets: list[int]) -> bytes:
    """The 1 to 3 bytes that 2 to 4 sextets carry (left-over bits are ignored, as Go's standard decoder does)."""
    value = 0
    for sextet in sextets:
        value = value << 6 | sextet
    value <<= 6 * (4 - len(sextets))
    return value.to_bytes(3, "big")[: len(sextets) - 1]


def decode_base64(data: bytes) -> bytes:
    """Go's ``base64.StdEncoding.DecodeString``: padded standard alphabet, CR and LF skipped anywhere.

    Raises Base64Error naming the offset Go reports.
    """
    out = bytearray()
    position, size = 0, len(data)
    while True:
        sextets: list[int] = []
        while len(sextets) < 4:
            if position == size:
                if not sextets:
                    return bytes(out)
                raise Base64Error(position - len(sextets))  # a quantum cut short: padding is mandatory
            byte = data[position]
            position += 1
            if byte in _LINE_BREAKS:
                continue
            sextet = _SEXTETS.get(byte)
            if sextet is not None:
                sextets.append(sextet)
                continue
            if byte != _PAD or len(sextets) < 2:
                raise Base64Error(position - 1)
            if len(sextets) == 2:  # a second '=' must follow
                position = _skip_line_breaks(data, position)
                if position == size:
                    raise Base64Error(size)
                if data[position] != _PAD:
                    raise Base64Error(position - 1)
                position += 1
            position = _skip_line_breaks(data, position)
            if position < size:
                raise Base64Error(position)  # nothing may follow the padding
            out += _quantum_bytes(sextets)
            return bytes(out)
        out += _quantum_bytes(sextets)


@function("base64_decode(encoded: string) -> string")
def base64_decode(encoded):
    """The text that padded standard base64 `encoded` holds (line breaks ignored)."""
    try:
        return go_string(decode_base64(utf8_bytes(encoded)))
    except Base64Error as error:
        raise FunctionError(str(error)) from None


@function("base64_encode(text: string) -> string")
def base64_encode(text):
    """The UTF-8 bytes of `text` in padded standard base64."""
    return base64.b64encode(utf8_bytes(text)).decode("ascii")


# -- hashes ----------------------------------------------------------------------------------------


@function("sha256(text: string) -> string")
def sha256(text):
    """Lower-case hex SHA-256 digest of the UTF-8 bytes of `text`."""
    return hashlib.sha256(utf8_bytes(text)).hexdigest()


@function("sha1(text: string) -> string")
def sha1(text):
    """Lower-case hex SHA-1 digest of the UTF-8 bytes of `text`."""
    return hashlib.sha1(utf8_bytes(text), usedforsecurity=False).hexdigest()


@function("md5(text: string) -> string")
def md5(text):
    """Lower-case hex MD5 digest of the UTF-8 bytes of `text`."""
    return hashlib.md5(utf8_bytes(text), usedforsecurity=False).hexdigest()


# -- JSON ------------------------------------------------------------------------------------------


@function("parse_json(text: string) -> any")
def parse_json(text):
    """The JSON value `text` holds (strict JSON, nothing after the value)."""
    try:
        return decode_json(text)
    except ValueError as error:
        raise FunctionError(str(error)) from None


@function("parse_yaml(text: string) -> any")
def parse_yaml(text):
    """The value of the first YAML document in `text` (YAML 1.1 scalars, as JSON)."""
    from assertree.jp.functions.goyaml import decode_yaml

    return decode_yaml(text)
