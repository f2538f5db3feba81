"""Rows of the admission tier that do not agree yet, each with its reason."""

XFAIL: dict[str, str] = {
    "admission:test-mutating-admission-policy/check-user-info:add-label-to-configmap:-:ConfigMap/default/matched-cm-1:pass":
        "not yet: no result compared for this row: test/cli/test-mutating-admission-policy/check-user-info/policy.yaml:1:1: apiVersion: unsupported document: apiVersion 'admissionregistration.k8s.io/v1alpha1', kind 'MutatingAdmissionPolicy' (assertree reads:",
    "admission:test-mutating-admission-policy/mutate-namespace:add-label-to-namespace:-:Namespace//test-namespace:pass":
        "not yet: no result compared for this row: test/cli/test-mutating-admission-policy/mutate-namespace/policy.yaml:1:1: apiVersion: unsupported document: apiVersion 'admissionregistration.k8s.io/v1alpha1', kind 'MutatingAdmissionPolicy' (assertree reads",
    "admission:test-mutating-admission-policy/specify-object-selector:add-label-to-configmap:-:ConfigMap/default/matched-cm:pass":
        "not yet: no result compared for this row: test/cli/test-mutating-admission-policy/specify-object-selector/policy.yaml:1:1: apiVersion: unsupported document: apiVersion 'admissionregistration.k8s.io/v1alpha1', kind 'MutatingAdmissionPolicy' (assertre",
    "admission:test-mutating-admission-policy/with-binding-exclude-resources:add-label-to-configmap:-:ConfigMap/default/matched-cm:pass":
        "not yet: no result compared for this row: test/cli/test-mutating-admission-policy/with-binding-exclude-resources/policy.yaml:1:1: apiVersion: unsupported document: apiVersion 'admissionregistration.k8s.io/v1alpha1', kind 'MutatingAdmissionPolicy' (a",
    "admission:test-mutating-admission-policy/with-binding-match-resources:add-label-to-configmap:-:ConfigMap/default/matched-cm:pass":
        "not yet: no result compared for this row: test/cli/test-mutating-admission-policy/with-binding-match-resources/policy.yaml:1:1: apiVersion: unsupported document: apiVersion 'admissionregistration.k8s.io/v1alpha1', kind 'MutatingAdmissionPolicy' (ass",
    "admission:test-mutating-admission-policy/with-binding-object-selector:add-label-to-configmap:-:ConfigMap/default/matched-cm:pass":
        "not yet: no result compared for this row: test/cli/test-mutating-admission-policy/with-binding-object-selector/policy.yaml:1:1: apiVersion: unsupported document: apiVersion 'admissionregistration.k8s.io/v1alpha1', kind 'MutatingAdmissionPolicy' (ass",
    "admission:test-mutating-admission-policy/with-json-patch:add-label-to-configmap:-:ConfigMap/default/game-demo:pass":
        "not yet: no result compared for this row: test/cli/test-mutating-admission-policy/with-json-patch/policy.yaml:1:1: apiVersion: unsupported document: apiVersion 'admissionregistration.k8s.io/v1alpha1', kind 'MutatingAdmissionPolicy' (assertree reads:",
    "admission:test-mutating-admission-policy/with-match-conditions:add-label-to-configmap:-:ConfigMap/default/matched-cm:pass":
        "not yet: no result compared for this row: test/cli/test-mutating-admission-policy/with-match-conditions/policy.yaml:1:1: apiVersion: unsupported document: apiVersion 'admissionregistration.k8s.io/v1alpha1', kind 'MutatingAdmissionPolicy' (assertree ",
    "admission:test-mutating-admission-policy/with-match-conditions:add-label-to-configmap:-:ConfigMap/default/unmatched-cm:skip":
        "not yet: no result compared for this row: test/cli/test-mutating-admission-policy/with-match-conditions/policy.yaml:1:1: apiVersion: unsupported document: apiVersion 'admissionregistration.k8s.io/v1alpha1', kind 'MutatingAdmissionPolicy' (assertree ",
    "admission:test-mutating-admission-policy/with-params:change-deployment-replicas:-:Deployment/default/test-deployment:pass":
        "not yet: test file not read: test/cli/test-mutating-admission-policy/with-params/kyverno-test.yaml:5:1: paramResources: not supported by assertree test yet",
    "admission:test-validating-admission-policy/check-user-info:check-user-info:-:Deployment/default/nginx-deployment:pass":
        "not yet: no result compared for this row: test/cli/test-validating-admission-policy/check-user-info/policy.yaml:1:1: apiVersion: unsupported document: apiVersion 'admissionregistration.k8s.io/v1', kind 'ValidatingAdmissionPolicy' (assertree reads: j",
    "admission:test-validating-admission-policy/match-namespaces:validate-namespace-name:-:Namespace//invalid-namespace:fail":
        "not yet: no result compared for this row: test/cli/test-validating-admission-policy/match-namespaces/policy.yaml:1:1: apiVersion: unsupported document: apiVersion 'admissionregistration.k8s.io/v1', kind 'ValidatingAdmissionPolicy' (assertree reads: ",
    "admission:test-validating-admission-policy/match-namespaces:validate-namespace-name:-:Namespace//valid-namespace:pass":
        "not yet: no result compared for this row: test/cli/test-validating-admission-policy/match-namespaces/policy.yaml:1:1: apiVersion: unsupported document: apiVersion 'admissionregistration.k8s.io/v1', kind 'ValidatingAdmissionPolicy' (assertree reads: ",
    "admission:test-validating-admission-policy/with-bindings-1:check-deployment-replicas:-:Deployment/default/nginx-deployment-1:fail":
        "not yet: no result compared for this row: test/cli/test-validating-admission-policy/with-bindings-1/policy.yaml:1:1: apiVersion: unsupported document: apiVersion 'admissionregistration.k8s.io/v1', kind 'ValidatingAdmissionPolicy' (assertree reads: j",
    "admission:test-validating-admission-policy/with-bindings-1:check-deployment-replicas:-:Deployment/default/nginx-deployment-2:pass":
        "not yet: no result compared for this row: test/cli/test-validating-admission-policy/with-bindings-1/policy.yaml:1:1: apiVersion: unsupported document: apiVersion 'admissionregistration.k8s.io/v1', kind 'ValidatingAdmissionPolicy' (assertree reads: j",
    "admission:test-validating-admission-policy/with-bindings-1:check-deployment-replicas:-:Deployment/default/busybox-deployment:skip":
        "not yet: no result compared for this row: test/cli/test-validating-admission-policy/with-bindings-1/policy.yaml:1:1: apiVersion: unsupported document: apiVersion 'admissionregistration.k8s.io/v1', kind 'ValidatingAdmissionPolicy' (assertree reads: j",
    "admission:test-validating-admission-policy/with-bindings-2:check-deployment-replicas:-:Deployment/default/nginx-deployment:fail":
        "not yet: no result compared for this row: test/cli/test-validating-admission-policy/with-bindings-2/policy.yaml:1:1: apiVersion: unsupported document: apiVersion 'admissionregistration.k8s.io/v1', kind 'ValidatingAdmissionPolicy' (assertree reads: j",
    "admission:test-validating-admission-policy/with-bindings-2:check-deployment-replicas:-:Deployment/default/busybox-deployment:skip":
        "not yet: no result compared for this row: test/cli/test-validating-admission-policy/with-bindings-2/policy.yaml:1:1: apiVersion: unsupported document: apiVersion 'admissionregistration.k8s.io/v1', kind 'ValidatingAdmissionPolicy' (assertree reads: j",
    "admission:test-validating-admission-policy/with-bindings-3:check-deployment-replicas:-:Deployment/staging/staging-deployment-1:fail":
        "not yet: no result compared for this row: test/cli/test-validating-admission-policy/with-bindings-3/policy.yaml:1:1: apiVersion: unsupported document: apiVersion 'admissionregistration.k8s.io/v1', kind 'ValidatingAdmissionPolicy' (assertree reads: j",
    "admission:test-validating-admission-policy/with-bindings-3:check-deployment-replicas:-:Deployment/production/production-deployment-1:fail":
        "not yet: no result compared for this row: test/cli/test-validating-admission-policy/with-bindings-3/policy.yaml:1:1: apiVersion: unsupported document: apiVersion 'admissionregistration.k8s.io/v1', kind 'ValidatingAdmissionPolicy' (assertree reads: j",
    "admission:test-validating-admission-policy/with-bindings-3:check-deployment-replicas:-:Deployment/staging/staging-deployment-2:pass":
        "not yet: no result compared for this row: test/cli/test-validating-admission-policy/with-bindings-3/policy.yaml:1:1: apiVersion: unsupported document: apiVersion 'admissionregistration.k8s.io/v1', kind 'ValidatingAdmissionPolicy' (assertree reads: j",
    "admission:test-validating-admission-policy/with-bindings-3:check-deployment-replicas:-:Deployment/production/production-deployment-2:pass":
        "not yet: no result compared for this row: test/cli/test-validating-admission-policy/with-bindings-3/policy.yaml:1:1: apiVersion: unsupported document: apiVersion 'admissionregistration.k8s.io/v1', kind 'ValidatingAdmissionPolicy' (assertree reads: j",
    "admission:test-validating-admission-policy/with-bindings-3:check-deployment-replicas:-:Deployment/testing/testing-deployment-1:skip":
        "not yet: no result compared for this row: test/cli/test-validating-admission-policy/with-bindings-3/policy.yaml:1:1: apiVersion: unsupported document: apiVersion 'admissionregistration.k8s.io/v1', kind 'ValidatingAdmissionPolicy' (assertree reads: j",
    "admission:test-validating-admission-policy/with-bindings-3:check-deployment-replicas:-:Deployment/testing/testing-deployment-2:skip":
        "not yet: no result compared for this row: test/cli/test-validating-admission-policy/with-bindings-3/policy.yaml:1:1: apiVersion: unsupported document: apiVersion 'admissionregistration.k8s.io/v1', kind 'ValidatingAdmissionPolicy' (assertree reads: j",
    "admission:test-validating-admission-policy/with-match-conditions:disallow-host-path:-:Pod/default/bad-pod:fail":
        "not yet: no result compared for this row: test/cli/test-validating-admission-policy/with-match-conditions/disallow-host-path.yaml:1:1: apiVersion: unsupported document: apiVersion 'admissionregistration.k8s.io/v1', kind 'ValidatingAdmissionPolicy' (",
    "admission:test-validating-admission-policy/with-match-conditions:disallow-host-path:-:Pod/default/good-pod:pass":
        "not yet: no result compared for this row: test/cli/test-validating-admission-policy/with-match-conditions/disallow-host-path.yaml:1:1: apiVersion: unsupported document: apiVersion 'admissionregistration.k8s.io/v1', kind 'ValidatingAdmissionPolicy' (",
    "admission:test-validating-admission-policy/with-match-conditions:disallow-host-path:-:Pod/default/skipped-pod:skip":
        "not yet: no result compared for this row: test/cli/test-validating-admission-policy/with-match-conditions/disallow-host-path.yaml:1:1: apiVersion: unsupported document: apiVersion 'admissionregistration.k8s.io/v1', kind 'ValidatingAdmissionPolicy' (",
    "admission:test-validating-admission-policy/with-params:check-deployments-replicas:-:Deployment/default/nginx-deployment2:fail":
        "not yet: test file not read: test/cli/test-validating-admission-policy/with-params/kyverno-test.yaml:5:1: paramResources: not supported by assertree test yet",
    "admission:test-validating-admission-policy/with-params:check-deployments-replicas:-:Deployment/default/nginx-deployment1:pass":
        "not yet: test file not read: test/cli/test-validating-admission-policy/with-params/kyverno-test.yaml:5:1: paramResources: not supported by assertree test yet",
}
