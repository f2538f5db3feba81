"""The compile memo and the facts kept between runs give what compiling and rewriting afresh give.

`Environment.compile` returns the program it compiled before for the same text (or raises the same
error), and compiles a text `text_facts` knows to have compiled only when it is first evaluated;
`compile_forms` takes a Kyverno text's rewritten forms from its memo or from the facts of an earlier run.
Each is held here to the general path (`engine._compile` on a fresh environment, `written_text` and
`source_text`): the same results, the same errors (message, line, column, details), on every CEL
expression of the vendored kyverno/policies and on random texts, in a cold run, a warm one (a new
process is a new environment: here a copy of it and a new facts table) and the same process again.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assertree.languages.cel import engine, text_facts
from assertree.languages.cel import variables as cel_variables
from assertree.languages.cel.engine import CelCompileError, CelError, Environment, Program
from assertree.languages.kyverno.cel_policies import compile as kyverno_compile
from assertree.languages.kyverno.cel_policies.compile import compile_forms, source_text, written_text
from assertree.languages.kyverno.cel_policies.environment import environment

pytest.importorskip("cel_expr_python")

POLICIES = Path(__file__).parents[1] / "conformance" / "data" / "kyverno-policies"
POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "namespace": "apps", "labels": {"app": "web"},
                                                        "annotations": {"a": "b"}},
       "spec": {"hostNetwork": False, "containers": [
           {"name": "app", "image": "nginx:1.25", "securityContext": {"runAsNonRoot": True, "privileged": False},
            "resources": {"limits": {"memory": "128Mi", "cpu": "500m"}}, "ports": [{"containerPort": 80}]}]}}
INPUTS = [{"object": POD, "oldObject": None, "request": {"operation": "CREATE"}, "variables": {}},
          {"object": {"kind": "Namespace", "metadata": {"name": "x"}}, "oldObject": POD, "request": {},
           "variables": {"a": 1}}]


def _expressions(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        for key, item in value.items():
            if key in ("expression", "messageExpression") and isinstance(item, str):
                yield item
            else:
                yield from _expressions(item)
    elif isinstance(value, list):
        for item in value:
            yield from _expressions(item)


def policy_documents(word: str) -> Iterator[Any]:
    """The documents of every vendored kyverno/policies YAML file whose text holds `word`."""
    for path in sorted(POLICIES.rglob("*.yaml")):
        text = path.read_text(encoding="utf-8", errors="replace")
        if word not in text:
            continue
        try:
            yield from list(yaml.safe_load_all(text))
        except yaml.YAMLError:
            continue


def corpus() -> list[str]:
    """Every ``expression`` and ``messageExpression`` text of the vendored kyverno/policies YAML, once each."""
    found: dict[str, None] = {}
    for document in policy_documents("expression"):
        found.update(dict.fromkeys(_expressions(document)))
    return list(found)


CORPUS = corpus()


def outcome(compile_it: Any, text: str, checked: bool = True) -> Any:
    """What compiling `text` gives, and what each of `INPUTS` gives evaluated by it: values or error texts."""
    try:
        program = compile_it(text, checked)
    except CelCompileError as error:
        return ("compile error", error.message, error.expression, error.line, error.column, error.details)
    results = []
    for variables in INPUTS:
        try:
            results.append(("value", program.evaluate(variables)))
        except CelError as error:
            results.append(("error", type(error).__name__, error.message))
    return ("program", program.text, results)


def fresh(declared: Environment) -> Environment:
    """A new environment declared like `declared` (what a new process builds): nothing compiled in it yet."""
    return dataclasses.replace(declared)


@pytest.fixture
def facts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Facts kept in a folder of this test's own, read afresh by each `new_run`."""
    monkeypatch.setenv("ASSERTREE_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("ASSERTREE_CACHE", raising=False)
    new_run()
    yield
    new_run()


def new_run() -> None:
    """Forget what this process knows (as a new process would), keeping what was written."""
    text_facts.flush_all()
    engine._compiled_before.cache_clear()
    kyverno_compile._forms_kept.clear()
    kyverno_compile._REWRITES = text_facts.TextFacts("cel-rewrites", kyverno_compile._REWRITES._modules)
    cel_variables._INLINED = text_facts.TextFacts("cel-inlined", cel_variables._INLINED._modules)


def through_memo(declared: Environment) -> Any:
    return lambda text, checked: declared.compile(text, checked)


def afresh(declared: Environment) -> Any:
    """The general path: the library's compile and the cost model, every time (no memo, no facts)."""
    return lambda text, checked: engine._compile(declared, text, checked)


def test_the_corpus_is_the_policies_expressions() -> None:
    assert len(CORPUS) > 300


@pytest.mark.usefixtures("facts")
def test_every_policy_expression_compiles_through_the_memo_as_afresh() -> None:
    """Cold (compiled now, facts kept), again in the same process (the memo), warm (a new environment and
    facts table: deferred to the first evaluation): each gives what compiling afresh gives."""
    texts = list(dict.fromkeys(form for text in CORPUS for form in compile_forms(text)))  # as written, as read
    declared = fresh(environment())
    general = afresh(fresh(declared))
    reference = [outcome(general, text) for text in texts]
    cold = fresh(declared)
    assert [outcome(through_memo(cold), text) for text in texts] == reference
    assert [outcome(through_memo(cold), text) for text in texts] == reference  # the same environment again
    new_run()
    warm = fresh(declared)
    deferred = 0
    for text, expected in zip(texts, reference, strict=True):
        try:
            program = warm.compile(text)
            deferred += program._bounds is None
        except CelCompileError:
            pass
        assert outcome(through_memo(warm), text) == expected, text
    assert deferred == sum(result[0] == "program" for result in reference) > 100


@pytest.mark.usefixtures("facts")
def test_every_policy_expression_is_rewritten_through_the_memo_as_afresh() -> None:
    expected = [(written_text(text), source_text(text)) for text in CORPUS]
    assert [compile_forms(text) for text in CORPUS] == expected  # cold
    assert [compile_forms(text) for text in CORPUS] == expected  # the same process
    new_run()
    assert [compile_forms(text) for text in CORPUS] == expected  # warm: from the facts kept
    assert kyverno_compile._REWRITES.get(CORPUS[0]) == expected[0]


FRAGMENTS = ["object", "object.spec", "object.metadata.name", "oldObject", "x", "1", "2.5", "'a'", "null", "[1, 2]",
             "{'a': 1}", "size(object)", "has(object.spec)", "object.?spec", "true", "request.operation"]
OPERATORS = [" == ", " < ", " + ", " && ", " || ", ".orValue(", ".all(c, ", "[", " ? 1 : "]


@st.composite
def texts(draw: st.DrawFn) -> str:
    """Random texts, most of them valid CEL, some not (a type error, an unknown name, a syntax error)."""
    text = draw(st.sampled_from(FRAGMENTS))
    for _ in range(draw(st.integers(0, 3))):
        operator = draw(st.sampled_from(OPERATORS))
        right = draw(st.sampled_from(FRAGMENTS))
        closing = {".orValue(": ")", ".all(c, ": ")", "[": "]", " ? 1 : ": ""}.get(operator, "")
        text = f"{text}{operator}{right}{closing}"
    return text


TYPED = Environment(name="memo-test", variables=("object", "oldObject", "request"), extensions=("optional",),
                    cross_type_numeric_comparisons=True)
OTHER = Environment(name="memo-test", variables=("object", "x"), extensions=("optional",))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(texts(), st.booleans(), st.booleans()), min_size=1, max_size=6))
def test_random_texts_compile_through_the_memo_and_the_facts_as_afresh(
        tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch,
        cases: list[tuple[str, bool, bool]]) -> None:
    """Texts compiled checked and unchecked, in two environments that differ in their variables and options:
    neither the memo nor the facts may answer for another declaration or for the other `checked`."""
    monkeypatch.setenv("ASSERTREE_CACHE_DIR", str(tmp_path_factory.mktemp("facts")))
    new_run()
    run = [fresh(TYPED), fresh(OTHER)]
    general = [afresh(fresh(TYPED)), afresh(fresh(OTHER))]
    for _ in range(2):  # cold, then warm
        for text, checked, typed in cases:
            declared = run[0] if typed else run[1]
            expected = outcome(general[0] if typed else general[1], text, checked)
            assert outcome(through_memo(declared), text, checked) == expected, (text, checked, typed)
            assert outcome(through_memo(declared), text, checked) == expected, (text, checked, typed)
        new_run()
        run = [fresh(TYPED), fresh(OTHER)]


def test_a_deferred_program_is_compiled_on_its_first_evaluation(facts: None) -> None:
    declared = fresh(TYPED)
    assert declared.compile("object.a == 1")._bounds is not None  # cold: compiled now
    new_run()
    program = fresh(TYPED).compile("object.a == 1")
    assert isinstance(program, Program) and program._bounds is None
    assert program.evaluate({"object": {"a": 1}, "oldObject": None, "request": None}) is True
    assert program._bounds is not None


def test_errors_are_never_kept_and_the_cache_switch_turns_the_facts_off(
        facts: None, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(CelCompileError):
        fresh(TYPED).compile("object.a ==")
    new_run()
    assert engine._compiled_before().get(engine._fact(TYPED, "object.a ==", True)) is None
    monkeypatch.setenv("ASSERTREE_CACHE", "off")
    new_run()
    assert fresh(TYPED).compile("object.b == 1")._bounds is not None
    new_run()
    assert fresh(TYPED).compile("object.b == 1")._bounds is not None  # nothing kept: compiled now again
