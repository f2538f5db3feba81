"""Kyverno's {{ }} variables, $( ) references and context (pkg/engine/variables, pkg/engine/context).

Examples from the Kyverno documentation (seeds/kyverno-variables.md) are marked "docs".
"""

from __future__ import annotations

import copy

import pytest
from hypothesis import given
from hypothesis import strategies as st

from assertree.languages.kyverno.images import image_info, images
from assertree.languages.kyverno.references import shift_references, substitute_references
from assertree.languages.kyverno.substitution import VariableError, has_markers
from assertree.languages.kyverno.variables import (
    KyvernoContext,
    Unresolved,
    evaluate,
    is_variable,
    render,
    service_account,
    substitute_all,
    substitute_variables,
)

POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "web", "namespace": "shop", "labels": {"app": "nginx", "empty": None}},
    "spec": {
        "containers": [
            {"name": "nginx", "image": "nginx@sha256:5f44022eab9198d75939d9eaa5341bc077eca16fa51d4ef32d33f1bd4c8cbe7d"},
            {"name": "my-container", "image": "ghcr.io/org/tool:v1"},
        ],
        "initContainers": [{"name": "vault", "image": "ghcr.io/vault:v3"}],
        "replicas": 3.0,
    },
}


@pytest.fixture
def ctx() -> KyvernoContext:
    return KyvernoContext.for_cli(POD)


# -- whole values and rendering ------------------------------------------------------------------------------


def test_a_lone_variable_keeps_its_json_type(ctx):
    document = {"m": "{{ request.object.metadata.labels }}", "n": "{{request.object.spec.replicas}}",
                "l": "{{ request.object.spec.containers[].name }}", "b": "{{ `true` }}"}
    assert substitute_variables(document, ctx) == {
        "m": {"app": "nginx", "empty": None}, "n": 3.0, "l": ["nginx", "my-container"], "b": True}


def test_variables_inside_text_are_rendered_as_go_json(ctx):
    text = "{{request.object.metadata.name}}: {{request.object.metadata.labels}} x{{request.object.spec.replicas}}"
    assert substitute_variables(text, ctx) == 'web: {"app":"nginx","empty":null} x3'
    assert render({"b": [1, "<a&b>"], "a": None}) == '{"a":null,"b":[1,"\\u003ca\\u0026b\\u003e"]}'
    assert render(1e21) == "1e+21"


def test_docs_combined_variables(ctx):  # docs: "ns-owner-{{request.namespace}}-{{request.userInfo.username}}-binding"
    context = KyvernoContext.for_cli(POD, request_info={"userInfo": {"username": "dave"}})
    text = "ns-owner-{{request.namespace}}-{{request.userInfo.username}}-binding"
    assert substitute_variables(text, context) == "ns-owner-shop-dave-binding"


def test_map_keys_are_substituted_and_must_stay_strings(ctx):
    assert substitute_variables({"{{request.object.metadata.name}}-x": 1}, ctx) == {"web-x": 1}
    with pytest.raises(VariableError, match="expected string after substituting variables in key"):
        substitute_variables({"{{request.object.metadata.labels}}": 1}, ctx)


def test_the_input_is_not_modified_and_results_do_not_alias_the_context(ctx):
    document = {"a": ["{{request.object.metadata.labels}}"]}
    before = copy.deepcopy(document)
    result = substitute_variables(document, ctx)
    assert document == before
    result["a"][0]["app"] = "changed"
    assert ctx.query("request.object.metadata.labels.app") == "nginx"


def test_non_strings_pass_through(ctx):
    assert substitute_variables({"a": 1, "b": [True, None, 2.5]}, ctx) == {"a": 1, "b": [True, None, 2.5]}


# -- nesting, escapes, shallow substitution -----------------------------------------------------------------


def test_docs_nested_lookup(ctx):  # docs "Nested Lookups": the inner variable is substituted first
    ctx.add_variable("LabelsCM", {"data": {"nginx": "web-server"}})
    annotation = "{{LabelsCM.data.{{ request.object.metadata.labels.app }}}}"
    assert substitute_variables(annotation, ctx) == "web-server"


def test_docs_escaped_variable_is_kept_literally(ctx):  # docs "Escaping Variables"
    assert substitute_variables("\\{{ request.object.metadata.name }}", ctx) == "{{ request.object.metadata.name }}"
    assert substitute_variables("a \\{{x}} {{request.object.metadata.name}}", ctx) == "a {{x}} web"
    assert not is_variable("\\{{ x }}")
    assert is_variable("a{{ x }}")


def test_docs_shallow_substitution_leaves_the_value_alone(ctx):  # docs "Shallow substitution"
    ctx.add_variable("hcl", "from_string\n{{ some hcl tempalte }}")
    assert substitute_variables("{{- hcl }}", ctx) == "from_string\n{{ some hcl tempalte }}"
    assert substitute_variables("config: {{- hcl }}", ctx) == "config: from_string\n{{ some hcl tempalte }}"
    with pytest.raises(VariableError):  # without the dash the value's own {{ }} is looked up as well
        substitute_variables("config: {{ hcl }}", ctx)


def test_adjacent_variables(ctx):
    assert substitute_variables("{{request.object.metadata.name}}{{request.namespace}}", ctx) == "webshop"


# -- @, DELETE -------------------------------------------------------------------------------------------


def test_at_is_the_resource_value_at_the_same_place(ctx):
    pattern = {"spec": {"containers": [{"name": "{{@}}"}]}}
    result = substitute_variables(pattern, ctx, path=("validate", "pattern"))
    assert result == {"spec": {"containers": [{"name": "nginx"}]}}
    foreach = {"pattern": {"spec": {"replicas": "{{ @ }}"}}}
    result = substitute_variables(foreach, ctx, path=("validate", "foreach", 0))
    assert result == {"pattern": {"spec": {"replicas": 3.0}}}


def test_at_reads_the_target_when_there_is_one(ctx):
    ctx.set_target({"spec": {"replicas": 7}})
    assert substitute_variables({"spec": {"replicas": "{{@}}"}}, ctx, path=("mutate", "patchStrategicMerge")) == {
        "spec": {"replicas": 7}}


def test_delete_reads_request_object_as_the_old_object():
    context = KyvernoContext.for_cli(POD, operation="DELETE")
    assert "object" not in context.document["request"]
    assert substitute_variables("{{request.object.metadata.name}}", context) == "web"
    assert context.query("request.namespace") == ""
    assert context.operation == "DELETE"


def test_update_has_both_objects():
    context = KyvernoContext.for_cli(POD, operation="UPDATE")
    assert context.query("request.oldObject.metadata.name") == "web"
    assert context.query("request.object.metadata.name") == "web"
    assert context.query("request.operation") == "UPDATE"


# -- unresolved variables ---------------------------------------------------------------------------------


def test_a_missing_key_is_an_error_carrying_the_variable_and_the_path(ctx):
    with pytest.raises(VariableError) as caught:
        substitute_variables({"spec": {"x": "a-{{ request.object.metadata.labels.team }}"}}, ctx,
                             path=("validate", "pattern"))
    error = caught.value
    assert error.not_found
    assert error.variable == "request.object.metadata.labels.team"
    assert error.path == ("validate", "pattern", "spec", "x")
    assert str(error) == 'Unknown key "team" in path'


def test_empty_mode_gives_empty_strings(ctx):
    assert substitute_variables("{{ request.object.metadata.labels.team }}", ctx, unresolved=Unresolved.EMPTY) == ""
    assert substitute_variables("x{{ nope }}y", ctx, unresolved=Unresolved.EMPTY) == "xy"


@pytest.mark.parametrize(("expression", "expected"), [
    ("request.object.metadata.labels.team || 'none'", "none"),  # `||` swallows the unknown key
    ("request.object.metadata.labels.empty", None),  # null is not missing
    ("request.object.metadata.labels.empty.deeper", None),  # a field of null is null
    ("request.object.spec.volumes[].name", None),  # a projection swallows it
    ("request.object.spec.volumes[*].name", None),
    ("request.object.metadata.nope.x[*].y", None),  # go-jmespath projects over the whole left side
    ("request.object.spec.volumes[?x].name", None),  # so does a filter
    ("request.object.spec.volumes | length(@ || `[]`)", 0),  # and a pipe
    ("to_string(request.object.spec.volumes)", "null"),  # and function arguments
    ("request.object.spec.volumes == null", True),  # and comparisons
    ("!(request.object.spec.volumes)", True),
    ("[request.object.spec.volumes]", [None]),  # and multi-selects
    ("request.object.spec.containers[0].name", "nginx"),
    ("images.containers.\"my-container\".tag", "v1"),  # docs: quote names holding '-'
])
def test_go_jmespath_resolves(ctx, expression, expected):
    assert ctx.query(expression) == expected


@pytest.mark.parametrize(("expression", "missing"), [
    ("request.object.metadata.labels.team", "team"),
    ("request.object.spec.volumes[0]", "volumes"),
    ("request.object.nope.deeper.still", "nope"),
    ("request.object.metadata.name && request.object.nope", "nope"),  # the right side of && passes it on
    ("nope", "nope"),
    ("serviceAccountName", "serviceAccountName"),  # no user info: not defined at all
    ("element", "element"),  # outside foreach
])
def test_go_jmespath_reports_the_unknown_key(ctx, expression, missing):
    with pytest.raises(VariableError) as caught:
        ctx.query(expression)
    assert caught.value.not_found
    assert str(caught.value) == f'Unknown key "{missing}" in path'


def test_other_failures_are_not_not_found(ctx):
    with pytest.raises(VariableError) as caught:
        substitute_variables("{{ length(request.object.nope) }}", ctx)  # length(null): invalid type
    assert not caught.value.not_found
    assert caught.value.variable == "length(request.object.nope)"
    assert "failed to resolve length(request.object.nope) at path /" in str(caught.value)
    with pytest.raises(VariableError, match="incorrect query"):
        ctx.query("request.[")
    with pytest.raises(VariableError, match="invalid query"):
        ctx.query("  ")


def test_evaluate_applies_the_same_rule_to_any_data():
    assert evaluate("a.b", {"a": {"b": 1}}) == 1
    with pytest.raises(VariableError) as caught:
        evaluate("a.c", {"a": {"b": 1}})
    assert caught.value.not_found


# -- the context document -----------------------------------------------------------------------------------


def test_docs_service_account_variables():  # docs: system:serviceaccount:nirmata:user1
    assert service_account("system:serviceaccount:nirmata:user1") == ("user1", "nirmata")
    assert service_account("dave") == ("", "")
    context = KyvernoContext.for_cli(POD, request_info={
        "roles": ["foo:dave"], "clusterRoles": ["dave-admin", "system:basic-user"],
        "userInfo": {"username": "system:serviceaccount:nirmata:user1", "groups": ["system:authenticated"]}})
    assert substitute_variables("{{serviceAccountName}}/{{serviceAccountNamespace}}", context) == "user1/nirmata"
    assert context.query("request.roles") == ["foo:dave"]
    assert context.query("request.clusterRoles[1]") == "system:basic-user"
    assert context.query("request.userInfo.groups") == ["system:authenticated"]


def test_dotted_variables_set_nested_values_and_merge(ctx):
    ctx.add_variable("request.object.spec.serviceAccountName", "busybox")
    ctx.add_variable("saMap.data.busybox", '["docker.io/busybox"]')
    ctx.add_variable('"a.b".c', 1)
    assert ctx.query("request.object.spec.serviceAccountName") == "busybox"
    assert ctx.query("request.object.spec.replicas") == 3.0  # merged, not replaced
    assert ctx.query("saMap") == {"data": {"busybox": '["docker.io/busybox"]'}}
    assert ctx.document["a.b"] == {"c": 1}


def test_foreach_element_scopes(ctx):
    ctx.checkpoint()
    for index, container in enumerate(POD["spec"]["containers"]):
        ctx.reset()
        ctx.add_element(container, index)
        assert substitute_variables("{{elementIndex}}:{{element.name}}:{{element0.name}}", ctx) == (
            f"{index}:{container['name']}:{container['name']}")
    ctx.restore()
    with pytest.raises(VariableError):
        ctx.query("element")


def test_nested_foreach_keeps_outer_element(ctx):
    ctx.add_element({"name": "outer"}, 4, 0)
    ctx.add_element({"name": "inner"}, 1, 1)
    assert substitute_variables("{{element0.name}}/{{element1.name}}/{{elementIndex0}}{{elementIndex1}}", ctx) == (
        "outer/inner/41")


def test_lazy_entries_load_on_first_mention_only(ctx):
    calls = []

    def load():
        calls.append("name")
        ctx.add_context_entry("name", "lazy")

    ctx.add_deferred("name", load)
    assert ctx.query("request.object.metadata.name") == "web"  # `.name` is not the entry
    assert calls == []
    assert ctx.query("name") == "lazy"
    assert ctx.query("to_upper(name)") == "LAZY"
    assert calls == ["name"]


def test_lazy_entry_failure_surfaces_where_it_is_used(ctx):
    def fail():
        raise VariableError("boom")

    ctx.add_deferred("broken", fail)
    assert substitute_variables("{{request.object.metadata.name}}", ctx) == "web"  # never named: no error
    with pytest.raises(VariableError) as caught:
        substitute_variables("{{ broken }}", ctx, path=("validate", "message"))
    assert str(caught.value) == "failed to resolve broken at path /validate/message: boom"


def test_checkpoints_drop_inner_entries_and_keep_outer_loaded_ones(ctx):
    ctx.add_deferred("outer", lambda: ctx.add_context_entry("outer", 1))
    ctx.checkpoint()
    ctx.add_deferred("inner", lambda: ctx.add_context_entry("inner", 2))
    ctx.add_variable("scratch", True)
    assert ctx.query("outer") == 1
    assert ctx.query("inner") == 2
    ctx.restore()
    assert ctx.query("outer") == 1  # reloaded into the restored document
    assert "scratch" not in ctx.document
    with pytest.raises(VariableError):
        ctx.query("inner")


def test_a_later_definition_of_a_name_wins(ctx):
    ctx.add_deferred("x", lambda: ctx.add_context_entry("x", "first"))
    ctx.add_deferred("x", lambda: ctx.add_context_entry("x", ctx.query("x") + "-second"))
    assert ctx.query("x") == "first-second"


def test_context_entries_replace_maps(ctx):
    ctx.add_variable("cm", {"data": {"a": 1}})
    ctx.add_context_entry("cm", {"data": {"b": 2}})
    assert ctx.query("cm") == {"data": {"b": 2}}


# -- images ----------------------------------------------------------------------------------------------


def test_docs_images_variable(ctx):  # docs "Variables from container images"
    nginx = ctx.query("images.containers.nginx")
    digest = "sha256:5f44022eab9198d75939d9eaa5341bc077eca16fa51d4ef32d33f1bd4c8cbe7d"
    assert nginx == {"registry": "docker.io", "path": "nginx", "name": "nginx", "digest": digest,
                     "reference": f"docker.io/nginx@{digest}", "referenceWithTag": "docker.io/nginx:",
                     "jsonPointer": "/spec/containers/0/image"}
    vault = ctx.query("images.initContainers.vault")
    assert vault == {"registry": "ghcr.io", "path": "vault", "name": "vault", "tag": "v3",
                     "reference": "ghcr.io/vault:v3", "referenceWithTag": "ghcr.io/vault:v3",
                     "jsonPointer": "/spec/initContainers/0/image"}
    assert sorted(ctx.query("images.containers.*.name")) == ["nginx", "tool"]


def test_image_defaults():
    assert image_info("nginx").reference == "docker.io/nginx:latest"
    assert image_info("library/nginx:1.25").path == "library/nginx"
    info = image_info("localhost:5000/team/app:2")
    assert (info.registry, info.path, info.name, info.tag) == ("localhost:5000", "team/app", "app", "2")
    with pytest.raises(VariableError, match="invalid image 'UPPER'"):
        image_info("UPPER")


def test_images_of_controllers_and_other_kinds():
    deployment = {"kind": "Deployment", "spec": {"template": {"spec": {"containers": [{"name": "a", "image": "x"}]}}}}
    cronjob = {"kind": "CronJob", "spec": {"jobTemplate": {"spec": {"template": {"spec": {
        "containers": [{"name": "c", "image": "busybox:1"}], "ephemeralContainers": [{"name": "e", "image": " "}]}}}}}}
    assert images(deployment)["containers"]["a"]["jsonPointer"] == "/spec/template/spec/containers/0/image"
    assert images(cronjob) == {"containers": {"c": images(cronjob)["containers"]["c"]}}
    assert images(cronjob)["containers"]["c"]["tag"] == "1"
    assert images({"kind": "ConfigMap", "data": {}}) == {}
    context = KyvernoContext.for_cli({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}})
    with pytest.raises(VariableError) as caught:
        context.query("images.containers")
    assert caught.value.not_found


def test_a_bad_image_fails_only_when_images_are_used():
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
           "spec": {"containers": [{"name": "c", "image": "Bad Image"}]}}
    context = KyvernoContext.for_cli(pod)
    assert context.query("request.object.metadata.name") == "p"
    with pytest.raises(VariableError, match="invalid image 'Bad Image'"):
        context.query("images")


# -- $( ) references -------------------------------------------------------------------------------------------


def test_docs_references_and_escapes():  # docs: the OTEL_RESOURCE_ATTRIBUTES example
    rule = {"name": "imbue-pod-spec", "mutate": {"patchStrategicMerge": {"spec": {"containers": [{
        "(name)": "?*",
        "env": [{"name": "NODE_NAME", "value": "mutated_name"}, {
            "name": "OTEL_RESOURCE_ATTRIBUTES",
            "value": "k8s.namespace.name=\\$(POD_NAMESPACE), k8s.node.name=\\$(NODE_NAME), "
                     "rule_applied=$(./../../../../../../../../name)"}]}]}}}}
    result = substitute_references(rule)
    value = result["mutate"]["patchStrategicMerge"]["spec"]["containers"][0]["env"][1]["value"]
    assert value == "k8s.namespace.name=$(POD_NAMESPACE), k8s.node.name=$(NODE_NAME), rule_applied=imbue-pod-spec"


def test_references_to_sibling_fields_and_operators():
    pattern = {"spec": {"containers": [{"livenessProbe": {"tcpSocket": {
        "port": "$(./../../../readinessProbe/tcpSocket/port)",
        "host": "$(<./../../../readinessProbe/tcpSocket/port)",
        "count": "$(>=./../../../readinessProbe/tcpSocket/count)"}},
        "readinessProbe": {"tcpSocket": {"port": "3000", "count": 2}}}]}}
    probe = substitute_references(pattern)["spec"]["containers"][0]["livenessProbe"]["tcpSocket"]
    assert probe == {"port": "3000", "host": "<3000", "count": ">=2.000000"}


def test_unresolvable_references_are_errors():
    with pytest.raises(VariableError, match="got nil resolved variable"):
        substitute_references({"a": "$(./../missing)"})
    with pytest.raises(VariableError, match="NotResolvedReferenceErr"):
        substitute_references({"a": "$(./../b)", "b": 5})  # no operator: the value must be a string


def test_substitute_all_does_references_then_variables(ctx):
    document = {"message": "{{request.object.metadata.name}} has $(./../port)", "port": "80"}
    assert substitute_all(document, ctx)["message"] == "web has 80"


def test_shift_references_for_autogen():
    message = "image $(./../../pattern/spec/containers/0/image) and $(./../../pattern/spec/containers/0/image)"
    assert shift_references(message, "spec/template", "pattern") == message.replace(
        "pattern/spec/containers", "pattern/spec/template/spec/containers")
    assert shift_references("x $(./../../anyPattern/0/spec/a)", "spec/template", "anyPattern") == (
        "x $(./../../anyPattern/0/spec/template/spec/a)")


# -- cases from Kyverno's own tests (pkg/engine/variables/vars_test.go) ------------------------------------------

SHALLOW = {"variableWithVariables": "{{ DO_NOT_SUBSTITUTE_ME {{OR_ME}} }}", "foo": "bar", "foo2": "bar2",
           "variablesNested": "{{foo2}}"}


@pytest.mark.parametrize(("text", "expected"), [
    ("{{- variableWithVariables }} {{foo}} {{variablesNested}}", "{{ DO_NOT_SUBSTITUTE_ME {{OR_ME}} }} bar bar2"),
    ("{{foo}} {{- variableWithVariables }} {{variablesNested}}", "bar {{ DO_NOT_SUBSTITUTE_ME {{OR_ME}} }} bar2"),
])
def test_kyverno_shallow_cases(text, expected):
    assert substitute_variables(text, KyvernoContext(copy.deepcopy(SHALLOW))) == expected


def test_kyverno_shallow_inner_variables_are_still_substituted_first():
    with pytest.raises(VariableError, match="failed to resolve variableWithVariables bar bar2"):
        substitute_variables("{{- variableWithVariables {{foo}} {{variablesNested}} }}",
                             KyvernoContext(copy.deepcopy(SHALLOW)))


def test_kyverno_at_in_an_overlay():
    context = KyvernoContext()
    context.add_resource({"metadata": {"name": "temp", "namespace": "n1"}, "spec": {"kind": "foo"}})
    pattern = {"mutate": {"overlay": {"spec": {"kind": "{{@}}", "data": {"rules": [
        {"apiGroups": ["{{request.object.metadata.name}}"], "verbs": ["*"]}]}}}}}
    assert substitute_all(pattern, context) == {"mutate": {"overlay": {"spec": {"kind": "foo", "data": {"rules": [
        {"apiGroups": ["temp"], "verbs": ["*"]}]}}}}}


def test_kyverno_recursive_substitution():
    context = KyvernoContext()
    context.add_resource({"metadata": {"name": "temp", "annotations": {"test": "name"}}})
    assert substitute_variables("{{request.object.metadata.{{request.object.metadata.annotations.test}}}}",
                                context) == "temp"
    for text in ("{{request.object.metadata.{{request.object.metadata.annotations.test2}}}}",
                 "{{request.object.metadata2.{{request.object.metadata.annotations.test}}}}"):
        with pytest.raises(VariableError):
            substitute_variables(text, context)


def test_kyverno_delete_reads_the_old_object_even_when_nested():
    raw = {"request": {"operation": "DELETE",
                       "object": {"metadata": {"annotations": {"target": "foo"}}},
                       "oldObject": {"metadata": {"annotations": {"target": "bar", "targetnew": "target"}}}}}
    context = KyvernoContext(copy.deepcopy(raw))
    assert substitute_all("{{request.object.metadata.annotations.target}}", context) == "bar"
    nested = "{{request.object.metadata.annotations.{{request.object.metadata.annotations.targetnew}}}}"
    assert substitute_all(nested, context) == "bar"
    assert substitute_all("\\" + nested, context) == "{{request.object.metadata.annotations.target}}"


def test_kyverno_reference_substitution_with_escapes():
    document = {"metadata": {"annotations": {
        "test1": "$(../../../../spec/namespace)", "test2": "\\$(ENV_VAR)", "test3": "\\${ENV_VAR}",
        "test5": "\\$(NODE_NAME)/postgres/\\$(POD_NAME)"}}, "(spec)": {"namespace": "n1"}}
    annotations = substitute_all(document, KyvernoContext())["metadata"]["annotations"]
    assert annotations == {"test1": "n1", "test2": "$(ENV_VAR)", "test3": "\\${ENV_VAR}",
                           "test5": "$(NODE_NAME)/postgres/$(POD_NAME)"}


_TEXTS = st.sampled_from(["a", "{{ request.object.metadata.name }}", "x{{request.operation}}y", "$(./../a)",
                          "\\{{ escaped }}", "\\$(./b)", "{ {", "$ (", "{{", "}}", "$(", "plain text", ""])
_DOCUMENTS = st.recursive(
    st.one_of(_TEXTS, st.integers(), st.booleans(), st.none(), st.floats(allow_nan=False)),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(_TEXTS, inner, max_size=3)),
    max_leaves=10,
)


@given(_DOCUMENTS)
def test_a_document_without_markers_skips_the_walks_with_the_same_outcome(document):
    """`substitute_all` copies a document with no ``{{``/``$(`` instead of walking it twice: same value,
    or the same error, as the two substitutions give."""
    context = KyvernoContext.for_request(POD, operation="CREATE")

    def outcome(run):
        try:
            return "value", run()
        except VariableError as error:
            return "error", str(error)

    walked = outcome(lambda: substitute_variables(substitute_references(document), context))
    assert outcome(lambda: substitute_all(document, context)) == walked
    if not has_markers(document):
        copied = substitute_all(document, context)
        assert copied == document and (copied is not document or not isinstance(document, (dict, list)))
