"""Rows of the core tier that do not agree yet, each with its reason."""

SIGNATURES = (
    "needs the image registry: the rule verifies cosign signatures of ghcr.io/kyverno/test-verify-image, which "
    "Kyverno's verifier fetches from ghcr.io even without --registry (pkg/engine/internal/imageverifier.go, "
    "verifyAttestorSet -> cosign VerifySignature; the CLI's CI runs these tests with network access); offline, "
    "assertree refuses the rule and reports the row as Not run")

XFAIL: dict[str, str] = {
    "core:test-exceptions/exceptions-3:psa:baseline:Pod/default/bad-pod:fail":
        "not yet: no result compared for this row: test/cli/test-exceptions/exceptions-3/policy.yaml:16:7: spec.rules[0].validate.podSecurity: validate.podSecurity (Pod Security Standards) is not supported yet",
    "core:test-exceptions/exceptions-3:psa:baseline:Pod/default/good-pod:pass":
        "not yet: no result compared for this row: test/cli/test-exceptions/exceptions-3/policy.yaml:16:7: spec.rules[0].validate.podSecurity: validate.podSecurity (Pod Security Standards) is not supported yet",
    "core:test-exceptions/exceptions-3:psa:baseline:Pod/staging-ns/excluded-pod:skip":
        "not yet: no result compared for this row: test/cli/test-exceptions/exceptions-3/policy.yaml:16:7: spec.rules[0].validate.podSecurity: validate.podSecurity (Pod Security Standards) is not supported yet",
    "core:test/conditional-delete-operation-result-field:deny-delete-prod:block-prod-deletion:Pod/default/prod-app:fail":
        "not yet: test file not read: test/cli/test/conditional-delete-operation-result-field/kyverno-test.yaml:11:3: results[0].operation: not supported by assertree test yet",
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
    "core:test/mock-apicall-responses:check-external-service:check-allowed:Pod/test-ns/test-pod-pass:pass":
        "not yet: test file not read: test/cli/test/mock-apicall-responses/kyverno-test.yaml:1:1: apiCallResponses: not supported by assertree test yet",
    "core:test/mock-apicall-responses:check-external-service:check-allowed:Pod/test-ns/test-pod-fail:pass":
        "not yet: test file not read: test/cli/test/mock-apicall-responses/kyverno-test.yaml:1:1: apiCallResponses: not supported by assertree test yet",
    "core:test/mock-gce-resource-files:check-deployment-replicas:check-min-replicas:Deployment/test-ns/test-deployment:pass":
        "not yet: test file not read: test/cli/test/mock-gce-resource-files/kyverno-test.yaml:2:1: globalContextEntries: not supported by assertree test yet",
    "core:test/secret:add-maintainer:add-maintainer:Secret/default/secrete-fail-example:fail":
        "kyverno test gives no row for it: patched-resource1.yaml holds Secret example1, not "
        "secrete-fail-example, so the CLI drops the row as 'not found in manifest' (commands/test/output.go, "
        "printTestResult: !FailOnMissingResources && message contains 'not found in manifest'); nothing can be "
        "compared for this expectation",
}
