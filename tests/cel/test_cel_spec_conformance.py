"""The google/cel-spec conformance sample, run through assertree's CEL engine.

tests/conformance/data/cel-spec/sample.json is the vendored textproto sample
turned into JSON by scripts/cel-spec-json (the first test checks it is up to
date). Each case compiles with its declarations and container, evaluates with
its bindings and compares the typed result: the CEL type (int, uint, double,
string, bytes, bool, null, list, map, type, timestamp, duration) and the value,
or an error where the test expects one (error texts are not compared: they
differ between implementations). Files that test an extension enable it, as
cel-spec's own runners do.
"""

from __future__ import annotations

import datetime
import functools
import json
import math
import subprocess
import sys

import pytest
from conftest import CONFORMANCE, REPO

from assertree.languages.cel.engine import CelCompileError, CelEvaluationError, Environment

SAMPLE = json.loads((CONFORMANCE / "cel-spec" / "sample.json").read_text(encoding="utf-8"))
EXTENSIONS = {"optionals": ("optional",), "string_ext": ("strings",), "macros2": ("two-var-comprehensions",)}

# cel-cpp (through cel-expr-python 0.1.3) fails these; each reason was checked against the case.
KNOWN_FAILURES = {
    "fields/qualified_identifier_resolution/qualified_identifier_resolution_unchecked":
        "unchecked `a.b.c` with variables `a.b.c` and `a.b` bound must pick the longest name; unchecked, "
        "cel-cpp looks up `a` and fails (cel-expr-python's own conformance run skips it, b/173160413)",
    "fields/qualified_identifier_resolution/map_value_repeat_key_heterogeneous":
        "`{0: 1, 0u: 2}[0.0]` repeats a key as int and uint, which must be an error; cel-cpp returns 1 "
        "(skipped by cel-expr-python's own conformance run too)",
    "namespace/namespace/self_eval_container_lookup_unchecked":
        "unchecked `y` in container `x` must resolve to the variable `x.y` first; cel-cpp takes `y` "
        "(skipped by cel-expr-python's own conformance run too, b/173160413)",
    **{
        f"macros2/transformMap/{name}":
            "transformMap needs the internal `cel.@mapInsert` function, which the two-var-comprehensions "
            "extension of cel-expr-python 0.1.3 does not register at run time"
        for name in ("empty", "empty_filter", "one", "one_filter", "many", "many_filter")
    },
}


def case_id(case: dict) -> str:
    return f"{case['file']}/{case['section']}/{case['name']}"


def cases():
    for case in SAMPLE["tests"]:
        reason = KNOWN_FAILURES.get(case_id(case))
        marks = [pytest.mark.xfail(reason=reason, strict=True)] if reason else []
        yield pytest.param(case, id=case_id(case), marks=marks)


def test_sample_json_is_generated_from_the_vendored_textproto():
    result = subprocess.run([sys.executable, str(REPO / "scripts" / "cel-spec-json"), "--check"],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_known_failures_name_real_cases():
    assert set(KNOWN_FAILURES) <= {case_id(case) for case in SAMPLE["tests"]}


def input_value(typed: dict):
    (kind, value), = typed.items()
    if kind == "double_value":
        return float(value)
    if kind == "bytes_value":
        return bytes.fromhex(value)
    if kind == "list_value":
        return [input_value(item) for item in value]
    if kind == "map_value":
        return {input_value(key): input_value(item) for key, item in value}
    return value


def expected(typed: dict):
    """A typed expectation as (kind, value), maps as sorted (key, value) pairs."""
    (kind, value), = typed.items()
    kind = kind.removesuffix("_value")
    if kind == "double":
        return ("double", float(value))
    if kind == "bytes":
        return ("bytes", bytes.fromhex(value))
    if kind == "list":
        return ("list", [expected(item) for item in value])
    if kind == "map":
        return ("map", sorted((repr(expected(key)), expected(item)) for key, item in value))
    if kind == "timestamp":
        return ("timestamp", datetime.datetime.fromisoformat(value.replace("Z", "+00:00")))
    if kind == "duration":
        return ("duration", datetime.timedelta(seconds=float(value[:-1])))
    if kind == "type":
        return ("type", value.lower())
    return (kind.removesuffix("64"), value)


_TYPE_NAMES = {"timestamp": "google.protobuf.timestamp", "duration": "google.protobuf.duration", "null": "null_type"}


def actual(result):
    """The library's typed result as (kind, value), in the same shape as `expected`."""
    name = result.type().name().split("<")[0].lower()
    value = result.value()
    if name == "list":
        return ("list", [actual(item) for item in value])
    if name == "map":
        return ("map", sorted((repr(_key(key)), actual(item)) for key, item in value.items()))
    if name == "bytes":
        return ("bytes", bytes(value))
    if name == "null":
        return ("null", None)
    if name == "type":
        type_name = value.name().split("<")[0].lower()
        return ("type", _TYPE_NAMES.get(type_name, type_name))
    return (name, value)


def _key(key):
    if isinstance(key, bool):
        return ("bool", key)
    return ("int", key) if isinstance(key, int) else ("string", key)


def same(want, got) -> bool:
    if want[0] != got[0]:
        return False
    if want[0] == "double":
        if math.isnan(want[1]):
            return math.isnan(got[1])
        return want[1] == got[1] and math.copysign(1, want[1]) == math.copysign(1, got[1])
    if want[0] in ("list", "map"):
        return len(want[1]) == len(got[1]) and all(
            (w[0] == g[0] and same(w[1], g[1])) if want[0] == "map" else same(w, g)
            for w, g in zip(want[1], got[1]))
    return want[1] == got[1] and type(want[1]) is type(got[1])


@functools.cache
def environment(file: str, typed_variables: tuple[tuple[str, str], ...], container: str) -> Environment:
    return Environment(name=file, extensions=EXTENSIONS.get(file, ()), typed_variables=typed_variables,
                       container=container)


@pytest.mark.parametrize("case", list(cases()))
def test_cel_spec(case):
    environment_ = environment(case["file"], tuple(case["type_env"].items()), case["container"])
    bindings = {name: input_value(value) for name, value in case["bindings"].items()}
    try:
        program = environment_.compile(case["expr"], checked=not case["disable_check"])
        result = program.evaluate_value(bindings)
    except (CelCompileError, CelEvaluationError) as error:
        assert "eval_error" in case, f"unexpected error: {error}"
        return
    if "eval_error" in case:
        assert result.type().name() == "ERROR", f"expected an error, got {actual(result)}"
        return
    assert result.type().name() != "ERROR", f"unexpected error: {result.value()}"
    want = expected(case["value"] if "value" in case else case["typed_result"])
    got = actual(result)
    assert same(want, got), f"expected {want}, got {got}"
