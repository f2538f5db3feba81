"""A Test's payloads: ``jsonPayloads`` (JSON-mode policies) and ``httpPayloads``/``envoyPayloads`` (authorization).

``kyverno test`` (commands/test/test.go, payload/load.go, processor/
authz_processor.go) reads each JSON payload file as one object: ``.json`` with
Go's JSON decoder (every number a float64), ``.yaml``/``.yml`` with go-yaml v3
(several documents make a list, which is refused: a payload must be a
top-level object); an HTTP or Envoy payload is one check request in JSON,
decoded into typed structs (its numbers keep their type).
Each payload is named as the test writes it, which is how result rows name it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from assertree.errors import AssertreeError
from assertree.testing.testfile import KyvernoTest, KyvernoTestError

__all__ = ["JSON", "Payload", "load_payloads"]

JSON, HTTP, ENVOY = "JSON", "HTTP", "Envoy"  # the evaluation mode each kind of payload is for


@dataclass(frozen=True)
class Payload:
    """One payload file: its name as written, the policies' mode it is for, and its content."""

    name: str
    mode: str
    value: Any


def _read(test: KyvernoTest, name: str, field_name: str) -> Any:
    from assertree.documents.reader import load_documents
    from assertree.languages.kyverno.manifests import to_float64

    path = test.existing(name, field_name)
    if not path.is_file():
        raise KyvernoTestError(f"{field_name}: not a file: {name!r} ({path})", source=str(test.file))
    suffix = path.suffix.lower()
    if suffix not in (".json", ".yaml", ".yml"):
        raise KyvernoTestError(f"{field_name}: unrecognized payload format, must be yaml or json ({name})",
                               source=str(test.file))
    try:
        documents = [document.value for document in load_documents(path)]
    except AssertreeError as error:
        raise KyvernoTestError(f"failed to load payload {name}: {error.message}", source=error.source or str(path),
                               line=error.line) from None
    value = documents[0] if len(documents) == 1 else documents
    if value is None:
        raise KyvernoTestError(f"{field_name}: payload {name} is empty or nil", source=str(test.file))
    if not isinstance(value, dict):
        raise KyvernoTestError(f"{field_name}: payload {name} must be a top-level object (map)", source=str(test.file))
    return value if suffix != ".json" or field_name != "jsonPayloads" else to_float64(value)


def load_payloads(test: KyvernoTest) -> list[Payload]:
    """Every payload of `test`, in the test's order (JSON, then HTTP, then Envoy)."""
    out = [Payload(name, JSON, _read(test, name, "jsonPayloads")) for name in test.json_payloads]
    out += [Payload(name, HTTP, _read(test, name, "httpPayloads")) for name in test.http_payloads]
    out += [Payload(name, ENVOY, _read(test, name, "envoyPayloads")) for name in test.envoy_payloads]
    return out
