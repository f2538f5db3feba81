"""Reading policies.kyverno.io documents: what is refused, with which field path."""

from __future__ import annotations

import pytest
from cel_helpers import POD_RULES, policy_document

from assertree.errors import PolicyError, Severity
from assertree.languages.kyverno.cel_policies.language import (
    DESCRIPTION,
    compile_document,
    is_cel_policy,
    lint_document,
)

VALID = {"matchConstraints": {"resourceRules": POD_RULES}, "validations": [{"expression": "true"}]}


def _error(document: dict) -> PolicyError:
    with pytest.raises(PolicyError) as caught:
        compile_document(document)
    return caught.value


@pytest.mark.parametrize("version", ["v1alpha1", "v1beta1", "v1"])
def test_every_version_is_read(version: str) -> None:
    compiled = compile_document(policy_document(VALID, version=version))
    assert compiled.policy.name == "p"
    assert compiled.policy.kind == "ValidatingPolicy"


def test_recognises_its_documents() -> None:
    assert is_cel_policy(policy_document(VALID))
    assert not is_cel_policy({"apiVersion": "kyverno.io/v1", "kind": "ClusterPolicy"})
    assert not is_cel_policy({"apiVersion": "policies.kyverno.io/v1", "kind": "PolicyException"})
    assert is_cel_policy({"apiVersion": "policies.kyverno.io/v1", "kind": "GeneratingPolicy"})
    assert "ValidatingPolicy" in DESCRIPTION and "MutatingPolicy" in DESCRIPTION


@pytest.mark.parametrize(("spec", "path", "words"), [
    ({**VALID, "validations": [{"expression": "object.spec.("}]}, ("spec", "validations", 0, "expression"),
     "invalid CEL expression"),
    ({**VALID, "validations": []}, ("spec", "validations"), "at least one validation"),
    ({**VALID, "validationActions": ["Block"]}, ("spec", "validationActions", 0), "must be one of: Deny, Audit, Warn"),
    ({"validations": [{"expression": "true"}]}, ("spec", "matchConstraints"), "required"),
    ({**VALID, "variables": [{"name": "a", "expression": "1"}, {"name": "a", "expression": "2"}]},
     ("spec", "variables", 1, "name"), "duplicate"),
    ({**VALID, "matchConstraints": {"resourceRules": [{**POD_RULES[0], "operations": ["PATCH"]}]}},
     ("spec", "matchConstraints", "resourceRules", 0, "operations", 0), "must be one of: CREATE, UPDATE, DELETE"),
    ({**VALID, "validations": [{"expression": "true", "messageExpression": "'a' +"}]},
     ("spec", "validations", 0, "messageExpression"), "invalid CEL expression"),
    ({**VALID, "evaluation": {"mode": "Yaml"}}, ("spec", "evaluation", "mode"), "must be one of: Kubernetes, JSON"),
])
def test_problems_name_their_field(spec: dict, path: tuple, words: str) -> None:
    error = _error(policy_document(spec))
    assert error.path == path
    assert words in error.message


@pytest.mark.parametrize(("expression", "words"), [
    ("authorizer.group('').resource('pods').check('get').allowed()", "authorizer"),
    ("resource.Post('v1', 'subjectaccessreviews', {}).status.allowed", "resource.Post"),
])
def test_an_expression_that_needs_a_cluster_refuses_the_policy_alone(expression: str, words: str) -> None:
    compiled = compile_document(policy_document({**VALID, "validations": [{"expression": expression}]}))
    [refused] = compiled.refused
    assert refused.problem.path == ("spec", "validations", 0, "expression") and words in refused.problem.message
    assert compiled.rules == [] and compiled.policy.rules == []


def test_a_mutating_policy_needs_mutations() -> None:
    error = _error(policy_document({"matchConstraints": {"resourceRules": POD_RULES}}, kind="MutatingPolicy"))
    assert error.path == ("spec", "mutations")


def test_lint_notes_audit_annotations_and_reports_compile_errors() -> None:
    annotations = [{"key": "k", "valueExpression": "'v'"}]
    notes = list(lint_document(policy_document({**VALID, "auditAnnotations": annotations})))
    assert [(problem.severity, problem.path) for problem in notes] == [(Severity.NOTE, ("spec", "auditAnnotations"))]
    broken = list(lint_document(policy_document({**VALID, "validations": [{"expression": "1 +"}]})))
    assert [problem.path for problem in broken] == [("spec", "validations", 0, "expression")]


def test_the_loader_routes_the_group_here(tmp_path) -> None:
    import yaml

    from assertree.languages.load import load_policies

    (tmp_path / "policy.yaml").write_text(yaml.safe_dump(policy_document(VALID)))
    [policy] = load_policies(tmp_path)
    assert policy.policy.kind == "ValidatingPolicy"
