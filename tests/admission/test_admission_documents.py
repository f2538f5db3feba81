"""Reading admission policies and bindings: the API's schema, the apiserver's rules, linking, and lint."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from admission_helpers import POD_RULES, binding, map_, vap

from assertree.errors import PolicyError
from assertree.languages.load import compile_document, lint, load_policies


def problems_of(tmp_path: Path, *documents: dict) -> list[tuple[str, str, str]]:
    """(severity, field, message) of every lint problem of `documents` written to one file."""
    path = tmp_path / "policy.yaml"
    path.write_text(yaml.safe_dump_all(documents, sort_keys=False))
    return [(str(problem.severity), problem.field, problem.message) for problem in lint([path])]


@pytest.mark.parametrize("version", ["v1", "v1beta1", "v1alpha1"])
def test_every_served_version_reads(version: str) -> None:
    for document in (vap(validations=[{"expression": "true"}]), map_(mutations=[{
            "patchType": "JSONPatch", "jsonPatch": {"expression": "[]"}}]), binding(), binding("m", mutating=True)):
        document["apiVersion"] = f"admissionregistration.k8s.io/{version}"
        compile_document(document)


def test_unknown_fields_and_bad_values_are_errors_with_their_field() -> None:
    with pytest.raises(PolicyError) as raised:
        compile_document(vap(validation=[{"expression": "true"}], validations=[{"expression": "true"}]))
    assert raised.value.problem.field == "spec.validation"
    assert "did you mean 'validations'?" in raised.value.problem.message
    with pytest.raises(PolicyError) as raised:
        compile_document(vap(validations=[{"expression": "true"}], failurePolicy="Sometimes"))
    assert raised.value.problem.field == "spec.failurePolicy"
    with pytest.raises(PolicyError) as raised:
        compile_document({**vap(validations=[{"expression": "true"}]),
                          "apiVersion": "admissionregistration.k8s.io/v2"})
    assert "unsupported apiVersion" in raised.value.problem.message


def test_cel_that_does_not_compile_is_an_error_at_its_field() -> None:
    with pytest.raises(PolicyError) as raised:
        compile_document(vap(validations=[{"expression": "true"}, {"expression": "object.("}]))
    assert raised.value.problem.field == "spec.validations[1].expression"
    assert raised.value.problem.message.startswith("invalid CEL expression: ")


def test_lint_reports_every_problem(tmp_path: Path) -> None:
    policy = vap(validations=[{"expression": "object.("}, {"expression": "true", "messageExpression": "authorizer"}],
                 variables=[{"name": "not-an-identifier", "expression": "1"}],
                 matchConditions=[{"name": "a", "expression": "true"}, {"name": "a", "expression": "true"}])
    found = problems_of(tmp_path, policy, binding(validationActions=["Deny", "Warn"]),
                        binding("elsewhere", name="stray"))
    assert ("error", "spec.matchConditions[1].name", "duplicate name 'a'") in found
    assert any(field == "spec.variables[0].name" and "not a valid CEL identifier" in message
               for _, field, message in found)
    assert any(field == "spec.validations[0].expression" and message.startswith("invalid CEL expression")
               for _, field, message in found)
    assert any(field == "spec.validations[1].messageExpression" and "a messageExpression has no authorizer" in message
               for _, field, message in found)
    assert ("error", "spec.validationActions", ("Deny and Warn may not be used together (a denied request has no "
            "warnings)")) in found
    assert ("error", "spec.policyName", ("ValidatingAdmissionPolicyBinding 'stray' binds ValidatingAdmissionPolicy "
            "'elsewhere', which is not among the policies given (Kubernetes ignores such a binding)")) in found


@pytest.mark.parametrize("field", ["metadata", "spec"])
def test_lint_reports_metadata_or_spec_that_is_not_a_map(tmp_path: Path, field: str) -> None:
    """The schema's error, located, not a crash in the checks across documents (found by
    tests/test_cache_properties.py's generated files)."""
    found = problems_of(tmp_path, {**vap(validations=[{"expression": "true"}]), field: 1},
                        {**binding(), field: 1})
    assert ("error", field, "must be an object, not a number") in found


def test_lint_warns_where_the_kyverno_cli_runs_what_kubernetes_refuses(tmp_path: Path) -> None:
    rule = {key: value for key, value in POD_RULES[0].items() if key != "operations"}
    policy = vap(validations=[{"expression": "true"}], paramKind={"apiVersion": "v1", "kind": "ConfigMap"},
                 matchConstraints={"resourceRules": [rule]})
    no_actions = binding()
    del no_actions["spec"]["validationActions"]
    mutating = map_(mutations=[{"patchType": "JSONPatch", "jsonPatch": {"expression": "[]"}}])
    del mutating["spec"]["reinvocationPolicy"]
    found = problems_of(tmp_path, policy, no_actions, mutating)
    warnings = {field for severity, field, _ in found if severity == "warning"}
    assert {"spec.matchConstraints.resourceRules[0].operations", "spec.validationActions", "spec.paramKind",
            "spec.reinvocationPolicy"} <= warnings
    assert not [problem for problem in found if problem[0] == "error"], found


def test_a_policy_must_match_and_do_something(tmp_path: Path) -> None:
    found = problems_of(tmp_path, vap(matchConstraints={}), map_())
    assert ("error", "spec.matchConstraints.resourceRules", ("required field is missing: a policy must match "
            "resources (Kubernetes refuses a policy without resourceRules)")) in found
    assert ("error", "spec.validations", ("required field is missing: a ValidatingAdmissionPolicy needs validations "
            "or auditAnnotations")) in found
    assert ("error", "spec.mutations", "required field is missing: a MutatingAdmissionPolicy needs mutations") in found


def test_a_load_links_bindings_from_other_files_and_refuses_a_stray_one(tmp_path: Path) -> None:
    (tmp_path / "a-policy.yaml").write_text(yaml.safe_dump(vap(validations=[{"expression": "true"}])))
    (tmp_path / "b-binding.yaml").write_text(yaml.safe_dump(binding()))
    [policy] = load_policies(tmp_path)
    assert [found.name for found in policy.policy.bindings] == ["p-binding"]
    (tmp_path / "c-stray.yaml").write_text(yaml.safe_dump(binding("missing", name="stray")))
    with pytest.raises(PolicyError, match="binds ValidatingAdmissionPolicy 'missing', which is not among the "
                                          "policies given") as raised:
        load_policies(tmp_path)
    assert raised.value.problem.location.source.endswith("c-stray.yaml")


def test_a_mutating_binding_binds_only_a_mutating_policy() -> None:
    documents = [vap("same", validations=[{"expression": "true"}]), binding("same", mutating=True)]
    from assertree.languages.load import link

    _policies, unlinked = link([compile_document(document) for document in documents])
    assert len(unlinked) == 1


def test_lint_warns_about_a_param_ref_for_a_policy_without_param_kind(tmp_path: Path) -> None:
    found = problems_of(tmp_path, vap(validations=[{"expression": "true"}]),
                        binding(paramRef={"name": "x", "parameterNotFoundAction": "Allow"}))
    assert found == [("warning", "spec.paramRef", "the policy has no paramKind: Kubernetes ignores this paramRef")]
