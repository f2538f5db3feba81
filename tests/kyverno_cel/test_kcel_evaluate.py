"""ValidatingPolicy outcomes: Kyverno's order of evaluation, its statuses and messages."""

from __future__ import annotations

import pytest
from cel_helpers import POD_RULES, pod, policy_document, run

from assertree.errors import PolicyError
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


def test_a_variable_reads_only_the_variables_declared_before_it() -> None:
    """Kyverno types ``variables`` field by field as it compiles them in order (pkg/cel/compiler/variables.go),
    so a variable that reads a later one does not compile ("undefined field")."""
    ordered = [{"name": "a", "expression": "size(object.spec.containers)"},
               {"name": "b", "expression": "variables.a + 1"}]
    assert _one(_spec({"expression": "variables.b == 2"}, variables=ordered)).status == "pass"
    with pytest.raises(PolicyError, match=r"spec\.variables\[0\]\.expression: .*undefined field 'a'"):
        run(policy_document(_spec({"expression": "variables.b == 2"}, variables=ordered[::-1])), pod())


def test_variables_are_lazy_and_keep_cel_types() -> None:
    """A variable is evaluated where it is read (one that fails elsewhere costs nothing) and holds any CEL
    value: a timestamp stays a timestamp, an optional stays an optional."""
    variables = [{"name": "broken", "expression": "object.spec.nope"},
                 {"name": "when", "expression": "timestamp('2020-01-01T00:00:00Z') + duration('1h')"},
                 {"name": "maybe", "expression": "object.spec.?nodeName"}]
    passing = {"expression": "variables.when < timestamp('2021-01-01T00:00:00Z') && "
                             "!variables.maybe.hasValue() && has(variables.broken)"}
    assert _one(_spec(passing, variables=variables)).status == "pass"
    error = _one(_spec({"expression": "variables.broken == 1"}, variables=variables))
    assert error.status == "error" and "nope" in error.message


def test_match_conditions_of_a_validating_policy_see_no_variables() -> None:
    """vpol evaluates matchConditions before binding its variables (compiler/policy.go): reading one errors."""
    spec = _spec({"expression": "true"}, variables=[{"name": "a", "expression": "true"}],
                 matchConditions=[{"name": "m", "expression": "variables.a"}])
    assert _one(spec).status == "error"


@pytest.mark.parametrize(("expression", "status"), [
    ("object.spec.containers.orValue([]).size() == 1", "pass"),  # not an optional: the value itself
    ("object.spec.?initContainers.orValue([]).size() == 0", "pass"),  # an empty optional: the default
    ("object.spec.?containers.orValue([]).size() == 1", "pass"),
    ("object.spec.missing.orValue([]).size() == 0", "error"),  # an error stays an error
])
def test_or_value_on_any_value_as_kyverno_compiles_it(expression: str, status: str) -> None:
    assert _one(_spec({"expression": expression})).status == status


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
    document = policy_document(_spec({"expression": "false"}), kind="NamespacedValidatingPolicy", version="v1beta1")
    document["metadata"]["namespace"] = "team-a"
    assert run(document, pod(namespace="team-b")) == []
    [result] = run(document, pod(namespace="team-a"))
    assert result.status == "fail"
