"""The library behind ``assertree apply``: mutate rules on resources and files, as data."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from assertree.apply import apply_mutations, apply_to_files, apply_to_text, load_mutate_policies
from assertree.errors import PolicyError
from assertree.languages.kyverno.language import compile_document
from assertree.languages.kyverno.manifests import parse_manifests
from assertree.results import PASS, SKIP, Resource

MUTATE = Path(__file__).resolve().parents[2] / "samples" / "kubernetes" / "mutate"

ADD_TEAM = yaml.safe_load("""
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: add-team}
spec:
  rules:
    - name: team
      match: {any: [{resources: {kinds: [Deployment]}}]}
      mutate:
        patchStrategicMerge:
          metadata:
            labels:
              +(team): "{{ request.object.metadata.name }}-owners"
""")

TWO_DOCUMENTS = """\
# a Service the rule does not select, then a Deployment it fixes
apiVersion: v1
kind: Service
metadata:
  name: web   # unchanged
spec: {ports: [{port: 80}]}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels:
    app: web    # the app label
spec:
  replicas: 2
"""


def test_apply_mutations_gives_origin_values_and_results() -> None:
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "a"}}
    labelled = {**deployment, "metadata": {**deployment["metadata"], "labels": {"team": "x"}}}
    applied = apply_mutations([Resource(deployment, source="f.yaml", document=3), labelled],
                              [compile_document(ADD_TEAM)])
    first, second = applied
    assert (first.source, first.document) == ("f.yaml", 3)
    assert first.original == deployment and "labels" not in deployment["metadata"]  # the input is not touched
    assert first.mutated["metadata"]["labels"] == {"team": "web-owners"}
    assert first.changed and [r.status for r in first.results] == [PASS] and first.applied_rules == first.results
    assert first.results[0].patched == first.mutated
    assert not second.changed and [r.status for r in second.results] == [SKIP] and second.source is None


def test_a_file_keeps_the_documents_no_rule_changed() -> None:
    change = apply_to_text(TWO_DOCUMENTS, "two.yaml", [compile_document(ADD_TEAM)])
    assert change.changed
    head = TWO_DOCUMENTS[:TWO_DOCUMENTS.index("---")]
    assert change.new_text.startswith(head)
    assert change.new_text == TWO_DOCUMENTS.replace("    app: web    # the app label\n",
                                                    "    app: web    # the app label\n    team: web-owners\n")
    assert [item.document for item in change.applied] == [0, 1]
    assert change.diff().startswith("--- a/two.yaml\n+++ b/two.yaml\n")


def test_windows_line_endings_and_a_byte_order_mark_are_kept(tmp_path: Path) -> None:
    path = tmp_path / "crlf.yaml"
    path.write_bytes(("\ufeff" + TWO_DOCUMENTS).replace("\n", "\r\n").encode("utf-8"))
    [change] = apply_to_files([path], [compile_document(ADD_TEAM)])
    assert change.new_text.startswith("\ufeff# a Service")
    assert "\r\n    team: web-owners\r\n" in change.new_text and "\n" not in change.new_text.replace("\r\n", "")


def test_json_files_are_written_as_json(tmp_path: Path) -> None:
    path = tmp_path / "deploy.json"
    path.write_text('{\n  "apiVersion": "apps/v1",\n  "kind": "Deployment",\n  "metadata": {"name": "api"}\n}\n')
    [change] = apply_to_files([path], [compile_document(ADD_TEAM)])
    assert change.new_text == ('{\n  "apiVersion": "apps/v1",\n  "kind": "Deployment",\n  "metadata": {\n'
                               '    "name": "api",\n    "labels": {\n      "team": "api-owners"\n    }\n  }\n}\n')


def test_written_text_reads_back_as_the_mutated_resources() -> None:
    loaded = load_mutate_policies([MUTATE])
    [change] = apply_to_files([MUTATE.parent / "deployment-bad.yaml"], loaded.policies, context=loaded.context)
    reread = [manifest.value for manifest in parse_manifests(change.new_text)]
    assert reread == [item.mutated for item in change.applied]


def test_the_sample_policies_load_with_their_context(tmp_path: Path) -> None:
    loaded = load_mutate_policies([MUTATE])
    assert sorted(p.policy.name for p in loaded.policies) == ["cap-memory-limits", "fix-workloads"]
    assert loaded.context.operation == "CREATE" and loaded.context.exceptions == ()


def test_policy_exceptions_beside_the_policies_exempt_resources(tmp_path: Path) -> None:
    (tmp_path / "policy.yaml").write_text(yaml.safe_dump(ADD_TEAM))
    (tmp_path / "exception.yaml").write_text("""
apiVersion: kyverno.io/v2
kind: PolicyException
metadata: {name: legacy, namespace: default}
spec:
  exceptions: [{policyName: add-team, ruleNames: [team]}]
  match: {any: [{resources: {kinds: [Deployment], names: [web]}}]}
""")
    loaded = load_mutate_policies([tmp_path])
    change = apply_to_text(TWO_DOCUMENTS, "two.yaml", loaded.policies, context=loaded.context)
    assert not change.changed
    assert [r.status for r in change.applied[1].results] == [SKIP]


def test_no_mutating_policy_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(PolicyError, match="no policy with mutate or generate rules"):
        load_mutate_policies([MUTATE.parent / "policies"])
