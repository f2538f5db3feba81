"""Loading kyverno.io ClusterPolicy/Policy documents: recognition, schema errors, model, manifests."""

from __future__ import annotations

import copy

import pytest

from assertree.errors import PayloadError, PolicyError
from assertree.languages.kyverno.language import (
    compile_document,
    is_kyverno_policy,
    is_policy_exception,
    load_kyverno_documents,
)
from assertree.languages.kyverno.manifests import parse_manifests, to_float64, unique
from assertree.languages.kyverno.schema import problems

POLICY = {
    "apiVersion": "kyverno.io/v1",
    "kind": "ClusterPolicy",
    "metadata": {"name": "require-labels", "annotations": {"policies.kyverno.io/severity": "Medium",
                                                           "policies.kyverno.io/title": "Require Labels"}},
    "spec": {
        "validationFailureAction": "Enforce",
        "rules": [{
            "name": "check-team",
            "match": {"any": [{"resources": {"kinds": ["Pod"]}}]},
            "validate": {"message": "label team is required", "pattern": {"metadata": {"labels": {"team": "?*"}}}},
        }],
    },
}


def policy(**changes):
    document = copy.deepcopy(POLICY)
    rule = document["spec"]["rules"][0]
    for key, value in changes.items():
        rule[key] = value
    return document


def test_recognises_policies_and_exceptions():
    assert is_kyverno_policy(POLICY)
    assert is_kyverno_policy({**POLICY, "kind": "Policy", "apiVersion": "kyverno.io/v2beta1"})
    assert not is_kyverno_policy({**POLICY, "apiVersion": "json.kyverno.io/v1alpha1"})
    assert is_policy_exception({"apiVersion": "kyverno.io/v2", "kind": "PolicyException"})
    assert not is_policy_exception(POLICY)


def test_well_formed_policy_has_no_problems():
    assert problems(POLICY) == []


@pytest.mark.parametrize(("document", "field", "text"), [
    (policy(validat={"pattern": {}}), "spec.rules[0].validat", "unknown field 'validat' (did you mean 'validate'?)"),
    (policy(preconditon={"all": []}), "spec.rules[0].preconditon", "unknown field"),
    (policy(match=None), "spec.rules[0].match", "must be of type object"),
    (policy(validate={"pattern": {}, "mesage": "x"}), "spec.rules[0].validate.mesage", "unknown field"),
    (policy(preconditions={"all": [{"key": 1, "value": 2}]}), "spec.rules[0].preconditions.all[0].operator",
     "required field is missing"),
    (policy(mutate={"patchStrategicMerge": {}}), "spec.rules[0].mutate", "a rule does one thing"),
])
def test_schema_problems_name_the_field(document, field, text):
    found = problems(document)
    assert found, "expected a problem"
    assert found[0].field == field
    assert text in found[0].message


def test_duplicate_rule_names_are_refused():
    document = copy.deepcopy(POLICY)
    document["spec"]["rules"].append(copy.deepcopy(document["spec"]["rules"][0]))
    found = problems(document)
    assert [p.field for p in found] == ["spec.rules[1].name"]


@pytest.mark.parametrize(("rule", "field", "why"), [
    ({"validate": {"assert": {"all": [{"check": {"a": 1}}]}}}, "spec.rules[0].validate.assert", "not supported yet"),
    ({"validate": None, "verifyImages": [{"imageReferences": ["*"], "attestors": [{"entries": [{}]}]}]},
     "spec.rules[0].verifyImages[0].attestors", "image registry"),
    ({"validate": None, "verifyImages": [{"imageReferences": ["*"], "attestations": [{"type": "x"}]}]},
     "spec.rules[0].verifyImages[0].attestations", "image registry"),
    ({"validate": {"manifests": {"attestors": [{"entries": [{"keyless": {"issuer": "x"}}]}]}}},
     "spec.rules[0].validate.manifests.attestors[0].entries[0].keyless", "Fulcio and Rekor"),
    ({"validate": {"manifests": {"attestors": [{"entries": [{"keys": {"publicKeys": "k8s://ns/key"}}]}]}}},
     "spec.rules[0].validate.manifests.attestors[0].entries[0].keys.publicKeys", "PEM public keys"),
])
def test_a_rule_that_cannot_run_offline_is_refused_alone_with_its_field(rule, field, why):
    document = copy.deepcopy(POLICY)
    target = document["spec"]["rules"][0]
    for key, value in rule.items():
        if value is None:
            target.pop(key)
        else:
            target[key] = value
    document["spec"]["rules"].append({"name": "still-runs", "match": {"any": [{"resources": {"kinds": ["Pod"]}}]},
                                      "validate": {"pattern": {"metadata": {"name": "?*"}}}})
    compiled = compile_document(document)
    [refused] = compiled.policy.refused
    assert (refused.rule, refused.problem.field, refused.problem.severity) == (target["name"], field, "warning")
    assert why in refused.problem.message and f"rule {target['name']!r} is not run" in refused.problem.message
    assert [rule.rule.name for rule in compiled.rules] == ["still-runs", "autogen-still-runs",
                                                           "autogen-cronjob-still-runs"]


def test_generate_and_image_check_rules_compile():
    document = copy.deepcopy(POLICY)
    document["spec"]["rules"][0] = {"name": "netpol", "match": {"any": [{"resources": {"kinds": ["Namespace"]}}]},
                                    "generate": {"apiVersion": "v1", "kind": "ConfigMap", "name": "x",
                                                 "namespace": "{{request.object.metadata.name}}", "data": {}}}
    document["spec"]["rules"].append({"name": "digest", "match": {"any": [{"resources": {"kinds": ["Pod"]}}]},
                                      "verifyImages": [{"imageReferences": ["*"], "verifyDigest": True}]})
    compiled = compile_document(document)
    assert not compiled.policy.refused
    assert [rule.rule.name for rule in compiled.rules] == ["digest", "netpol"]
    assert [rule.rule.name for rule in compiled.mutate_rules] == ["digest"]


def test_compile_document_reports_schema_problems_as_policy_errors():
    with pytest.raises(PolicyError) as raised:
        compile_document(policy(validat={}), source="p.yaml")
    assert raised.value.path == ("spec", "rules", 0, "validat")
    assert raised.value.line is None  # the caller, which knows the file, locates the field


def test_lint_document_lists_every_problem():
    from assertree.languages.kyverno.language import lint_document

    document = policy(validat={}, preconditon=[])
    assert [p.path for p in lint_document(document)] == [("spec", "rules", 0, "validat"),
                                                         ("spec", "rules", 0, "preconditon")]
    assert list(lint_document(POLICY)) == []



def test_validate_cel_compiles_with_the_cel_language():
    from assertree.languages.kyverno.language import lint_document

    cel = policy(validate={"cel": {"expressions": []}})
    assert [p.path for p in lint_document(cel)] == [("spec", "rules", 0, "validate", "cel", "expressions")]
    check = {"expression": "object.metadata.name == 'a'"}
    compiled = compile_document(policy(validate={"cel": {"expressions": [check]}}))
    assert compiled.rules[0].plan.cel is not None


def test_model_reads_severity_title_and_failure_action():
    compiled = compile_document(POLICY)
    info = compiled.policy
    assert (info.name, info.kind, info.severity, info.title) == ("require-labels", "ClusterPolicy", "medium",
                                                                  "Require Labels")
    rule = info.rules[0]
    assert (rule.name, rule.index, rule.document["name"]) == ("check-team", 0, "check-team")
    assert info.failure_action(rule) == "Enforce"
    audit = copy.deepcopy(POLICY)
    audit["spec"]["rules"][0]["validate"]["failureAction"] = "Audit"
    assert compile_document(audit).policy.failure_action(compile_document(audit).policy.rules[0]) == "Audit"
    assert info.scored
    unscored = copy.deepcopy(POLICY)
    unscored["metadata"]["annotations"]["policies.kyverno.io/scored"] = "false"
    assert not compile_document(unscored).policy.scored


def test_compiled_policy_splits_validate_and_mutate_rules():
    document = copy.deepcopy(POLICY)
    document["spec"]["rules"].append({"name": "add", "match": {"any": [{"resources": {"kinds": ["Pod"]}}]},
                                      "mutate": {"patchStrategicMerge": {"metadata": {"labels": {"a": "b"}}}}})
    compiled = compile_document(document)
    assert [r.rule.name for r in compiled.rules] == [r.name for r in compiled.policy.rules if r.validates]
    assert [r.rule.name for r in compiled.mutate_rules] == ["add", "autogen-add", "autogen-cronjob-add"]
    assert compiled.policy.rules[-1].autogen_of == "add"


def test_load_kyverno_documents_keeps_exceptions_apart(tmp_path):
    import yaml

    exception = {"apiVersion": "kyverno.io/v2", "kind": "PolicyException", "metadata": {"name": "allow"},
                 "spec": {"exceptions": [], "match": {}}}
    path = tmp_path / "all.yaml"
    path.write_text(yaml.safe_dump_all([POLICY, exception, {"kind": "ConfigMap", "apiVersion": "v1"}]))
    found = load_kyverno_documents([path])
    assert [p.policy.name for p in found.policies] == ["require-labels"]
    assert found.policies[0].policy.source == str(path)
    assert [e["metadata"]["name"] for e in found.exceptions] == ["allow"]
    assert len(found.others) == 1


def test_load_errors_carry_file_and_line(tmp_path):
    import yaml

    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(policy(validat={}), sort_keys=False))
    with pytest.raises(PolicyError) as raised:
        load_kyverno_documents([path])
    assert raised.value.source == str(path)
    assert raised.value.line is not None and raised.value.line > 1


# -- manifests --------------------------------------------------------------------------------------


def test_manifests_read_yaml_as_go_yaml_v2_does():
    [manifest] = parse_manifests("kind: ConfigMap\napiVersion: v1\nmetadata: {name: c}\n"
                                 "data:\n  a: y\n  b: 10:30\n  c: 0x10\n  d: 1e3\n  e: 2024-01-01\n  f: 012\n")
    assert manifest.value["data"] == {"a": True, "b": "10:30", "c": 16, "d": 1000.0, "e": "2024-01-01", "f": 10}


@pytest.mark.parametrize(("spelling", "kind"), [("!!int x", "int"), ("!!bool maybe", "bool"), ("!!float one", "float")])
def test_an_explicit_tag_on_text_it_does_not_fit_is_a_located_error(spelling, kind):
    """go-yaml refuses ``!!int x``; so does the manifest reader, at its line, never with a Python error."""
    with pytest.raises(PayloadError) as caught:
        parse_manifests(f"apiVersion: v1\nkind: Pod\nmetadata: {{name: p}}\nspec:\n  replicas: {spelling}\n", "p.yaml")
    assert str(caught.value).startswith(f"p.yaml:5:13: invalid YAML: cannot read {spelling.split()[1]!r} as {kind}")


def test_manifests_default_the_namespace_of_namespaced_kinds_only():
    text = ("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n---\napiVersion: v1\nkind: Namespace\n"
            "metadata: {name: n}\n---\napiVersion: cert-manager.io/v1\nkind: ClusterIssuer\nmetadata: {name: i}\n"
            "---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: r}\n")
    namespaces = [m.value["metadata"].get("namespace") for m in parse_manifests(text)]
    assert namespaces == ["default", None, "default", None]


def test_manifests_fill_empty_maps_and_drop_duplicates():
    text = ("apiVersion: v1\nkind: Pod\nmetadata: {name: a, labels: }\n---\n"
            "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\n---\n")
    manifests = parse_manifests(text)
    assert len(manifests) == 2
    assert manifests[0].value["metadata"]["labels"] == {}
    assert len(unique(manifests)) == 1


def test_float64_conversion_keeps_bools():
    assert to_float64({"a": [1, True, 2.5, "3"]}) == {"a": [1.0, True, 2.5, "3"]}
    assert type(to_float64({"a": 1})["a"]) is float
