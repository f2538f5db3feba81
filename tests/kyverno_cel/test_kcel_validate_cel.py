"""ClusterPolicy validate.cel, as the ValidatingAdmissionPolicy validator judges it."""

from __future__ import annotations

import pytest
from cel_helpers import pod

from assertree.errors import PolicyError
from assertree.languages.base import ScanContext
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


def test_errors_name_the_field() -> None:
    with pytest.raises(PolicyError) as caught:
        compile_validate_cel(_rule({"expression": "1 +"}), ("spec", "rules", 2))
    assert caught.value.path == ("spec", "rules", 2, "validate", "cel", "expressions", 0, "expression")


def _with_params(param_ref: dict, expression: str = "object.metadata.name in params.data.allowed.split(',')") -> dict:
    rule = _rule({"expression": expression, "messageExpression": "'not in ' + params.metadata.name"})
    rule["validate"]["cel"]["paramKind"] = {"apiVersion": "v1", "kind": "ConfigMap"}
    rule["validate"]["cel"]["paramRef"] = param_ref
    return rule


def _config_map(name: str, allowed: str, namespace: str | None = None, **labels: str) -> dict:
    metadata: dict = {"name": name, "labels": labels}
    if namespace is not None:
        metadata["namespace"] = namespace
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata, "data": {"allowed": allowed}}


PARAMS = (_config_map("web-only", "web"), _config_map("db-only", "db", "default", team="a"),
          _config_map("both", "web,db", "other", team="a"))


@pytest.mark.parametrize(("param_ref", "status", "message"), [
    ({"name": "web-only"}, "pass", "Validation rule 'r' passed."),  # no namespace: in default, as loaded
    ({"name": "db-only"}, "fail", "not in db-only"),
    ({"name": "both", "namespace": "other"}, "pass", "Validation rule 'r' passed."),
    ({"name": "missing", "parameterNotFoundAction": "Allow"}, "error",
     'error in parameterized resource: configmaps "missing" not found'),
    ({"selector": {"matchLabels": {"team": "a"}}}, "fail", "not in db-only"),  # one run per param
    ({"selector": {"matchLabels": {"team": "b"}}}, "pass", "Validation rule 'r' passed."),  # none: no run
    ({"selector": {"matchLabels": {"team": "b"}}, "parameterNotFoundAction": "Deny"}, "error",
     "error in parameterized resource: no params found"),
])
def test_params_are_collected_as_kyverno_collects_them(param_ref: dict, status: str, message: str) -> None:
    context = ScanContext(params=PARAMS)
    assert evaluate_validate_cel(_with_params(param_ref), pod(), context) == (status, message)


def test_a_namespaced_param_kind_needs_a_namespace() -> None:
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}}
    status, message = evaluate_validate_cel(_with_params({"name": "web-only"}), node, ScanContext(params=PARAMS))
    assert status == "error"
    assert message == "error in parameterized resource: can't use namespaced paramRef to match cluster-scoped resources"
