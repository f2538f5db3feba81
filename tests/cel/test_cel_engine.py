"""The CEL engine: lazy import, typed compile errors, errors as values, JSON-like results, the activation cache."""

from __future__ import annotations

import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from assertree.languages.cel import engine
from assertree.languages.cel.engine import (
    CEL_EXTRA_MESSAGE,
    CelCompileError,
    CelEvaluationError,
    CelUnavailableError,
    Environment,
    Function,
    FunctionError,
    Overload,
    evaluation_context,
)


def _fails(text: str) -> str:
    raise FunctionError(f"refused {text}")


def _broken(text: str) -> int:
    return int(text)  # ValueError for non-numbers: must become an error value, not a traceback


def _from_context(name: str):
    return evaluation_context()[name]


PLAIN = Environment(name="plain", variables=("object",))
CHECKED = Environment(
    name="test",
    variables=("object",),
    extensions=("optional", "strings"),
    functions=(
        Function("refuse", (Overload("refuse_string", ("string",), "bool", _fails),)),
        Function("toInt", (Overload("toInt_string", ("string",), "int", _broken),)),
        Function("ctx.get", (Overload("ctx_get_string", ("string",), "dyn", _from_context),)),
    ),
    cross_type_numeric_comparisons=True,
)


def run(text: str, value=None, environment: Environment = CHECKED, context=None):
    return environment.compile(text).evaluate({"object": value}, context)


def test_importing_the_cel_package_does_not_import_the_library():
    code = (
        "import sys\n"
        "import assertree.languages.cel, assertree.languages.cel.kyverno_json\n"
        "import assertree.languages.cel.kubernetes, assertree.languages.cel.functions\n"
        "print('cel_expr_python' in sys.modules)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False"


def test_a_missing_library_is_one_clear_message(monkeypatch):
    monkeypatch.setitem(sys.modules, "cel_expr_python", None)  # makes `import cel_expr_python` fail
    engine._library.cache_clear()
    try:
        assert engine.available() is False
        with pytest.raises(CelUnavailableError) as caught:
            Environment(name="fresh", variables=("object",)).compile("object")
        assert str(caught.value) == CEL_EXTRA_MESSAGE
        assert CEL_EXTRA_MESSAGE == "CEL expressions need the cel extra: pip install 'assertree[cel]'"
    finally:
        engine._library.cache_clear()


def test_the_library_is_available_here():
    assert engine.available() is True


@pytest.mark.parametrize(
    ("text", "line", "column", "fragment"),
    [
        ("object.", 1, 8, "Syntax error"),
        ("object.a &&\n  nope.b", 2, 7, "undeclared reference to 'nope.b'"),  # at the select
        ("size(1, 2, 3)", 1, 5, "size"),
        ("'a' + 1", 1, 5, "no matching overload"),
    ],
)
def test_compile_errors_are_typed_and_located(text, line, column, fragment):
    with pytest.raises(CelCompileError) as caught:
        CHECKED.compile(text)
    error = caught.value
    assert (error.expression, error.line, error.column) == (text, line, column)
    assert fragment in error.message
    assert "\n" not in error.message
    assert error.details


@pytest.mark.parametrize(
    ("text", "value", "fragment"),
    [
        ("object.spec", {}, 'Key not found in map : "spec"'),
        ("1 / object", 0, "divide by zero"),
        ("refuse('x')", None, "refused x"),
        ("toInt('seven')", None, "invalid literal for int()"),
        ("object[3]", [1], "Index error: index=3 size=1"),
    ],
)
def test_evaluation_errors_are_error_objects(text, value, fragment):
    with pytest.raises(CelEvaluationError) as caught:
        run(text, value)
    assert fragment in caught.value.message
    assert caught.value.expression == text


def test_a_python_function_error_is_a_cel_error_value():
    assert run("refuse('x') || true") is True
    assert run("toInt('seven') == 7 || true") is True
    assert run("toInt('7') == 7") is True


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("b'\\x00ab'", "AGFi"),
        ("timestamp('2020-01-02T03:04:05.5Z')", "2020-01-02T03:04:05.5Z"),
        ("timestamp('2020-01-02T03:04:05+01:00')", "2020-01-02T02:04:05Z"),
        ("duration('90s')", "90s"),
        ("duration('-1.25s')", "-1.25s"),
        ("int", "int"),
        ("type('a')", "string"),
        ("3u", 3),
        ("{'a': [1, 2.5, null, true, {'b': b'z'}]}", {"a": [1, 2.5, None, True, {"b": "eg=="}]}),
        ("object.?spec", None),
        ("object.?foo", {"bar": 4}),
        ("optional.of(1)", 1),
        ("[1].first()", 1),
    ],
)
def test_results_are_plain_json_like_values(text, expected):
    result = run(text, {"foo": {"bar": 4}})
    assert result == expected
    assert type(result) is type(expected)


def test_optional_values_inside_a_result_are_an_error():
    with pytest.raises(CelEvaluationError, match="optional"):
        run("[object.?spec]", {})


def test_cross_type_numeric_comparisons_compile_only_where_enabled():
    assert run("size(object) < 2.5", [1, 2]) is True
    assert run("object.n >= 1.5", {"n": 2}) is True
    with pytest.raises(CelCompileError, match="no matching overload for '_<_'"):
        PLAIN.compile("size(object) < 2.5")
    with pytest.raises(CelCompileError, match="_==_"):  # cel-go's option covers ordering only
        CHECKED.compile("1 == 1.5")
    with pytest.raises(CelCompileError, match="undeclared reference"):  # other check errors still count
        CHECKED.compile("1 < 2.5 && nope")


def test_mixed_numbers_compare_by_value_at_run_time():
    assert run("object.a == object.b", {"a": 1, "b": 1.0}) is True
    assert run("object.a < object.b", {"a": 1, "b": 1.5}) is True


def test_evaluation_context_is_per_call_and_nests():
    inner = CHECKED.compile("ctx.get('x')")

    def outer_value():
        return inner.evaluate({"object": None}, {"x": "inner"})

    context = {"x": "outer", "y": None}
    assert run("ctx.get('x')", context=context) == "outer"
    assert outer_value() == "inner"
    assert evaluation_context() is None


def test_unchecked_compile_defers_type_errors():
    program = CHECKED.compile("'a' + 1", checked=False)
    with pytest.raises(CelEvaluationError, match="No matching overloads"):
        program.evaluate({"object": None})


# NUL is left out: cel-expr-python 0.1.3 cuts a Python string at its first NUL on the way in
# ("a\x00b" arrives as "a"), a library defect reported with the choice of library. Lone surrogates are left
# out too (older Hypothesis draws them by default): no JSON or YAML reader of assertree produces them.
texts = st.text(alphabet=st.characters(exclude_characters="\x00", exclude_categories=("Cs",)))
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.floats(allow_nan=False) | texts,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(texts, children, max_size=4),
    max_leaves=20,
)


def canonical(value):
    """`value` with maps as sorted item lists and each leaf tagged with its type: CEL maps keep no order."""
    if isinstance(value, dict):
        return ("map", sorted((key, canonical(item)) for key, item in value.items()))
    if isinstance(value, list):
        return ("list", [canonical(item) for item in value])
    return (type(value).__name__, repr(value))


OBJECT = CHECKED.compile("object")


@given(json_values)
def test_json_values_round_trip_through_cel(value):
    assert canonical(OBJECT.evaluate({"object": value})) == canonical(value)  # no bool/int/float confusion


@given(st.dictionaries(st.sampled_from("abc"), json_values, max_size=3))
def test_the_activation_cache_never_changes_a_result(value):
    texts = ["object", "size(object)", "has(object.a) ? object.a : null", "object.exists(k, k == 'b')"]
    programs = [CHECKED.compile(text) for text in texts]
    cached = [[program.evaluate({"object": value}) for program in programs] for _ in range(2)]
    engine._local.__dict__.pop("activations", None)  # this thread's cache
    fresh = [program.evaluate({"object": value}) for program in programs]
    assert cached[0] == cached[1] == fresh



def _held(value) -> bool:
    return any(value is held for kept in engine._local.activations.values() for held in kept[0])


def test_the_activation_cache_lets_the_previous_resource_go():
    """Activations are kept for the resource being scanned; the next one releases the last one's (a long
    process held its last 64 payloads and their CEL copies)."""
    programs = [CHECKED.compile(text) for text in ("size(object)", "has(object.a)")]
    first, second = {"a": list(range(1000))}, {"a": [1]}
    for program in programs * 2:  # kept from the second use on
        program.evaluate({"object": first})
    assert _held(first)
    for program in programs * 2:
        assert program.evaluate({"object": second}) in (1, True)
    assert _held(second) and not _held(first)
