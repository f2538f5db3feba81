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
from assertree.jp.functions.base64 import Base64Error, decode_base64
from assertree.jp.functions.conversions import go_string, utf8_bytes
from assertree.jp.functions.kyverno_json import decode_json
from assertree.jp.registry import function


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
