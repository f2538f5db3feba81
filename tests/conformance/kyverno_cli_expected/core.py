"""Rows of the core tier that do not agree yet, each with its reason."""

XFAIL: dict[str, str] = {
    "core:test-generate/add-network-policy:add-networkpolicy:default-deny:Namespace//hello-world-namespace:pass":
        "not yet: test file not read: test/cli/test-generate/add-network-policy/kyverno-test.yaml:10:3: results[0].generatedResource: not supported by assertree test yet",
    "core:test-generate/custom-resource:sync-pull-image-secrets:sync-image-pull-secret:Namespace//test-ns:pass":
        "not yet: test file not read: test/cli/test-generate/custom-resource/kyverno-test.yaml:11:3: results[0].generatedResource: not supported by assertree test yet",
    "core:test-generate/sync-multiple-resources:sync-controller-data:sync-controller-configmap:Deployment/kube-system/kubernetes-cluster-controller:pass":
        "not yet: test file not read: test/cli/test-generate/sync-multiple-resources/kyverno-test.yaml:11:3: results[0].generatedResource: not supported by assertree test yet",
    "core:test-generate/sync-multiple-resources:sync-controller-data:sync-controller-secret:Deployment/kube-system/kubernetes-cluster-controller:pass":
        "not yet: test file not read: test/cli/test-generate/sync-multiple-resources/kyverno-test.yaml:11:3: results[0].generatedResource: not supported by assertree test yet",
    "core:test-mutate/mutate-existing-fail:mutate-existing-secret:mutate-secret-on-configmap-create:/staging/secret-1:pass":
        "not yet: test file not read: test/cli/test-mutate/mutate-existing-fail/kyverno-test.yaml:17:1: targetResources: not supported by assertree test yet",
    "core:test-mutate/mutate-existing-wildcard-panic:warn-context-ns-label:warn-on-invalid-or-missing-context-ns-label:Namespace//default:fail":
        "not yet: no result compared for this row: test/cli/test-mutate/mutate-existing-wildcard-panic/policy.yaml:19:9: spec.rules[0].mutate.targets: mutate.targets (mutating existing resources) is not supported",
    "core:test-mutate/same-name-mutate-existing:mutate-existing-secret:mutate-secret-on-configmap-create:/staging/secret-1:pass":
        "not yet: test file not read: test/cli/test-mutate/same-name-mutate-existing/kyverno-test.yaml:18:1: targetResources: not supported by assertree test yet",
    "core:test-mutate/same-name-mutate-existing:mutate-existing-secret:mutate-secret-on-configmap-create:/prod/secret-1:pass":
        "not yet: test file not read: test/cli/test-mutate/same-name-mutate-existing/kyverno-test.yaml:18:1: targetResources: not supported by assertree test yet",
    "core:test/images/digest:require-image-digest:check-digest:Pod/test/no-digest:fail":
        "not yet: no result compared for this row: test/cli/test/images/digest/policies.yaml:18:5: spec.rules[0].verifyImages: verifyImages rules need image registries and are not supported",
    "core:test/images/digest:require-image-digest:check-digest:Pod/test/with-digest:pass":
        "not yet: no result compared for this row: test/cli/test/images/digest/policies.yaml:18:5: spec.rules[0].verifyImages: verifyImages rules need image registries and are not supported",
    "core:test/images/secure-images:secure-images:enforce-signatures:Pod/default/tomcat:fail":
        "not yet: no result compared for this row: test/cli/test/images/secure-images/policies.yaml:19:5: spec.rules[0].verifyImages: verifyImages rules need image registries and are not supported",
    "core:test/images/signatures:verify-signature:check-static-key:Pod/default/unsigned:fail":
        "not yet: no result compared for this row: test/cli/test/images/signatures/policies.yaml:18:5: spec.rules[0].verifyImages: verifyImages rules need image registries and are not supported",
    "core:test/images/signatures:verify-signature:check-static-key:Pod/default/signed:pass":
        "not yet: no result compared for this row: test/cli/test/images/signatures/policies.yaml:18:5: spec.rules[0].verifyImages: verifyImages rules need image registries and are not supported",
    "core:test/images/verify-signature:check-data-volume-image:verify-signature:DataVolume/default/unsigned-registry-image-datavolume:fail":
        "not yet: no result compared for this row: test/cli/test/images/verify-signature/policies.yaml:18:5: spec.rules[0].verifyImages: verifyImages rules need image registries and are not supported",
    "core:test/images/verify-signature:check-data-volume-image:verify-signature:DataVolume/default/signed-registry-image-datavolume:pass":
        "not yet: no result compared for this row: test/cli/test/images/verify-signature/policies.yaml:18:5: spec.rules[0].verifyImages: verifyImages rules need image registries and are not supported",
    "core:test/images/verify-signature:check-image:verify-signature:Pod/default/unsigned:fail":
        "not yet: no result compared for this row: test/cli/test/images/verify-signature/policies.yaml:18:5: spec.rules[0].verifyImages: verifyImages rules need image registries and are not supported",
    "core:test/images/verify-signature:check-image:verify-signature:Pod/default/signed:pass":
        "not yet: no result compared for this row: test/cli/test/images/verify-signature/policies.yaml:18:5: spec.rules[0].verifyImages: verifyImages rules need image registries and are not supported",
    "core:test/manifests/verify-signature:validate-yaml:validate-yaml:Service/default/test-service:fail":
        "not yet: no result compared for this row: test/cli/test/manifests/verify-signature/policies.yaml:20:7: spec.rules[0].validate.manifests: validate.manifests (signed manifests) is not supported",
    "core:test/manifests/verify-signature:validate-yaml:validate-yaml:Service/default/test-service2:pass":
        "not yet: no result compared for this row: test/cli/test/manifests/verify-signature/policies.yaml:20:7: spec.rules[0].validate.manifests: validate.manifests (signed manifests) is not supported",
    "core:test/manifests/verify-signature:validate-yaml:validate-yaml-multi-sig:Service/default/test-service3:pass":
        "not yet: no result compared for this row: test/cli/test/manifests/verify-signature/policies.yaml:20:7: spec.rules[0].validate.manifests: validate.manifests (signed manifests) is not supported",
    "core:test/secret:add-maintainer:add-maintainer:Secret/default/secrete-fail-example:fail":
        "not yet: no result compared for this row",
}
