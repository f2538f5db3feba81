"""``validate.manifests``: a resource must carry a valid signature of its own manifest (k8s-manifest-sigstore).

A manifest signed with ``kubectl sigstore sign`` carries, in its annotations
(domain ``cosign.sigstore.dev`` unless ``annotationDomain`` says otherwise),
``message``: the signed manifest (base64 of a gzip stream holding the YAML, or
a tar ball of YAML files), and ``signature`` (``signature_1``, ... when several
people signed): cosign blob signatures of that gzip stream. Kyverno
(``pkg/engine/handlers/validation/validate_manifest.go`` over
``k8smanifest.VerifyResource``) checks, for each attestor set, that enough of
its entries (``count``, else all) verify: the manifest found in the message
for the resource's kind and name equals the resource, except for the ignored
fields (k8s-manifest-sigstore's and Kyverno's default lists, the rule's
``ignoreFields``, and every annotation of the signature domain); and one of
the signatures verifies with the entry's public key. A resource without a
message fails; a failing entry's reason is kept in the rule's message.

Offline, only ``keys.publicKeys`` written in the policy (PEM) can verify:
`offline_problem` names the attestor that needs more (keyless signatures need
Fulcio and Rekor, ``k8s://`` and KMS keys a cluster or a cloud, certificates
and ``repository`` bundles the network), and the rule is refused
(`refusals`). The dry-run comparison Kyverno can make in a cluster (create the
manifest in a dry-run namespace and compare the defaulted result) needs a
cluster too; offline, as in ``kyverno test``, only the direct comparison runs.
The signature check is the ``cryptography`` package's (ECDSA, RSA or Ed25519
over SHA-256, as cosign signs blobs).
"""

from __future__ import annotations

import base64
import binascii
import fnmatch
import gzip
import io
import tarfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["ManifestVerdict", "offline_problem", "verify_manifests"]

DOMAIN = "cosign.sigstore.dev"
_MAX_MESSAGE = 4 << 20  # bytes of a decompressed message: a signed manifest is a few kilobytes

# k8s-manifest-sigstore's default ignore fields, then Kyverno's (pkg/engine/resources/default-config.yaml):
# (kinds the fields apply to, "*" for all; the fields)
_DEFAULT_IGNORED: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...] = (
    (("*",), ("metadata.managedFields.*", "metadata.resourceVersion", "metadata.selfLink",
              "metadata.annotations.kubectl.kubernetes.io/last-applied-configuration", "metadata.annotations.namespace",
              "metadata.creationTimestamp", "metadata.generation", "metadata.uid", "metadata.finalizers*",
              "metadata.labels.app.kubernetes.io/instance", "status", "metadata.namespace",
              "spec.containers.*.imagePullPolicy", "spec.containers.*.terminationMessagePath",
              "spec.containers.*.terminationMessagePolicy", "spec.dnsPolicy", "spec.restartPolicy",
              "spec.schedulerName", "spec.terminationGracePeriodSeconds",
              "metadata.annotations.control-plane.alpha.kubernetes.io/leader",
              "metadata.annotations.deprecated.daemonset.template.generation",
              "metadata.annotations.deployment.kubernetes.io/revision")),
    (("Pod",), ("spec.volumes.*.name", "spec.volumes.*.projected.*", "spec.volumes.*.configMap.defaultMode",
                "spec.containers.*.volumeMounts.*", "spec.tolerations.*", "spec.enableServiceLinks",
                "spec.preemptionPolicy", "spec.priority", "spec.serviceAccount")),
    (("Deployment",), ("spec.progressDeadlineSeconds", "spec.revisionHistoryLimit", "spec.strategy.*",
                       "spec.template.metadata.creationTimestamp", "spec.containers.*.ports.*.protocol",
                       "spec.containers.*.resources", "spec.securityContext")),
    (("CustomResourceDefinition",), ("spec.conversion.strategy", "spec.names.listKind")),
    (("Service",), ("spec.ports.*.nodePort", "spec.clusterIP", "spec.clusterIPs.0", "spec.sessionAffinity",
                    "spec.type", "spec.ipFamilies.*", "spec.ipFamilyPolicy", "spec.internalTrafficPolicy")),
    (("ClusterPolicy", "Policy"), ("metadata.annotations.pod-policies.kyverno.io/autogen-controllers",
                                   "spec.failurePolicy", "spec.background", "spec.validationFailureAction")),
    (("ServiceAccount",), ("secrets.*.name", "imagePullSecrets.*.name")),
)


_NETWORK = "(assertree never reaches the network)"
_KEYS_HINT = "give the public key under keys.publicKeys"


def offline_problem(manifests: Mapping[str, Any]) -> tuple[tuple, str] | None:
    """(field path within ``manifests``, why) when verifying needs more than the policy holds; else None."""
    if manifests.get("repository"):
        return ("repository",), f"signatures kept in an OCI repository are read from its registry {_NETWORK}"
    for path, entry in _entries(manifests.get("attestors") or [], ("attestors",)):
        if entry.get("keyless") is not None:
            return (*path, "keyless"), f"keyless signatures are checked against Fulcio and Rekor {_NETWORK}"
        if entry.get("certificates") is not None:
            return (*path, "certificates"), f"certificate attestors are not supported offline; {_KEYS_HINT}"
        if entry.get("repository"):
            return (*path, "repository"), f"signatures kept in an OCI repository are read from its registry {_NETWORK}"
        keys = entry.get("keys")
        if not isinstance(keys, dict):
            continue
        if keys.get("kms") or keys.get("secret"):
            return (*path, "keys"), f"keys held in a KMS or a Kubernetes secret need a cloud or a cluster; {_KEYS_HINT}"
        if not str(keys.get("publicKeys") or "").lstrip().startswith("-----BEGIN PUBLIC KEY-----"):
            why = "only PEM public keys written in the policy can be checked offline (k8s:// and KMS need more)"
            return (*path, "keys", "publicKeys"), why
    return None


def _entries(sets: Any, path: tuple) -> Iterator[tuple[tuple, dict]]:
    """Every attestor entry under `sets`, nested ``attestor`` sets included, with its field path."""
    for index, attestor_set in enumerate(sets if isinstance(sets, list) else []):
        for position, entry in enumerate((attestor_set or {}).get("entries") or [] if isinstance(attestor_set, dict)
                                         else []):
            if not isinstance(entry, dict):
                continue
            here = (*path, index, "entries", position)
            nested = entry.get("attestor")
            if isinstance(nested, dict):
                yield from _entries([nested], (*here, "attestor"))
            else:
                yield here, entry


@dataclass(frozen=True)
class ManifestVerdict:
    """The rule's outcome: verified or not, Kyverno's reason; `error` when verifying itself failed."""

    verified: bool
    reason: str
    error: str | None = None


class _EntryError(Exception):
    """An attestor entry that could not be evaluated (a key that does not load): the rule errors."""


def verify_manifests(resource: Mapping[str, Any], manifests: Mapping[str, Any]) -> ManifestVerdict:
    """Whether `resource` carries valid signatures of itself for every attestor set of `manifests`."""
    domain = str(manifests.get("annotationDomain") or DOMAIN)
    ignored = _ignored_fields(resource, manifests.get("ignoreFields") or [])
    verified_messages = []
    for index, attestor_set in enumerate(manifests.get("attestors") or []):
        try:
            ok, reason = _verify_set(resource, attestor_set or {}, f".attestors[{index}]", domain, ignored)
        except _EntryError as error:
            return ManifestVerdict(False, "", str(error))
        if not ok:
            return ManifestVerdict(False, reason)
        verified_messages.append(reason)
    return ManifestVerdict(True, f"verified manifest signatures; {','.join(verified_messages)}")


def _verify_set(resource: Mapping[str, Any], attestor_set: Mapping[str, Any], path: str, domain: str,
                ignored: list[str]) -> tuple[bool, str]:
    entries = [entry for entry in attestor_set.get("entries") or [] if isinstance(entry, dict)]
    count = attestor_set.get("count")
    required = count if isinstance(count, int) and not isinstance(count, bool) and count > 0 else len(entries)
    verified, passed, failed = 0, [], []
    for position, entry in enumerate(entries):
        where = f"{path}.entries[{position}]"
        if isinstance(entry.get("attestor"), dict):
            ok, reason = _verify_set(resource, entry["attestor"], f"{where}.attestor", domain, ignored)
        else:
            ok, reason = _verify_entry(resource, entry, f"{where}.keys", domain, ignored)
        if ok:
            verified += 1
            passed.append(reason)
        else:
            failed.append(reason)
        if verified >= required:
            return True, (f"manifest verification succeeded; verifiedCount {verified}; requiredCount {required}; "
                          f"message {','.join(passed)}")
    return False, (f"manifest verification failed; verifiedCount {verified}; requiredCount {required}; "
                   f"message {','.join(failed)}")


def _verify_entry(resource: Mapping[str, Any], entry: Mapping[str, Any], where: str, domain: str,
                  ignored: list[str]) -> tuple[bool, str]:
    annotations = _annotations(resource)
    for key, value in (entry.get("annotations") or {}).items():
        if annotations.get(key) != value:
            return False, f"{where}: annotation {key}={value} not found"
    message = annotations.get(f"{domain}/message")
    if not message:
        return False, f"{where}: failed to verify signature: `{domain}/message` is not found in the annotations"
    try:
        signed = gzip.decompress(base64.b64decode(message, validate=True))
    except (binascii.Error, OSError, EOFError, ValueError) as error:
        return False, f"{where}: the signed message cannot be read: {error}"
    signatures = [value for key, value in sorted(annotations.items())
                  if key == f"{domain}/signature" or key.startswith(f"{domain}/signature_")]
    if not signatures:
        return False, f"{where}: failed to verify signature: `{domain}/signature` is not found in the annotations"
    manifest = _manifest_for(resource, signed)
    if manifest is None:
        return False, f"{where}: failed to find a YAML manifest in the gzipped message"
    if not any(_signature_valid(str((entry.get("keys") or {}).get("publicKeys") or ""), signature, signed)
               for signature in signatures):
        return False, f"{where}: failed to verify signature: no signature verifies with the public key"
    differences = [key for key in _differences(manifest, resource, domain) if not _matches(key, ignored)]
    if differences:
        return False, f"{where}: failed to verify signature. diff found; {', '.join(differences[:10])}"
    return True, "singed by a valid signer: "  # sic, Kyverno's wording


def _annotations(resource: Mapping[str, Any]) -> dict[str, str]:
    metadata = resource.get("metadata")
    found = metadata.get("annotations") if isinstance(metadata, Mapping) else None
    return {str(k): str(v) for k, v in found.items()} if isinstance(found, Mapping) else {}


def _signature_valid(pem: str, signature: str, data: bytes) -> bool:
    from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec, ed25519, padding, rsa
    from cryptography.hazmat.primitives.serialization import load_pem_public_key

    try:
        key = load_pem_public_key(pem.strip().encode())
    except (ValueError, UnsupportedAlgorithm) as error:
        raise _EntryError(f"the public key does not load: {error}") from None
    try:
        raw = base64.b64decode(signature, validate=True)
    except (binascii.Error, ValueError):
        return False
    try:
        if isinstance(key, ec.EllipticCurvePublicKey):
            key.verify(raw, data, ec.ECDSA(hashes.SHA256()))
        elif isinstance(key, rsa.RSAPublicKey):
            key.verify(raw, data, padding.PKCS1v15(), hashes.SHA256())
        elif isinstance(key, ed25519.Ed25519PublicKey):
            key.verify(raw, data)
        else:
            raise _EntryError(f"unsupported public key type {type(key).__name__}")
    except InvalidSignature:
        return False
    return True


def _manifest_for(resource: Mapping[str, Any], signed: bytes) -> dict | None:
    """The manifest in the signed message with the resource's kind and name (and namespace, when both say)."""
    metadata = resource.get("metadata")
    metadata = metadata if isinstance(metadata, Mapping) else {}
    for document in _documents(signed):
        if not isinstance(document, dict) or document.get("kind") != resource.get("kind"):
            continue
        theirs = document.get("metadata")
        theirs = theirs if isinstance(theirs, dict) else {}
        if theirs.get("name") != metadata.get("name"):
            continue
        if theirs.get("namespace") and metadata.get("namespace") and theirs["namespace"] != metadata["namespace"]:
            continue
        return document
    return None


def _documents(signed: bytes) -> Iterator[Any]:
    """The YAML documents of a signed message: a gzip stream of YAML, or of a tar ball of YAML files."""
    try:
        content = gzip.decompress(signed)[:_MAX_MESSAGE] if signed[:2] == b"\x1f\x8b" else signed[:_MAX_MESSAGE]
    except (OSError, EOFError):
        return
    texts: list[bytes] = []
    try:
        with tarfile.open(fileobj=io.BytesIO(content)) as archive:
            for member in archive.getmembers():
                if member.isfile() and member.name.endswith((".yaml", ".yml")):
                    stream = archive.extractfile(member)
                    if stream is not None:
                        texts.append(stream.read(_MAX_MESSAGE))
    except (tarfile.TarError, OSError, EOFError):
        texts = [content]
    from assertree.documents.reader import parse_values
    from assertree.errors import AssertreeError

    for text in texts:
        try:  # within every input's limits: nesting, go-yaml's alias budget
            yield from parse_values(text, "signed manifest", "yaml")
        except AssertreeError:
            continue


def _flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(value, dict) and value:
        out: dict[str, Any] = {}
        for key, item in value.items():
            out.update(_flatten(item, f"{prefix}.{key}" if prefix else str(key)))
        return out
    if isinstance(value, list) and value:
        out = {}
        for index, item in enumerate(value):
            out.update(_flatten(item, f"{prefix}.{index}" if prefix else str(index)))
        return out
    return {prefix: value}


def _differences(manifest: Mapping[str, Any], resource: Mapping[str, Any], domain: str) -> list[str]:
    """The flattened keys whose values differ between the signed manifest and the resource."""
    signed, actual = _flatten(manifest), _flatten(resource)
    keys = sorted(set(signed) | set(actual))
    return [key for key in keys if not key.startswith(f"metadata.annotations.{domain}/")
            and (key not in signed or key not in actual or not _same(signed[key], actual[key]))]


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return float(a) == float(b)
    return bool(a == b)


def _matches(key: str, patterns: list[str]) -> bool:
    """Whether `key` (or a field above it) is ignored: patterns match whole keys, ``*`` any text."""
    parts = key.split(".")
    prefixes = [".".join(parts[:end]) for end in range(1, len(parts) + 1)]
    return any(fnmatch.fnmatchcase(prefix, pattern) for pattern in patterns for prefix in prefixes)


def _ignored_fields(resource: Mapping[str, Any], extra: Any) -> list[str]:
    kind = str(resource.get("kind") or "")
    group = str(resource.get("apiVersion") or "").rpartition("/")[0]
    fields: list[str] = []
    for kinds, names in _DEFAULT_IGNORED:
        if "*" in kinds or kind in kinds:
            fields.extend(names)
    for binding in extra if isinstance(extra, list) else []:
        if not isinstance(binding, dict):
            continue
        objects = binding.get("objects") or [{"kind": "*"}]
        if any(isinstance(item, dict) and fnmatch.fnmatchcase(kind, str(item.get("kind") or "*"))
               and fnmatch.fnmatchcase(group, str(item.get("group") or "*")) for item in objects):
            fields.extend(str(field) for field in binding.get("fields") or [])
    return fields
