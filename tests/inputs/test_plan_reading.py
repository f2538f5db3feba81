"""``scan --terraform`` reads a large plan for its planned resources only when no policy reads ``change``
(`assertree.inputs.plan_reading`), and nothing a user sees changes: every report is byte for byte the
whole read's, a plan the whole read refuses is refused with the same error, and what reads a resource
whole after the scan (a content fingerprint) gets the resource with its change.

The plans here are small, so `payload._MEMBERS_FROM` is lowered to read them as a large one is read.
"""

from __future__ import annotations

import json
import pickle
import subprocess
import sys

import pytest
from conftest import GEN_TFPLAN, REPO

from assertree.cli import main
from assertree.inputs import parallel, payload, plan_reading
from assertree.inputs.plan_reading import PLANNED, needs_whole
from assertree.inputs.resources import load_resources

POLICIES = REPO / "bench" / "reference" / "policies"  # eight Terraform policies; none reads `change`
READS_CHANGE = """\
apiVersion: json.kyverno.io/v1alpha1
kind: ValidatingPolicy
metadata:
  name: no-replace
spec:
  rules:
    - name: no-replace
      identifier: address
      match:
        any:
        - mode: managed
      assert:
        all:
        - check:
            (contains(change.actions, 'delete')): false
"""
NO_IDENTIFIER = """\
apiVersion: json.kyverno.io/v1alpha1
kind: ValidatingPolicy
metadata:
  name: tagged
spec:
  rules:
    - name: tagged
      identifier: values.nothing
      match:
        any:
        - type: aws_s3_bucket
      assert:
        all:
        - check:
            values:
              tags:
                Team: nobody
"""


@pytest.fixture(scope="module")
def plan(tmp_path_factory):
    folder = tmp_path_factory.mktemp("plan")
    path = folder / "plan.json"
    subprocess.run([sys.executable, str(GEN_TFPLAN), "--resources", "120", "--seed", "7", "--out", str(path),
                    "--expected", str(folder / "expected.json")], check=True, capture_output=True)
    return path


@pytest.fixture
def as_large(monkeypatch):
    """Every JSON payload read as a large one is (for the members asked for)."""
    monkeypatch.setattr(payload, "_MEMBERS_FROM", 0)


def scan_outputs(capsys, tmp_path, arguments: list[str]) -> tuple:
    """Exit code, standard output and error, and the reports written, of one scan."""
    formats = ("sarif", "json", "junit", "github")
    code = main(["scan", *arguments, "--terraform", "--color", "never", "-o", "text",
                 *(f"-o{name}={tmp_path / name}" for name in formats)])
    out = capsys.readouterr()
    return code, out.out, out.err, *((tmp_path / name).read_bytes() for name in formats)


def whole_and_partial(capsys, tmp_path, monkeypatch, arguments: list[str], *, partly: bool = True
                      ) -> tuple[tuple, tuple]:
    """The scan's outputs with the plan read whole, then as a large plan is read (`partly`: for its
    planned resources, which is checked)."""
    monkeypatch.setattr(payload, "_MEMBERS_FROM", 1 << 40)
    whole = scan_outputs(capsys, tmp_path, arguments)
    monkeypatch.setattr(payload, "_MEMBERS_FROM", 0)
    read = []
    monkeypatch.setattr(plan_reading, "needs_whole", lambda value: read.append(value) or needs_whole(value))
    partial = scan_outputs(capsys, tmp_path, arguments)
    assert bool(read) == partly
    return whole, partial


def test_a_plan_is_read_for_its_planned_resources(plan, as_large) -> None:
    fields = frozenset({"address", "mode", "type", "values"})
    loaded = load_resources([str(plan)], terraform=True, fields=fields)
    whole = load_resources([str(plan)], terraform=True)
    assert loaded.unfinished and not whole.unfinished
    # the members before planned_values come too, small as they are, so that a report's locator spells its
    # way to the resources as on a whole read (rather than walking the text)
    assert list(loaded.resources[0].root) == ["format_version", "terraform_version", "variables", "planned_values"]
    assert [{k: v for k, v in r.value.items() if k != "change"} for r in whole.resources] == [
        r.value for r in loaded.resources]
    assert [r.origin for r in loaded.resources] == [r.origin for r in whole.resources]
    loaded.complete()
    assert [r.value for r in loaded.resources] == [r.value for r in whole.resources]
    assert not loaded.unfinished


@pytest.mark.parametrize("fields", [None, frozenset({"values", "change"})])
def test_a_plan_is_read_whole_when_change_may_be_read(plan, as_large, fields) -> None:
    loaded = load_resources([str(plan)], terraform=True, fields=fields)
    assert not loaded.unfinished
    assert sum("change" in r.value for r in loaded.resources) == 120  # every managed resource's
    deleted = load_resources([str(plan)], terraform=True, fields=frozenset({"values"}), include_deleted=True)
    assert not deleted.unfinished


@pytest.mark.parametrize("options", [[], ["--explain"]])
def test_every_report_is_the_whole_reads(capsys, tmp_path, monkeypatch, plan, options) -> None:
    whole, partial = whole_and_partial(capsys, tmp_path, monkeypatch, [str(plan), "--policy", str(POLICIES),
                                                                       *options])
    assert partial == whole
    assert whole[0] == 1 and "failed" in whole[1]


def test_a_policy_that_reads_change_sees_it(capsys, tmp_path, monkeypatch, plan) -> None:
    (tmp_path / "change.yaml").write_text(READS_CHANGE)
    arguments = [str(plan), "--policy", str(POLICIES), "--policy", str(tmp_path / "change.yaml")]
    whole, partial = whole_and_partial(capsys, tmp_path, monkeypatch, arguments, partly=False)
    assert partial == whole
    assert "no-replace" in whole[1] and "field not found" not in whole[1]


def test_a_finding_without_identifier_is_fingerprinted_by_its_whole_resource(capsys, tmp_path, monkeypatch,
                                                                             plan) -> None:
    """Its fingerprint hashes the resource, `change` and all: the plan's changes are read after the scan."""
    (tmp_path / "tagged.yaml").write_text(NO_IDENTIFIER)
    whole, partial = whole_and_partial(capsys, tmp_path, monkeypatch, [str(plan), "--policy", str(tmp_path)])
    assert partial == whole
    assert b'"assertree/v2"' in whole[3] and whole[0] == 1


@pytest.mark.parametrize(("find", "replace"), [
    ('"change":{"actions":', '"change":"x","was":{"actions":'),  # a change that is not an object
    ('"actions":["create"]', '"actions":"create"'),  # actions not a list
    ('"resource_changes":[', '"resource_changes":{"x":['),  # not a list
])
def test_a_bad_resource_changes_is_the_whole_reads_error(capsys, tmp_path, monkeypatch, plan, find, replace) -> None:
    text = json.dumps(json.loads(plan.read_text()), separators=(",", ":"))
    assert find in text
    if replace.endswith("{\"x\":["):
        text = text.replace(find, replace, 1).replace('],"output_changes"', ']},"output_changes"', 1)
    else:
        text = text.replace(find, replace, 1)
    bad = tmp_path / "bad.json"
    bad.write_text(text)
    whole, partial = whole_and_partial(capsys, tmp_path, monkeypatch, [str(bad), "--policy", str(POLICIES)],
                                       partly=False)  # the check of resource_changes sends it to the whole read
    assert partial[:3] == whole[:3]
    assert whole[0] == 2 and "resource_changes" in whole[2] and "Traceback" not in whole[2]


def test_a_state_or_a_plan_without_version_is_read_whole(capsys, tmp_path, monkeypatch, plan) -> None:
    value = json.loads(plan.read_text())
    state = tmp_path / "state.json"
    state.write_text(json.dumps({"format_version": "1.0", "terraform_version": "1.9.0",
                                 "values": value["planned_values"]}))
    whole, partial = whole_and_partial(capsys, tmp_path, monkeypatch, [str(state), "--policy", str(POLICIES)])
    assert partial[:3] == whole[:3] and whole[0] == 2 and "Terraform state" in whole[2]
    del value["terraform_version"]
    unversioned = tmp_path / "unversioned.json"
    unversioned.write_text(json.dumps(value))
    whole, partial = whole_and_partial(capsys, tmp_path, monkeypatch, [str(unversioned), "--policy", str(POLICIES)])
    assert partial == whole and whole[0] == 1


def test_reports_that_print_whole_resources_read_the_plan_whole(capsys, tmp_path, monkeypatch, plan) -> None:
    monkeypatch.setattr(payload, "_MEMBERS_FROM", 0)
    code = main(["scan", str(plan), "--policy", str(POLICIES), "--terraform", "-o", "json", "--kyverno-json"])
    printed = json.loads(capsys.readouterr().out)
    assert code == 1
    assert any("change" in report["resource"] for report in printed)


def test_a_worker_process_reads_the_same_members(plan, as_large) -> None:
    """``--jobs``: what a plan is read for travels to the worker processes (`inputs.parallel._read_chunk`)."""
    assert pickle.loads(pickle.dumps(PLANNED)) == PLANNED
    outcome = parallel._read_chunk([str(plan)], members=PLANNED)[0]
    assert isinstance(outcome, payload.Payload) and outcome.partial
    assert "planned_values" in outcome.value and "resource_changes" not in outcome.value
