"""The Terraform plan adapter, on plans made by ../shared/bench/gen_tfplan.py and the corpus plans."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter

import pytest
from conftest import CONFORMANCE, GEN_TFPLAN

from assertree.errors import PayloadError
from assertree.inputs.terraform import looks_like_plan, plan_resources


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    folder = tmp_path_factory.mktemp("plan")
    plan, expected = folder / "plan.json", folder / "expected.json"
    subprocess.run(
        [sys.executable, str(GEN_TFPLAN), "--resources", "120", "--seed", "7",
         "--out", str(plan), "--expected", str(expected)],
        check=True, capture_output=True,
    )
    return json.loads(plan.read_text()), json.loads(expected.read_text())


def walk(document, path):
    for step in path:
        document = document[step]
    return document


def test_every_planned_resource_of_every_module(generated):
    plan, _ = generated
    resources = plan_resources(plan, "plan.json")
    modes = Counter(r.value["mode"] for r in resources)
    assert modes["managed"] == 120
    addresses = [r.value["address"] for r in resources]
    assert len(set(addresses)) == len(addresses)
    assert any(a.startswith('module.svc["') and ".module.data." in a for a in addresses)  # nested child modules


def test_resources_keep_their_fields_and_gain_their_change(generated):
    plan, _ = generated
    changes = {c["address"]: c["change"] for c in plan["resource_changes"]}
    for resource in plan_resources(plan):
        value = resource.value
        assert {"address", "mode", "type", "name", "values"} <= value.keys()
        if value["mode"] == "managed":
            assert value["change"] is changes[value["address"]]
            assert value["change"]["actions"] != ["delete"]
        assert walk(plan, resource.origin_path())["address"] == value["address"]
        assert resource.default_identifier == value["address"]


def test_deleted_resources_only_when_asked(generated):
    plan, _ = generated
    deleted = {c["address"] for c in plan["resource_changes"] if c["change"]["actions"] == ["delete"]}
    assert deleted, "the generator writes resources being destroyed"
    without = {r.value["address"] for r in plan_resources(plan)}
    assert not deleted & without
    with_deleted = plan_resources(plan, include_deleted=True)
    added = [r for r in with_deleted if r.value["address"] in deleted]
    assert {r.value["address"] for r in added} == deleted
    for resource in added:
        assert resource.value["values"] == resource.value["change"]["before"]
        assert walk(plan, resource.origin_path())["address"] == resource.value["address"]


@pytest.mark.parametrize("case", ["tf-plan", "tf-s3", "tf-ec2", "tf-ecs-cluster", "tf-ecs-service",
                                  "tf-ecs-task-definition"])
def test_corpus_plans(case):
    plan = json.loads((CONFORMANCE / "kyverno-json" / "scan" / case / "payload.json").read_text())
    assert looks_like_plan(plan)
    resources = plan_resources(plan)
    root = plan["planned_values"]["root_module"]
    assert [r.value["address"] for r in resources][: len(root.get("resources", []))] == [
        r["address"] for r in root.get("resources", [])
    ]


def test_not_a_plan():
    with pytest.raises(PayloadError, match="expects a plan from 'terraform show -json'"):
        plan_resources({"kind": "Pod"}, "pod.json")
    assert not looks_like_plan([{"planned_values": {}}])
