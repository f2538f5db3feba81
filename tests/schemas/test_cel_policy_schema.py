"""The policies.kyverno.io schema (``schemas/policies.kyverno.io.json``): every real document passes it, and a
broken one is reported whole, by ``assertree lint``, with the CEL of its well-formed fields still compiled."""

from __future__ import annotations

import copy
import importlib
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import CONFORMANCE, REPO
from document_places import places as places_in

from assertree.cli import main
from assertree.documents.cache import DocumentCache
from assertree.documents.reader import SUFFIXES, load_documents
from assertree.errors import AssertreeError, PolicyError, Severity
from assertree.languages import checked_files
from assertree.languages.kyverno.cel_policies.language import compile_document, is_cel_policy, lint_document
from assertree.languages.kyverno.cel_policies.reading import SCHEMA_FILE, problems

PODS = [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE", "UPDATE"], "resources": ["pods"]}]
CEL_ERROR = "invalid CEL expression: "  # what follows is the CEL library's own wording
BROKEN = "docs/examples/lint/broken-"  # the example of docs/lint.md, broken on purpose


def cel_documents(root: Path) -> Iterator[tuple[str, Any]]:
    """(file:line, document) for every policies.kyverno.io policy under `root`, hidden folders included."""
    for path in sorted(root.rglob("*")):
        if path.suffix not in SUFFIXES or not path.is_file() or "policies.kyverno.io" not in path.read_text("utf-8"):
            continue
        try:
            documents = load_documents(path)
        except AssertreeError:
            continue
        yield from ((f"{path.relative_to(REPO)}:{document.line}", document.value) for document in documents
                    if is_cel_policy(document.value))


@pytest.mark.parametrize(("root", "at_least"), [
    (CONFORMANCE / "kyverno-cli", 35),  # the cel tier of kyverno/kyverno's test/cli
    (CONFORMANCE / "kyverno-policies", 100),  # kyverno/policies' *-cel, *-vpol, *-gpol... folders
    (REPO / "samples", 2),
    (REPO / "docs", 1),
], ids=["kyverno-cli", "kyverno-policies", "samples", "docs"])
def test_every_document_of_the_conformance_data_and_samples_passes(root: Path, at_least: int) -> None:
    found = [(where, document) for where, document in cel_documents(root) if not where.startswith(BROKEN)]
    assert len(found) >= at_least
    assert [(where, problem.path, problem.message) for where, document in found
            for problem in problems(document) if problem.severity == Severity.ERROR] == []


def test_the_broken_example_of_the_documentation_has_its_five_problems() -> None:
    [(_, document)] = cel_documents(REPO / "docs" / "examples" / "lint")
    assert [path for path, _ in found(document)] == [
        ("spec", "validationActions", 0), ("spec", "validations", 0, "mesage"),
        ("spec", "validations", 1, "expression"), ("spec", "validations", 2, "expression"), ("spec", "background")]


def test_every_kind_and_version_of_the_data_is_covered() -> None:
    seen = {(document["kind"], document["apiVersion"].split("/")[1])
            for root in (CONFORMANCE / "kyverno-cli", CONFORMANCE / "kyverno-policies", REPO / "samples")
            for _, document in cel_documents(root)}
    assert {kind for kind, _ in seen} >= {"ValidatingPolicy", "MutatingPolicy", "GeneratingPolicy", "DeletingPolicy",
                                          "ImageValidatingPolicy"}
    assert {version for _, version in seen} == {"v1alpha1", "v1beta1", "v1"}


def policy(kind: str, spec: dict, *, version: str = "v1", **metadata: Any) -> dict:
    return {"apiVersion": f"policies.kyverno.io/{version}", "kind": kind,
            "metadata": {"name": "p", **metadata}, "spec": spec}


def found(document: dict) -> list[tuple[tuple, str]]:
    """What lint says of `document`: (field path, message), CEL errors cut to their first words."""
    return [(problem.path, CEL_ERROR if problem.message.startswith(CEL_ERROR) else problem.message)
            for problem in lint_document(document)]


def test_a_validating_policy_reports_every_problem_at_once_and_still_compiles_its_cel() -> None:
    document = policy("ValidatingPolicy", {
        "validationActions": ["Block"],
        "failurePolicy": "Never",
        "matchConstraints": {"resourceRules": [{**PODS[0], "operations": ["CREATE", "PATCH"]}], "matchPolicy": 1},
        "variables": [{"name": "labels", "expression": "object.metadata.?labels.orValue({}"}],
        "validations": [{"expression": "'team' in variables.labels", "mesage": "needs a team"},
                        {"expression": "object.spec.containers.all(c, c.image != ''"},
                        {"message": "no expression"}],
        "validationFailureAction": "Enforce",
    }, labls={"team": "a"})
    assert found(document) == [
        (("metadata", "labls"), "unknown field 'labls' (did you mean 'labels'?)"),
        (("spec", "validationActions", 0), 'must be one of: Deny, Audit, Warn, not "Block"'),
        (("spec", "failurePolicy"), 'must be one of: Fail, Ignore, not "Never"'),
        (("spec", "matchConstraints", "resourceRules", 0, "operations", 1),
         'must be one of: CREATE, UPDATE, DELETE, CONNECT, *, not "PATCH"'),
        (("spec", "matchConstraints", "matchPolicy"), "must be one of: Exact, Equivalent, not 1"),
        (("spec", "variables", 0, "expression"), CEL_ERROR),
        (("spec", "validations", 0, "mesage"), "unknown field 'mesage' (did you mean 'message'?)"),
        (("spec", "validations", 1, "expression"), CEL_ERROR),
        (("spec", "validations", 2, "expression"), "required field is missing"),
        (("spec", "validationFailureAction"), ("unknown field 'validationFailureAction' (did you mean "
                                              "'validationActions'?)")),
    ]


def test_a_cel_error_beside_a_schema_error_is_reported_too() -> None:
    document = policy("ValidatingPolicy", {"matchConstraints": {"resourceRules": PODS}, "failurePolicy": "Never",
                                           "validations": [{"expression": "object.spec.("}]})
    assert found(document) == [(("spec", "failurePolicy"), 'must be one of: Fail, Ignore, not "Never"'),
                               (("spec", "validations", 0, "expression"), CEL_ERROR)]


def test_an_expression_reading_a_broken_variable_is_checked_for_its_own_mistakes_only() -> None:
    document = policy("ValidatingPolicy", {"matchConstraints": {"resourceRules": PODS},
                                           "variables": [{"name": "a", "expression": "1 +"}],
                                           "validations": [{"expression": "variables.a > 0"},
                                                           {"expression": "variables.a >"}]})
    assert found(document) == [(("spec", "variables", 0, "expression"), CEL_ERROR),
                               (("spec", "validations", 1, "expression"), CEL_ERROR)]


@pytest.mark.parametrize(("kind", "spec", "expected"), [
    ("MutatingPolicy", {"matchConstraints": {"resourceRules": PODS}, "evaluation": {"mode": "HTTP"},
                        "mutations": [{"patchType": "JSONPatch", "applyConfiguration": {"expression": "x"}},
                                      {"patchType": "Merge"},
                                      {"patchType": "ApplyConfiguration", "applyConfiguration": {"expression": "("}}]},
     [(("spec", "evaluation", "mode"), 'must be one of: Kubernetes, JSON, not "HTTP"'),
      (("spec", "mutations", 0, "jsonPatch"), "required field is missing"),
      (("spec", "mutations", 1, "patchType"), 'must be one of: ApplyConfiguration, JSONPatch, not "Merge"'),
      (("spec", "mutations", 2, "applyConfiguration", "expression"), CEL_ERROR)]),
    ("GeneratingPolicy", {"matchConstraints": {"resourceRules": PODS}, "failurePolicy": "Fail",
                          "generate": [{"template": {"interpolate": "jinja"}}, {"expression": "generator.Apply("}]},
     [(("spec", "failurePolicy"), "unknown field 'failurePolicy'"),
      (("spec", "generate", 0, "template", "interpolate"), 'must be one of: none, cel, not "jinja"'),
      (("spec", "generate", 0, "template", "value"), "required field is missing"),
      (("spec", "generate", 1, "expression"), CEL_ERROR)]),
    ("DeletingPolicy", {"matchConstraints": {"resourceRules": PODS}, "deletionPropagationPolicy": "Later",
                        "conditions": [{"name": "old", "expression": "object.metadata.("}, {"name": 3}]},
     [(("spec", "deletionPropagationPolicy"), 'must be one of: Foreground, Background, Orphan, not "Later"'),
      (("spec", "conditions", 0, "expression"), CEL_ERROR),
      (("spec", "conditions", 1, "name"), "must be a string, not a number"),
      (("spec", "conditions", 1, "expression"), "required field is missing"),
      (("spec", "schedule"), "required field is missing")]),
    ("ImageValidatingPolicy", {"matchConstraints": {"resourceRules": PODS},
                               "attestors": [{"name": "a", "cosgin": {}}],
                               "credentials": {"providers": ["dockerhub"]},
                               "validations": [{"expression": "images.containers.all(i, "}]},
     [(("spec", "attestors", 0, "cosgin"), "unknown field 'cosgin' (did you mean 'cosign'?)"),
      (("spec", "credentials", "providers", 0), ('must be one of: default, amazon, azure, google, github, not '
                                                '"dockerhub"')),
      (("spec", "validations", 0, "expression"), CEL_ERROR)]),
], ids=["MutatingPolicy", "GeneratingPolicy", "DeletingPolicy", "ImageValidatingPolicy"])
def test_each_kind_reports_every_problem(kind: str, spec: dict, expected: list) -> None:
    assert found(policy(kind, spec)) == expected


@pytest.mark.parametrize(("kind", "spec", "expected"), [
    ("ValidatingPolicy", {"matchConstraints": {"resourceRules": PODS}, "validations": [],
                          "variables": [{"name": "a", "expression": "1"}, {"name": "a", "expression": "2"}],
                          "matchConditions": [{"name": "c", "expression": "true"}, {"name": "c", "expression": "1"}]},
     [(("spec", "validations"), "a ValidatingPolicy needs at least one validation"),
      (("spec", "variables", 1, "name"), "duplicate name 'a'"),
      (("spec", "matchConditions", 1, "name"), "duplicate name 'c'")]),
    ("GeneratingPolicy", {"matchConstraints": {"resourceRules": PODS},
                          "generate": [{"expression": "true", "template": {"value": "a: 1"}}, {}]},
     [(("spec", "generate", 0), "exactly one of expression or template must be set"),
      (("spec", "generate", 1), "exactly one of expression or template must be set")]),
    ("ImageValidatingPolicy", {"matchConstraints": {"resourceRules": PODS}, "attestors": [],
                               "matchImageReferences": [{"glob": "*", "expression": "true"}],
                               "validations": [{"expression": "true"}]},
     [(("spec", "matchImageReferences", 0), "exactly one of glob or expression must be set")]),
    ("MutatingPolicy", {"evaluation": {"mode": "Kubernetes"}},
     [(("spec", "matchConstraints"), ("required field is missing (a Kubernetes-mode policy matches nothing without "
                                     "it)")),
      (("spec", "mutations"), "a MutatingPolicy needs at least one mutation")]),
], ids=["ValidatingPolicy", "GeneratingPolicy", "ImageValidatingPolicy", "MutatingPolicy"])
def test_what_the_schema_cannot_say_is_reported_whole_once_it_passes(kind: str, spec: dict, expected: list) -> None:
    assert found(policy(kind, spec)) == expected


def test_the_namespaced_kinds_have_no_v1alpha1() -> None:
    # Kyverno's CRDs serve NamespacedValidatingPolicy & co. from v1beta1 on, and the CLI's loader knows no v1alpha1
    # of them (cmd/cli/kubectl-kyverno/policy/load.go: nvpV1beta1, nvpV1; no nvpV1alpha1)
    spec = {"matchConstraints": {"resourceRules": PODS}, "validations": [{"expression": "true"}]}
    assert found(policy("NamespacedValidatingPolicy", spec, version="v1alpha1")) == [
        (("apiVersion",), ('must be one of: policies.kyverno.io/v1, policies.kyverno.io/v1beta1, not '
                          '"policies.kyverno.io/v1alpha1"'))]
    assert found(policy("NamespacedValidatingPolicy", spec, version="v1beta1")) == []
    assert found(policy("ValidatingPolicy", spec, version="v1alpha1")) == []


def test_loading_stops_at_the_first_problem_and_says_how_many_more() -> None:
    document = policy("ValidatingPolicy", {"failurePolicy": "Never", "validationActions": ["Block"],
                                           "validations": [{"expression": "true"}]})
    with pytest.raises(PolicyError) as caught:
        compile_document(document)
    assert caught.value.path == ("spec", "failurePolicy")
    assert caught.value.message == 'must be one of: Fail, Ignore, not "Never" (and 1 more problem)'


LINTED = """\
apiVersion: policies.kyverno.io/v1
kind: ValidatingPolicy
metadata:
  name: pods
spec:
  matchConstraints:
    resourceRules:
      - {apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [pods]}
  failurePolicy: Never
  validations:
    - expression: object.spec.(
---
apiVersion: policies.kyverno.io/v1beta1
kind: MutatingPolicy
metadata:
  name: labels
spec:
  matchConstraints:
    resourceRules:
      - {apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [pods]}
  mutation: []
"""


def test_lint_reports_each_problem_with_file_line_and_field(tmp_path: Path, capsys) -> None:
    file = tmp_path / "policies.yaml"
    file.write_text(LINTED)
    code = main(["lint", str(file)])
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert code == 1 and "Traceback" not in err
    assert lines[0] == f"{file}:9:3: error: spec.failurePolicy: must be one of: Fail, Ignore, not \"Never\""
    assert lines[1].startswith(f"{file}:11:7: error: spec.validations[0].expression: {CEL_ERROR}")
    assert lines[2] == f"{file}:21:3: error: spec.mutation: unknown field 'mutation' (did you mean 'mutations'?)"
    assert len(lines) == 3
    assert "1 policy file checked: 3 errors, 0 warnings" in err


def test_the_schema_takes_part_in_the_cache_of_checked_files() -> None:
    # the cache's folder is named after the size and modification time of every file of these folders, so an edited
    # schema never passes a document that the schema it replaces let through
    package = importlib.import_module("assertree.schemas")  # (other tests drop it from `assertree`'s attributes)
    schema = (Path(str(package.__file__)).parent / SCHEMA_FILE).resolve()
    assert schema.is_file()
    assert any(schema.is_relative_to(Path(module).resolve()) for module in checked_files._POLICY_CACHE.modules)


def test_a_document_from_the_cache_is_not_validated_again(tmp_path: Path, monkeypatch) -> None:
    from assertree.languages import schema_problems
    from assertree.languages.load import load_policies

    file = tmp_path / "policy.yaml"
    file.write_text(yaml.safe_dump(policy("ValidatingPolicy", {"matchConstraints": {"resourceRules": PODS},
                                                               "validations": [{"expression": "true"}]})))
    monkeypatch.setenv("ASSERTREE_CACHE_DIR", str(tmp_path / "cache"))  # a cache of this test alone
    monkeypatch.setattr(checked_files, "_POLICY_CACHE", DocumentCache("policies", checked_files._POLICY_CACHE.modules))
    validated: list[str] = []
    validate = schema_problems._fast_validator

    def counted(file_name: str) -> Any:
        validated.append(file_name)
        return validate(file_name)

    monkeypatch.setattr(schema_problems, "_fast_validator", counted)
    assert [item.policy.name for item in load_policies(file)] == ["p"]
    assert validated == [SCHEMA_FILE]
    assert [item.policy.name for item in load_policies(file)] == ["p"]
    assert validated == [SCHEMA_FILE]  # the second load took the checked document from the cache


OTHER_VALUES: list[Any] = [None, True, 7, "x", "", [], {}, [{"name": "x"}], [1], {"expression": 1}]


def broken_variants(count: int, seed: int) -> Iterator[dict]:
    """Seeded variants of the conformance documents: one to three fields removed or given a value of another
    type or shape, anywhere in the document."""
    rng = random.Random(seed)
    corpus = [document for root in (CONFORMANCE / "kyverno-cli", CONFORMANCE / "kyverno-policies")
              for _, document in cel_documents(root)]
    for _ in range(count):
        variant = copy.deepcopy(rng.choice(corpus))
        for _ in range(rng.randint(1, 3)):
            path = rng.choice(list(places_in(variant))[1:])
            parent = variant
            for step in path[:-1]:
                parent = parent[step]
            if isinstance(parent, dict) and rng.random() < 0.2:
                del parent[path[-1]]
            else:
                parent[path[-1]] = copy.deepcopy(rng.choice(OTHER_VALUES))
        yield variant


def test_lint_finds_an_error_exactly_when_loading_refuses_the_document() -> None:
    # lint reads what loading reads (the schema, the rules it cannot say, the CEL) and never stops early; a
    # broken document of any shape gives problems, never an exception
    agreed = refused = 0
    for variant in broken_variants(120, seed=26):
        linted = any(problem.severity == Severity.ERROR for problem in lint_document(variant))
        try:
            compile_document(variant)
        except PolicyError:
            loaded = False
        else:
            loaded = True
        agreed += linted != loaded
        refused += not loaded
    assert agreed == 120
    assert refused >= 80  # most variants really are broken
