"""``configMap`` context entries: converted to ``resource.Get`` variables, proven on the ConfigMap the test's
values give (both sides read the same data), and the rewritten test given that ConfigMap in a context file."""

from __future__ import annotations

from pathlib import Path

import yaml

from assertree.migrate import migrate

POLICY = """\
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: allowed-classes
spec:
  validationFailureAction: Enforce
  rules:
    - name: priority-class
      context:
        - name: allowed
          configMap:
            name: allowed-classes
            namespace: platform
      match: {any: [{resources: {kinds: [Pod]}}]}
      validate:
        message: "{{ request.object.spec.priorityClassName || '' }} is not allowed"
        deny:
          conditions:
            any:
              - key: "{{ request.object.spec.priorityClassName || '' }}"
                operator: AnyNotIn
                value: "{{ allowed.data.\\"{{ request.namespace }}\\" || '' }}"
"""

TEST = """\
apiVersion: cli.kyverno.io/v1alpha1
kind: Test
metadata:
  name: allowed-classes
policies: [../policy.yaml]
resources: [resources.yaml]
variables: values.yaml
results:
  - {policy: allowed-classes, rule: priority-class, kind: Pod, resources: [good], result: pass}
  - {policy: allowed-classes, rule: priority-class, kind: Pod, resources: [bad], result: fail}
  - {policy: allowed-classes, rule: priority-class, kind: Pod, resources: [other], result: pass}
"""

VALUES = """\
apiVersion: cli.kyverno.io/v1alpha1
kind: Values
policies:
  - name: allowed-classes
    resources:
      - name: good
        values: {allowed.data.team-a: '["low", "medium"]', request.namespace: team-a}
      - name: bad
        values: {allowed.data.team-a: '["low", "medium"]', request.namespace: team-a}
      - name: other
        values: {allowed.data.team-b: '["high"]', request.namespace: team-b}
"""


def _pod(name: str, namespace: str, priority: str) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace},
            "spec": {"priorityClassName": priority, "containers": [{"name": "app", "image": "nginx:1.25"}]}}


def _sources(tmp_path: Path) -> Path:
    source = tmp_path / "src"
    (source / "tests").mkdir(parents=True)
    (source / "policy.yaml").write_text(POLICY)
    (source / "tests" / "kyverno-test.yaml").write_text(TEST)
    (source / "tests" / "values.yaml").write_text(VALUES)
    (source / "tests" / "resources.yaml").write_text(yaml.safe_dump_all(
        [_pod("good", "team-a", "low"), _pod("bad", "team-a", "high"), _pod("other", "team-b", "high")]))
    return source


def test_a_config_map_entry_reads_the_config_map_the_values_give(tmp_path: Path) -> None:
    report = migrate([_sources(tmp_path)], tmp_path / "out")
    rules = [rule for policy in report.policies for rule in policy.rules]
    assert [rule.status for rule in rules] == ["verified"], [rule.reason for rule in rules]
    assert report.tests_failed == 0 and report.tests, report.test_failures
    converted = next(yaml.safe_load_all((tmp_path / "out" / "policy.yaml").read_text()))
    assert converted["spec"]["variables"] == [
        {"name": "allowed", "expression": "resource.Get('v1', 'configmaps', 'platform', 'allowed-classes')"}]
    test = yaml.safe_load((tmp_path / "out" / "tests" / "kyverno-test.yaml").read_text())
    assert test["context"] == "configmaps.yaml"
    context = yaml.safe_load((tmp_path / "out" / "tests" / "configmaps.yaml").read_text())
    # one cluster holds one ConfigMap: what every resource's values give it, together
    assert context["spec"]["resources"] == [{
        "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "allowed-classes", "namespace": "platform"},
        "data": {"team-a": '["low", "medium"]', "team-b": '["high"]'}}]


def test_values_that_stand_for_the_resource_make_the_rule_differ_and_say_why(tmp_path: Path) -> None:
    source = _sources(tmp_path)
    values = yaml.safe_load(VALUES)
    values["policies"][0]["resources"][1]["values"]["request.object.spec.priorityClassName"] = "low"
    (source / "tests" / "values.yaml").write_text(yaml.safe_dump(values))
    (source / "tests" / "kyverno-test.yaml").write_text(TEST.replace("resources: [bad], result: fail",
                                                                      "resources: [bad], result: pass"))
    report = migrate([source], tmp_path / "out")
    rule = report.policies[0].rules[0]
    assert rule.status == "differs"
    assert rule.reason.startswith("the test's values set request.object.spec.priorityClassName, which Kyverno "
                                  "reads instead of the resource's own field"), rule.reason


def test_for_vap_a_config_map_entry_is_refused(tmp_path: Path) -> None:
    report = migrate([_sources(tmp_path)], tmp_path / "out", to="vap")
    rule = report.policies[0].rules[0]
    assert rule.status == "not-converted", rule.reason
    assert "as a ValidatingAdmissionPolicy it does not compile" in rule.reason, rule.reason
