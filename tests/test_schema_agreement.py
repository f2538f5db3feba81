"""The fast schema check (jsonschema-rs) never changes a result: it agrees with python-jsonschema.

`assertree.languages.schema_problems` lets jsonschema-rs say "valid" for plain
JSON documents and leaves every other answer, and every message, to
python-jsonschema. These tests hold that shortcut to its invariant on every
policy document the repository's tests, samples and benchmark carry (the
conformance data's ClusterPolicies, ValidatingPolicies, Kubernetes admission
policies and bindings and Kyverno's CEL policy kinds, valid and not), and
on seeded mutations of each (an unknown field, a missing field, a value of
another type, an enum value that is not one), so that both validators see
hundreds of invalid documents of every kind the schemas refuse.
"""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Iterator
from functools import cache
from typing import Any

import jsonschema
import jsonschema_rs
import pytest
import yaml
from conftest import CONFORMANCE, REPO
from document_places import places as places_in

from assertree.documents.reader import SUFFIXES, load_documents
from assertree.errors import AssertreeError
from assertree.languages import schema_problems as module
from assertree.languages.admission.reading import SCHEMA_FILE as ADMISSION
from assertree.languages.admission.reading import problems as admission_problems
from assertree.languages.kyverno.cel_policies.model import KINDS as CEL_KINDS
from assertree.languages.kyverno.cel_policies.reading import SCHEMA_FILE as CEL_POLICY
from assertree.languages.kyverno.cel_policies.reading import problems as cel_policy_problems
from assertree.languages.kyverno.schema import SCHEMA_FILE as CLUSTER_POLICY
from assertree.languages.kyverno.schema import problems as cluster_policy_problems
from assertree.languages.kyverno_json.schema import SCHEMA_FILE as VALIDATING_POLICY
from assertree.languages.kyverno_json.schema import problems as validating_policy_problems
from assertree.languages.schema_problems import packaged_schema

ROOTS = [REPO / "tests", REPO / "samples", REPO / "bench"]
MUTATIONS_PER_DOCUMENT = 6
OTHER_TYPES: list[Any] = [None, True, 7, 2.5, "text", [], {}, [{"name": "x"}]]


def schema_of(document: Any) -> str | None:
    """The packaged schema a policy document is checked against (as the languages pick it), or None."""
    if not isinstance(document, dict):
        return None
    group = str(document.get("apiVersion", "")).split("/", 1)[0]
    if group == "json.kyverno.io":
        return VALIDATING_POLICY
    if group == "kyverno.io" and document.get("kind") in ("ClusterPolicy", "Policy"):
        return CLUSTER_POLICY
    if group == "admissionregistration.k8s.io":
        return ADMISSION
    if group == "policies.kyverno.io" and document.get("kind") in CEL_KINDS:
        return CEL_POLICY
    return None


def _from_files() -> Iterator[Any]:
    for root in ROOTS:
        for path in sorted(root.rglob("*")):
            if path.suffix.lower() not in SUFFIXES or not path.is_file():
                continue
            text = path.read_text(encoding="utf-8", errors="replace")
            if "Policy" not in text or ("json.kyverno.io" not in text and "kyverno.io/" not in text
                                        and "admissionregistration.k8s.io" not in text):
                continue
            try:
                documents = load_documents(path, text)
            except AssertreeError:  # the hostile tests' broken files: not documents at all
                continue
            yield from (document.value for document in documents)


def _from_conformance_cases() -> Iterator[Any]:
    semantics = json.loads((CONFORMANCE / "kyverno-json" / "semantics.json").read_text(encoding="utf-8"))
    for vector in semantics["vectors"]:
        yield from vector.get("policies") or ()
    examples = json.loads((CONFORMANCE / "kyverno-json" / "docs-examples.json").read_text(encoding="utf-8"))
    for example in examples["examples"] + examples.get("incomplete_examples", []):
        if example.get("policy_yaml"):
            yield from yaml.safe_load_all(example["policy_yaml"])


@cache
def policies() -> tuple[tuple[str, Any], ...]:
    """(schema file, document) for every policy document found, each once."""
    seen: set[str] = set()
    found = []
    for document in [*_from_files(), *_from_conformance_cases()]:
        schema = schema_of(document)
        key = json.dumps(document, sort_keys=True, default=repr)
        if schema is not None and key not in seen:
            seen.add(key)
            found.append((schema, document))
    return tuple(found)


def _parent(document: Any, path: tuple) -> Any:
    for step in path[:-1]:
        document = document[step]
    return document


def mutations(document: dict, rng: random.Random) -> Iterator[Any]:
    """Seeded variants of `document`: an unknown field, a field removed, a value of another type, a
    string (an enum's value or not), an empty list, string or object, each at a randomly chosen place."""
    places = list(places_in(document))
    dict_places = [path for path in places if isinstance(_parent(document, (*path, None)), dict)]
    for _ in range(MUTATIONS_PER_DOCUMENT):
        variant = copy.deepcopy(document)
        kind = rng.randrange(5)
        path = rng.choice(places[1:])
        parent = _parent(variant, path)
        if kind == 0:
            target = _parent(variant, (*rng.choice(dict_places), None))
            target[rng.choice(["preconditon", "unknownField", "Name", "rule"])] = 1
        elif kind == 1 and isinstance(parent, dict):
            del parent[path[-1]]
        elif kind == 2:
            parent[path[-1]] = copy.deepcopy(rng.choice(OTHER_TYPES))
        elif kind == 3:
            parent[path[-1]] = rng.choice(["Bogus", "", "v9", "audit", "Enforce"])
        else:
            parent[path[-1]] = rng.choice([[], "", {}])
        yield variant


@cache
def cases() -> tuple[tuple[str, Any], ...]:
    rng = random.Random(15)
    found = list(policies())
    for schema, document in policies():
        found.extend((schema, variant) for variant in mutations(document, rng))
    return tuple(found)


@cache
def validators(schema: str) -> tuple[Any, Any]:
    return (jsonschema_rs.Draft202012Validator(packaged_schema(schema)),
            jsonschema.Draft202012Validator(packaged_schema(schema)))


def test_the_corpus_holds_hundreds_of_policies_of_every_schema():
    kinds = [schema for schema, _ in policies()]
    assert kinds.count(CLUSTER_POLICY) >= 200
    assert kinds.count(VALIDATING_POLICY) >= 60
    assert kinds.count(ADMISSION) >= 80
    assert kinds.count(CEL_POLICY) >= 100


def test_jsonschema_rs_and_jsonschema_agree_on_every_policy_and_mutation():
    tally: dict[tuple[str, bool], int] = {}
    disagreements = []
    for schema, document in cases():
        if not module._plain_json(document):
            continue
        fast, slow = validators(schema)
        valid = slow.is_valid(document)
        tally[schema, valid] = tally.get((schema, valid), 0) + 1
        if fast.is_valid(document) != valid:
            disagreements.append((schema, valid, json.dumps(document)[:300]))
    assert disagreements == []
    for schema in (CLUSTER_POLICY, VALIDATING_POLICY, ADMISSION, CEL_POLICY):  # both answers were exercised, often
        assert tally.get((schema, True), 0) >= 60, tally
        assert tally.get((schema, False), 0) >= 250, tally


@pytest.mark.parametrize(("problems", "wanted"), [(cluster_policy_problems, CLUSTER_POLICY),
                                                  (validating_policy_problems, VALIDATING_POLICY),
                                                  (admission_problems, ADMISSION),
                                                  (cel_policy_problems, CEL_POLICY)],
                         ids=["ClusterPolicy", "ValidatingPolicy", "admission", "policies.kyverno.io"])
def test_the_problems_are_python_jsonschemas_with_or_without_the_fast_check(problems, wanted, monkeypatch):
    documents = [document for schema, document in cases() if schema == wanted]
    with_fast = [problems(document) for document in documents]
    monkeypatch.setattr(module, "_fast_validator", lambda file_name: None)
    assert [problems(document) for document in documents] == with_fast
    assert sum(1 for found in with_fast if found) >= 250  # most mutations are refused, with their messages


@pytest.mark.parametrize("document", [
    {"apiVersion": "json.kyverno.io/v1alpha1", "kind": "ValidatingPolicy", "metadata": {"name": "t", 1: "YAML"}},
    {"apiVersion": "json.kyverno.io/v1alpha1", "kind": "ValidatingPolicy", "metadata": {"name": "t"},
     "spec": {"rules": ({"name": "a-tuple", "assert": {"all": [{"check": {"a": 1}}]}},)}},
    {"apiVersion": "json.kyverno.io/v1alpha1", "kind": "ValidatingPolicy", "metadata": {"name": float("nan")}},
    {"apiVersion": "json.kyverno.io/v1alpha1", "kind": "ValidatingPolicy", "metadata": {"generation": 2**80}},
], ids=["integer-key", "tuple", "nan", "big-integer"])
def test_values_a_json_parser_never_makes_go_the_slow_way(document, monkeypatch):
    assert not module._plain_json(document)
    expected = validating_policy_problems(document)
    monkeypatch.setattr(module, "_fast_validator", lambda file_name: NeverAsked())
    assert validating_policy_problems(document) == expected


class NeverAsked:
    def is_valid(self, document: Any) -> bool:
        raise AssertionError("the fast check was asked about a value a JSON parser never makes")


def test_a_cycle_a_python_caller_built_is_not_plain_json():
    loop: list = []
    loop.append(loop)
    assert not module._plain_json({"spec": loop})
