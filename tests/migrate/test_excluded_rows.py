"""A test row on a resource the source rule excludes checks nothing in ``kyverno test`` (Excluded passes it,
whatever it expects); the converted policy says the exclusion as a match condition and skips the resource, so
the rewritten row leaves that resource out, with a note, and keeps every resource it does check."""

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


def _role(name: str, verb: str) -> dict:
    return {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": name},
            "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": [verb]}]}


def test_rows_on_excluded_resources_lose_them_with_a_note(tmp_path: Path) -> None:
    source = tmp_path / "src"
    source.mkdir()
    (source / "policy.yaml").write_text(POLICY)
    (source / "kyverno-test.yaml").write_text(TEST)
    (source / "resources.yaml").write_text(yaml.safe_dump_all(
        [_role("system:admin", "delete"), _role("system:reader", "delete"), _role("wild", "delete"),
         _role("tame", "get")]))
    report = migrate([source], tmp_path / "out")
    assert [rule.status for policy in report.policies for rule in policy.rules] == ["verified"]
    assert report.tests_failed == 0 and report.tests, report.test_failures
    rows = yaml.safe_load((tmp_path / "out" / "kyverno-test.yaml").read_text())["results"]
    assert [(row["resources"], row["result"]) for row in rows] == [(["wild"], "fail"), (["tame"], "pass")]
    notes = [note for note in report.notes if "the source rule does not select" in note]
    assert len(notes) == 2 and "system:admin left out of the row of rule verbs" in notes[0], report.notes
    assert "the row names nothing else and is left out" in notes[1]
