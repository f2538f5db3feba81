"""``verifyImages`` offline: image checks that need no registry run, the rest is refused by rule."""

from __future__ import annotations

import json
from typing import Any

import pytest

from assertree.languages.base import ScanContext
from assertree.languages.kyverno.language import compile_document
from assertree.languages.kyverno.verify_images import rule_images
from assertree.results import ERROR, FAIL, PASS, Resource


def pod(*images: str, annotations: dict | None = None) -> dict:
    metadata: dict[str, Any] = {"name": "p", "namespace": "default"}
    if annotations:
        metadata["annotations"] = annotations
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata,
            "spec": {"containers": [{"name": f"c{i}", "image": image} for i, image in enumerate(images)]}}


def policy(**entry: Any) -> dict:
    rule = {"name": "images", "match": {"any": [{"resources": {"kinds": ["Pod"]}}]},
            "verifyImages": [{"imageReferences": ["ghcr.io/acme/*"], **entry}]}
    annotations = {"pod-policies.kyverno.io/autogen-controllers": "none"}
    return {"apiVersion": "kyverno.io/v1", "kind": "ClusterPolicy",
            "metadata": {"name": "check-images", "annotations": annotations}, "spec": {"rules": [rule]}}


def check(document: dict, resource: dict):
    [rule] = compile_document(document).rules
    return rule.runner(ScanContext())(Resource(resource))


def patch(document: dict, resource: dict):
    compiled = compile_document(document)
    _, results = compiled.mutator(ScanContext())(Resource(resource))
    return results


DIGEST = "sha256:" + "a" * 64


def test_verify_digest_needs_a_digest_on_matching_images_only():
    assert check(policy(verifyDigest=True), pod(f"ghcr.io/acme/app@{DIGEST}")).status == PASS
    failed = check(policy(verifyDigest=True), pod("ghcr.io/acme/app:1.0"))
    assert (failed.status, failed.message) == (FAIL, "missing digest for ghcr.io/acme/app:1.0")
    assert check(policy(verifyDigest=True), pod("docker.io/library/nginx:1.25")) is None  # not referenced


def test_required_reads_the_verification_kyverno_recorded_for_this_rule():
    image = "ghcr.io/acme/app:1.0"
    assert check(policy(required=True), pod(image)).message == f"unverified image {image}"
    record = json.dumps({"version": 1, "policies": {"/check-images": {"images": {image: "pass"}}}})
    verified = pod(image, annotations={"kyverno.io/verify-images-scoped": record})
    assert check(policy(required=True), verified).status == PASS


def test_mutate_digest_needs_no_lookup_for_a_pinned_image_and_errors_otherwise():
    assert patch(policy(mutateDigest=True), pod(f"ghcr.io/acme/app@{DIGEST}")) == []
    [found] = patch(policy(mutateDigest=True), pod("ghcr.io/acme/app:1.0"))
    assert found.status == ERROR and "resolving the digest of ghcr.io/acme/app:1.0 needs the image registry" in \
        found.message


@pytest.mark.parametrize("entry", [{"attestors": [{"entries": [{"keys": {"publicKeys": "k"}}]}]},
                                   {"attestations": [{"type": "https://slsa.dev/provenance/v0.2"}]},
                                   # the legacy fields Kyverno turns into an attestor (ImageVerification.Convert)
                                   {"image": "*", "key": "-----BEGIN PUBLIC KEY-----"},
                                   {"image": "*", "issuer": "https://token.actions.githubusercontent.com"}])
def test_signatures_and_attestations_refuse_the_rule_and_the_others_run(entry: dict):
    document = policy(**entry)
    document["spec"]["rules"].append({"name": "digest", "match": {"any": [{"resources": {"kinds": ["Pod"]}}]},
                                      "verifyImages": [{"imageReferences": ["*"], "verifyDigest": True}]})
    compiled = compile_document(document)
    assert [item.rule for item in compiled.policy.refused] == ["images"]
    assert "needs the image registry" in compiled.policy.refused[0].problem.message
    assert [rule.rule.name for rule in compiled.rules] == ["digest"]


def test_image_extractors_read_custom_kinds():
    document = {"verifyImages": [{"imageReferences": ["*"]}],
                "imageExtractors": {"Task": [{"path": "/spec/steps/*/image"},
                                             {"path": "/spec/source/url", "jmesPath": "trim_prefix(@, 'docker://')"}]}}
    task = {"kind": "Task", "spec": {"steps": [{"image": "alpine:3"}, {"image": "busybox"}],
                                     "source": {"url": "docker://ghcr.io/acme/tool:2"}}}
    assert [reference for reference, _ in rule_images(document, task)] == [
        "docker.io/alpine:3", "docker.io/busybox:latest", "ghcr.io/acme/tool:2"]
