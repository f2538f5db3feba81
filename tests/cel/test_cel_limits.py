"""CEL is bounded: estimated cost and memory at compile time and before each evaluation, a budget per
policy evaluation, and a native allocation failure is an error of the expression (issue 21).

The hostile inputs run in a subprocess under an address-space limit wherever the code before these
limits would have tried to take gigabytes; the others are refused before anything runs.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import textwrap
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assertree.languages.cel import cost, limits, probes
from assertree.languages.cel.backstop import OUT_OF_MEMORY
from assertree.languages.cel.engine import CelCompileError, CelEvaluationError
from assertree.languages.cel.sizes import BYTES_PER_CHARACTER, Measured, measure
from assertree.languages.kyverno.cel_policies.environment import environment

ROOT = Path(__file__).resolve().parents[2]
ADDRESS_SPACE = 2 * 1024**3  # a subprocess that tried to take gigabytes would fail with MemoryError (exit 3)


def evaluate(text: str, obj: object = None, variables: dict | None = None) -> object:
    return environment().compile(text).evaluate({"object": obj, "variables": variables or {}})


# ------------------------------------------------------------------ refused where they are written


@pytest.mark.parametrize("text", [
    "size(lists.range(2000000000)) > 0",  # std::bad_alloc before: exit 3
    "size(lists.range(9000).map(i, i)) > 0",  # a copy of the accumulator per item: 1.3 GB before
    "lists.range(1000).all(a, lists.range(1000).all(b, lists.range(1000).all(c, a + b + c >= 0)))",
    "size(lists.range(10000).map(i, 'x').join('')) > 0",
    "size('%.100000000f'.format([1.0])) > 0",
    "size(lists.range(100000).map(i, [i, i, i])) > 0",
])
def test_an_expression_past_the_limits_on_any_input_is_refused_when_compiled(text):
    with pytest.raises(CelCompileError) as caught:
        environment().compile(text)
    assert caught.value.message.startswith(("CEL cost limit: the expression costs at least",
                                            "CEL memory limit: the expression builds at least"))
    assert "on any input" in caught.value.message


def test_a_refused_expression_is_a_policy_error_naming_its_field(tmp_path):
    policy = tmp_path / "policy.yaml"
    policy.write_text(vpol(validations=["size(lists.range(2000000000)) > 0"]))
    result = scan(tmp_path, policy)
    assert result.returncode == 2, result.stderr
    assert "spec.validations[0].expression: invalid CEL expression: CEL cost limit" in result.stderr
    assert "Traceback" not in result.stderr


# ------------------------------------------------------------------ refused before an evaluation


@pytest.mark.parametrize(("text", "small", "large", "limit"), [
    ("size(object.items.map(i, i)) > 0", {"items": list(range(100))}, {"items": list(range(9000))},
     "CEL cost limit: this evaluation could cost"),
    ("size(object.s + object.s + object.s + object.s) > 0", {"s": "x" * 100}, {"s": "x" * 20_000_000},
     "CEL cost limit: this evaluation could cost"),
    ("size(object.s.split('')) > 0", {"s": "ab"}, {"s": "x" * 5_000_000},
     "CEL memory limit: this evaluation could build"),
    ("object.s.findAll('.').size() > 0", {"s": "ab"}, {"s": "x" * 3_000_000}, "CEL cost limit"),
    ("object.items.all(a, object.items.all(b, object.items.all(c, a + b + c >= 0)))", {"items": [1, 2]},
     {"items": list(range(400))}, "CEL cost limit"),
])
def test_an_evaluation_past_the_limits_on_its_data_is_an_error_before_it_runs(text, small, large, limit):
    assert evaluate(text, small) is True
    with pytest.raises(CelEvaluationError) as caught:
        evaluate(text, large)
    assert caught.value.message.startswith(limit)


def test_joining_10000_copies_of_a_long_string_is_refused():
    with pytest.raises(CelEvaluationError) as caught:  # 2.8 GB before "Iteration budget exceeded"
        evaluate("size(object.items.map(i, object.s).join(',')) > 0",
                 {"s": "x" * 100_000, "items": list(range(10_000))})
    assert caught.value.message.startswith("CEL cost limit")


def test_a_function_written_in_python_is_held_to_its_bound():
    lookups = environment().compile("size(resource.List('v1', 'configmaps', 'default').items) >= 0")
    from assertree.languages.kubernetes.cluster import Cluster
    from assertree.languages.kyverno.cel_policies.environment import Lookups

    many = [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"c{i}", "namespace": "default"},
             "data": {"k": "v" * 200}} for i in range(limits.FUNCTION_RESULT_LENGTH // 100)]
    cluster = Cluster()
    for item in many:
        cluster.add(item)
    assert lookups.evaluate({"object": None, "variables": {}}, Lookups(cluster=cluster)) is True
    limits.check_function_result("resource.List", frozenset({"dyn"}), (), {"items": many}, Lookups(cluster=cluster))
    with pytest.raises(ValueError, match="the result has more than 100,000 items"):
        limits.check_function_result("resource.List", frozenset({"dyn"}), (), {"items": list(range(100_001))}, None)


# ------------------------------------------------------------------ policies: variables, budget, subprocesses


def vpol(*, validations: list[str], variables: list[tuple[str, str]] = ()) -> str:
    spec = {"matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"],
                                                    "resources": ["pods"]}]},
            "variables": [{"name": name, "expression": text} for name, text in variables],
            "validations": [{"expression": text} for text in validations]}
    return json.dumps({"apiVersion": "policies.kyverno.io/v1", "kind": "ValidatingPolicy",
                       "metadata": {"name": "hostile"}, "spec": spec})


def pod(**extra: object) -> str:
    return json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default", **extra},
                       "spec": {"containers": [{"name": "c", "image": "nginx"}]}})


def scan(tmp_path: Path, policy: Path, payload: str | None = None) -> subprocess.CompletedProcess:
    """`assertree scan -o json` in a subprocess that may not take more than ADDRESS_SPACE."""
    resource_file = tmp_path / "pod.json"
    resource_file.write_text(payload or pod())

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))

    return subprocess.run([sys.executable, "-m", "assertree", "scan", "--policy", str(policy), "--payload",
                           str(resource_file), "-o", "json"], capture_output=True, text=True, preexec_fn=limit,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=600, check=False)


def errors_of(result: subprocess.CompletedProcess) -> list[str]:
    """The error of each rule that errored, from the JSON report."""
    report = json.loads(result.stdout)
    return [rule["error"] for found in report["reports"] for policy in found["results"] for rule in policy["rules"]
            if rule["status"] == "error"]


def test_a_string_doubled_through_40_variables_is_stopped(tmp_path):
    variables = [("v0", "'abcdefgh'")] + [(f"v{i}", f"variables.v{i - 1} + variables.v{i - 1}") for i in range(1, 41)]
    policy = tmp_path / "policy.json"
    policy.write_text(vpol(variables=variables, validations=["size(variables.v40) > 0"]))
    result = scan(tmp_path, policy)  # before: std::bad_alloc at 2.7 GB, exit 3
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    [error] = errors_of(result)
    assert error.startswith(("CEL cost", "CEL memory"))


def test_variables_computed_before_an_expression_count_against_its_memory(tmp_path):
    big = "x" * 30_000_000
    program = environment().compile("size(object.s + object.s) > 0")
    assert program.evaluate({"object": {"s": big}, "variables": {"a": "small"}}) is True
    with pytest.raises(CelEvaluationError) as caught:
        program.evaluate({"object": {"s": big}, "variables": {name: "y" * 30_000_000 for name in "abcdefgh"}})
    assert caught.value.message.startswith("CEL memory limit: this evaluation could build")
    assert "while the variables computed before it hold" in caught.value.message


def test_the_expressions_of_one_policy_evaluation_share_a_budget():
    from assertree.languages.kyverno.cel_policies.compile import compile_spec
    from assertree.languages.kyverno.cel_policies.evaluate import evaluate_validations
    from assertree.languages.kyverno.cel_policies.reading import read_spec

    expensive = "object.s.contains(object.t) || true"  # estimated at 9,000,000 units, cheap to run
    spec = json.loads(vpol(validations=[expensive] * 15))["spec"]
    compiled = compile_spec(read_spec(spec, "ValidatingPolicy"))
    data = {"object": {"s": "x" * 30_000, "t": "y" * 30_000}, "oldObject": None, "request": None, "params": None,
            "namespaceObject": None}
    outcome = evaluate_validations(compiled, data)
    assert outcome.status == "error"
    assert outcome.message.startswith("CEL cost budget: the expressions of this evaluation could cost more than")
    assert outcome.index == 11  # eleven fit in 100,000,000 units
    assert evaluate_validations(compiled, {**data, "object": {"s": "x", "t": "y"}}).status == "pass"


def test_a_native_allocation_failure_is_the_expressions_error(tmp_path):
    # the estimate allows it (3 M units, about 50 MB); the process may not grow by 40 MB: std::bad_alloc
    code = textwrap.dedent("""
        import resource
        from assertree.languages.kyverno.cel_policies.environment import environment
        from assertree.languages.cel.engine import CelEvaluationError
        program = environment().compile("size(object.items.map(i, i)) > 0")
        data = {"object": {"items": list(range(2500))}, "variables": {}}
        pages = int(open("/proc/self/statm").read().split()[0])
        room = pages * resource.getpagesize() + 40 * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (room, resource.getrlimit(resource.RLIMIT_AS)[1]))
        try:
            program.evaluate(data)
        except CelEvaluationError as error:
            print(error.message)
    """)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=False,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == OUT_OF_MEMORY


def test_the_backstop_caps_an_uncertain_evaluation(tmp_path):
    code = textwrap.dedent("""
        from assertree.languages.cel.backstop import HEADROOM, backstop
        try:
            with backstop(True):
                bytearray(HEADROOM + 512 * 1024 * 1024)
        except MemoryError:
            print("capped")
        with backstop(False):
            bytearray(64 * 1024 * 1024)
        print("uncapped")
    """)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=False,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert result.stdout.split() == ["capped", "uncapped"], result.stderr


# ------------------------------------------------------------------ the fast paths hold to the general one

JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-10**12, 10**12) | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=6) | st.dictionaries(st.text(max_size=8), inner, max_size=6),
    max_leaves=40,
)


@settings(max_examples=300, deadline=None, database=None)
@given(JSON)
def test_the_json_text_bounds_the_bytes_of_a_value(value):
    if isinstance(value, (dict, list)):
        assert Measured(value).bytes() <= BYTES_PER_CHARACTER * len(orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS))


FIELDS = ["a", "b", "items", "s"]
PATHS = st.lists(st.sampled_from(FIELDS), min_size=1, max_size=3).map(lambda parts: ".".join(["object", *parts]))
EXPRESSIONS = st.one_of(
    PATHS.map(lambda p: f"{p} == 'x'"),
    PATHS.map(lambda p: f"size({p}) > 1"),
    st.tuples(PATHS, PATHS).map(lambda t: f"{t[0]}.all(x, {t[1]}.exists(y, x == y))"),
    st.tuples(PATHS, PATHS).map(lambda t: f"size({t[0]}.map(x, {t[1]})) >= 0"),
    st.tuples(PATHS, PATHS).map(lambda t: f"{t[0]} + {t[1]}"),
    PATHS.map(lambda p: f"{p}.filter(x, x != null).map(x, [x, x])"),
    st.tuples(PATHS, PATHS).map(lambda t: f"string({t[0]}).contains(string({t[1]}))"),
)
DATA = st.fixed_dictionaries({}, optional={name: JSON for name in FIELDS}) | st.recursive(
    st.dictionaries(st.sampled_from(FIELDS), st.text(max_size=3000) | st.lists(st.integers(), max_size=600)),
    lambda inner: st.dictionaries(st.sampled_from(FIELDS), inner | st.lists(inner, max_size=50), max_size=4),
    max_leaves=8,
)


@settings(max_examples=400, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(EXPRESSIONS, DATA)
def test_an_evaluation_skipped_by_the_fast_paths_is_within_the_limits(text, data):
    """`Bounds.fixed` and the size-class verdicts (`probes`) never pass what the full estimate refuses."""
    try:
        program = environment().compile(text)
    except CelCompileError:
        return
    bounds = program._bounds
    found = bounds._probes if bounds._probes is not None else bounds._trace()
    variables = {"object": data, "variables": {}}
    inputs = {name: measure(value) for name, value in variables.items()}
    try:
        full = cost.estimate(bounds._tree, inputs, limits._ANY_CONTEXT, bounds._python)
        within = limits._refusal(full, compile_time=False) is None
    except cost.Unbounded:
        within = False
    if bounds.fixed:
        assert within
        return
    size_class = found.size_class(variables)
    verdict = bounds._most(probes.class_inputs(found, size_class, tuple(variables)))
    if verdict is not None:
        assert within
        assert full.cost <= verdict[0] and full.memory <= verdict[1]


def test_a_library_exception_that_is_not_a_cel_error_is_the_expressions_error():
    with pytest.raises(CelEvaluationError):  # std::length_error from the library, a ValueError: exit 3 before
        evaluate("size(lists.range(-1)) >= 0")


def test_builders_grow_with_their_arguments_and_lookups_with_the_context():
    """A chain of builders (the authorizer's, Envoy's responses) grows additively, so a long chain compiles; a
    lookup is bounded by what the context holds, not by its arguments."""
    from assertree.languages.cel import cost
    from assertree.languages.cel.sizes import measure

    world = cost.World(number=0, absent=measure(None), unknown=lambda: measure(["x" * 10]))
    built = cost.python_result("envoy.Allowed", frozenset({"dyn"}), [], world)
    for _ in range(20):
        built = cost.python_result("WithHeader", frozenset({"dyn"}), [built, measure("k"), measure("v")], world)
    assert built.bytes() < 2 * 1024 * 1024
    assert cost.python_result("resource.Get", frozenset({"dyn"}), [measure("v1")] * 4, world).bytes() == \
        measure(["x" * 10]).bytes()
