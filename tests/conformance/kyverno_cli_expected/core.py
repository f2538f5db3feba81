"""Rows of the core tier that do not agree yet, each with its reason."""

SIGNATURES = (
    "needs the image registry: the rule verifies cosign signatures of ghcr.io/kyverno/test-verify-image, which "
    "Kyverno's verifier fetches from ghcr.io even without --registry (pkg/engine/internal/imageverifier.go, "
    "verifyAttestorSet -> cosign VerifySignature; the CLI's CI runs these tests with network access); offline, "
    "assertree refuses the rule and reports the row as Not run")

XFAIL: dict[str, str] = {
    "core:test/images/signatures:verify-signature:check-static-key:Pod/default/unsigned:fail":
        SIGNATURES,
    "core:test/images/signatures:verify-signature:check-static-key:Pod/default/signed:pass":
        SIGNATURES,
    "core:test/images/verify-signature:check-data-volume-image:verify-signature:DataVolume/default/unsigned-registry-image-datavolume:fail":
        SIGNATURES,
    "core:test/images/verify-signature:check-data-volume-image:verify-signature:DataVolume/default/signed-registry-image-datavolume:pass":
        SIGNATURES,
    "core:test/images/verify-signature:check-image:verify-signature:Pod/default/unsigned:fail":
        SIGNATURES,
    "core:test/images/verify-signature:check-image:verify-signature:Pod/default/signed:pass":
        SIGNATURES,
    "core:test/secret:add-maintainer:add-maintainer:Secret/default/secrete-fail-example:fail":
        "kyverno test gives no row for it: patched-resource1.yaml holds Secret example1, not "
        "secrete-fail-example, so the CLI drops the row as 'not found in manifest' (commands/test/output.go, "
        "printTestResult: !FailOnMissingResources && message contains 'not found in manifest'); nothing can be "
        "compared for this expectation",
}
