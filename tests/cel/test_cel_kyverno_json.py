"""kyverno-json's CEL environment, checked against the CEL cases of the kyverno-json conformance data.

At unit level: the expressions of scan/cel, semantics.json
``explicit-cel-key-in-jp-policy`` and units.json ``cel_compile`` evaluate to
what kyverno-json expects; the engine wiring (keys, context entries, rule
results) is the lead's and is not exercised here.
"""

from __future__ import annotations

import json
import re

import pytest
import yaml
from conftest import CONFORMANCE

from assertree import jp
from assertree.jp.compiler import Lazy
from assertree.languages.cel.engine import CelCompileError, CelEvaluationError
from assertree.languages.cel.kyverno_json import compile_kyverno_json

DATA = CONFORMANCE / "kyverno-json"
KEY = re.compile(r"^\((?:(\w+);)?(.+)\)$", re.DOTALL)  # kyverno-json's compiler prefix: (statement) or (name;statement)


def statement(text: str, default: str) -> tuple[str, str]:
    """The (compiler, statement) of a projected key or value, as kyverno-json's expression parser reads it."""
    match = KEY.match(text)
    assert match, text
    return match.group(1) or default, match.group(2)


def evaluate(compiler: str, text: str, value, bindings):
    if compiler == "cel":
        return compile_kyverno_json(text).evaluate(value, bindings)
    return jp.compile(text).search(value, bindings)


def context_bindings(entries: list[dict], default: str, value) -> dict:
    """Context entries as kyverno-json binds them: lazily, in order, each seeing the ones before it."""
    bindings: dict = {}
    for entry in entries:
        compiler, text = statement(entry["variable"], entry.get("compiler", default))
        scope = dict(bindings)
        bindings[entry["name"]] = Lazy(lambda c=compiler, t=text, s=scope: evaluate(c, t, value, s))
    return bindings


def test_scan_cel_case():
    row = next(row for row in json.loads((DATA / "scan" / "manifest.json").read_text()) if row["name"] == "cel")
    policy = yaml.safe_load((DATA / "scan" / row["policies"][0]).read_text())
    payload = yaml.safe_load((DATA / "scan" / row["payload"]).read_text())
    default = policy["spec"]["compiler"]
    (rule,) = policy["spec"]["rules"]
    bindings = context_bindings(rule["context"], rule.get("compiler", default), payload)
    ((key, expected),) = rule["assert"]["all"][0]["check"].items()
    actual = evaluate(*statement(key, default), payload, bindings)
    wanted = evaluate(*statement(expected, default), payload, bindings)
    assert [r["status"] for r in row["expected_rules"]] == ["PASSED"]
    assert actual == wanted == 4


def test_semantics_explicit_cel_key_in_jp_policy():
    vector = next(v for v in json.loads((DATA / "semantics.json").read_text())["vectors"]
                  if v["id"] == "explicit-cel-key-in-jp-policy")
    (policy,) = vector["policies"]
    ((key, expected),) = policy["spec"]["rules"][0]["assert"]["all"][0]["check"].items()
    compiler, text = statement(key, "jp")
    assert compiler == "cel"
    assert compile_kyverno_json(text).evaluate(vector["payload"], {}) == expected
    assert [r["status"] for r in vector["expected_rules"]] == ["PASSED"]


@pytest.mark.parametrize(
    "vector",
    [v for v in json.loads((DATA / "units.json").read_text())["vectors"] if v["kind"] == "cel_compile"],
    ids=lambda v: v["name"],
)
def test_units_cel_compile(vector):
    assert vector["want_error"] is False
    compiled = compile_kyverno_json(vector["input"])
    assert compiled.evaluate({"spec": {"a": 1}}, {}) == {"a": 1}
    assert compiled.evaluate({}, {}) is None  # an absent optional is null, as cel-go's Optional.Value() gives


@pytest.mark.parametrize(
    ("text", "value", "expected"),
    [
        ("object.?spec.?replicas.orValue(1)", {"spec": {}}, 1),
        ("object.spec.replicas > 2.5", {"spec": {"replicas": 3}}, True),  # cross-type numeric comparison
        ("size(object.items) <= 1.0", {"items": [1]}, True),
        ("object.name.startsWith('app-') && object.name.upperAscii() == 'APP-X'", {"name": "app-x"}, True),
        ("object.tags.join(',')", {"tags": ["a", "b"]}, "a,b"),
        ("'a-b'.split('-')", None, ["a", "b"]),
        ("sets.contains(object.allowed, ['a'])", {"allowed": ["a", "b"]}, True),
        ("sets.equivalent([1, 2], [2, 1, 1])", None, True),
        ("sets.intersects(object.l, [3])", {"l": [1, 2]}, False),
        ("object.spec.containers.all(c, has(c.securityContext) && c.securityContext.privileged == false)",
         {"spec": {"containers": [{"securityContext": {"privileged": False}}]}}, True),
        ("timestamp('2024-01-01T10:00:00Z').getHours()", None, 10),  # UTC is the default time zone
        ("object", {"a": [1, 2.5, None, True]}, {"a": [1, 2.5, None, True]}),
    ],
)
def test_environment(text, value, expected):
    assert compile_kyverno_json(text).evaluate(value, {}) == expected


def test_bindings_resolve_reads_values_and_lazy_entries_once():
    calls = []

    def compute():
        calls.append(1)
        return {"limit": 3}

    bindings = {"plain": [1, 2], "lazy": Lazy(compute)}
    program = compile_kyverno_json("size(bindings.resolve('plain')) < bindings.resolve('lazy').limit")
    assert program.evaluate(None, bindings) is True
    assert program.evaluate(None, bindings) is True
    assert calls == [1]


def test_a_lazy_binding_may_itself_evaluate_cel():
    inner = compile_kyverno_json("object.n * 2")
    bindings = {"double": Lazy(lambda: inner.evaluate({"n": 21}, {}))}
    assert compile_kyverno_json("bindings.resolve('double')").evaluate({"n": 1}, bindings) == 42


def test_a_missing_binding_is_go_jmespaths_error():
    with pytest.raises(CelEvaluationError) as caught:
        compile_kyverno_json("bindings.resolve('nope')").evaluate({}, {"other": 1})
    assert caught.value.message == "variable not defined: $nope"
    assert compile_kyverno_json("bindings.resolve('nope') == 1 || true").evaluate({}, {}) is True


@pytest.mark.parametrize("text", ["bindings.name", "bindings['x']", "$x", "object.", "resolve('x')"])
def test_invalid_statements_fail_at_compile_time(text):
    with pytest.raises(CelCompileError) as caught:
        compile_kyverno_json(text)
    assert caught.value.expression == text
    assert caught.value.message


def test_compiled_statements_are_cached_by_text():
    assert compile_kyverno_json("object.a") is compile_kyverno_json("object.a")
