"""A test row on a resource the source rule excludes checks nothing in ``kyverno test`` (Excluded passes it,
whatever it expects). The converted policy says the exclusion as a match condition, which skips the resource;
where the exclusion goes by kind and name only, the names (and the tests' resources its wildcards match) are
also excluded declaratively, so that the converted policy gives no result either and every row stands.
Otherwise the rewritten row leaves that resource out, with a note, and keeps every resource it does check."""

from __future__ import annotations

from pathlib import Path

import yaml

from assertree.migrate import migrate

POLICY = """\
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: no-delete
spec:
  validationFailureAction: Audit
  rules:
    - name: verbs
      match: {any: [{resources: {kinds: [ClusterRole]}}]}
      exclude: {any: [{resources: {kinds: [ClusterRole], names: ["system:*"]}}]}
      validate:
        deny:
          conditions:
            any:
              - key: "{{ request.object.rules[].verbs[] || `[]` }}"
                operator: AnyIn
                value: [delete]
"""

TEST = """\
apiVersion: cli.kyverno.io/v1alpha1
kind: Test
metadata:
  name: no-delete
policies: [policy.yaml]
resources: [resources.yaml]
results:
  - {policy: no-delete, rule: verbs, kind: ClusterRole, resources: ["system:admin", wild], result: fail}
  - {policy: no-delete, rule: verbs, kind: ClusterRole, resources: ["system:reader"], result: pass}
  - {policy: no-delete, rule: verbs, kind: ClusterRole, resources: [tame], result: pass}
"""


def _role(name: str, verb: str, **labels: str) -> dict:
    metadata: dict = {"name": name, "labels": labels} if labels else {"name": name}
    return {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": metadata,
            "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": [verb]}]}


def test_an_exclusion_by_name_is_also_declared_and_every_row_stands(tmp_path: Path) -> None:
    source = tmp_path / "src"
    source.mkdir()
    (source / "policy.yaml").write_text(POLICY)
    (source / "kyverno-test.yaml").write_text(TEST)
    (source / "resources.yaml").write_text(yaml.safe_dump_all(
        [_role("system:admin", "delete"), _role("system:reader", "delete"), _role("wild", "delete"),
         _role("tame", "get")]))
    report = migrate([source], tmp_path / "out")
    assert [rule.status for policy in report.policies for rule in policy.rules] == ["verified"]
    assert report.tests_failed == 0 and report.tests == "Test Summary: 4 tests passed and 0 tests failed"
    rows = yaml.safe_load((tmp_path / "out" / "kyverno-test.yaml").read_text())["results"]
    assert [row["resources"] for row in rows] == [["system:admin", "wild"], ["system:reader"], ["tame"]]
    converted = yaml.safe_load((tmp_path / "out" / "policy.yaml").read_text())
    assert converted["spec"]["matchConstraints"]["excludeResourceRules"] == [{
        "apiGroups": ["rbac.authorization.k8s.io"], "apiVersions": ["*"], "resources": ["clusterroles"],
        "operations": ["*"], "resourceNames": ["system:admin", "system:reader"]}]
    assert not any("the source rule does not select" in note for note in report.notes)


def test_rows_on_resources_excluded_otherwise_lose_them_with_a_note(tmp_path: Path) -> None:
    source = tmp_path / "src"
    source.mkdir()
    (source / "policy.yaml").write_text(POLICY.replace('names: ["system:*"]', "selector: {matchLabels: {core: 'yes'}}"))
    (source / "kyverno-test.yaml").write_text(TEST)
    (source / "resources.yaml").write_text(yaml.safe_dump_all(
        [_role("system:admin", "delete", core="yes"), _role("system:reader", "delete", core="yes"),
         _role("wild", "delete"), _role("tame", "get")]))
    report = migrate([source], tmp_path / "out")
    assert [rule.status for policy in report.policies for rule in policy.rules] == ["verified"]
    assert report.tests_failed == 0 and report.tests, report.test_failures
    rows = yaml.safe_load((tmp_path / "out" / "kyverno-test.yaml").read_text())["results"]
    assert [(row["resources"], row["result"]) for row in rows] == [(["wild"], "fail"), (["tame"], "pass")]
    notes = [note for note in report.notes if "the source rule does not select" in note]
    assert len(notes) == 2 and "system:admin left out of the row of rule verbs" in notes[0], report.notes
    assert "the row names nothing else and is left out" in notes[1]
