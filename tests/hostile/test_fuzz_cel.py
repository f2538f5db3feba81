"""Hostile CEL never ends in a traceback, an internal error, a hang or a memory blow-up (issue 21).

Hypothesis writes CEL policies of every kind that runs CEL (ValidatingPolicy with variables, match
conditions and message expressions; MutatingPolicy; ClusterPolicy ``validate.cel``;
ValidatingAdmissionPolicy and MutatingAdmissionPolicy with a binding, in the apiserver's environment,
where the expressions that use Kyverno's libraries do not compile) out of
expressions built to be expensive: huge ranges, comprehensions nested in comprehensions, strings and
lists doubled through chained variables, joins, splits, replacements, format precisions, Python
functions (``findAll``, ``json.unmarshal``, ``yaml.parse``) on long text, over payloads with long
strings and long lists. Each policy is scanned through the library and through the command line in
process (exit 0, 1 or 2; no traceback); every example must end within `EXAMPLE_SECONDS` and keep the
process's peak memory under `RSS_CEILING_MB` (test_fuzz.bounded), and a few run as real subprocesses
under an address-space limit, where a blow-up would be a MemoryError (exit 3).

The default run is small. ``pytest -m slow tests/hostile/test_fuzz_cel.py`` runs the long version with
the ``slow`` Hypothesis profile (``FUZZ_EXAMPLES`` examples per property); with
``FUZZ_FINDINGS=file.jsonl`` each failing example is recorded and the run goes on.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from contextlib import suppress
from functools import cache
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_fuzz import FAST, SLOW, bounded, run_subprocess, surveyed  # the sibling fuzzer's harness

import assertree
from assertree.cli import main
from assertree.errors import AssertreeError

# -- expressions ------------------------------------------------------------------------------------------
#
# Typed, so that most of them compile: an integer, a string, a list or a boolean, built from the
# payload's fields (untyped: they fit anywhere), the variables before them, and the library's builders.

NUMBERS = st.sampled_from(["0", "1", "3", "50", "1000", "9000", "100000", "2000000000", "-1",
                           "size(object.items)", "size(object.s)", "object.n"])
TEXTS = st.sampled_from(["''", "'x'", "'abcdefghij'", "'.'", "object.s", "object.metadata.name",
                         "'a: &a [1, 2]\\nb: [*a, *a, *a]'", "'[1,[2,[3]]]'", "'(a+)+$'"])
LISTS = st.sampled_from(["object.items", "object.spec.containers", "[1, 2, 3]", "['a', 'b']", "object.strings"])
VARIABLE = st.integers(0, 5).map(lambda n: f"variables.v{n}")


@cache
def _ints(depth: int) -> st.SearchStrategy[str]:
    if depth <= 0:
        return NUMBERS
    inner, texts, lists = _ints(depth - 1), _texts(depth - 1), _lists(depth - 1)
    return st.one_of(NUMBERS, texts.map(lambda a: f"size({a})"), lists.map(lambda a: f"size({a})"),
                     st.tuples(inner, inner).map(lambda t: f"({t[0]} + {t[1]})"),
                     st.tuples(inner, inner).map(lambda t: f"({t[0]} * {t[1]})"))


@cache
def _texts(depth: int) -> st.SearchStrategy[str]:
    if depth <= 0:
        return st.one_of(TEXTS, VARIABLE)
    inner, ints, lists = _texts(depth - 1), _ints(depth - 1), _lists(depth - 1)
    return st.one_of(
        TEXTS, VARIABLE,
        st.tuples(inner, inner).map(lambda t: f"({t[0]} + {t[1]})"),
        lists.map(lambda a: f"{a}.map(i, string(i)).join(',')"),
        st.tuples(inner, inner).map(lambda t: f"{t[0]}.replace('', {t[1]})"),
        ints.map(lambda a: f"string({a})"),
        inner.map(lambda a: f"strings.quote({a})"),
        st.tuples(inner, inner).map(lambda t: f"'%s%s'.format([{t[0]}, {t[1]}])"),
        st.sampled_from(["1", "30", "100000000"]).map(lambda n: f"'%.{n}f'.format([1.5])"),
        inner.map(lambda a: f"base64.encode(bytes({a}))"),
        inner.map(lambda a: f"{a}.lowerAscii()"),
        st.tuples(lists, inner).map(lambda t: f"{t[0]}.map(i, {t[1]}).join('')"),
        ints.map(lambda a: f"lists.range({a}).map(i, 'abcdefghij').join('')"),
        inner.map(lambda a: f"string(json.unmarshal({a}))"),
        inner.map(lambda a: f"string(yaml.parse({a}))"),
    )


@cache
def _lists(depth: int) -> st.SearchStrategy[str]:
    if depth <= 0:
        return st.one_of(LISTS, VARIABLE)
    inner, ints, texts, bools = _lists(depth - 1), _ints(depth - 1), _texts(depth - 1), _bools(depth - 1)
    return st.one_of(
        LISTS, VARIABLE,
        ints.map(lambda a: f"lists.range({a})"),
        st.tuples(inner, inner).map(lambda t: f"({t[0]} + {t[1]})"),
        st.tuples(inner, texts).map(lambda t: f"{t[0]}.map(i, {t[1]})"),
        inner.map(lambda a: f"{a}.map(i, [i, i, i])"),
        inner.map(lambda a: f"{a}.map(i, {a})"),
        st.tuples(inner, bools).map(lambda t: f"{t[0]}.filter(i, {t[1]})"),
        texts.map(lambda a: f"{a}.split('')"),
        texts.map(lambda a: f"{a}.findAll('.')"),
        inner.map(lambda a: f"{a}.map(i, [i]).flatten()"),
        inner.map(lambda a: f"{a}.map(i, string(i)).distinct()"),
        inner.map(lambda a: f"{a}.map(i, string(i)).sort()"),
        inner.map(lambda a: f"{a}.reverse()"),
        st.tuples(texts, texts, texts).map(lambda t: f"[{t[0]}, {t[1]}, {t[2]}]"),
    )


@cache
def _bools(depth: int) -> st.SearchStrategy[str]:
    if depth <= 0:
        return st.sampled_from(["true", "false", "object.flag == true", "has(object.s)"])
    ints, texts, lists, inner = _ints(depth - 1), _texts(depth - 1), _lists(depth - 1), _bools(depth - 1)
    return st.one_of(
        st.tuples(ints, ints).map(lambda t: f"{t[0]} > {t[1]}"),
        st.tuples(texts, texts).map(lambda t: f"{t[0]} == {t[1]}"),
        st.tuples(texts, texts).map(lambda t: f"{t[0]}.contains({t[1]})"),
        st.tuples(texts, texts).map(lambda t: f"{t[0]}.matches({t[1]})"),
        st.tuples(lists, inner).map(lambda t: f"{t[0]}.all(x, {t[1]})"),
        lists.map(lambda a: f"{a}.all(x, {a}.exists(y, x == y))"),
        lists.map(lambda a: f"{a}.all(x, {a}.all(y, {a}.all(z, x == y || y == z)))"),
        st.tuples(lists, ints).map(lambda t: f"{t[0]}.exists_one(x, x == {t[1]})"),
        lists.map(lambda a: f"sets.contains({a}, {a})"),
        st.tuples(inner, inner).map(lambda t: f"({t[0]} && {t[1]})"),
        texts.map(lambda a: f"size({a}) >= 0"),
        lists.map(lambda a: f"size({a}) >= 0"),
    )


DEPTH = st.integers(1, 3)
EXPRESSIONS = DEPTH.flatmap(lambda depth: st.one_of(_texts(depth), _lists(depth), _ints(depth)))
BOOLEANS = DEPTH.flatmap(_bools)

# -- policies and payloads --------------------------------------------------------------------------------

MATCH = {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["pods"]}]}


@st.composite
def variables(draw) -> list[dict]:
    """Up to six variables, each free to read the ones before it: chains that double are common."""
    found = []
    for index in range(draw(st.integers(0, 6))):
        text = draw(st.one_of(EXPRESSIONS, st.just(f"variables.v{index - 1} + variables.v{index - 1}")
                              if index else EXPRESSIONS))
        found.append({"name": f"v{index}", "expression": text})
    return found


ADMISSION = "admissionregistration.k8s.io/v1"


def json_patches(draw) -> list[dict]:
    patch = draw(EXPRESSIONS)
    return [{"patchType": "JSONPatch", "jsonPatch": {"expression": draw(st.sampled_from([
        f"[JSONPatch{{op: 'add', path: '/metadata/labels', value: {{'x': string({patch})}}}}]",
        (f"[JSONPatch{{op: 'copy', from: '/spec', path: '/spec/containers/0/x'}}, "
         f"JSONPatch{{op: 'add', path: '/metadata/annotations', value: {{'a': string({patch})}}}}]"),
        "[" + ", ".join(["JSONPatch{op: 'copy', from: '/spec/containers', path: '/spec/containers/-'}"] * 30) + "]",
    ]))}}]


def admission_policies(draw, kind: str, chained: list[dict]) -> list[dict]:
    """A ValidatingAdmissionPolicy or MutatingAdmissionPolicy and its binding."""
    spec: dict = {"matchConstraints": MATCH, "variables": chained,
                  "failurePolicy": draw(st.sampled_from(["Fail", "Ignore"]))}
    if draw(st.booleans()):
        spec["matchConditions"] = [{"name": "m", "expression": draw(BOOLEANS)}]
    if kind == "ValidatingAdmissionPolicy":
        spec["validations"] = [{"expression": draw(BOOLEANS), "messageExpression": draw(EXPRESSIONS)}
                               for _ in range(draw(st.integers(1, 3)))]
        if draw(st.booleans()):
            spec["auditAnnotations"] = [{"key": "a", "valueExpression": draw(EXPRESSIONS)}]
        binding = {"policyName": "fuzz", "validationActions": ["Deny"]}
    else:
        spec["mutations"] = json_patches(draw)
        spec["reinvocationPolicy"] = "IfNeeded"
        binding = {"policyName": "fuzz"}
    return [{"apiVersion": ADMISSION, "kind": kind, "metadata": {"name": "fuzz"}, "spec": spec},
            {"apiVersion": ADMISSION, "kind": f"{kind}Binding", "metadata": {"name": "fuzz"}, "spec": binding}]


@st.composite
def policies(draw) -> dict | list[dict]:
    kind = draw(st.sampled_from(["ValidatingPolicy", "MutatingPolicy", "ClusterPolicy", "ValidatingAdmissionPolicy",
                                 "MutatingAdmissionPolicy"]))
    chained = draw(variables())
    if kind.endswith("AdmissionPolicy"):
        return admission_policies(draw, kind, chained)
    if kind == "ClusterPolicy":
        cel = {"variables": chained, "expressions": [{"expression": draw(BOOLEANS),
                                                      "messageExpression": draw(EXPRESSIONS)}]}
        rule = {"name": "r", "match": {"any": [{"resources": {"kinds": ["Pod"]}}]}, "validate": {"cel": cel}}
        if draw(st.booleans()):
            rule["celPreconditions"] = [{"name": "p", "expression": draw(BOOLEANS)}]
        return {"apiVersion": "kyverno.io/v1", "kind": "ClusterPolicy", "metadata": {"name": "fuzz"},
                "spec": {"rules": [rule]}}
    spec: dict = {"matchConstraints": MATCH, "variables": chained}
    if draw(st.booleans()):
        spec["matchConditions"] = [{"name": "m", "expression": draw(BOOLEANS)}]
    if kind == "ValidatingPolicy":
        spec["validations"] = [{"expression": draw(BOOLEANS), "messageExpression": draw(EXPRESSIONS)}
                               for _ in range(draw(st.integers(1, 3)))]
    else:
        spec["mutations"] = json_patches(draw)
    return {"apiVersion": "policies.kyverno.io/v1", "kind": kind, "metadata": {"name": "fuzz"}, "spec": spec}


@st.composite
def payloads(draw) -> dict:
    items = draw(st.sampled_from([0, 3, 100, 5000, 20_000]))
    text = draw(st.sampled_from([0, 10, 1000, 100_000, 1_000_000]))
    containers = draw(st.sampled_from([1, 3, 200]))
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default",
                                                             "labels": {"a": "b" * min(text, 1000)}},
            "s": "x" * text, "items": list(range(items)), "n": draw(st.sampled_from([0, 7, 10**6, 2**62])),
            "flag": True, "strings": [f"s{index}" for index in range(min(items, 1000))],
            "spec": {"containers": [{"name": f"c{index}", "image": "nginx"} for index in range(containers)]}}


# -- properties -------------------------------------------------------------------------------------------


# Policies and payloads travel as JSON text, so that a long run records a failing example (`surveyed`); a
# policy and its binding as a YAML stream of two JSON documents.


def policy_text(documents: dict | list[dict]) -> str:
    return "\n---\n".join(json.dumps(document) for document in documents) if isinstance(documents, list) \
        else json.dumps(documents)


def policy_file(folder: str, policy: str) -> Path:
    """Where `policy` is written: a YAML file for a stream, else a JSON one."""
    return Path(folder) / ("policy.yaml" if "\n---\n" in policy else "policy.json")


POLICIES = policies().map(policy_text)
PAYLOADS = payloads().map(json.dumps)


def scan_library(policy: str, payload: str) -> None:
    with tempfile.TemporaryDirectory() as folder, bounded():
        path = policy_file(folder, policy)
        path.write_text(policy)
        try:
            loaded = assertree.load_policies(path)
        except AssertreeError:
            return
        with suppress(AssertreeError):
            assertree.scan([json.loads(payload)], loaded)


def scan_cli(capsys, policy: str, payload: str) -> None:
    with tempfile.TemporaryDirectory() as folder, bounded():
        path = policy_file(folder, policy)
        path.write_text(policy)
        (Path(folder) / "pod.json").write_text(payload)
        code = main(["scan", "--policy", str(path), "--payload",
                     str(Path(folder) / "pod.json"), "-o", "json"])
    err = capsys.readouterr().err
    assert code in (0, 1, 2), (code, err[-2000:])
    assert "Traceback" not in err and "internal error" not in err, err[-2000:]


def scan_subprocess(policy: str, payload: str) -> None:
    run_subprocess(policy, payload.encode())


SLOW_EXAMPLE = 5.0  # a long run also records, for a look, the examples that took longer than this


def survey(check, *args) -> None:
    """`surveyed`, and with FUZZ_FINDINGS, a record of each example slower than SLOW_EXAMPLE seconds."""
    started = time.monotonic()
    surveyed(check, *args)
    took = time.monotonic() - started
    if os.environ.get("FUZZ_FINDINGS") and took > SLOW_EXAMPLE:
        with open(os.environ["FUZZ_FINDINGS"], "a") as findings:
            findings.write(json.dumps({"test": check.__name__, "slow": round(took, 1),
                                       "example": [a for a in args if isinstance(a, str)]}) + "\n")


@FAST
@given(POLICIES, PAYLOADS)
def test_cel_policies_scan_to_a_result_or_a_clean_error(policy, payload):
    scan_library(policy, payload)


@settings(FAST, max_examples=10)
@given(POLICIES, PAYLOADS)
def test_cel_policies_on_the_command_line_exit_0_1_or_2(capsys, policy, payload):
    scan_cli(capsys, policy, payload)


@settings(FAST, max_examples=2)
@given(POLICIES, PAYLOADS)
def test_cel_policies_in_a_real_subprocess_exit_cleanly(policy, payload):
    scan_subprocess(policy, payload)


@pytest.mark.slow
@SLOW
@given(POLICIES, PAYLOADS)
def test_cel_policies_long(policy, payload):
    survey(scan_library, policy, payload)


@pytest.mark.slow
@settings(SLOW, max_examples=max(10, settings.get_profile("slow").max_examples // 10))
@given(POLICIES, PAYLOADS)
def test_cel_policies_on_the_command_line_long(capsys, policy, payload):
    survey(scan_cli, capsys, policy, payload)


@pytest.mark.slow
@settings(SLOW, max_examples=max(3, settings.get_profile("slow").max_examples // 200))
@given(POLICIES, PAYLOADS)
def test_cel_policies_in_a_real_subprocess_long(policy, payload):
    survey(scan_subprocess, policy, payload)
