"""`inline_variables` through its memo (kept between runs: `text_facts`) gives what inlining afresh gives.

Every pair of (expression, declared variables) of the vendored kyverno/policies' CEL policies, and random
ones, inlined cold (worked out now, kept), again in the same process, and warm (a new facts table read from
what the cold run wrote): the same text, the same None, the same error.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_compile_memo import _expressions, facts, new_run, policy_documents  # noqa: F401  (facts: a fixture)

from assertree.languages.cel import variables
from assertree.languages.cel.variables import VariableReferenceError, inline_afresh, inline_variables


def corpus() -> list[tuple[str, tuple[tuple[str, str], ...]]]:
    """(expression, declared variables) of every policy with ``spec.variables``, each expression with all of
    them and with those declared before it."""
    found: dict[tuple[str, tuple[tuple[str, str], ...]], None] = {}
    for document in policy_documents("variables"):
        spec = document.get("spec") if isinstance(document, dict) else None
        declared = spec.get("variables") if isinstance(spec, dict) else None
        if not isinstance(declared, list):
            continue
        pairs = tuple((item["name"], item["expression"]) for item in declared
                      if isinstance(item, dict) and isinstance(item.get("name"), str)
                      and isinstance(item.get("expression"), str))
        for expression in _expressions(spec):
            found[(expression, pairs)] = None
        for position, (_, expression) in enumerate(pairs):
            found[(expression, pairs[:position])] = None
    return list(found)


CORPUS = corpus()


def outcome(inline: Any, text: str, declared: tuple[tuple[str, str], ...]) -> Any:
    try:
        return ("inlined", inline(text, declared))
    except VariableReferenceError as error:
        return ("error", error.name, str(error))


def test_the_corpus_reads_variables() -> None:
    assert sum("variables." in text for text, _ in CORPUS) > 90


@pytest.mark.usefixtures("facts")
def test_every_policy_expression_inlines_through_the_memo_as_afresh() -> None:
    expected = [outcome(inline_afresh, text, declared) for text, declared in CORPUS]
    assert [outcome(inline_variables, text, declared) for text, declared in CORPUS] == expected  # cold
    assert [outcome(inline_variables, text, declared) for text, declared in CORPUS] == expected  # same process
    new_run()
    assert [outcome(inline_variables, text, declared) for text, declared in CORPUS] == expected  # warm
    text, declared = next((text, declared) for text, declared in CORPUS if "variables." in text)
    assert variables._INLINED.get("\0".join((text, *(f"{n}\0{e}" for n, e in declared)))) is not None  # kept


NAMES = st.sampled_from(["a", "b", "c"])
READS = st.one_of(NAMES.map(lambda name: f"variables.{name}"), NAMES.map(lambda name: f"variables.?{name}"),
                  NAMES.map(lambda name: f"has(variables.{name})"), st.just("variables['a']"), st.just("1"))
TEXTS = st.lists(READS, min_size=1, max_size=3).map(" + ".join)
DECLARED = st.lists(st.tuples(NAMES, TEXTS), max_size=3).map(tuple)


@settings(max_examples=150, deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(TEXTS, DECLARED), min_size=1, max_size=5))
def test_random_texts_inline_through_the_memo_as_afresh(tmp_path_factory: pytest.TempPathFactory,
                                                        monkeypatch: pytest.MonkeyPatch, cases: list) -> None:
    """Undeclared names, names declared after, reads that cannot be inlined: never answered by the memo for
    another declaration."""
    monkeypatch.setenv("ASSERTREE_CACHE_DIR", str(tmp_path_factory.mktemp("inlined")))
    new_run()
    for _ in range(2):  # cold, then warm
        for text, declared in cases:
            assert outcome(inline_variables, text, declared) == outcome(inline_afresh, text, declared)
        new_run()
