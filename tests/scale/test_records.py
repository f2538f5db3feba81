"""A worker's records turn back into the very scan a single process makes (assertree.scale.records)."""

from __future__ import annotations

import pickle

import pytest
from scale_cases import CASES, policies, resources, scan_fields, single_scan

import assertree
from assertree.results import Resource
from assertree.scale.records import light, scan_result
from assertree.scale.worker import scan_records
from assertree.tree.fieldpath import NOT_IN_PAYLOAD

# One rule that gives every kind of data a record carries: field errors with and without an expected
# value, paths with steps in and out of the payload, a feedback value and a feedback error, an identifier
# and an identifier that failed, a rule error.
EVERYTHING = {
    "apiVersion": "json.kyverno.io/v1alpha1", "kind": "ValidatingPolicy", "metadata": {"name": "records"},
    "spec": {"rules": [{
        "name": "everything",
        "identifier": "to_string(length(owner))",
        "feedback": [{"name": "size", "value": "(length(tags))"}, {"name": "kind", "value": "bucket"}],
        "assert": {"all": [
            {"message": "{{ name }} is not encrypted", "check": {"encrypted": True}},
            {"check": {"(length(tags) > `1`)": True}},
            {"check": {"owner": {"(@ != null)": True}}},
        ]},
    }]},
}
BUCKETS = [{"name": "a", "encrypted": False, "tags": [1]},
           {"name": "b", "encrypted": True, "tags": [1, 2], "owner": "x"},
           {"name": "c"}]


def through_records(items: list, compiled: list, *, originals: bool = True) -> assertree.ScanResult:
    """`items` scanned as a worker would, the records moved by pickle, and turned back into a scan."""
    records = pickle.loads(pickle.dumps(scan_records([light(item) for item in items], compiled)))
    return scan_result(records, compiled, items if originals else None)


@pytest.mark.parametrize("name", sorted(CASES))
def test_records_give_back_the_single_process_scan(name):
    compiled, items, expected = policies(name), resources(name), single_scan(name)
    assert expected.results  # the case finds something
    back = through_records(items, compiled)
    assert scan_fields(back) == scan_fields(expected)
    assert back.policies == expected.policies  # the parent's own policy objects: skipped() matches by identity
    assert all(a is b for a, b in zip(back.resources, expected.resources) if a.value is b.value)


@pytest.mark.parametrize("name", sorted(CASES))
def test_without_the_parents_resources_records_carry_value_and_provenance(name):
    compiled, items = policies(name), resources(name)
    assert scan_fields(through_records(items, compiled, originals=False)) == scan_fields(single_scan(name))


def test_every_kind_of_result_data_survives():
    compiled = [assertree.compile_document(EVERYTHING)]
    expected = assertree.scan(BUCKETS, compiled)
    errors = [error for result in expected.results for violation in result.violations for error in violation.errors]
    assert {error.has_expected for error in errors} == {True, False}
    assert any(link[3] is NOT_IN_PAYLOAD for link in (error.path for error in errors))
    assert any(result.identifier_error is not None for result in expected.results)
    assert any("error" in entry for result in expected.results for entry in result.feedback.values())
    assert any(result.error is not None for result in expected.results)
    back = through_records(BUCKETS, compiled)
    assert scan_fields(back) == scan_fields(expected)
    back_errors = [error for result in back.results for violation in result.violations for error in violation.errors]
    assert [error.path[3] is NOT_IN_PAYLOAD for error in back_errors] == [error.path[3] is NOT_IN_PAYLOAD
                                                                          for error in errors]


def test_reports_of_a_rebuilt_scan_are_the_same():
    compiled, items = policies("kyverno-json"), resources("kyverno-json")
    expected, back = single_scan("kyverno-json"), through_records(items, compiled)
    for format in ("text", "json", "sarif"):
        assert assertree.render(format, back) == assertree.render(format, expected)


def test_records_name_policies_and_rules_by_position_and_by_name():
    compiled = [assertree.compile_document(EVERYTHING)]
    record = scan_records([Resource(BUCKETS[0], source="inventory.jsonl", document=4)], compiled)[0]
    assert (record["source"], record["document"], record["values"]) == ("inventory.jsonl", 4, [BUCKETS[0]])
    (result,) = record["results"]
    assert (result["policy"], result["rule"], result["policy_name"], result["rule_name"], result["status"]) == (
        0, 0, "records", "everything", "fail")


def test_the_parent_must_give_the_resources_that_were_scanned():
    compiled = [assertree.compile_document(EVERYTHING)]
    with pytest.raises(ValueError, match="3 records for 2 resources"):
        scan_result(scan_records(BUCKETS, compiled), compiled, BUCKETS[:2])
