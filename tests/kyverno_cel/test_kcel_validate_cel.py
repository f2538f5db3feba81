"""ClusterPolicy validate.cel, as the ValidatingAdmissionPolicy validator judges it."""

from __future__ import annotations

import pytest
from cel_helpers import pod

from assertree.errors import PolicyError
from assertree.languages.kyverno.cel_policies.validate_cel import compile_validate_cel, evaluate_validate_cel


def _rule(*expressions: dict, **extra: object) -> dict:
    return {"name": "r", "validate": {"message": "rule message", "cel": {"expressions": list(expressions)}}, **extra}


@pytest.mark.parametrize(("expression", "status", "message"), [
    ({"expression": "true"}, "pass", "Validation rule 'r' passed."),
    ({"expression": "false", "message": "own"}, "fail", "own"),
    ({"expression": "false"}, "fail", "rule message"),
    ({"expression": "false", "messageExpression": "'name ' + object.metadata.name"}, "fail", "name web"),
    ({"expression": "object.nope == 1"}, "fail", "expression 'object.nope == 1' resulted in error"),
    ({"expression": "namespaceObject.metadata.name == 'default'"}, "pass", "Validation rule 'r' passed."),
])
def test_outcomes(expression: dict, status: str, message: str) -> None:
    found_status, found_message = evaluate_validate_cel(_rule(expression), pod())
    assert (found_status, found_message[:len(message)]) == (status, message)


def test_preconditions_skip() -> None:
    preconditions = [{"name": "db", "expression": "object.metadata.name == 'db'"}]
    rule = _rule({"expression": "false"}, celPreconditions=preconditions)
    assert evaluate_validate_cel(rule, pod())[0] == "skip"


def test_default_message_without_any() -> None:
    rule = {"name": "r", "validate": {"cel": {"expressions": [{"expression": "1 == 2"}]}}}
    assert evaluate_validate_cel(rule, pod()) == ("fail", "failed expression: 1 == 2")


def test_params_need_a_cluster_and_errors_name_the_field() -> None:
    with_params = _rule({"expression": "true"})
    with_params["validate"]["cel"]["paramKind"] = {"apiVersion": "v1", "kind": "ConfigMap"}
    assert evaluate_validate_cel(with_params, pod())[0] == "error"
    with pytest.raises(PolicyError) as caught:
        compile_validate_cel(_rule({"expression": "1 +"}), ("spec", "rules", 2))
    assert caught.value.path == ("spec", "rules", 2, "validate", "cel", "expressions", 0, "expression")
