"""``validate.manifests``: a resource's own signature, checked offline with the public keys a policy holds."""

from __future__ import annotations

import base64
import gzip

import pytest
import yaml
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec

from assertree.languages.kyverno.language import compile_document
from assertree.languages.kyverno.signed_manifests import verify_manifests

SERVICE = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
           "spec": {"ports": [{"port": 80, "targetPort": 8080}], "selector": {"app": "web"}}}


def key() -> tuple[ec.EllipticCurvePrivateKey, str]:
    private = ec.generate_private_key(ec.SECP256R1())
    pem = private.public_key().public_bytes(serialization.Encoding.PEM,
                                            serialization.PublicFormat.SubjectPublicKeyInfo).decode()
    return private, pem


def signed(manifest: dict, *signers: ec.EllipticCurvePrivateKey) -> dict:
    """`manifest` with k8s-manifest-sigstore's annotations: the message, and one signature per signer."""
    inner = gzip.compress(yaml.safe_dump(manifest).encode())
    annotations = {"cosign.sigstore.dev/message": base64.b64encode(gzip.compress(inner)).decode()}
    for index, signer in enumerate(signers):
        name = "signature" if index == 0 else f"signature_{index}"
        annotations[f"cosign.sigstore.dev/{name}"] = base64.b64encode(
            signer.sign(inner, ec.ECDSA(hashes.SHA256()))).decode()
    return {**manifest, "metadata": {**manifest["metadata"], "namespace": "default", "annotations": annotations}}


def attestors(*pems: str, count: int | None = None) -> dict:
    entries = [{"keys": {"publicKeys": pem}} for pem in pems]
    return {"attestors": [{"entries": entries, **({"count": count} if count else {})}]}


def test_a_signed_resource_verifies_and_a_changed_one_does_not():
    private, pem = key()
    resource = signed(SERVICE, private)
    assert verify_manifests(resource, attestors(pem)).verified
    resource["spec"]["ports"][0]["port"] = 81
    verdict = verify_manifests(resource, attestors(pem))
    assert not verdict.verified and "diff found; spec.ports.0.port" in verdict.reason


def test_the_wrong_key_or_no_signature_fails():
    private, _ = key()
    _, other = key()
    assert not verify_manifests(signed(SERVICE, private), attestors(other)).verified
    verdict = verify_manifests(SERVICE, attestors(other))
    assert not verdict.verified and "`cosign.sigstore.dev/message` is not found" in verdict.reason


def test_count_says_how_many_entries_must_verify():
    first, first_pem = key()
    _, second_pem = key()
    one_signer = signed(SERVICE, first)
    assert not verify_manifests(one_signer, attestors(first_pem, second_pem)).verified  # all entries by default
    assert verify_manifests(one_signer, attestors(first_pem, second_pem, count=1)).verified


def test_ignore_fields_from_the_policy_are_not_compared():
    private, pem = key()
    resource = signed(SERVICE, private)
    resource["spec"]["selector"] = {"app": "other"}
    rules = {**attestors(pem), "ignoreFields": [{"objects": [{"kind": "Service"}], "fields": ["spec.selector"]}]}
    assert verify_manifests(resource, rules).verified


@pytest.mark.parametrize(("entry", "field"), [
    ({"keyless": {"issuer": "https://accounts.google.com"}}, "keyless"),
    ({"keys": {"kms": "gcpkms://x"}}, "keys"),
])
def test_attestors_that_need_a_network_refuse_the_rule(entry: dict, field: str):
    document = {"apiVersion": "kyverno.io/v1", "kind": "ClusterPolicy", "metadata": {"name": "signed"},
                "spec": {"rules": [{"name": "yaml", "match": {"any": [{"resources": {"kinds": ["Service"]}}]},
                                    "validate": {"manifests": {"attestors": [{"entries": [entry]}]}}}]}}
    [refused] = compile_document(document).policy.refused
    assert refused.problem.path == ("spec", "rules", 0, "validate", "manifests", "attestors", 0, "entries", 0,
                                    field)
