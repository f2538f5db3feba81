"""Random policies and payloads never crash assertree; deep nesting gives a clean error or a result.

Property tests run a bounded number of examples in the normal suite (see the
settings below); ``pytest -m slow`` runs the same properties much longer.
"""

from __future__ import annotations

import json
import string

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assertree.cli import main
from assertree.engine.scan import scan
from assertree.errors import AssertreeError
from assertree.languages.load import load_policies, policy_from_mapping

EXAMPLES = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# -- generators -----------------------------------------------------------------------------------

names = st.sampled_from(["a", "b", "items", "name", "spec", "x-y", "0"])
scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-5, 5), st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.text(string.ascii_letters + " *?:.-", max_size=6),
)
json_values = st.recursive(
    scalars, lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(names, inner, max_size=4)),
    max_leaves=20,
)
expressions = st.sampled_from([
    "@", "a", "length(@)", "a || `0`", "items[0]", "to_string(@)", "a + `1`", "$x", "$payload.a",
    "contains(@, 'a')", "keys(@)", "[a, b]", "a.b.c", "type(@)", "`[1, 2]`", "wildcard('a*', to_string(@))",
    "add(@, `1`)", "x509_decode(@)", "regex_match('a+', to_string(@))", "lookup(@, 'a')", "$i",
])


@st.composite
def _keys(draw):
    kind = draw(st.sampled_from(["plain", "projection", "foreach", "named-foreach", "binding", "escaped"]))
    name = draw(names)
    expression = draw(expressions)
    return {
        "plain": name,
        "projection": f"({expression})",
        "foreach": f"~.{name}",
        "named-foreach": f"~i.({expression})",
        "binding": f"{name}->x",
        "escaped": f"\\({name})\\",
    }[kind]


keys = _keys()
leaves = st.one_of(scalars, expressions.map(lambda e: f"({e})"), st.just({}))
trees = st.recursive(
    leaves,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(keys, inner, min_size=1, max_size=3)),
    max_leaves=10,
)


@st.composite
def policies(draw):
    rules = []
    for number in range(draw(st.integers(1, 3))):
        rule = {"name": f"rule-{number}", "assert": {draw(st.sampled_from(["any", "all"])): [
            {"check": draw(st.dictionaries(keys, trees, min_size=1, max_size=3)),
             "message": draw(st.sampled_from(["failed", "{{ a }} is wrong", "{{ $x }}"]))}
            for _ in range(draw(st.integers(1, 2)))
        ]}}
        if draw(st.booleans()):
            rule["match"] = {"any": [draw(st.dictionaries(keys, trees, min_size=1, max_size=2))]}
        if draw(st.booleans()):
            variable = draw(st.one_of(json_values, expressions.map(lambda e: f"({e})")))
            rule["context"] = [{"name": "x", "variable": variable}]
        if draw(st.booleans()):
            rule["identifier"] = draw(expressions)
        rules.append(rule)
    return {"apiVersion": "json.kyverno.io/v1alpha1", "kind": "ValidatingPolicy",
            "metadata": {"name": "fuzz"}, "spec": {"rules": rules}}


def outcome(result):
    """Everything a scan reported, as comparable plain data."""
    return [(r.rule.name, r.status, r.identifier, r.error,
             [(v.check, v.message, [str(e) for e in v.errors]) for v in r.violations]) for r in result.results]


def try_scan(document, payloads):
    try:
        policy = policy_from_mapping(document)
    except AssertreeError:
        return "invalid policy"
    try:
        return outcome(scan(payloads, [policy], bindings={"x": 1}))
    except AssertreeError as error:
        return f"error: {error}"


# -- properties -----------------------------------------------------------------------------------


@EXAMPLES
@given(policies(), st.lists(json_values, min_size=1, max_size=3))
def test_scan_raises_only_assertree_errors_and_is_deterministic(document, payloads):
    first = try_scan(document, payloads)
    assert try_scan(document, payloads) == first


@EXAMPLES
@given(policies(), st.sampled_from(["yaml", "json"]))
def test_load_of_dump_round_trips(tmp_path_factory, document, form):
    path = tmp_path_factory.mktemp("policy") / f"policy.{form}"
    path.write_text(yaml.safe_dump(document, sort_keys=False) if form == "yaml" else json.dumps(document))
    try:
        policy_from_mapping(document)
    except AssertreeError:
        with pytest.raises(AssertreeError):
            load_policies(path)
        return
    (loaded,) = load_policies(path)
    assert loaded.policy.document == document


@pytest.mark.slow
@settings(max_examples=5000, deadline=None)
@given(policies(), st.lists(json_values, min_size=1, max_size=3))
def test_scan_fuzz_long(document, payloads):
    first = try_scan(document, payloads)
    assert try_scan(document, payloads) == first


# -- deep nesting ---------------------------------------------------------------------------------

POLICY = """\
apiVersion: json.kyverno.io/v1alpha1
kind: ValidatingPolicy
metadata:
  name: deep
spec:
  rules:
    - name: check
      assert:
        all:
          - check:
              ? ({expression})
              : true
"""


def run(tmp_path, capsys, payload_name, payload_text, expression="a == `1`"):
    (tmp_path / "policy.yaml").write_text(POLICY.format(expression=expression))
    (tmp_path / payload_name).write_text(payload_text)
    code = main(["scan", str(tmp_path / payload_name), "--policy", str(tmp_path / "policy.yaml")])
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return code, err


@pytest.mark.parametrize(("name", "text"), [
    ("deep.json", '{"a":' * 10_000 + "1" + "}" * 10_000),
    ("deep.yaml", "[" * 10_000 + "]" * 10_000),
    ("deeper.yaml", "[" * 100_000 + "]" * 100_000),  # libyaml's C composer would crash the process here
    ("deep-block.yaml", "".join(" " * level + "- \n" for level in range(0, 2_200, 2)) + " " * 2_200 + "- 1\n"),
])
def test_payload_nested_beyond_1024_levels_is_a_clean_error(tmp_path, capsys, name, text):
    code, err = run(tmp_path, capsys, name, text)
    assert code == 2
    assert len(err.strip().splitlines()) == 1 and "nested more than 1024 levels deep" in err and name in err


def _nested(name: str, depth: int) -> str:
    if name.endswith("block.yaml"):  # block style: a mapping per level
        return "".join("  " * level + "a:\n" for level in range(depth - 1)) + "  " * (depth - 1) + "a: 1\n"
    return "[" * depth + "]" * depth


@pytest.mark.parametrize("name", ["deep.json", "deep.yaml", "deep-block.yaml"])
def test_the_nesting_limit_is_assertrees_whatever_the_yaml_library(tmp_path, capsys, name):
    """1,024 levels read, 1,025 do not, with assertree's message: libyaml 0.2.6 (PyYAML 6.0.4) has its own
    limit of 1,000 levels and its own words, which must never be what a user meets."""
    code, err = run(tmp_path, capsys, name, _nested(name, 1024), "length(to_string(@)) > `0`")
    assert code in (0, 1) and err == ""
    code, err = run(tmp_path, capsys, name, _nested(name, 1025))
    assert code == 2 and "nested more than 1024 levels deep" in err and name in err


@pytest.mark.parametrize(("name", "text"), [
    ("deep.json", "[" * 1_000 + "]" * 1_000),
    ("deep.yaml", "[" * 1_000 + "]" * 1_000),
])
@pytest.mark.parametrize("expression", ["a == `1`", "length(to_string(@)) > `0`", "contains(@, `1`)"])
def test_payload_nested_1000_levels_gives_a_result(tmp_path, capsys, name, text, expression):
    code, err = run(tmp_path, capsys, name, text, expression)
    assert code in (0, 1) and err == ""


@pytest.mark.parametrize("joiner", [" + ", " || ", ".", " | ", " && "])
def test_expression_with_10000_terms_is_a_clean_error(tmp_path, capsys, joiner):
    code, err = run(tmp_path, capsys, "ok.json", '{"a": 1}', expression=joiner.join(["a"] * 10_000))
    assert code == 2
    assert "nested too deeply" in err and "policy.yaml:11:17" in err and len(err) - len(str(tmp_path)) < 350


def test_flat_expression_with_10000_terms_gives_a_result(tmp_path, capsys):
    expression = "length([" + ", ".join(["a"] * 10_000) + "]) > `1`"
    code, _ = run(tmp_path, capsys, "ok.json", '{"a": 1}', expression=expression)
    assert code == 0
