"""Kyverno's small offline CEL helpers (kyverno/kyverno pkg/cel/libs): JSON, YAML, JSON Patch, users, time.

``json.unmarshal(s)``, ``yaml.parse(s)``,
``parseServiceAccount(s)`` (a map with ``Namespace`` and ``Name``, the Go
struct's field names the policies select) and ``time.now()``. In Kyverno
``json`` and ``yaml`` are variables whose methods these are; here they are
namespaced functions, which reads the same in an expression. YAML is read
as Kyverno reads it elsewhere (sigs.k8s.io/yaml: go-yaml v2, then JSON), by
the JMESPath library's reader (`assertree.jp.functions.goyaml`), with its
limits: go-yaml's alias budget and 1024 levels of nesting, so a hostile
string is an error rather than a hang or a crash.
"""

from __future__ import annotations

import datetime
import json

from assertree.languages.cel.engine import FunctionError
from assertree.languages.cel.functions.declare import Declaration

SERVICE_ACCOUNT_PREFIX = "system:serviceaccount:"


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


DECLARATIONS = (
    Declaration("json.unmarshal", ("string",), "dyn", _unmarshal),
    Declaration("yaml.parse", ("string",), "dyn", _parse_yaml),
    Declaration("parseServiceAccount", ("string",), "map", _service_account),
    Declaration("time.now", (), "timestamp", lambda: datetime.datetime.now(datetime.UTC)),
)
