"""Kyverno's offline CEL helpers (github.com/kyverno/sdk extensions/cel/libs, kyverno/kyverno pkg/cel/libs).

``json.unmarshal(s)``, ``json.marshal(v)`` (Go's ``json.Marshal`` text),
``yaml.parse(s)``, ``parseServiceAccount(s)`` (a map with ``Namespace`` and
``Name``, the Go struct's field names the policies select), ``time.now()``,
``time.truncate(t, d)``, ``time.toCron(t)``, ``sha1``/``sha256``/``md5``
(hex), ``random()``/``random(pattern)``, ``math.round(x, digits)`` (declared
as `ROUND_DIGITS`), ``x509.decode(pem)``, ``listObjToMap(keys, values,
keyField, valueField)``, ``gzip.compress``/``gzip.decompress``. The 1.18
names (``hash.sha256``, ``random.random``, ``user.parseServiceAccount``,
``transform.listObjToMap``) are declared beside the first ones, as the SDK
declares them. In Kyverno ``json`` and ``yaml`` are variables whose methods
these are; here they are namespaced functions, which reads the same in an
expression. YAML is read as Kyverno reads it elsewhere (sigs.k8s.io/yaml:
go-yaml v2, then JSON), by the JMESPath library's reader
(`assertree.jp.functions.goyaml`), with its limits: go-yaml's alias budget
and 1024 levels of nesting, so a hostile string is an error rather than a
hang or a crash.
"""

from __future__ import annotations

import base64
import datetime
import io
import json
from typing import Any

from assertree.languages.cel.engine import FunctionError
from assertree.languages.cel.functions.declare import Declaration

SERVICE_ACCOUNT_PREFIX = "system:serviceaccount:"
MAX_DECOMPRESSED = 64 * 1024 * 1024  # what gzip.decompress gives at most
# Kyverno's math.round(x, digits): the math extension owns `math.round` (one argument) and the CEL library takes
# one declaration per name, so two-argument calls are renamed to this (`rename_calls`) before compiling
ROUND_DIGITS = "__math_round_digits__"
# gzip.compress gives bytes with NULs, which cel-expr-python 0.1.3 cuts at the first NUL on the way back from
# Python: the Python side gives base64 text and the call is rewritten to decode it in CEL (`rename_calls`)
GZIP_BASE64 = "__gzip_compress_base64__"


def _unmarshal(text: str):
    try:
        return json.loads(text)
    except ValueError as error:
        raise FunctionError(f"failed to unmarshal JSON: {error}") from None


def _parse_yaml(text: str):
    from assertree.jp.errors import FunctionError as YAMLError
    from assertree.jp.functions.goyaml import decode_yaml

    try:
        return decode_yaml(text)
    except YAMLError as error:
        raise FunctionError(f"failed to parse YAML: {error}".splitlines()[0]) from None


def _service_account(user: str) -> dict[str, str]:
    namespace = name = ""
    if user.startswith(SERVICE_ACCOUNT_PREFIX):
        rest = user[len(SERVICE_ACCOUNT_PREFIX):]
        if ":" in rest:
            namespace, _, name = rest.partition(":")
    return {"Namespace": namespace, "Name": name}


def _marshal(value: Any) -> str:
    from assertree.jp.values import to_json

    try:
        return to_json(value)
    except ValueError as error:
        raise FunctionError(f"json: {error}") from None


def _hash(algorithm: str):
    def digest(text: str) -> str:
        import hashlib  # imported when used: OpenSSL's module costs a few ms of every start-up

        return hashlib.new(algorithm, text.encode()).hexdigest()

    return digest


def _random(pattern: str = "[0-9a-z]{8}") -> str:
    from assertree.jp.errors import FunctionError as PatternError
    from assertree.jp.functions.randomness import random

    try:
        return random(pattern)
    except PatternError as error:
        raise FunctionError(str(error)) from None


def _round(value: float, digits: int) -> float:
    shift = 10.0 ** digits
    scaled = value * shift
    return float(int(scaled + (0.5 if scaled >= 0 else -0.5))) / shift  # Go's math.Round: halves away from zero


def _x509(pem: str) -> Any:
    from assertree.jp.errors import FunctionError as DecodeError
    from assertree.jp.functions.x509 import x509_decode

    try:
        return x509_decode(pem)
    except DecodeError as error:
        raise FunctionError(str(error)) from None


def _list_to_map(keys: list, values: list, key_field: str, value_field: str) -> dict:
    if len(keys) != len(values):
        raise FunctionError(f"listObjToMap must take lists of equal length. list1: {len(keys)}, list2: {len(values)}")
    out = {}
    for entry, value in zip(keys, values, strict=True):
        if not isinstance(entry, dict) or not isinstance(entry.get(key_field), str):
            raise FunctionError("the passed key name cannot be handled as a string in the key object list")
        if not isinstance(value, dict):
            raise FunctionError("object cannot be handled as a map string to any in the value object list")
        out[entry[key_field]] = value.get(value_field)
    return out


def _compress_base64(text: str) -> str:
    import gzip

    return base64.b64encode(gzip.compress(text.encode(), mtime=0)).decode()


def _decompress(data: bytes) -> str:
    import gzip

    try:
        with gzip.GzipFile(fileobj=io.BytesIO(data)) as stream:
            out = stream.read(MAX_DECOMPRESSED + 1)  # a gzip bomb stops here
    except (OSError, EOFError) as error:
        raise FunctionError(f"gzip: {error}") from None
    if len(out) > MAX_DECOMPRESSED:
        raise FunctionError("gzip: the decompressed data is larger than assertree reads")
    return out.decode(errors="replace")


def _truncate(moment: datetime.datetime, step: datetime.timedelta) -> datetime.datetime:
    if step <= datetime.timedelta(0):
        return moment
    epoch = datetime.datetime(1, 1, 1, tzinfo=datetime.UTC)  # Go truncates from its zero time
    return moment - (moment.astimezone(datetime.UTC) - epoch) % step


def _to_cron(moment: datetime.datetime) -> str:
    moment = moment.astimezone(datetime.UTC)
    return f"{moment.minute} {moment.hour} {moment.day} {moment.month} {(moment.weekday() + 1) % 7}"


DECLARATIONS = (
    Declaration("json.unmarshal", ("string",), "dyn", _unmarshal),
    *(Declaration("json.marshal", (kind,), "string", _marshal)
      for kind in ("map", "list", "string", "int", "uint", "double", "bool", "null")),
    Declaration("yaml.parse", ("string",), "dyn", _parse_yaml),
    Declaration("parseServiceAccount", ("string",), "map", _service_account),
    Declaration("user.parseServiceAccount", ("string",), "map", _service_account),
    Declaration("time.now", (), "timestamp", lambda: datetime.datetime.now(datetime.UTC)),
    Declaration("time.truncate", ("timestamp", "duration"), "timestamp", _truncate),
    Declaration("time.toCron", ("timestamp",), "string", _to_cron),
    *(Declaration(prefix + name, ("string",), "string", _hash(name)) for name in ("sha1", "sha256", "md5")
      for prefix in ("", "hash.")),
    *(Declaration(name, (), "string", _random) for name in ("random", "random.random")),
    *(Declaration(name, ("string",), "string", _random) for name in ("random", "random.random")),
    Declaration(ROUND_DIGITS, ("double", "int"), "double", _round),
    Declaration("x509.decode", ("string",), "dyn", _x509),
    *(Declaration(name, ("list", "list", "string", "string"), "map", _list_to_map)
      for name in ("listObjToMap", "transform.listObjToMap")),
    Declaration(GZIP_BASE64, ("string",), "string", _compress_base64),
    Declaration("gzip.decompress", ("bytes",), "string", _decompress),
)
