"""patchStrategicMerge as Kyverno applies it: anchors (strategicPreprocessing.go), then kyaml's merge."""

from __future__ import annotations

import copy

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assertree.languages.kubernetes.merge_schema import field_schema, merges_elements, resource_schema
from assertree.languages.kyverno.mutate import (
    apply_mutation,
    apply_strategic_merge,
    patched_resource_matches,
    prepare_patch,
    tidy,
)
from assertree.languages.kyverno.mutate import merge as _merge
from assertree.languages.kyverno.mutate.merge import MergeError, strategic_merge
from assertree.results import Status


def pod(*containers: dict, **spec: object) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "web", "namespace": "apps", "labels": {"app": "web"}},
        "spec": {"containers": list(containers), **spec},
    }


NGINX = {"name": "nginx", "image": "nginx:latest"}
BUSYBOX = {"name": "sidecar", "image": "busybox:1.36"}


# ---- seed examples (kyverno-mutate.md) ----------------------------------------------------------


def test_seed_set_image_pull_policy_only_for_latest_images() -> None:
    patch = {"spec": {"containers": [{"(image)": "*:latest", "imagePullPolicy": "IfNotPresent"}]}}
    result = apply_strategic_merge(pod(BUSYBOX, NGINX), patch)
    assert result.status is Status.PASS
    assert result.message == "mutated Pod/web in namespace apps"
    # kyaml prepends the merged element: the patched container comes first
    assert result.resource["spec"]["containers"] == [
        {"name": "nginx", "image": "nginx:latest", "imagePullPolicy": "IfNotPresent"},
        BUSYBOX,
    ]


def test_seed_add_container_and_label_merges_by_name() -> None:
    patch = {
        "metadata": {"labels": {"name": "web"}},
        "spec": {
            "containers": [{"name": "nginx", "image": "nginx:latest", "imagePullPolicy": "Never", "command": ["ls"]}]
        },
    }
    result = apply_strategic_merge(
        pod({"name": "nginx", "image": "nginx:1.0", "ports": [{"containerPort": 80}]}), patch
    )
    assert result.resource["metadata"]["labels"] == {"app": "web", "name": "web"}
    assert result.resource["spec"]["containers"] == [
        {
            "name": "nginx",
            "image": "nginx:latest",
            "ports": [{"containerPort": 80}],
            "imagePullPolicy": "Never",
            "command": ["ls"],
        }
    ]


def test_seed_add_if_not_present_with_global_anchor_on_empty_dir() -> None:
    patch = {
        "metadata": {"annotations": {"+(cluster-autoscaler.kubernetes.io/safe-to-evict)": True}},
        "spec": {"volumes": [{"<(emptyDir)": {}}]},
    }
    with_empty_dir = pod(NGINX, volumes=[{"name": "scratch", "emptyDir": {}}])
    result = apply_strategic_merge(with_empty_dir, patch)
    assert result.status is Status.PASS
    assert result.resource["metadata"]["annotations"] == {"cluster-autoscaler.kubernetes.io/safe-to-evict": True}
    assert result.resource["spec"]["volumes"] == [{"name": "scratch", "emptyDir": {}}]

    without = apply_strategic_merge(pod(NGINX, volumes=[{"name": "cfg", "configMap": {"name": "c"}}]), patch)
    assert (without.status, without.message) == (Status.SKIP, "no patches applied")

    already = copy.deepcopy(with_empty_dir)
    already["metadata"]["annotations"] = {"cluster-autoscaler.kubernetes.io/safe-to-evict": "false"}
    assert apply_strategic_merge(already, patch).status is Status.SKIP


def test_seed_global_anchor_adds_image_pull_secret_when_any_image_matches() -> None:
    patch = {"spec": {"containers": [{"<(image)": "corp.reg.com/*"}], "imagePullSecrets": [{"name": "my-secret"}]}}
    corp = pod({"name": "web", "image": "corp.reg.com/nginx"}, BUSYBOX)
    result = apply_strategic_merge(corp, patch)
    assert result.resource["spec"]["imagePullSecrets"] == [{"name": "my-secret"}]
    assert result.resource["spec"]["containers"] == corp["spec"]["containers"]
    assert apply_strategic_merge(pod(BUSYBOX), patch).status is Status.SKIP


def test_seed_conditional_anchor_on_a_list_key_is_a_condition_for_the_whole_patch() -> None:
    patch = {
        "metadata": {"labels": {"type": "database"}},
        "spec": {"(containers)": [{"(image)": "*cassandra* | *mongo*"}]},
    }
    database = apply_strategic_merge(pod({"name": "db", "image": "cassandra:latest"}), patch)
    assert database.resource["metadata"]["labels"]["type"] == "database"
    other = apply_strategic_merge(pod(NGINX), patch)
    assert (other.status, other.resource) == (Status.SKIP, pod(NGINX))


def test_seed_add_if_not_present_keeps_a_label_the_user_set() -> None:
    patch = {"metadata": {"labels": {"+(backup-needed)": "yes"}}}
    resource = pod(NGINX)
    assert apply_strategic_merge(resource, patch).resource["metadata"]["labels"]["backup-needed"] == "yes"
    resource["metadata"]["labels"]["backup-needed"] = "no"
    assert apply_strategic_merge(resource, patch).status is Status.SKIP


# ---- anchors -----------------------------------------------------------------------------------


def test_conditional_name_wildcard_patches_every_container() -> None:
    patch = {"spec": {"containers": [{"(name)": "*", "securityContext": {"runAsNonRoot": True}}]}}
    root = {"name": "root", "image": "x", "securityContext": {"privileged": True}}
    result = apply_strategic_merge(pod(NGINX, root), patch)
    containers = {c["name"]: c for c in result.resource["spec"]["containers"]}
    assert containers["nginx"]["securityContext"] == {"runAsNonRoot": True}
    assert containers["root"]["securityContext"] == {"privileged": True, "runAsNonRoot": True}
    # the selector is re-appended per container in resource order, and kyaml puts patched elements first
    assert [c["name"] for c in result.resource["spec"]["containers"]] == ["nginx", "root"]


def test_add_if_not_present_is_resolved_once_for_all_elements() -> None:
    # Kyverno shares one copy of a selector across the resource's elements: the first element decides
    patch = {"spec": {"containers": [{"(name)": "*", "+(imagePullPolicy)": "Always"}]}}
    first_has_it = {"name": "a", "image": "a", "imagePullPolicy": "Never"}
    second_lacks_it = {"name": "b", "image": "b"}
    result = apply_strategic_merge(pod(first_has_it, second_lacks_it), patch)
    assert result.status is Status.SKIP
    result = apply_strategic_merge(pod(second_lacks_it, first_has_it), patch)
    by_name = {c["name"]: c for c in result.resource["spec"]["containers"]}
    assert by_name["a"]["imagePullPolicy"] == "Always"  # overwritten: the anchor had become a plain key
    assert by_name["b"]["imagePullPolicy"] == "Always"


def test_conditions_compare_yaml_text() -> None:
    patch = {"metadata": {"labels": {"replicas": "three"}}, "spec": {"(replicas)": 3}}
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}, "spec": {"replicas": "3"}}
    assert apply_strategic_merge(deployment, patch).status is Status.PASS


def test_missing_condition_key_skips() -> None:
    patch = {"spec": {"(hostNetwork)": True, "dnsPolicy": "ClusterFirstWithHostNet"}}
    assert apply_strategic_merge(pod(NGINX), patch).status is Status.SKIP
    assert apply_strategic_merge(pod(NGINX, hostNetwork=True), patch).resource["spec"]["dnsPolicy"] == (
        "ClusterFirstWithHostNet"
    )


def test_negation_equality_and_existence_anchors_are_literal_keys_in_mutate() -> None:
    patch = {"metadata": {"labels": {"X(team)": "none", "=(tier)": "web", "^(zone)": "a"}}}
    labels = apply_strategic_merge(pod(NGINX), patch).resource["metadata"]["labels"]
    assert labels == {"app": "web", "X(team)": "none", "=(tier)": "web", "^(zone)": "a"}


def test_preprocessing_removes_empty_maps_from_the_patch() -> None:
    # deleteAnchors treats an empty map as "nothing but anchors": emptyDir: {} never reaches kyaml
    patch = {"spec": {"volumes": [{"name": "scratch", "emptyDir": {}}]}}
    assert prepare_patch(pod(NGINX), patch) == {"spec": {"volumes": [{"name": "scratch"}]}}


def test_prepare_patch_leaves_its_arguments_alone() -> None:
    patch = {"spec": {"containers": [{"(name)": "*", "+(imagePullPolicy)": "Always"}]}}
    resource = pod(NGINX)
    before = copy.deepcopy((patch, resource))
    prepare_patch(resource, patch)
    apply_strategic_merge(resource, patch)
    assert (patch, resource) == before


# ---- kyaml merge ---------------------------------------------------------------------------------


def test_new_container_goes_first() -> None:
    result = apply_strategic_merge(pod(NGINX), {"spec": {"containers": [BUSYBOX]}})
    assert result.resource["spec"]["containers"] == [BUSYBOX, NGINX]


@pytest.mark.parametrize(
    ("field", "existing", "patch", "merged"),
    [
        (
            "volumes",
            [{"name": "a", "emptyDir": {}}],
            [{"name": "a", "secret": {"secretName": "s"}}],
            [{"name": "a", "emptyDir": {}, "secret": {"secretName": "s"}}],
        ),
        ("imagePullSecrets", [{"name": "a"}], [{"name": "b"}], [{"name": "b"}, {"name": "a"}]),
        (
            "hostAliases",
            [{"ip": "1.1.1.1", "hostnames": ["a"]}],
            [{"ip": "1.1.1.1", "hostnames": ["b"]}],
            [{"ip": "1.1.1.1", "hostnames": ["b"]}],
        ),
        ("tolerations", [{"key": "a"}], [{"key": "b"}], [{"key": "b"}]),  # no merge key: replaced
    ],
)
def test_pod_spec_lists_follow_the_kubernetes_merge_keys(field: str, existing: list, patch: list, merged: list) -> None:
    result = apply_strategic_merge(pod(NGINX, **{field: existing}), {"spec": {field: patch}})
    assert result.resource["spec"][field] == merged


def test_ports_merge_on_container_port_and_protocol() -> None:
    container = {"name": "dns", "image": "d", "ports": [{"containerPort": 53, "protocol": "UDP"}]}
    patch = {"spec": {"containers": [{"name": "dns", "ports": [{"containerPort": 53, "protocol": "TCP"}]}]}}
    ports = apply_strategic_merge(pod(container), patch).resource["spec"]["containers"][0]["ports"]
    assert ports == [{"containerPort": 53, "protocol": "TCP"}, {"containerPort": 53, "protocol": "UDP"}]


def test_env_and_volume_mounts_merge_inside_a_container() -> None:
    container = {
        "name": "app",
        "image": "a",
        "env": [{"name": "A", "value": "1"}],
        "volumeMounts": [{"mountPath": "/a", "name": "a"}],
    }
    patch = {
        "spec": {
            "containers": [
                {
                    "name": "app",
                    "env": [{"name": "A", "value": "2"}],
                    "volumeMounts": [{"mountPath": "/b", "name": "b"}],
                }
            ]
        }
    }
    merged = apply_strategic_merge(pod(container), patch).resource["spec"]["containers"][0]
    assert merged["env"] == [{"name": "A", "value": "2"}]
    assert merged["volumeMounts"] == [{"mountPath": "/b", "name": "b"}, {"mountPath": "/a", "name": "a"}]


def test_lists_of_unknown_kinds_are_replaced() -> None:
    custom = {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": "w"},
        "spec": {"items": [{"name": "a"}]},
    }
    result = apply_strategic_merge(custom, {"spec": {"items": [{"name": "b"}]}})
    assert result.resource["spec"]["items"] == [{"name": "b"}]


def test_the_schema_follows_pod_templates_of_controllers() -> None:
    deployment = resource_schema("apps/v1", "Deployment")
    template = field_schema(field_schema(field_schema(deployment, "spec"), "template"), "spec")
    assert merges_elements(field_schema(template, "containers"))
    assert not merges_elements(field_schema(template, "tolerations"))
    assert resource_schema("example.com/v1", "Widget") is None


@pytest.mark.parametrize(
    ("patch", "containers"),
    [
        ({"spec": {"containers": [{"name": "nginx", "$patch": "delete"}]}}, [BUSYBOX]),
        ({"spec": {"containers": [{"name": "x", "image": "x"}, {"$patch": "replace"}]}}, [{"name": "x", "image": "x"}]),
        # kyaml (Prepend) puts the resource's own element back over an element-level replace: no effect
        ({"spec": {"containers": [{"name": "nginx", "image": "nginx:2", "$patch": "replace"}]}}, [NGINX, BUSYBOX]),
    ],
)
def test_patch_directives_on_list_elements(patch: dict, containers: list) -> None:
    assert apply_strategic_merge(pod(NGINX, BUSYBOX), patch).resource["spec"]["containers"] == containers


def test_patch_directives_on_maps() -> None:
    resource = pod(NGINX, nodeSelector={"a": "1", "b": "2"})
    replaced = apply_strategic_merge(resource, {"spec": {"nodeSelector": {"c": "3", "$patch": "replace"}}})
    assert replaced.resource["spec"]["nodeSelector"] == {"c": "3"}
    deleted = apply_strategic_merge(resource, {"spec": {"nodeSelector": {"$patch": "delete"}}})
    assert "nodeSelector" not in deleted.resource["spec"]


def test_unknown_directive_is_an_error() -> None:
    result = apply_strategic_merge(pod(NGINX), {"metadata": {"labels": {"$patch": "remove"}}})
    assert (result.status, result.message) == (
        Status.ERROR,
        "failed to patch resource: unknown patch strategy 'remove'",
    )


def test_retain_keys_is_not_a_directive_for_kyaml() -> None:
    result = apply_strategic_merge(pod(NGINX), {"spec": {"$retainKeys": ["containers"]}})
    assert result.resource["spec"]["$retainKeys"] == ["containers"]


def test_null_deletes_and_kept_nulls_survive() -> None:
    resource = pod(NGINX, nodeName=None)
    result = apply_strategic_merge(resource, {"metadata": {"labels": {"app": None}}})
    assert result.resource["metadata"]["labels"] == {}
    assert result.resource["spec"]["nodeName"] is None


def test_a_map_patched_with_a_list_is_an_error() -> None:
    result = apply_strategic_merge(pod(NGINX), {"metadata": {"labels": ["a"]}})
    assert result.status is Status.ERROR
    assert result.message.startswith(
        "failed to patch resource: wrong node kind: expected MappingNode but got SequenceNode"
    )
    assert result.resource == pod(NGINX)


def test_an_element_without_merge_key_collapses_the_list() -> None:
    # kyaml's appendListNode with no key values keeps only that element: Kyverno inherits it
    merged = strategic_merge(pod(NGINX, {"image": "anonymous"}), {})
    assert merged["spec"]["containers"] == [{"image": "anonymous"}]


def test_deleting_the_whole_resource_is_refused() -> None:
    with pytest.raises(MergeError, match="cannot create or delete"):
        strategic_merge(pod(NGINX), {"$patch": "delete"})


# ---- kyverno test comparison --------------------------------------------------------------------


def test_tidy_drops_nulls_and_empties_recursively() -> None:
    assert tidy({"a": None, "b": {}, "c": [], "d": [{}, None, 1], "e": {"f": {"g": None}}}) == {"d": [1]}
    assert tidy({}) is None


def test_patched_resources_compare_after_tidy_and_label_fixup() -> None:
    actual = {"kind": "Pod", "metadata": {"name": "p", "annotations": {}}, "spec": {"replicas": 1}}
    expected = {
        "kind": "Pod",
        "metadata": {"name": "p", "labels": {"app.kubernetes.io/managed-by": "kyverno"}},
        "spec": {"replicas": 1.0},
    }
    assert patched_resource_matches(actual, expected)
    assert not patched_resource_matches(actual, {**expected, "spec": {"replicas": True}})
    assert not patched_resource_matches(actual, {**expected, "spec": {"replicas": 1, "paused": False}})


# ---- the rule's mutate block ---------------------------------------------------------------------


def test_strategic_merge_wins_over_json_patch_and_empty_rules_are_errors() -> None:
    both = {
        "patchStrategicMerge": {"metadata": {"labels": {"via": "smp"}}},
        "patchesJson6902": "- op: add\n  path: /metadata/labels/via\n  value: json",
    }
    assert apply_mutation(both, pod(NGINX)).resource["metadata"]["labels"]["via"] == "smp"
    only_json = {"patchesJson6902": both["patchesJson6902"]}
    assert apply_mutation(only_json, pod(NGINX)).resource["metadata"]["labels"]["via"] == "json"
    empty = apply_mutation({}, pod(NGINX))
    assert (empty.status, empty.message) == (Status.ERROR, "empty mutate rule")


def test_stale_indexes_leave_a_selector_in_the_patch_and_a_keyless_element_empties_the_list() -> None:
    # deleteAnchorsInList deletes by the indexes of the list as it was: the second selector survives
    # and "keep" goes; kyaml then meets an element without a name and clears the containers
    patch = {"spec": {"containers": [{"(name)": "x"}, {"(image)": "y"}, {"name": "keep", "image": "k"}]}}
    assert prepare_patch(pod(NGINX), patch) == {"spec": {"containers": [{"(image)": "y"}]}}
    assert apply_strategic_merge(pod(NGINX), patch).resource["spec"]["containers"] == []


def test_conditions_use_the_matcher_given() -> None:
    seen: list[tuple] = []

    def matcher(resource: object, pattern: object) -> str | None:
        seen.append((resource, pattern))
        return None

    patch = {"spec": {"(replicas)": 5, "paused": True}}
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}, "spec": {"replicas": 1}}
    assert apply_strategic_merge(deployment, patch, matcher).resource["spec"]["paused"] is True
    assert seen == [("1", "5")]  # scalars reach the matcher as YAML text
    assert apply_strategic_merge(deployment, patch).status is Status.SKIP


# ---- the fast path for lists merged by key holds to kyaml's element-by-element path -------------

_NAMES = st.sampled_from(["a", "b", "c", "d", "80", 80, ""])
_PORTS = st.lists(st.fixed_dictionaries({"containerPort": st.sampled_from([80, 443, "80", 8080])},
                                        optional={"protocol": st.sampled_from(["TCP", "UDP", ""]),
                                                  "name": st.sampled_from(["http", "web"])}), max_size=4)
_CONTAINER = st.one_of(
    st.fixed_dictionaries({}, optional={"name": _NAMES, "image": st.sampled_from(["x", "y", None]), "ports": _PORTS,
                                        "$patch": st.sampled_from(["delete", "replace", "merge"])}),
    st.none(),
)


def _merged(resource: dict, patch: dict, fast: bool) -> object:
    with pytest.MonkeyPatch.context() as patched:
        if not fast:
            patched.setattr(_merge, "_keyed_elements", lambda *args: None)
        try:
            return strategic_merge(copy.deepcopy(resource), copy.deepcopy(patch))
        except MergeError as error:
            return ("MergeError", str(error))


@settings(max_examples=400, deadline=None, database=None)
@given(st.lists(_CONTAINER, max_size=6), st.lists(_CONTAINER, max_size=6), _PORTS, _PORTS)
def test_merging_by_an_index_gives_what_kyaml_gives(containers, patched, ports, patched_ports):
    resource = pod(*containers)
    resource["spec"]["containers"].append({"name": "ports", "ports": ports})
    patch = {"spec": {"containers": [*patched, {"name": "ports", "ports": patched_ports}]}}
    assert _merged(resource, patch, True) == _merged(resource, patch, False)


# ---- the fast path for maps the patch does not mention holds to kyaml's walk -------------------------

_SCALARS = st.one_of(st.sampled_from(["x", "", "80", "true"]), st.integers(-1, 3), st.booleans(), st.none())
_LABELS = st.one_of(st.none(), st.dictionaries(st.sampled_from(["app", "team", "a.b/c"]), _SCALARS, max_size=3))
_VOLUMES = st.lists(st.one_of(st.fixed_dictionaries({}, optional={"name": _NAMES, "emptyDir": st.just({}),
                                                                 "secret": st.fixed_dictionaries({"x": _SCALARS})}),
                              st.none(), st.just({})), max_size=4)
_SPEC = st.fixed_dictionaries({}, optional={
    "containers": st.lists(_CONTAINER, max_size=4), "initContainers": st.lists(_CONTAINER, max_size=2),
    "volumes": _VOLUMES, "nodeSelector": _LABELS, "tolerations": st.lists(st.just({"key": "k"}), max_size=2),
    "hostNetwork": st.booleans(), "imagePullSecrets": st.lists(st.fixed_dictionaries({"name": _NAMES}), max_size=3),
    "extra": st.fixed_dictionaries({}, optional={"apiVersion": st.just("v1"), "kind": st.just("Pod"),
                                                 "spec": st.fixed_dictionaries({"containers": st.lists(_CONTAINER,
                                                                                                       max_size=3)})}),
})
_METADATA = st.fixed_dictionaries({"name": st.just("web")}, optional={
    "labels": _LABELS, "annotations": _LABELS, "finalizers": st.lists(st.sampled_from(["a", "b", 1]), max_size=3)})
_KINDS = st.sampled_from([("v1", "Pod"), ("apps/v1", "Deployment"), ("example.io/v1", "Widget")])


def _object(kind: tuple[str, str], metadata: dict, spec: dict) -> dict:
    if kind[1] == "Deployment":
        spec = {"replicas": 2, "template": {"metadata": metadata, "spec": spec}}
    return {"apiVersion": kind[0], "kind": kind[1], "metadata": metadata, "spec": spec}


_PATCHES = st.one_of(
    st.builds(lambda labels: {"metadata": {"labels": labels}}, _LABELS),
    st.builds(lambda finalizers: {"metadata": {"finalizers": finalizers}}, st.lists(st.sampled_from(["a", "c"]))),
    st.builds(lambda spec: {"spec": spec}, _SPEC),
    st.builds(lambda spec: {"spec": {"template": {"spec": spec}}}, _SPEC),
    st.builds(lambda value: {"spec": {"hostNetwork": value}}, _SCALARS),
    st.just({"spec": {"$patch": "replace"}}), st.just({"status": {"phase": "x"}}), st.just({}),
)


def _walked(resource: dict, patch: dict, fast: bool) -> object:
    with pytest.MonkeyPatch.context() as patched:
        if not fast:
            patched.setattr(_merge, "_walk_untouched", lambda dest, schema: _merge._walk_both(dest, _merge.ABSENT,
                                                                                              schema))
        try:
            return strategic_merge(copy.deepcopy(resource), copy.deepcopy(patch))
        except MergeError as error:
            return ("MergeError", str(error))


@settings(max_examples=500, deadline=None, database=None)
@given(_KINDS, _METADATA, _SPEC, _PATCHES)
def test_walking_what_the_patch_does_not_mention_gives_what_kyaml_gives(kind, metadata, spec, patch):
    resource = _object(kind, metadata, spec)
    assert _walked(resource, patch, True) == _walked(resource, patch, False)


def test_an_untouched_list_that_kyaml_collapses_is_collapsed_on_the_fast_path_too() -> None:
    resource = pod({"name": "a"}, {"image": "no-name"})
    merged = strategic_merge(copy.deepcopy(resource), {"metadata": {"labels": {"x": "y"}}})
    assert merged == _walked(resource, {"metadata": {"labels": {"x": "y"}}}, False)
    assert merged["spec"]["containers"] != resource["spec"]["containers"]  # the quirk, kept
