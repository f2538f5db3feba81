"""Rows of the cel_lifecycle tier that do not agree yet, each with its reason."""

REGISTRY = (
    "needs the image registry: the policy calls verifyImageSignatures, verifyAttestationSignatures and "
    "extractPayload for ghcr.io/kyverno/test-verify-image, which Kyverno's ImageValidatingPolicy evaluator "
    "fetches from ghcr.io (pkg/image/verification/evaluator/policy.go, ictx.AddImages; pkg/cel/libs/imageverify); "
    "offline, assertree refuses the policy and reports the row as Not run")

XFAIL: dict[str, str] = {
    "cel:test-image-validating-policy/sample-policy:ivpol-sample:-:Pod/default/bad-pod:fail":
        REGISTRY,
    "cel:test-image-validating-policy/sample-policy:ivpol-sample:-:Pod/default/good-pod:pass":
        REGISTRY,
}
