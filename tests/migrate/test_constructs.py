"""Each ClusterPolicy construct the migration converts: proven (`verified`) on resources that tell its verdicts
apart, and the converted policy giving those verdicts when assertree runs it."""

from __future__ import annotations

import pytest
from migrating import migrated_fixture, pod  # noqa: F401  (the migrated fixture)

NGINX = {"name": "app", "image": "nginx:1.25"}
LATEST = {"name": "app", "image": "nginx:latest"}

# (case, rules, a resource the converted policy must pass, one it must fail)
VALIDATE = [
    ("pattern wildcard and negation", """
- name: no-latest
  match: {any: [{resources: {kinds: [Pod]}}]}
  validate:
    message: no latest tag
    pattern:
      spec:
        containers:
          - image: "!*:latest"
""", pod(containers=[NGINX]), pod(containers=[LATEST])),
    ("pattern quantity operator", """
- name: memory
  match: {any: [{resources: {kinds: [Pod]}}]}
  validate:
    pattern:
      spec:
        containers:
          - resources:
              limits:
                memory: "<=1Gi"
""", pod(containers=[{**NGINX, "resources": {"limits": {"memory": "512Mi"}}}]),
        pod(containers=[{**NGINX, "resources": {"limits": {"memory": "2Gi"}}}])),
    ("pattern alternatives and duration", """
- name: grace
  match: {any: [{resources: {kinds: [Pod]}}]}
  validate:
    pattern:
      spec:
        =(activeDeadlineSeconds): "<=60 | 3600"
""", pod(activeDeadlineSeconds=3600), pod(activeDeadlineSeconds=120)),
    ("conditional and equality anchors", """
- name: host-path
  match: {any: [{resources: {kinds: [Pod]}}]}
  validate:
    pattern:
      spec:
        =(volumes):
          - (name): "host-*"
            hostPath:
              path: "/data*"
""", pod(volumes=[{"name": "host-1", "hostPath": {"path": "/data/x"}}, {"name": "v", "hostPath": {"path": "/etc"}}]),
        pod(volumes=[{"name": "host-1", "hostPath": {"path": "/etc"}}])),
    ("negation anchor", """
- name: no-host-network
  match: {any: [{resources: {kinds: [Pod]}}]}
  validate:
    pattern:
      spec:
        X(hostNetwork): "null"
""", pod(), pod(hostNetwork=True)),
    ("existence anchor", """
- name: some-port
  match: {any: [{resources: {kinds: [Pod]}}]}
  validate:
    pattern:
      spec:
        ^(containers):
          - ports:
              - containerPort: ">0"
""", pod(containers=[{**NGINX, "ports": [{"containerPort": 80}]}]), pod()),
    ("anyPattern", """
- name: run-as-non-root
  match: {any: [{resources: {kinds: [Pod]}}]}
  validate:
    anyPattern:
      - spec: {securityContext: {runAsNonRoot: true}}
      - spec: {containers: [{securityContext: {runAsNonRoot: true}}]}
""", pod(securityContext={"runAsNonRoot": True}), pod()),
    ("deny conditions and JMESPath functions", """
- name: short-names
  match: {any: [{resources: {kinds: [Pod]}}]}
  validate:
    message: "{{ request.object.metadata.name }} is too long"
    deny:
      conditions:
        any:
          - key: "{{ length(request.object.metadata.name) }}"
            operator: GreaterThan
            value: 5
          - key: "{{ to_upper(request.object.metadata.name) }}"
            operator: Equals
            value: FORBIDDEN
""", pod("short"), pod("much-too-long")),
    ("preconditions and set operators", """
- name: registries
  match: {any: [{resources: {kinds: [Pod]}}]}
  preconditions:
    all:
      - key: "{{ request.operation || 'BACKGROUND' }}"
        operator: AnyIn
        value: [CREATE, UPDATE]
  validate:
    deny:
      conditions:
        all:
          - key: "{{ request.object.spec.containers[].image }}"
            operator: AnyNotIn
            value: ["nginx:*", "ghcr.io/*"]
""", pod(containers=[NGINX]), pod(containers=[{"name": "app", "image": "quay.io/app:1"}])),
    ("foreach with element variables", """
- name: pull-policy
  match: {any: [{resources: {kinds: [Pod]}}]}
  validate:
    foreach:
      - list: request.object.spec.containers
        preconditions:
          all:
            - key: "{{ element.image }}"
              operator: Equals
              value: "*:latest"
        deny:
          conditions:
            any:
              - key: "{{ element.imagePullPolicy || '' }}"
                operator: NotEquals
                value: Always
""", pod(containers=[{**LATEST, "imagePullPolicy": "Always"}]), pod(containers=[LATEST])),
    ("match and exclude", """
- name: labelled
  match:
    any:
      - resources:
          kinds: [Pod]
          namespaces: [prod-*]
          selector: {matchLabels: {tier: web}}
  exclude:
    any:
      - resources: {names: [allowed-*]}
  validate:
    pattern:
      metadata:
        labels:
          owner: "?*"
""", pod("allowed-1", namespace="prod-a", labels={"tier": "web"}),
        pod("web-1", namespace="prod-a", labels={"tier": "web"})),
    ("images variable", """
- name: registry
  match: {any: [{resources: {kinds: [Pod]}}]}
  validate:
    deny:
      conditions:
        any:
          - key: "{{ images.containers.*.registry }}"
            operator: AnyNotIn
            value: [docker.io]
""", pod(containers=[NGINX]), pod(containers=[{"name": "app", "image": "ghcr.io/app:1"}])),
    ("JMESPath merge() compared key by key and read by key", """
- name: merged-labels
  match: {any: [{resources: {kinds: [Pod]}}]}
  validate:
    deny:
      conditions:
        any:
          - key: "{{ request.object.metadata.labels || `{}` | merge(@, {tier: 'web'}) }}"
            operator: Equals
            value: {app: shop, tier: web}
          - key: "{{ merge(request.object.metadata.labels || `{}`, `{\\"tier\\": \\"db\\"}`).owner || '' }}"
            operator: Equals
            value: nobody
""", pod(labels={"app": "shop", "tier": "db", "x": "y"}), pod(labels={"app": "shop", "tier": "db"})),
    ("a variable written into a field path", """
- name: listed-names
  match: {any: [{resources: {kinds: [Pod]}}]}
  context:
    - name: listed
      variable:
        value: {prod: blocked}
  validate:
    deny:
      conditions:
        any:
          - key: "{{ listed.{{ request.object.metadata.name }} || '' }}"
            operator: Equals
            value: blocked
""", pod("other"), pod("prod")),
    ("validate.cel", """
- name: replicas
  match: {any: [{resources: {kinds: [Deployment]}}]}
  validate:
    cel:
      expressions:
        - expression: "object.spec.replicas <= 5"
          message: at most 5 replicas
""", {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "namespace": "default"},
      "spec": {"replicas": 2}},
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "namespace": "default"},
         "spec": {"replicas": 9}}),
]


@pytest.mark.parametrize(("rules", "good", "bad"), [case[1:] for case in VALIDATE], ids=[case[0] for case in VALIDATE])
def test_a_validate_construct_converts_and_is_verified(migrated, rules: str, good: dict, bad: dict) -> None:
    result = migrated(rules, [good, bad], spec="validationFailureAction: Enforce")
    assert result.statuses == ["verified"], result.reasons
    assert "ValidatingPolicy" in result.kinds()
    assert "fail" not in result.run(good)[0]
    assert "fail" in result.run(bad)[0]


def test_autogen_gives_controllers_and_a_replication_controller_companion(migrated) -> None:
    result = migrated(VALIDATE[0][1], [VALIDATE[0][2], VALIDATE[0][3]])
    documents = result.documents()
    assert [document["metadata"]["name"] for document in documents] == ["sample", "sample-replicationcontrollers"]
    assert "autogen" not in documents[0]["spec"]  # Kyverno's default: every controller autogen covers
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "namespace": "default"},
                  "spec": {"template": {"spec": {"containers": [LATEST]}}}}
    assert "fail" in result.run(deployment)[0]


@pytest.mark.parametrize(("action", "actions"), [("Audit", ["Audit"]), ("Enforce", ["Deny"])])
def test_the_failure_action_becomes_validation_actions(migrated, action: str, actions: list[str]) -> None:
    result = migrated(VALIDATE[0][1], [VALIDATE[0][2]], spec=f"validationFailureAction: {action}")
    assert result.documents()[0]["spec"]["validationActions"] == actions


def test_messages_with_variables_become_message_expressions(migrated) -> None:
    result = migrated(VALIDATE[7][1], [VALIDATE[7][2], VALIDATE[7][3]])
    validation = result.documents()[0]["spec"]["validations"][0]
    # a message never fails the check: a missing name is written as nothing
    assert "messageExpression" in validation and "object.metadata.?name" in validation["messageExpression"]


MUTATE = [
    ("strategic merge with add-if-not-present", """
- name: defaults
  match: {any: [{resources: {kinds: [Pod]}}]}
  mutate:
    patchStrategicMerge:
      metadata:
        labels:
          +(team): platform
      spec:
        containers:
          - (name): "*"
            +(imagePullPolicy): IfNotPresent
""", pod(), {"team": "platform"}),
    ("JSON patch", """
- name: add-label
  match: {any: [{resources: {kinds: [Pod]}}]}
  mutate:
    patchesJson6902: |-
      - op: add
        path: /metadata/labels
        value: {team: platform}
""", pod(), {"team": "platform"}),
]


@pytest.mark.parametrize(("rules", "resource", "labels"), [case[1:] for case in MUTATE],
                         ids=[case[0] for case in MUTATE])
def test_a_mutate_construct_converts_to_a_mutating_policy(migrated, rules: str, resource: dict, labels: dict) -> None:
    result = migrated(rules, [resource, pod("labelled", labels={"team": "other"})])
    assert result.statuses == ["verified"], result.reasons
    assert result.kinds()[0] == "MutatingPolicy"
    statuses, patched = result.run(resource)
    assert statuses == {"pass"}
    assert patched["metadata"]["labels"] == labels


def test_mutate_rules_of_one_policy_become_one_mutating_policy_applied_in_turn(migrated) -> None:
    # one MutatingPolicy makes the resource both rules make in turn, but it has one status: where only one rule
    # changes the resource (a Pod already labelled step: one), Kyverno gives the other `skip` and the merged
    # policy `pass`, so each rule is reported as differing, with such a resource
    result = migrated("""
- name: first
  match: {any: [{resources: {kinds: [Pod]}}]}
  mutate:
    patchStrategicMerge:
      metadata: {labels: {step: one}}
- name: second
  match: {any: [{resources: {kinds: [Pod]}}]}
  mutate:
    patchStrategicMerge:
      metadata:
        labels:
          (step): one
          done: "yes"
""", [pod()])
    assert result.statuses == ["differs", "differs"], result.reasons
    assert all("its own status is not the merged policy's" in reason and "source skip, converted pass" in reason
               for reason in result.reasons)
    assert [document["metadata"]["name"] for document in result.documents()] == [
        "sample", "sample-replicationcontrollers"]
    assert result.run(pod())[1]["metadata"]["labels"] == {"step": "one", "done": "yes"}


NOT_CONVERTED = [
    ("an API call", """
- name: count
  match: {any: [{resources: {kinds: [Pod]}}]}
  context:
    - name: pods
      apiCall: {urlPath: /api/v1/pods, jmesPath: "items | length(@)"}
  validate:
    deny: {conditions: {any: [{key: "{{ pods }}", operator: GreaterThan, value: 10}]}}
""", "spec.rules[0].context[0].apiCall: context entry 'pods' calls the Kubernetes API"),
    ("cluster roles", """
- name: admins-only
  match: {any: [{resources: {kinds: [Pod]}}]}
  exclude: {any: [{clusterRoles: [cluster-admin]}]}
  validate:
    deny: {}
""", "spec.rules[0].exclude.any[0].clusterRoles: clusterRoles: an admission request carries no roles"),
    ("a generate rule", """
- name: quota
  match: {any: [{resources: {kinds: [Namespace]}}]}
  generate:
    kind: ResourceQuota
    apiVersion: v1
    name: quota
    namespace: "{{ request.object.metadata.name }}"
    data: {spec: {hard: {pods: "10"}}}
""", "spec.rules[0].generate: generate rules convert to a GeneratingPolicy"),
    ("merge() of two maps known only at run time", """
- name: merged
  match: {any: [{resources: {kinds: [Pod]}}]}
  validate:
    deny:
      conditions:
        any:
          - key: "{{ merge(request.object.metadata.labels, request.object.metadata.annotations) }}"
            operator: Equals
            value: {}
""", ("spec.rules[0].validate.deny.conditions.any[0].key: {{ merge(request.object.metadata.labels, "
         "request.object.metadata.annotations) }}: merge() of a second map whose keys are only known at run time")),
]


@pytest.mark.parametrize(("rules", "reason"), [case[1:] for case in NOT_CONVERTED],
                         ids=[case[0] for case in NOT_CONVERTED])
def test_what_cannot_be_converted_is_said_with_its_field(migrated, rules: str, reason: str) -> None:
    result = migrated(rules, [pod()])
    assert result.statuses == ["not-converted"]
    assert result.reasons[0].startswith(reason), result.reasons[0]
    remainder = result.documents()
    assert [document["kind"] for document in remainder] == ["ClusterPolicy"]  # kept, not dropped


def test_a_policy_keeps_its_namespace_as_a_namespaced_validating_policy(migrated) -> None:
    result = migrated(VALIDATE[0][1], [VALIDATE[0][2], VALIDATE[0][3]], kind="Policy",
                      metadata="  namespace: team-a\n")
    document = result.documents()[0]
    assert (document["kind"], document["metadata"]["namespace"]) == ("NamespacedValidatingPolicy", "team-a")


def test_to_vap_writes_an_admission_policy_and_its_binding(migrated) -> None:
    rules = """
- name: replicas
  match: {any: [{resources: {kinds: [Deployment]}}]}
  validate:
    pattern:
      spec:
        replicas: "<=5"
"""
    good = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "namespace": "default"},
            "spec": {"replicas": 2}}
    bad = {**good, "spec": {"replicas": 7}}
    result = migrated(rules, [good, bad], spec="validationFailureAction: Enforce", to="vap")
    assert result.statuses == ["verified"], result.reasons
    assert result.kinds() == ["ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"]
    assert result.documents()[1]["spec"] == {"policyName": "sample", "validationActions": ["Deny"]}
    assert "fail" in result.run(bad)[0] and "fail" not in result.run(good)[0]


def test_a_foreach_merge_of_each_container_list_item_under_conditions_converts(migrated) -> None:
    # nirmata's pod-security remediations: each element (a container of any of the three lists) patches its own
    # item of its own list, under a condition on that item's fields; the Pod-level part once, when some element is
    rules = """
- name: run-as-non-root-user
  match: {any: [{resources: {kinds: [Deployment]}}]}
  mutate:
    foreach:
      - list: "request.object.spec.template.spec.[containers, initContainers, ephemeralContainers][]"
        patchStrategicMerge:
          spec:
            template:
              spec:
                securityContext:
                  runAsUser: 1000
                containers:
                  - (name): "{{ element.name }}"
                    securityContext:
                      (runAsUser): 0
                      runAsUser: 1000
                initContainers:
                  - (name): "{{ element.name }}"
                    securityContext:
                      (runAsUser): 0
                      runAsUser: 1000
"""

    def deployment(name: str, **spec: list) -> dict:
        return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": "default"},
                "spec": {"selector": {"matchLabels": {"app": "x"}},
                         "template": {"metadata": {"labels": {"app": "x"}}, "spec": spec}}}

    root = {"name": "root", "image": "nginx", "securityContext": {"runAsUser": 0}}
    other = {"name": "other", "image": "nginx", "securityContext": {"runAsUser": 5}}
    init = {"name": "init", "image": "busybox", "securityContext": {"runAsUser": 0}}
    mixed = deployment("mixed", containers=[root, other, {"name": "plain", "image": "nginx"}], initContainers=[init])
    result = migrated(rules, [mixed, deployment("none", containers=[])])
    assert result.statuses == ["verified"], result.reasons
    assert result.kinds() == ["MutatingPolicy"]
    statuses, patched = result.run(mixed)
    assert statuses == {"pass"}
    spec = patched["spec"]["template"]["spec"]
    assert spec["securityContext"] == {"runAsUser": 1000}
    assert [container.get("securityContext") for container in spec["containers"]] == [
        {"runAsUser": 1000}, {"runAsUser": 5}, None]
    assert spec["initContainers"][0]["securityContext"] == {"runAsUser": 1000}
    assert result.run(deployment("none", containers=[]))[0] == {"skip"}


def test_without_resources_the_proof_makes_up_objects_the_api_server_admits(migrated) -> None:
    # an Ingress needs a backend or rules: the made-up one has a spec, so reading spec.rules through a projection
    # is null on both sides (a spec-less Ingress, which no cluster admits, would make the CEL read fail)
    result = migrated("""
- name: paths
  match: {any: [{resources: {kinds: [networking.k8s.io/v1/Ingress]}}]}
  validate:
    deny:
      conditions:
        any:
          - key: "{{ request.object.spec.rules[].http.paths[].path }}"
            operator: AnyIn
            value: [/etc]
""")
    assert result.statuses == ["verified"], result.reasons


def test_an_excluded_subject_matches_no_request_without_a_user(migrated) -> None:
    # offline, without a user info file, a request has no user name: Kyverno excludes nothing by subject, and the
    # converted exclusion reads the missing name as '' (it failed on it: an error where Kyverno denies)
    result = migrated("""
- name: no-task-runs
  match: {any: [{resources: {kinds: [Pod]}}]}
  exclude:
    any:
      - subjects:
          - {kind: User, name: "system:serviceaccount:ci:controller"}
  validate:
    message: not allowed
    deny: {}
""", [pod()], spec="validationFailureAction: Enforce")
    assert result.statuses == ["verified"], result.reasons
    assert result.run(pod())[0] == {"fail"}
