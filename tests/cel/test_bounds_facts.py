"""The cost bounds kept between runs judge every evaluation as the bounds worked out afresh do.

`limits.Bounds.facts` gives what an expression's bounds worked out (whether the estimate is uncertain, the
trace of what it reads, the verdict of each size class judged), `engine` keeps them with the expression's
serialized form (`text_facts`), and `Bounds.known` takes them back in the next run without estimating
again. The invariant: a Bounds taken back from its facts (written and read as the cache does, with
`marshal`) checks every evaluation as a Bounds compiled afresh from the same expression does (the same
verdict, the same error, the same charge to the evaluation's budget), on every CEL expression of the
vendored kyverno/policies and random data of many sizes.
"""

from __future__ import annotations

import marshal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_compile_memo import CORPUS, INPUTS  # the sibling test's corpus and inputs

from assertree.languages.cel import engine, limits
from assertree.languages.cel.engine import CelCompileError
from assertree.languages.cel.limits import Bounds, LimitError
from assertree.languages.kyverno.cel_policies.compile import compile_forms
from assertree.languages.kyverno.cel_policies.environment import environment

pytest.importorskip("cel_expr_python")

DECLARED = environment()


def _programs() -> list[tuple[str, bytes]]:
    """(text, serialized form) of every corpus expression that compiles, as written and as read."""
    found = []
    for text in dict.fromkeys(form for written in CORPUS for form in compile_forms(written)):
        try:
            program = engine._compile(DECLARED, text)
        except CelCompileError:
            continue
        if program._serialized is not None:
            found.append((text, program._serialized))
    return found


PROGRAMS = _programs()


def afresh(serialized: bytes) -> Bounds:
    """The general path: the expression's bounds compiled now (no memo, nothing kept)."""
    return Bounds._compile(serialized, DECLARED.python_functions())


def kept(bounds: Bounds, serialized: bytes) -> Bounds:
    """`bounds` as the next run takes them back: its facts written and read as the cache does."""
    facts = marshal.loads(marshal.dumps(bounds.facts()))
    restored = Bounds.known(serialized, DECLARED.python_functions(), facts)
    assert restored is not None
    return restored


def judged(bounds: Bounds, variables: dict) -> tuple:
    """What `check` says of an evaluation on `variables`: run under the backstop or not, or the error; and
    what it charged to the evaluation's budget."""
    with limits.evaluation_budget():
        try:
            verdict: object = bounds.check(variables)
        except LimitError as error:
            verdict = (type(error).__name__, str(error))
        left = limits._budget.get()
        assert left is not None
        return verdict, left[1] - left[0]


SCALARS = st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.text(max_size=40)
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=12)
                      | st.dictionaries(st.sampled_from(["name", "image", "spec", "containers", "metadata", "labels",
                                                         "securityContext", "items", "ports", "x"]), inner,
                                        max_size=6), max_leaves=60)
LARGE = st.builds(lambda count, width: {"spec": {"containers": [{"name": "c" * width, "image": "i" * width}] * count}},
                  st.integers(0, 300), st.integers(0, 2000))
OBJECTS = VALUES | LARGE | st.sampled_from([item["object"] for item in INPUTS])


@st.composite
def evaluations(draw: st.DrawFn) -> dict:
    return {"object": draw(OBJECTS), "oldObject": draw(st.none() | OBJECTS), "request": {"operation": "CREATE"},
            "params": None, "namespaceObject": draw(st.none() | VALUES), "variables": {}, "exceptions": []}


def test_the_corpus_compiles() -> None:
    assert len(PROGRAMS) > 300


def test_every_policy_expression_judges_from_its_kept_facts_as_afresh() -> None:
    """Kept before the first evaluation (nothing traced yet), after it (traced, one verdict), after several."""
    for text, serialized in PROGRAMS:
        learning = afresh(serialized)
        restored = [kept(learning, serialized)]
        for variables in INPUTS:
            judged(learning, {**variables, "params": None, "namespaceObject": None, "exceptions": []})
            restored.append(kept(learning, serialized))
        for variables in INPUTS:
            full = {**variables, "params": None, "namespaceObject": None, "exceptions": []}
            expected = judged(afresh(serialized), full)
            for bounds in restored:
                assert judged(bounds, full) == expected, text
        assert restored[-1].facts() == learning.facts(), text


@settings(max_examples=60, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.lists(evaluations(), min_size=1, max_size=4), st.lists(evaluations(), min_size=1, max_size=3),
       st.randoms(use_true_random=False))
def test_kept_facts_judge_random_data_as_afresh(learned: list[dict], checked: list[dict], random) -> None:
    """Facts learned on some data (traces, verdicts of their size classes) judge other data as afresh."""
    for text, serialized in random.sample(PROGRAMS, 12):
        learning = afresh(serialized)
        for variables in learned:
            judged(learning, variables)
        restored = kept(learning, serialized)
        for variables in [*learned, *checked]:
            assert judged(restored, variables) == judged(afresh(serialized), variables), text


def test_facts_of_another_shape_are_not_taken() -> None:
    _, serialized = PROGRAMS[0]
    python = DECLARED.python_functions()
    for stored in [True, (), (True,), ("x", None, {}), (False, (True, (1,), False, ()), {}),
                   (False, (True, (1, 2), False, ((("object",), "size"),)), {}),  # no such measure
                   (False, (True, (1, 2), False, ((("object",), "length"),)), {(16, 16): (1, 2)}),  # a wrong class
                   (False, None, {(16,): (1, 2)}), (False, (1, (1, 2), False, ()), {})]:
        assert Bounds.known(serialized, python, stored) is None, stored


def test_a_refused_or_unreadable_expression_keeps_no_facts() -> None:
    assert Bounds.refusing("past a limit").facts() is None
    assert Bounds(None, {}).facts() is None


def test_a_table_stays_within_its_bytes(tmp_path, monkeypatch) -> None:
    """Past `MAX_TABLE_BYTES` written, a table starts afresh with this run's facts; when they alone are past
    it, nothing is written (the facts are worked out again next time)."""
    from assertree.languages.cel import text_facts

    monkeypatch.setenv("ASSERTREE_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("ASSERTREE_CACHE", raising=False)
    monkeypatch.setattr(text_facts, "MAX_TABLE_BYTES", 10_000)

    def written() -> dict:
        return text_facts.TextFacts("bytes-test", lambda: [])._table()

    table = text_facts.TextFacts("bytes-test", lambda: [])
    table.put("a", b"x" * 6000)
    table.flush()
    assert set(written().values()) == {b"x" * 6000}
    table = text_facts.TextFacts("bytes-test", lambda: [])
    table.put("b", b"y" * 6000)  # both together are past the limit: the table starts afresh
    table.flush()
    assert set(written().values()) == {b"y" * 6000}
    table = text_facts.TextFacts("bytes-test", lambda: [])
    table.put("c", b"z" * 20_000)  # past it alone: nothing written, the table stays as it was
    table.flush()
    assert set(written().values()) == {b"y" * 6000}
