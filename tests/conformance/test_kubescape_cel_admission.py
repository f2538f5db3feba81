"""Kubescape's CEL admission library: 60 ValidatingAdmissionPolicies, 628 cases whose verdicts a real apiserver gave.

Each case (data/kubescape-cel-admission, read its README) is built as the library's own test runner builds it
(the object from a template and field changes, a binding and a parameter resource from templates) and checked
through the scan `assertree scan --policy ... --params ...` runs: ``fail`` when the policy denies (a FAIL or an
ERROR), ``warn`` when it only warns, ``pass`` otherwise.
"""

from __future__ import annotations

import copy
import json
from functools import cache
from pathlib import Path

import pytest
import yaml
from conftest import CONFORMANCE

from assertree.engine.scan import scan
from assertree.languages.base import ScanContext
from assertree.languages.load import compile_document, link

DATA = CONFORMANCE / "kubescape-cel-admission"
RESOURCES = DATA / "test-resources"


def _index(part: str) -> int | None:
    return int(part[1:-1]) if part.startswith("[") and part.endswith("]") and part[1:-1].isdigit() else None


def changed(document: dict, changes: list[str]) -> dict:
    """`document` with each ``field=value`` set, as the library's change-yaml-field.py sets it."""
    document = copy.deepcopy(document)
    for change in changes:
        field, _, text = change.partition("=")
        try:
            value = json.loads(text)
        except ValueError:
            value = text
        parts = field.split(".")
        node = document
        for position, part in enumerate(parts):
            key = _index(part)
            last = position == len(parts) - 1
            if isinstance(node, list):
                assert key is not None, change
                node.extend([None] * (key + 1 - len(node)))
            if last:
                node[key if key is not None else part] = value
                break
            child = node[key] if key is not None else node.get(part)
            if child is None:
                child = [] if _index(parts[position + 1]) is not None else {}
                node[key if key is not None else part] = child
            node = child
    return document


@cache
def _template(name: str) -> dict:
    return yaml.safe_load((RESOURCES / name).read_text())


def _cases():
    for control in sorted(path.parent for path in DATA.glob("controls/*/policy.yaml")):
        for position, case in enumerate(json.loads((control / "tests.json").read_text())):
            yield pytest.param(control.name, case, id=f"{control.name}#{position}:{case['expected']}")


@cache
def _policy(control: str) -> dict:
    return yaml.safe_load((DATA / "controls" / control / "policy.yaml").read_text())


def verdict(control: str, case: dict) -> tuple[str, list]:
    """pass, fail or warn, as the apiserver's answer to the case's object would read, and the results."""
    policy = _policy(control)
    name = policy["metadata"]["name"]
    binding = changed(_template(case.get("binding_template", "policy-binding.yaml")),
                      [f"spec.policyName={name}", f"metadata.name={name}-binding", f"spec.paramRef.name={name}-params"])
    params = changed(_template(case.get("param_template", "default-control-configuration.yaml")),
                     [f"metadata.name={name}-params"])
    resource = changed(_template(case["template"]), case.get("field_change_list", []))
    policies, unlinked = link([compile_document(policy), compile_document(binding)])
    assert not unlinked
    results = scan([resource], policies, context=ScanContext(params=(params,))).results
    statuses = {str(result.status) for result in results}
    found = "fail" if statuses & {"fail", "error"} else "warn" if "warn" in statuses else "pass"
    return found, [(str(result.status), result.message) for result in results]


@pytest.mark.parametrize(("control", "case"), list(_cases()))
def test_kubescape_case(control: str, case: dict) -> None:
    found, results = verdict(control, case)
    assert found == case["expected"], f"{case['name']}: {results}"


def test_every_policy_and_case_is_read() -> None:
    assert len(list(DATA.glob("controls/*/policy.yaml"))) == 60
    assert len(list(_cases())) == 628
    assert Path(RESOURCES / "policy-binding-warn.yaml").is_file()
