"""Rule context entries, loaded as the offline Kyverno CLI loads them (loaders/variable.go, store/contextloader.go)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from conftest import CONFORMANCE

from assertree.languages.kyverno.autogen import compute_rules
from assertree.languages.kyverno.context import SkippedEntry, evaluate_variable, load_context
from assertree.languages.kyverno.manifests import read_manifests
from assertree.languages.kyverno.substitution import VariableError
from assertree.languages.kyverno.values import RuleValues, load_values
from assertree.languages.kyverno.variables import KyvernoContext, substitute_variables

POLICIES = CONFORMANCE / "kyverno-policies"
POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "namespace": "shop", "labels": {"app": "a"}},
       "spec": {"containers": [{"name": "c", "image": "nginx"}],
                "volumes": [{"name": "data", "hostPath": {"path": "/data"}}, {"name": "tmp", "emptyDir": {}}]}}


@pytest.fixture
def ctx() -> KyvernoContext:
    return KyvernoContext.for_cli(POD)


def _value(ctx: KyvernoContext, entries: list[dict], name: str):
    load_context(entries, ctx)
    return ctx.query(name)


# -- variable entries (docs examples from seeds/kyverno-variables.md "Inline Variables") ----------------------


def test_docs_static_value(ctx):
    assert _value(ctx, [{"name": "foodata", "variable": {"value": "foo"}}], "foodata") == "foo"


def test_docs_jmespath_on_the_context(ctx):
    assert _value(ctx, [{"name": "objName", "variable": {"jmesPath": "request.object.metadata.name"}}],
                  "objName") == "web"


def test_docs_nested_value_with_default_and_jmespath(ctx):
    entry = {"name": "nested-metadata", "variable": {
        "value": {"metadata": {"labels": {"name": "{{ request.object.metadata.name }}"}}},
        "default": "{}", "jmesPath": "to_string(@)"}}
    assert _value(ctx, [entry], '"nested-metadata"') == '{"metadata":{"labels":{"name":"web"}}}'


def test_docs_a_variable_used_in_a_later_jmespath(ctx):
    entries = [{"name": "jpExpression", "variable": {"value": "name"}},
               {"name": "objName", "variable": {"value": {"name": "{{ request.object.metadata.name }}"},
                                                "jmesPath": "{{ jpExpression }}"}}]
    assert _value(ctx, entries, "objName") == "web"


def test_docs_precondition_default(ctx):  # seeds/kyverno-preconditions.md: hostpathvolnames with default []
    entries = [{"name": "hostpathvolnames", "variable": {"jmesPath": "request.object.spec.volumes[?hostPath].name",
                                                         "default": []}}]
    load_context(entries, ctx)
    assert substitute_variables("{{ length(hostpathvolnames) }}", ctx) == 1


def test_default_replaces_a_failed_or_null_lookup(ctx):
    entries = [{"name": "team", "variable": {"jmesPath": "request.object.metadata.labels.team", "default": "none"}},
               {"name": "nothing", "variable": {"jmesPath": "request.object.metadata.nope || `null`", "default": 0}}]
    load_context(entries, ctx)
    assert ctx.query("team") == "none"
    assert ctx.query("nothing") == 0


def test_a_null_result_without_default_is_an_error(ctx):
    with pytest.raises(VariableError, match="since it evaluated to nil"):
        _value(ctx, [{"name": "x", "variable": {"jmesPath": "request.object.metadata.labels.team || `null`"}}], "x")
    with pytest.raises(VariableError, match=r"failed to apply jmespath request\.object\.metadata\.labels\.team"):
        _value(ctx, [{"name": "y", "variable": {"jmesPath": "request.object.metadata.labels.team"}}], "y")


def test_value_filtered_by_jmespath_ignores_default_when_the_result_is_null(ctx):
    # loaders/variable.go: a successful jmesPath on `value` wins even when it is null, and null is an error
    entry = {"name": "v", "variable": {"value": {"a": None}, "jmesPath": "a", "default": "d"}}
    with pytest.raises(VariableError, match="evaluated to nil"):
        _value(ctx, [entry], "v")
    missing = {"name": "w", "variable": {"value": {"a": 1}, "jmesPath": "b", "default": "d"}}
    assert _value(ctx, [missing], "w") == "d"  # an unknown key is an error, so the default applies


def test_entries_see_earlier_entries_only(ctx):
    entries = [{"name": "first", "variable": {"value": "{{ second }}"}},
               {"name": "second", "variable": {"value": "two"}}]
    load_context(entries, ctx)
    with pytest.raises(VariableError, match='failed to substitute variables in context entry first'):
        ctx.query("first")


def test_entries_load_lazily(ctx):
    entries = [{"name": "broken", "variable": {"jmesPath": "request.object.nope"}},
               {"name": "fine", "variable": {"value": "ok"}}]
    load_context(entries, ctx)
    assert substitute_variables("{{ fine }}", ctx) == "ok"  # `broken` is never named: no error
    with pytest.raises(VariableError):
        substitute_variables("{{ broken }}", ctx)


def test_redefined_names_take_the_last_value(ctx):
    entries = [{"name": "x", "variable": {"value": 1}}, {"name": "x", "variable": {"value": "{{ add(x, `1`) }}"}}]
    assert _value(ctx, entries, "x") == 2


def test_an_entry_without_a_kind_is_an_error(ctx):
    with pytest.raises(VariableError, match=r"missing ConfigMap\|APICall\|ImageRegistry\|Variable"):
        load_context([{"name": "x"}], ctx)


def test_evaluate_variable_directly(ctx):
    assert evaluate_variable("n", {"jmesPath": "length(request.object.spec.volumes)"}, ctx) == 2


# -- offline entries and values-file variables -----------------------------------------------------------------


def test_offline_entries_are_skipped_and_read_from_values(ctx):
    entries = [{"name": "cm", "configMap": {"name": "x", "namespace": "y"}},
               {"name": "api", "apiCall": {"urlPath": "/api/v1/pods"}},
               {"name": "img", "imageRegistry": {"reference": "{{ request.object.spec.containers[0].image }}"}},
               {"name": "g", "globalReference": {"name": "gctx"}}]
    values = RuleValues("r", {"cm.data.key": "from-values"}, {})
    skipped = load_context(entries, ctx, values=values)
    assert skipped == [SkippedEntry("cm", "configMap"), SkippedEntry("api", "apiCall"),
                       SkippedEntry("img", "imageRegistry"), SkippedEntry("g", "globalReference")]
    assert ctx.query("cm.data.key") == "from-values"
    with pytest.raises(VariableError) as caught:  # no values for it: an unknown variable
        ctx.query("api.items")
    assert caught.value.not_found


def test_foreach_values_take_the_first_element_as_the_cli_does(ctx):
    values = RuleValues("r", {"a": 1}, {"b": ["x", "y"]})
    load_context([], ctx, values=values)
    assert (ctx.query("a"), ctx.query("b")) == (1, "x")
    load_context([], ctx, values=values, foreach_index=1)
    assert ctx.query("b") == "y"


# -- real policies of the conformance corpus -------------------------------------------------------------------


def _policy(path: str) -> dict:
    return yaml.safe_load((POLICIES / path).read_text())


def _resource(folder: str, name: str) -> dict:
    for file in sorted(Path(POLICIES / folder / ".kyverno-test").glob("*.yaml")):
        for manifest in read_manifests(file):
            if manifest.value.get("metadata", {}).get("name") == name:
                return manifest.value
    raise LookupError(name)


def _cli_context(policy: dict, rule: dict, resource: dict, values) -> KyvernoContext:
    """The context `kyverno test` builds for (policy, rule, resource) with a values file."""
    variables = values.resource_values(policy["metadata"]["name"], resource["metadata"]["name"])
    context = KyvernoContext.for_cli(resource, operation=variables["request.operation"])
    for key, value in variables.items():
        context.add_variable(key, value)
    context.checkpoint()
    load_context(rule.get("context"), context, values=values.rule(policy["metadata"]["name"], rule["name"]))
    return context


def test_allowed_pod_priorities_on_the_autogen_rule():
    folder = "other/allowed-pod-priorities"
    policy = _policy(f"{folder}/allowed-pod-priorities.yaml")
    values = load_values(POLICIES / folder / ".kyverno-test/values.yaml")
    rule = next(r for r in compute_rules(policy) if r["name"] == "autogen-validate-pod-priority")
    deployment = _resource(folder, "mydeploy")
    context = _cli_context(policy, rule, deployment, values)
    condition = substitute_variables(rule["validate"]["deny"]["conditions"]["any"][0], context)
    assert condition["key"] == deployment["spec"]["template"]["spec"]["priorityClassName"]
    assert condition["value"] == '["high-priority", "moderate-priority", "low-priority"]'


def test_restrict_service_account_reads_mocked_config_map_and_images():
    folder = "other/restrict-service-account"
    policy = _policy(f"{folder}/restrict-service-account.yaml")
    values = load_values(POLICIES / folder / ".kyverno-test/values.yaml")
    rule = policy["spec"]["rules"][0]
    good = _cli_context(policy, rule, _resource(folder, "goodpod01"), values)
    condition = substitute_variables(rule["validate"]["deny"]["conditions"]["any"][0], good)
    assert condition["key"] == "docker.io/busybox"
    assert condition["value"] == '["docker.io/busybox","docker.io/busybox:1.28"]'
    bad = _cli_context(policy, rule, _resource(folder, "badpod01"), values)
    assert substitute_variables(rule["validate"]["deny"]["conditions"]["any"][0], bad)["key"] == "docker.io/nginx"
    message = substitute_variables(rule["validate"]["message"], bad)
    assert message == "Invalid service account busybox for image docker.io/nginx"  # the values file set the SA


def test_backup_all_volumes_variable_entry():
    folder = "velero/backup-all-volumes"
    policy = _policy(f"{folder}/backup-all-volumes.yaml")
    values = load_values(POLICIES / folder / ".kyverno-test/values.yaml")
    rule = policy["spec"]["rules"][0]
    context = _cli_context(policy, rule, _resource(folder, "first"), values)
    patch = substitute_variables(rule["mutate"]["patchStrategicMerge"], context,
                                 path=("mutate", "patchStrategicMerge"))
    assert patch == {"metadata": {"annotations": {"backup.velero.io/backup-volumes": "task-pv-storage"}}}
    preconditions = substitute_variables(rule["preconditions"], context)
    assert [c["key"] for c in preconditions["all"]] == [1, "CREATE"]


def test_block_stale_images_values_set_nested_image_data():
    folder = "other/block-stale-images"
    policy = _policy(f"{folder}/block-stale-images.yaml")
    values = load_values(POLICIES / folder / ".kyverno-test/values.yaml")
    rule = policy["spec"]["rules"][0]
    resource = read_manifests(POLICIES / folder / ".kyverno-test/bad.yaml")[0].value
    context = _cli_context(policy, rule, resource, values)  # values are added even though the rule has no context
    assert context.query("imageData.configData.created") == "2020-05-01T03:15:12-07:00"
    foreach = rule["validate"]["foreach"][0]
    context.checkpoint()
    context.add_element(resource["spec"]["containers"][0], 0)
    skipped = load_context(foreach["context"], context, values=values.rule("block-stale-images", rule["name"]))
    assert skipped == [SkippedEntry("imageData", "imageRegistry")]
    key = foreach["deny"]["conditions"]["all"][0]["key"]
    assert substitute_variables(key, context).endswith("s")  # a Go duration since the mocked creation time


def test_foreach_context_entries_are_evaluated_for_each_element(ctx):
    foreach_context = [{"name": "volume", "variable": {"jmesPath": "element.name"}}]
    ctx.checkpoint()
    seen = []
    for index, volume in enumerate(POD["spec"]["volumes"]):
        ctx.reset()
        ctx.add_element(volume, index)
        load_context(foreach_context, ctx)
        seen.append(substitute_variables("{{ elementIndex }}={{ volume }}", ctx))
    ctx.restore()
    assert seen == ["0=data", "1=tmp"]
    with pytest.raises(VariableError):
        ctx.query("volume")
