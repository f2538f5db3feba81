"""The mutate examples of Kyverno's documentation (seeds/kyverno-mutate.md) that run offline, each
through the whole language: the ClusterPolicy is compiled by `assertree.compile_document` and run
by `assertree.scan` (mutate, then validate) or `assertree.apply.apply_mutations`; the assertions
are on the patched resource. (mutate.targets, the "mutate existing" examples, need a cluster.)"""

from __future__ import annotations

import copy

import pytest
import yaml

import assertree
from assertree.apply import apply_mutations
from assertree.languages import load
from assertree.results import ERROR, PASS, SKIP


@pytest.fixture(autouse=True)
def kyverno_documents_load(monkeypatch: pytest.MonkeyPatch) -> None:
    """Route ``kyverno.io`` documents to the Kyverno language while `languages.load` does not yet:
    a no-op once it does."""
    monkeypatch.setitem(load.LANGUAGES, "kyverno.io",
                        load.LANGUAGES.get("kyverno.io", "assertree.languages.kyverno.language"))


def policy(text: str):
    return assertree.compile_document(yaml.safe_load(text))


def mutated(resource: dict, *policies) -> tuple[dict, list]:
    """The resource after the policies' mutate rules, through the scan, and the mutate results."""
    result = assertree.scan([copy.deepcopy(resource)], list(policies))
    return result.resources[0].value, [r for r in result.results if r.patched is not None]


def pod(*containers: dict, name: str = "static-web", labels: dict | None = None, **spec) -> dict:
    metadata = {"name": name, "namespace": "default", **({"labels": labels} if labels is not None else {})}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": {"containers": list(containers), **spec}}


def config_map(data: dict | None) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "config-game", "namespace": "default"},
            **({"data": data} if data is not None else {})}


# ---- the opening example: a conditional anchor picks the containers to patch ---------------------

SET_IMAGE_PULL_POLICY = """
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: set-image-pull-policy
spec:
  rules:
    - name: set-image-pull-policy
      match:
        any:
        - resources:
            kinds:
            - Pod
      mutate:
        patchStrategicMerge:
          spec:
            containers:
              # match images which end with :latest
              - (image): "*:latest"
                # set the imagePullPolicy to "IfNotPresent"
                imagePullPolicy: "IfNotPresent"
"""


def test_image_pull_policy_is_set_only_on_latest_images() -> None:
    resource, results = mutated(pod({"name": "web", "image": "nginx:latest"}, {"name": "side", "image": "busybox:1"}),
                                policy(SET_IMAGE_PULL_POLICY))
    assert [r.status for r in results] == [PASS]
    by_name = {c["name"]: c for c in resource["spec"]["containers"]}
    assert by_name["web"]["imagePullPolicy"] == "IfNotPresent"
    assert "imagePullPolicy" not in by_name["side"]


def test_image_pull_policy_rule_skips_pods_without_latest_images() -> None:
    original = pod({"name": "side", "image": "busybox:1"})
    resource, results = mutated(original, policy(SET_IMAGE_PULL_POLICY))
    assert [r.status for r in results] == [SKIP]
    assert resource == original


# ---- RFC 6902 JSON patches ---------------------------------------------------------------------

PATCH_CM = """
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: policy-patch-cm
spec:
  rules:
    - name: pCM1
      match:
        any:
        - resources:
            names:
              - config-game
            kinds:
              - ConfigMap
      mutate:
        patchesJson6902: |-
          - path: "/data/ship.properties"
            op: add
            value: |
              type=starship
              owner=utany.corp
          - path: "/data/newKey1"
            op: add
            value: newValue1
"""


def test_json_patch_adds_configmap_entries() -> None:
    resource, results = mutated(config_map({"ship.properties": "old", "kept": "1"}), policy(PATCH_CM))
    assert [r.status for r in results] == [PASS]
    assert resource["data"] == {"ship.properties": "type=starship\nowner=utany.corp\n", "kept": "1",
                                "newKey1": "newValue1"}


def test_json_patch_rule_selects_by_name() -> None:
    other = config_map({"a": "b"})
    other["metadata"]["name"] = "other"
    resource, results = mutated(other, policy(PATCH_CM))
    assert results == [] and resource == other


ADD_CM = """
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: policy-add-cm
spec:
  rules:
    - name: pCM1
      match:
        any:
        - resources:
            names:
              - config-game
            kinds:
            - ConfigMap
      mutate:
        patchesJson6902: |-
          - path: "/data"
            op: add
            value: {"ship.properties": "{\\"type\\": \\"starship\\", \\"owner\\": \\"utany.corp\\"}"}
"""


def test_json_patch_adds_data_to_an_empty_configmap() -> None:
    resource, _ = mutated(config_map(None), policy(ADD_CM))
    assert resource["data"] == {"ship.properties": '{"type": "starship", "owner": "utany.corp"}'}


REMOVE_LABEL = """
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: policy-remove-label
spec:
  rules:
    - name: "Remove unwanted label"
      match:
        any:
        - resources:
            kinds:
            - Secret
      mutate:
        patchesJson6902: |-
          - path: "/metadata/labels/purpose"
            op: remove
"""


def test_json_patch_removes_a_label() -> None:
    secret = {"apiVersion": "v1", "kind": "Secret",
              "metadata": {"name": "s", "namespace": "default", "labels": {"purpose": "x", "app": "y"}}}
    resource, results = mutated(secret, policy(REMOVE_LABEL))
    assert [r.status for r in results] == [PASS]
    assert resource["metadata"]["labels"] == {"app": "y"}


INSERT_CONTAINER = """
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: insert-container
spec:
  rules:
  - name: insert-container
    match:
      any:
      - resources:
          kinds:
          - Pod
    mutate:
      patchesJson6902: |-
        - op: add
          path: "/spec/containers/1"
          value: {"name":"busybox","image":"busybox:latest"}
        - op: add
          path: "/spec/containers/1/command"
          value:
          - ls
"""


def test_json_patch_inserts_a_container_at_an_index() -> None:
    resource, _ = mutated(pod({"name": "web", "image": "nginx:1"}, {"name": "last", "image": "x:1"}),
                          policy(INSERT_CONTAINER))
    assert resource["spec"]["containers"] == [
        {"name": "web", "image": "nginx:1"},
        {"name": "busybox", "image": "busybox:latest", "command": ["ls"]},
        {"name": "last", "image": "x:1"},
    ]


def _json_patch_policy(name: str, patch: str) -> str:
    indented = "\n".join("          " + line for line in patch.strip().splitlines())
    return f"""
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: {name}
spec:
  rules:
  - name: {name}
    match:
      any:
      - resources:
          kinds: [Pod]
    mutate:
      patchesJson6902: |-
{indented}
"""


def test_json_patch_appends_with_a_dash() -> None:
    text = _json_patch_policy("tolerations", """
- op: add
  path: "/spec/tolerations/-"
  value: {"key":"networkzone","operator":"Equal","value":"dmz","effect":"NoSchedule"}
""")
    resource, _ = mutated(pod({"name": "web", "image": "nginx:1"}, tolerations=[{"key": "a", "operator": "Exists"}]),
                          policy(text))
    assert resource["spec"]["tolerations"] == [
        {"key": "a", "operator": "Exists"},
        {"key": "networkzone", "operator": "Equal", "value": "dmz", "effect": "NoSchedule"},
    ]


def test_json_patch_escapes_slashes_in_keys() -> None:
    text = _json_patch_policy("linkerd", """
- op: add
  path: /metadata/annotations/config.linkerd.io~1skip-outbound-ports
  value: "8200"
""")
    resource, _ = mutated(pod({"name": "web", "image": "nginx:1"}), policy(text))
    assert resource["metadata"]["annotations"] == {"config.linkerd.io/skip-outbound-ports": "8200"}


# ---- strategic merge patches -------------------------------------------------------------------

STRATEGIC = """
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: strategic-merge-patch
spec:
  rules:
  - name: set-image-pull-policy-add-command
    match:
      any:
      - resources:
          kinds:
          - Pod
    mutate:
      patchStrategicMerge:
        metadata:
          labels:
            name: "{{request.object.metadata.name}}"
        spec:
          containers:
            - name: "nginx"
              image: "nginx:latest"
              imagePullPolicy: "Never"
              command:
              - ls
"""


def test_strategic_merge_adds_a_container_and_a_label_from_the_request() -> None:
    resource, _ = mutated(pod({"name": "web", "image": "web:1"}, name="shop"), policy(STRATEGIC))
    assert resource["metadata"]["labels"] == {"name": "shop"}
    by_name = {c["name"]: c for c in resource["spec"]["containers"]}
    assert by_name == {
        "web": {"name": "web", "image": "web:1"},
        "nginx": {"name": "nginx", "image": "nginx:latest", "imagePullPolicy": "Never", "command": ["ls"]},
    }


def test_strategic_merge_merges_a_container_of_the_same_name() -> None:
    resource, _ = mutated(pod({"name": "nginx", "image": "nginx:1.0", "ports": [{"containerPort": 80}]}),
                          policy(STRATEGIC))
    assert resource["spec"]["containers"] == [{
        "name": "nginx", "image": "nginx:latest", "imagePullPolicy": "Never", "command": ["ls"],
        "ports": [{"containerPort": 80}],
    }]


# ---- anchors -----------------------------------------------------------------------------------

SET_PORT = """
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: policy-set-port
spec:
  rules:
  - name: "Set port"
    match:
      any:
      - resources:
          kinds :
            - Endpoints
    mutate:
      patchStrategicMerge:
        subsets:
        - ports:
          - (name): "secure*"
            port: 6443
"""


def test_conditional_anchor_in_a_nested_list_of_unnamed_elements_patches_nothing() -> None:
    """The documentation promises port 6443 for the ``secure*`` ports, but Kyverno's preprocessing
    (pkg/engine/mutate/patch/strategicPreprocessing.go, ``handlePatternName``) only carries a matched
    list element into the patch when the resource element has a ``name``; Endpoints subsets have
    none, so the patch ends up empty and the rule skips, in Kyverno as here."""
    endpoints = {"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": "api", "namespace": "default"},
                 "subsets": [{"ports": [{"name": "secure-connection", "port": 443},
                                        {"name": "insecure", "port": 80}]}]}
    resource, results = mutated(endpoints, policy(SET_PORT))
    assert resource == endpoints
    assert [r.status for r in results] == [SKIP]


SAFE_TO_EVICT = """
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: add-safe-to-evict
  annotations:
    pod-policies.kyverno.io/autogen-controllers: none
spec:
  rules:
  - name: "annotate-empty-dir"
    match:
      any:
      - resources:
          kinds:
          - Pod
    mutate:
      patchStrategicMerge:
        metadata:
          annotations:
            +(cluster-autoscaler.kubernetes.io/safe-to-evict): true
        spec:
          volumes:
          - <(emptyDir): {}
"""
SAFE = "cluster-autoscaler.kubernetes.io/safe-to-evict"


def test_add_anchor_annotates_pods_with_an_empty_dir_volume() -> None:
    with_empty_dir = pod({"name": "web", "image": "nginx:1"}, volumes=[{"name": "cache", "emptyDir": {}}])
    resource, results = mutated(with_empty_dir, policy(SAFE_TO_EVICT))
    assert [r.status for r in results] == [PASS]
    assert resource["metadata"]["annotations"] == {SAFE: True}
    assert resource["spec"]["volumes"] == [{"name": "cache", "emptyDir": {}}]


def test_add_anchor_keeps_an_annotation_that_is_already_there() -> None:
    annotated = pod({"name": "web", "image": "nginx:1"}, volumes=[{"name": "cache", "emptyDir": {}}])
    annotated["metadata"]["annotations"] = {SAFE: "false"}
    resource, results = mutated(annotated, policy(SAFE_TO_EVICT))
    assert resource["metadata"]["annotations"] == {SAFE: "false"}
    assert [r.status for r in results] == [SKIP]


def test_global_anchor_in_a_list_leaves_pods_without_empty_dir_alone() -> None:
    host_path = pod({"name": "web", "image": "nginx:1"}, volumes=[{"name": "data", "hostPath": {"path": "/d"}}])
    resource, results = mutated(host_path, policy(SAFE_TO_EVICT))
    assert "annotations" not in resource["metadata"]
    assert [r.status for r in results] == [SKIP]


IMAGE_PULL_SECRETS = """
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: add-imagepullsecrets
spec:
  rules:
  - name: add-imagepullsecret
    match:
      any:
      - resources:
          kinds:
          - Pod
    mutate:
      patchStrategicMerge:
        spec:
          containers:
          - <(image): "corp.reg.com/*"
          imagePullSecrets:
          - name: my-secret
"""


def test_global_anchor_adds_the_pull_secret_for_corp_images() -> None:
    resource, _ = mutated(pod({"name": "web", "image": "corp.reg.com/nginx"}), policy(IMAGE_PULL_SECRETS))
    assert resource["spec"]["imagePullSecrets"] == [{"name": "my-secret"}]
    assert resource["spec"]["containers"] == [{"name": "web", "image": "corp.reg.com/nginx"}]


def test_global_anchor_not_met_changes_nothing() -> None:
    original = pod({"name": "web", "image": "docker.io/nginx"})
    resource, results = mutated(original, policy(IMAGE_PULL_SECRETS))
    assert resource == original
    assert [r.status for r in results] == [SKIP]


# ---- cascading rules in one policy -------------------------------------------------------------

DATABASE_PROTECTION = """
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: database-protection
spec:
  rules:
  - name: assign-type-database
    match:
      any:
      - resources:
          kinds:
          - Pod
    mutate:
      patchStrategicMerge:
        metadata:
          labels:
            type: database
        spec:
          (containers):
          - (image): "*cassandra* | *mongo*"
  - name: assign-backup-database
    match:
      any:
      - resources:
          kinds:
          - Pod
          selector:
            matchLabels:
              type: database
    mutate:
      patchStrategicMerge:
        metadata:
          labels:
            +(backup-needed): "yes"
"""


def test_cascading_rules_label_a_database_pod_twice() -> None:
    cassandra = pod({"name": "cassandra", "image": "cassandra:latest"}, name="cassandra", labels={"run": "cassandra"})
    resource, results = mutated(cassandra, policy(DATABASE_PROTECTION))
    assert resource["metadata"]["labels"] == {"run": "cassandra", "type": "database", "backup-needed": "yes"}
    assert [(r.rule.name, r.status) for r in results] == [("assign-type-database", PASS),
                                                          ("assign-backup-database", PASS)]


def test_cascading_second_rule_keeps_a_label_the_user_set() -> None:
    cassandra = pod({"name": "cassandra", "image": "cassandra:latest"}, name="cassandra",
                    labels={"backup-needed": "no"})
    resource, _ = mutated(cassandra, policy(DATABASE_PROTECTION))
    assert resource["metadata"]["labels"] == {"backup-needed": "no", "type": "database"}


def test_cascading_rules_leave_other_images_alone() -> None:
    web = pod({"name": "web", "image": "nginx:1"}, labels={"run": "web"})
    resource, results = mutated(web, policy(DATABASE_PROTECTION))
    assert resource["metadata"]["labels"] == {"run": "web"}
    assert [r.rule.name for r in results] == ["assign-type-database"]  # the second rule no longer matches


# ---- foreach -----------------------------------------------------------------------------------

FOREACH_JSON_PATCH = """
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: foreach-json-patch
spec:
  rules:
    - name: add-security-context
      match:
        any:
        - resources:
            kinds:
              - Pod
      preconditions:
        any:
        - key: "{{ request.operation }}"
          operator: Equals
          value: CREATE
      mutate:
        foreach:
        - list: "request.object.spec.containers"
          patchesJson6902: |-
            - path: /spec/containers/{{elementIndex}}/securityContext
              op: add
              value: {"runAsNonRoot" : true}
"""


def test_foreach_json_patch_uses_the_element_index() -> None:
    resource, results = mutated(pod({"name": "a", "image": "a:1"}, {"name": "b", "image": "b:1"}),
                                policy(FOREACH_JSON_PATCH))
    assert [r.status for r in results] == [PASS]
    assert [c.get("securityContext") for c in resource["spec"]["containers"]] == [{"runAsNonRoot": True}] * 2


def test_foreach_rule_preconditions_follow_the_operation() -> None:
    compiled = policy(FOREACH_JSON_PATCH)
    original = pod({"name": "a", "image": "a:1"})
    [applied] = apply_mutations([copy.deepcopy(original)], [compiled],
                                context=assertree.ScanContext(operation="UPDATE"))
    assert applied.mutated == original and not applied.changed
    assert [r.status for r in applied.results] == [SKIP]


PREPEND_REGISTRY = """
apiVersion : kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: prepend-registry
spec:
  background: false
  rules:
  - name: prepend-registry-containers
    match:
      any:
      - resources:
          kinds:
          - Pod
    preconditions:
      all:
      - key: "{{request.operation}}"
        operator: In
        value:
        - CREATE
        - UPDATE
    mutate:
      foreach:
      - list: "request.object.spec.containers"
        patchStrategicMerge:
          spec:
            containers:
            - name: "{{ element.name }}"
              image: registry.io/{{ images.containers."{{element.name}}".name}}:{{images.containers."{{element.name}}".tag}}
"""  # noqa: E501 - the documentation's line, kept as written


def test_foreach_strategic_merge_prepends_the_registry_to_every_image() -> None:
    resource, results = mutated(pod({"name": "web", "image": "nginx:1.25"}, {"name": "side-car", "image": "busybox"}),
                                policy(PREPEND_REGISTRY))
    assert [r.status for r in results] == [PASS]
    assert {c["name"]: c["image"] for c in resource["spec"]["containers"]} == {
        "web": "registry.io/nginx:1.25",
        "side-car": "registry.io/busybox:latest",
    }


def test_a_failing_patch_is_an_error_and_leaves_the_resource_unchanged() -> None:
    text = _json_patch_policy("bad-index", """
- op: test
  path: /metadata/name
  value: another-name
""")
    original = pod({"name": "web", "image": "nginx:1"})
    [applied] = apply_mutations([copy.deepcopy(original)], [policy(text)])
    assert [r.status for r in applied.results] == [ERROR]
    assert applied.errors and applied.mutated == original
