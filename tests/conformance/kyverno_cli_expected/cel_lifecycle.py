"""Rows of the cel_lifecycle tier that do not agree yet, each with its reason."""

CLUSTER_RESOURCES = (
    "needs clusterResources (issue 23): the policy reads resource.Get/List from the test's clusterResources "
    "files (cmd/cli/kubectl-kyverno/commands/test/test.go loads them into the fake cluster the CEL context "
    "provider reads), a test field assertree test does not read yet")
REGISTRY = (
    "needs the image registry: the policy calls verifyImageSignatures, verifyAttestationSignatures and "
    "extractPayload for ghcr.io/kyverno/test-verify-image, which Kyverno's ImageValidatingPolicy evaluator "
    "fetches from ghcr.io (pkg/image/verification/evaluator/policy.go, ictx.AddImages; pkg/cel/libs/imageverify); "
    "offline, assertree refuses the policy and reports the row as Not run")

XFAIL: dict[str, str] = {
    "cel:test-context-apicall-dpol:delete-spot-deployments:-:Deployment/test-namespace/deployment-with-non-spot-computeclass:fail":
        CLUSTER_RESOURCES,
    "cel:test-context-apicall-dpol:delete-spot-deployments:-:Deployment/test-namespace/deployment-with-spot-computeclass:pass":
        CLUSTER_RESOURCES,
    "cel:test-context-configmap-dpol:delete-via-env:-:Deployment/test-namespace/test-deploy:pass":
        CLUSTER_RESOURCES,
    "cel:test-context-configmap-gpol:generate-env-config:-:Deployment/test-namespace/test-deploy:pass":
        CLUSTER_RESOURCES,
    "cel:test-generating-policy/data/with-exceptions:generate-cm:-:Namespace//testing:skip":
        "needs the policies.kyverno.io PolicyException (issue 23): exception.yaml exempts Namespace testing from "
        "generate-cm through its matchConditions (pkg/cel/policies/gpol/compiler/policy.go, Evaluate: a matching "
        "exception gives a skip); assertree test does not read that exception kind yet, so the trigger generates "
        "and the row is pass",
    "cel:test-image-validating-policy/sample-policy:ivpol-sample:-:Pod/default/bad-pod:fail":
        REGISTRY,
    "cel:test-image-validating-policy/sample-policy:ivpol-sample:-:Pod/default/good-pod:pass":
        REGISTRY,
}
