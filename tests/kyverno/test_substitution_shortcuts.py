"""`variables.substitute_all` skips what cannot change a document, and gives what the full walk gives.

Without ``{{`` or ``$(`` anywhere it copies; without ``$(`` it skips the reference pass. Both are held to
the full path (`substitute_variables` of `substitute_references`) on random documents: strings with
variables, references, escapes and neither, as values and as keys; the same value or the same error.

`variables.prepare_substitution` (the conditions' fast path: a literal or a lone ``{{ }}`` done once) is
held to `substitute_all` the same way, under CREATE and DELETE, at several paths (``{{ @ }}``) and with both
ways of treating an unresolved variable; on every condition key and value of the conformance data; and end
to end, a scan of kyverno/policies reports the same with it as with `substitute_all` on every call.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml
from conftest import CONFORMANCE
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import policy_library, scan_json

from assertree.languages.kyverno import variables
from assertree.languages.kyverno.conditions import evaluate_conditions, parse_conditions
from assertree.languages.kyverno.references import substitute_references
from assertree.languages.kyverno.substitution import VariableError
from assertree.languages.kyverno.variables import (
    KyvernoContext,
    Unresolved,
    prepare_substitution,
    substitute_all,
    substitute_variables,
)

PIECES = ["a", " ", "{{ request.object.kind }}", "{{request.object.metadata.name}}", "$(./../b)", "\\$(./x)",
          "{{ missing.key }}", "\\{{ x }}", "{{- request.namespace }}", "$(<=./../n)", "{{", "$(", "}}", "ok",
          "{{ request.object.metadata }}", "{{ @ }}", "{{ request.object.spec.containers[].name }}",
          "{{ to_upper(@) }}",
          "{{ request.object.metadata.labels.\"app.kubernetes.io/name\" || 'none' }}", "{{ '{{ x }}' }}", "{{ [ }}"]
texts = st.lists(st.sampled_from(PIECES), max_size=3).map("".join)
documents = st.recursive(
    st.one_of(texts, st.integers(0, 3), st.booleans(), st.none()),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.one_of(st.sampled_from("abn"), texts),
                                                                          inner, max_size=3)),
    max_leaves=8,
)
RESOURCE = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "namespace": "team"}}


def outcome(substitute: Any, document: Any) -> tuple:
    try:
        return ("value", substitute(document, KyvernoContext.for_cli(RESOURCE)))
    except VariableError as error:
        return ("error", str(error))


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents)
def test_substitute_all_gives_what_the_full_walk_gives(document):
    def full(value: Any, context: KyvernoContext) -> Any:
        return substitute_variables(substitute_references(value), context)

    assert outcome(substitute_all, document) == outcome(full, document)


POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "namespace": "team", "labels": {"app": "x"}},
       "spec": {"containers": [{"name": "a", "image": "nginx:1"}, {"name": "b", "image": "busybox"}]}}
PATHS = [(), ("validate", "deny", "conditions", "any", 0, "key"), ("spec", "containers", 0, "name"),
         ("foreach", 0, "spec", "name")]


def prepared_outcome(substitute: Any, document: Any, operation: str, path: tuple, unresolved: Unresolved) -> tuple:
    """What substituting gives, with the error's parts (text, field path, not found)."""
    context = KyvernoContext.for_cli(POD, operation=operation)
    try:
        return ("value", substitute(document, context, path, unresolved))
    except VariableError as error:
        return ("error", str(error), error.path, error.not_found)


def _general(document: Any, context: KyvernoContext, path: tuple, unresolved: Unresolved) -> Any:
    return substitute_all(document, context, path=path, unresolved=unresolved)


def _prepared(document: Any, context: KyvernoContext, path: tuple, unresolved: Unresolved) -> Any:
    return prepare_substitution(document)(context, path=path, unresolved=unresolved)


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(st.sampled_from(PIECES), documents), st.sampled_from(["CREATE", "UPDATE", "DELETE"]),
       st.sampled_from(PATHS),
       st.sampled_from(list(Unresolved)))
def test_a_prepared_substitution_gives_what_substitute_all_gives(document, operation, path, unresolved):
    assert prepared_outcome(_prepared, document, operation, path, unresolved) == prepared_outcome(
        _general, document, operation, path, unresolved)


def _condition_blocks() -> list[Any]:
    blocks: list[Any] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key in ("preconditions", "conditions") and isinstance(value, (dict, list)):
                    blocks.append(value)
                walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    for root in (CONFORMANCE / "kyverno-policies", CONFORMANCE / "kyverno-cli"):
        for path in sorted(root.rglob("*.yaml")):
            try:
                documents = list(yaml.safe_load_all(path.read_text(encoding="utf-8")))
            except (yaml.YAMLError, UnicodeDecodeError):
                continue
            for document in documents:
                if isinstance(document, dict) and str(document.get("apiVersion", "")).startswith("kyverno.io/"):
                    walk(document.get("spec"))
    return blocks


BLOCKS = _condition_blocks()


def _leaves(block: Any) -> list[Any]:
    items = block if isinstance(block, list) else [*(block.get("any") or []), *(block.get("all") or [])]
    return [item.get(field) for item in items if isinstance(item, dict) for field in ("key", "value")]


@pytest.mark.parametrize("operation", ["CREATE", "DELETE"])
def test_every_condition_of_the_conformance_data_substitutes_and_evaluates_the_same_prepared(operation):
    leaves = [leaf for block in BLOCKS for leaf in _leaves(block)]
    shortcut = 0
    for leaf in leaves:
        for path in ((), PATHS[1]):
            assert prepared_outcome(_prepared, leaf, operation, path, Unresolved.ERROR) == prepared_outcome(
                _general, leaf, operation, path, Unresolved.ERROR), leaf
        shortcut += isinstance(leaf, str) and variables._whole_variable(leaf) is not None
    context = KyvernoContext.for_cli(POD, operation=operation)

    def raw(value: Any) -> Any:
        return substitute_all(value, context)

    for block in BLOCKS:
        prepared = parse_conditions(block, prepare_substitution)
        assert _result(evaluate_conditions(prepared, lambda run: run(context))) == _result(
            evaluate_conditions(block, raw)), block
    assert len(BLOCKS) > 150 and shortcut > 150  # the data reached the shortcut often


def _result(result: Any) -> tuple:
    error = result.error
    return (result.passed, result.message, len(result.reasons), error.message if error else None,
            str(error.cause) if error else None)


def test_a_scan_reports_the_same_with_prepared_conditions(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("ASSERTREE_CACHE", "off")
    policies, resources = policy_library(tmp_path, ("best-practices", "other", "pod-security"))

    fast = scan_json(capsys, policies, resources)
    with monkeypatch.context() as general:
        general.setattr(variables, "prepare_substitution", lambda document: lambda context, path=(), unresolved=(
            Unresolved.ERROR): substitute_all(document, context, path=path, unresolved=unresolved))
        slow = scan_json(capsys, policies, resources)
    assert fast == slow
    assert fast[0] == 1 and len(json.dumps(fast[1])) > 10_000  # a real scan, with failures
