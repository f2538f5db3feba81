"""`inline_variables` through its memo (kept between runs: `text_facts`) gives what inlining afresh gives.

Every pair of (expression, declared variables) of the vendored kyverno/policies' CEL policies, and random
ones, inlined cold (worked out now, kept), again in the same process, and warm (a new facts table read from
what the cold run wrote): the same text, the same None, the same error.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from assertree.languages.cel import text_facts, variables
from assertree.languages.cel.variables import VariableReferenceError, inline_afresh, inline_variables

POLICIES = Path(__file__).parents[1] / "conformance" / "data" / "kyverno-policies"


def _texts(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        for key, item in value.items():
            if key in ("expression", "messageExpression") and isinstance(item, str):
                yield item
            else:
                yield from _texts(item)
    elif isinstance(value, list):
        for item in value:
            yield from _texts(item)


def corpus() -> list[tuple[str, tuple[tuple[str, str], ...]]]:
    """(expression, declared variables) of every policy with ``spec.variables``, each expression with all of
    them and with those declared before it."""
    found: dict[tuple[str, tuple[tuple[str, str], ...]], None] = {}
    for path in sorted(POLICIES.rglob("*.yaml")):
        text = path.read_text(encoding="utf-8", errors="replace")
        if "variables" not in text:
            continue
        try:
            documents = list(yaml.safe_load_all(text))
        except yaml.YAMLError:
            continue
        for document in documents:
            spec = document.get("spec") if isinstance(document, dict) else None
            declared = spec.get("variables") if isinstance(spec, dict) else None
            if not isinstance(declared, list):
                continue
            pairs = tuple((item["name"], item["expression"]) for item in declared
                          if isinstance(item, dict) and isinstance(item.get("name"), str)
                          and isinstance(item.get("expression"), str))
            for expression in _texts(spec):
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


@pytest.fixture
def facts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("ASSERTREE_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("ASSERTREE_CACHE", raising=False)
    new_run()
    yield
    new_run()


def new_run() -> None:
    """Forget what this process knows (as a new process would), keeping what was written."""
    text_facts.flush_all()
    variables._INLINED = text_facts.TextFacts("cel-inlined", variables._INLINED._modules)


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


@settings(max_examples=150, deadline=None, database=None)
@given(st.lists(st.tuples(TEXTS, DECLARED), min_size=1, max_size=5))
def test_random_texts_inline_through_the_memo_as_afresh(tmp_path_factory: pytest.TempPathFactory,
                                                        cases: list) -> None:
    """Undeclared names, names declared after, reads that cannot be inlined: never answered by the memo for
    another declaration."""
    import os

    os.environ["ASSERTREE_CACHE_DIR"] = str(tmp_path_factory.mktemp("inlined"))
    try:
        new_run()
        for _ in range(2):  # cold, then warm
            for text, declared in cases:
                assert outcome(inline_variables, text, declared) == outcome(inline_afresh, text, declared)
            new_run()
    finally:
        del os.environ["ASSERTREE_CACHE_DIR"]
        new_run()
