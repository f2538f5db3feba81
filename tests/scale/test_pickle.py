"""Compiled policies of every language pickle, and scan the same once unpickled, here or in a new process."""

from __future__ import annotations

import pickle
import subprocess
import sys
import textwrap

import pytest
from scale_cases import CASES, policies, resources, scan_fields, single_scan

import assertree
from assertree.scale.records import light, scan_result

# A fresh interpreter: unpickles each case's policies (nothing compiled in it yet), scans the resources as
# a worker does, and sends the records back.
FRESH_WORKER = textwrap.dedent("""
    import pickle, sys
    from assertree.scale.worker import scan_records
    cases = pickle.load(sys.stdin.buffer)
    pickle.dump({name: scan_records(items, compiled) for name, (compiled, items) in cases.items()}, sys.stdout.buffer)
""")


@pytest.fixture(scope="module")
def fresh_records():
    cases = {name: (policies(name), [light(item) for item in resources(name)]) for name in CASES}
    done = subprocess.run([sys.executable, "-c", FRESH_WORKER], input=pickle.dumps(cases), capture_output=True,
                          check=True, timeout=120)
    return pickle.loads(done.stdout)


@pytest.mark.parametrize("name", sorted(CASES))
def test_unpickled_in_the_same_process_scans_the_same(name):
    compiled = policies(name)
    copies = pickle.loads(pickle.dumps(compiled))
    assert [type(copy) for copy in copies] == [type(policy) for policy in compiled]
    assert not any(copy is policy for copy, policy in zip(copies, compiled))
    items = resources(name)
    assert scan_fields(assertree.scan(items, copies)) == scan_fields(single_scan(name))


@pytest.mark.parametrize("name", sorted(CASES))
def test_unpickled_in_a_fresh_process_scans_the_same(name, fresh_records):
    compiled, items = policies(name), resources(name)
    assert scan_fields(scan_result(fresh_records[name], compiled, items)) == scan_fields(single_scan(name))


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_policy_pickles_as_its_document_and_compiles_once_per_process(name):
    for policy in policies(name):
        data = pickle.dumps(policy)
        assert len(data) < len(pickle.dumps(policy.policy.document)) + 1000  # the document and where it was read
        first = pickle.loads(data)
        assert pickle.loads(data) is first  # a worker receiving the policy again does not compile it again
        assert (first.policy.name, first.policy.source, first.policy.document_index, first.policy.line) == (
            policy.policy.name, policy.policy.source, policy.policy.document_index, policy.policy.line)
        assert [rule.name for rule in first.policy.rules] == [rule.name for rule in policy.policy.rules]


def test_a_kyverno_json_policy_built_from_a_model_pickles_as_the_model():
    from assertree.languages.kyverno_json.compile import compile_policy
    from assertree.languages.kyverno_json.model import policy_from_document

    document = policies("kyverno-json")[0].policy.document
    model = policy_from_document(document)
    model.document = {}  # as a policy written in Python has none
    copy = pickle.loads(pickle.dumps(compile_policy(model)))
    items = resources("kyverno-json")
    assert scan_fields(assertree.scan(items, [copy])) == scan_fields(assertree.scan(items, [compile_policy(model)]))
