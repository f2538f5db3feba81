"""How Kyverno's cel-go environment reads an expression, held against the CEL library assertree runs.

Each case is an expression whose value in Kyverno follows from its source
(kyverno/kyverno pkg/cel/compiler/env.go, cel-go interpreter/attributes.go,
the kyverno/sdk libraries); the source rewrites (`assertree.languages.cel.
or_value`, `.presence`, `.conversions`, `.variables`) must give the same.
"""

from __future__ import annotations

import datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assertree.languages.cel.engine import CelError
from assertree.languages.cel.lexer import rename_calls, tokens
from assertree.languages.cel.or_value import or_value_compat
from assertree.languages.cel.presence import null_safe_presence
from assertree.languages.kyverno.cel_policies.compile import source_text
from assertree.languages.kyverno.cel_policies.environment import environment

OBJECT = {"spec": {"containers": [{"name": "a", "ctx": {"opts": {"type": "t"}}}, {"name": "b", "ctx": None}],
                   "empty": None, "list": [1, 2], "text": "x"},
          "metadata": None}


def run(text: str, value=None):
    return environment().compile(source_text(text)).evaluate({"object": OBJECT if value is None else value})


@pytest.mark.parametrize(("text", "expected"), [
    # orValue on anything (Kyverno's compat macro): the value itself unless it is an optional
    ("object.spec.list.orValue([])", [1, 2]),
    ("object.spec.?list.orValue([])", [1, 2]),
    ("object.spec.?missing.orValue([3])", [3]),
    ("object.spec.text.orValue('y')", "x"),
    ("object.spec.empty.orValue('y')", None),
    ("object.spec.?missing.orValue(1).orValue(2)", 1),
    ("object.spec.list.map(i, [i].orValue([0])[0])", [1, 2]),
    # presence tests on null are absent, as cel-go qualifies them (interpreter/attributes.go refQualify)
    ("object.metadata.?annotations.orValue({})", {}),
    ("object.metadata.?annotations[?'a'].orValue('none')", "none"),
    ("has(object.metadata.annotations)", False),
    ("has(object.metadata)", True),  # the key is there, with null
    ("object.spec.containers.map(c, c.?ctx.?opts.?type.orValue(''))", ["t", ""]),
    ("object.spec.containers.all(c, !has(c.ctx.opts) || c.ctx.opts.type == 't')", True),
    # a one-element map binds the receiver: cel.bind inside comprehension bodies keeps stale values in the
    # CEL library when another comprehension of the body stops early (the regression this guards)
    ("object.spec.containers.map(c, c.?ctx.?opts.?type.orValue('') == '' || ['t', 'u'].exists(x, x == 't'))",
     [True, True]),
    # string(ip), string(cidr) (Kubernetes' overloads of the standard conversion)
    ("string(ip('2001:db8::68')) + ' ' + string(cidr('10.0.0.1/24')) + ' ' + string(7)", "2001:db8::68 10.0.0.1/24 7"),
    ("string(cidr('10.0.0.1/24').masked())", "10.0.0.0/24"),
    # list indexOf beside the strings extension's, math.round(x, digits) beside the math extension's
    ("[1, 2, 3].indexOf(2) + 'abcb'.lastIndexOf('b')", 4),
    ("math.round(2.345, 2) + math.round(2.5)", 5.35),
    # Kubernetes' format library, with its optional results
    ("format.dns1123Label().validate('Web').hasValue()", True),
    ("format.named('dns1123Label').value().validate('web').hasValue()", False),
])
def test_kyverno_reads_it_so(text: str, expected) -> None:
    assert run(text) == expected


@pytest.mark.parametrize("text", [
    "object.metadata.annotations",  # a plain selection on null stays an error, as in cel-go
    "object.spec.missing.orValue(1)",  # an error is not an optional: orValue keeps it
    "has(object.spec.text.length)",  # not a map
])
def test_still_errors(text: str) -> None:
    with pytest.raises(CelError):
        run(text)


@pytest.mark.parametrize(("text", "expected"), [
    ("sha256('abc')", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
    ("hash.md5('abc') == md5('abc')", True),
    ("json.marshal({'b': [1, 2.5], 'a': '<x>'})", '{"a":"\\u003cx\\u003e","b":[1,2.5]}'),
    ("user.parseServiceAccount('system:serviceaccount:ns:sa').Name", "sa"),
    ("transform.listObjToMap([{'k': 'a'}], [{'v': 1}], 'k', 'v')", {"a": 1}),
    ("gzip.decompress(gzip.compress('hello'))", "hello"),
    ("size(random('[a-c]{5}')) + size(random())", 13),
    ("time.toCron(timestamp('2024-03-05T07:08:09Z'))", "8 7 5 3 2"),
    ("time.truncate(timestamp('2024-03-05T07:08:09Z'), duration('1h')) == timestamp('2024-03-05T07:00:00Z')",
     True),
    ("parseImageReference('nginx').registry()", "index.docker.io"),
])
def test_sdk_libraries(text: str, expected) -> None:
    assert run(text) == expected


def test_rewrites_leave_strings_and_comments_alone() -> None:
    text = "'a.orValue(b) has(x.y) x.?y' + \"string(ip('1'))\" // x.orValue(1)\n"
    assert source_text(text) == text
    assert [token.text for token in tokens("r'\\d' + b\"x\" '''a\nb'''")] == ["r'\\d'", "+", 'b"x"', "'''a\nb'''"]


def test_rename_calls_counts_arguments() -> None:
    renamed = rename_calls("math.round(1.5, 1) + math.round(1.5)", "math.round", "r({args})", 2)
    assert renamed == "r(1.5, 1) + math.round(1.5)"


values = st.recursive(st.none() | st.booleans() | st.integers(-5, 5) | st.text("ab", max_size=2),
                      lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from("ab"), inner,
                                                                                       max_size=2), max_leaves=6)


PAIRS = [(text, environment().compile(text), environment().compile(null_safe_presence(or_value_compat(text))))
         for text in ("object.?a.?b.orValue('none')", "object[?'a'].orValue(0)", "has(object.a.b)",
                      "object.?a.orValue([]) == []", "object.a.orValue(1) == 1 || has(object.a.c)")]


@settings(max_examples=200, deadline=None)
@given(values)
def test_where_the_written_form_answers_the_rewritten_one_answers_the_same(value) -> None:
    """The invariant `assertree.languages.cel.fallback` rests on: the rewrites only change what happens where
    the library fails on the written form (a null receiver, a non-optional orValue)."""
    for text, written, rewritten in PAIRS:
        try:
            plain = written.evaluate({"object": {"a": value}})
        except CelError:
            continue
        assert rewritten.evaluate({"object": {"a": value}}) == plain, text


def test_variables_keep_their_cel_types() -> None:
    from assertree.languages.cel.variables import inline_variables

    declared = [("when", "timestamp('2020-01-01T00:00:00Z')"), ("later", "variables.when + duration('24h')")]
    text = inline_variables("variables.later > variables.when", declared)
    assert text is not None and run(text) is True
    assert run(inline_variables("variables.when", declared) or "") == datetime.datetime(
        2020, 1, 1, tzinfo=datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def test_many_variables_past_the_librarys_nesting_limit_still_evaluate():
    """Each bound variable nests the expression one level; past the CEL library's 32 levels the expression
    reads precomputed values instead, with the same result."""
    from cel_helpers import POD_RULES, pod, policy_document
    from cel_helpers import run as run_policy

    variables = [{"name": f"v{i}", "expression": f"variables.v{i - 1} + 1" if i else "1"} for i in range(40)]
    spec = {"matchConstraints": {"resourceRules": POD_RULES}, "variables": variables,
            "validations": [{"expression": "variables.v39 == 40"}]}
    [result] = run_policy(policy_document(spec), pod())
    assert result.status == "pass"


def test_the_written_form_runs_first_and_the_rewritten_one_where_it_fails():
    from assertree.languages.cel.fallback import Fallback
    from assertree.languages.kyverno.cel_policies.compile import compile_expression

    program = compile_expression("object.spec.?list.orValue([]).size() + object.spec.list.orValue([]).size()", ())
    assert isinstance(program, Fallback) and program.written is not None
    assert program.evaluate({"object": OBJECT}) == 4
    with pytest.raises(CelError):  # as written, orValue on a list has no overload: the rewritten form answers
        program.written.evaluate({"object": OBJECT})


@pytest.mark.parametrize("text", ["object.é == 1", "Object{é: 1}", "object.a.orValue(é)"])
def test_text_no_lexer_knows_is_a_compile_error_not_a_crash(text):
    from assertree.errors import PolicyError
    from assertree.languages.kyverno.cel_policies.compile import compile_expression

    with pytest.raises(PolicyError, match="invalid CEL expression"):
        compile_expression(text, ("spec",))
