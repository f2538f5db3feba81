"""ValidatingPolicy outcomes: Kyverno's order of evaluation, its statuses and messages."""

from __future__ import annotations

import pytest
from cel_helpers import POD_RULES, pod, policy_document, run

from assertree.languages.base import ScanContext

MATCH = {"matchConstraints": {"resourceRules": POD_RULES}}


def _spec(*validations: dict, **spec: object) -> dict:
    return {**MATCH, "validations": list(validations), **spec}


def _one(spec: dict, resource: dict | None = None, context: ScanContext | None = None):
    [result] = run(policy_document(spec), resource or pod(), context)
    return result


def test_first_false_validation_fails_with_its_message() -> None:
    result = _one(_spec({"expression": "true"}, {"expression": "object.metadata.name == 'db'", "message": "not db"},
                        {"expression": "1/0 == 1"}))
    assert (result.status, result.message) == ("fail", "not db")
    assert result.violations[0].check == "spec.validations[1].expression"


@pytest.mark.parametrize(("validation", "message"), [
    ({"expression": "false", "messageExpression": "'pod ' + object.metadata.name"}, "pod web"),
    ({"expression": "false", "message": "m", "messageExpression": "object.nope"},
     "failed to evaluate message expression"),
    ({"expression": "false"}, "CEL expression validation failed at index 0"),
])
def test_failure_messages(validation: dict, message: str) -> None:
    assert _one(_spec(validation)).message.startswith(message)


def test_errors_and_non_booleans_are_errors() -> None:
    error = _one(_spec({"expression": "object.spec.missing.all(x, x)"}))
    assert error.status == "error" and "missing" in error.error.message
    assert _one(_spec({"expression": "'yes'"})).status == "error"


def test_match_conditions_skip_and_failure_policy() -> None:
    skipped = _one(_spec({"expression": "false"}, matchConditions=[{"name": "db", "expression": "false"}]))
    assert skipped.status == "skip"
    broken = [{"name": "broken", "expression": "object.nope == 1"}]
    assert _one(_spec({"expression": "true"}, matchConditions=broken)).status == "error"
    assert _one(_spec({"expression": "true"}, matchConditions=broken, failurePolicy="Ignore")).status == "skip"


def test_variables_read_each_other_in_any_order() -> None:
    variables = [{"name": "b", "expression": "variables.a + 1"},
                 {"name": "a", "expression": "size(object.spec.containers)"}]
    assert _one(_spec({"expression": "variables.b == 2"}, variables=variables)).status == "pass"


def test_unselected_resources_give_no_result() -> None:
    service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s", "namespace": "default"}}
    assert run(policy_document(_spec({"expression": "false"})), service) == []


def test_warn_only_policies_warn() -> None:
    assert _one(_spec({"expression": "false"}, validationActions=["Warn"])).status == "warn"
    assert _one(_spec({"expression": "false"}, validationActions=["Audit", "Warn"])).status == "fail"


def test_operation_shapes_the_request() -> None:
    spec = _spec({"expression": "request.operation == 'UPDATE' && oldObject.metadata.name == object.metadata.name"},
                 matchConstraints={"resourceRules": [{**POD_RULES[0], "operations": ["UPDATE"]}]})
    assert _one(spec, context=ScanContext(operation="UPDATE")).status == "pass"
    assert run(policy_document(spec), pod()) == []  # CREATE is not selected


def test_json_mode_checks_any_payload(tmp_path) -> None:
    import json

    import yaml

    from assertree.engine.scan import scan
    from assertree.languages.load import load_policies

    spec = {"evaluation": {"mode": "JSON"},
            "variables": [{"name": "acls",
                           "expression": "object.resource_changes.filter(r, r.type == 'aws_s3_bucket_acl')"}],
            "validations": [{"expression": "variables.acls.all(r, r.change.after.acl == 'private')",
                             "messageExpression": "variables.acls.filter(r, r.change.after.acl != 'private')"
                                                  ".map(r, r.address).join(', ') + ' are public'"}]}
    (tmp_path / "policy.yaml").write_text(yaml.safe_dump(policy_document(spec, name="s3")))
    plan = {"resource_changes": [
        {"address": "aws_s3_bucket_acl.a", "type": "aws_s3_bucket_acl", "change": {"after": {"acl": "private"}}},
        {"address": "aws_s3_bucket_acl.b", "type": "aws_s3_bucket_acl", "change": {"after": {"acl": "public-read"}}}]}
    [result] = scan([json.loads(json.dumps(plan))], load_policies(tmp_path)).results
    assert (result.status, result.message) == ("fail", "aws_s3_bucket_acl.b are public")


def test_a_namespaced_policy_sees_only_its_namespace() -> None:
    document = policy_document(_spec({"expression": "false"}), kind="NamespacedValidatingPolicy")
    document["metadata"]["namespace"] = "team-a"
    assert run(document, pod(namespace="team-b")) == []
    [result] = run(document, pod(namespace="team-a"))
    assert result.status == "fail"
