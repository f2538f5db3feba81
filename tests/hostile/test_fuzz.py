"""Hostile inputs never end in a traceback, an internal error, a hang or a memory blow-up (issue 14).

Hypothesis draws payload bytes, YAML with anchors, aliases and tags, policies
(kyverno-json and Kyverno) and JMESPath expressions, and runs them through the
library (`jp`, `load_policies`, `scan`), through the command line in-process
(`assertree.cli.main`, for speed) and through a few real subprocesses under
an address-space limit. Every example must finish within `EXAMPLE_SECONDS`
and keep its own peak memory (what the process holds at its peak above what it held before the example)
under `RSS_CEILING_MB`.

The default run is small (the whole file takes well under 30 s).
``pytest -m slow tests/hostile/test_fuzz.py`` runs the same properties with
the ``slow`` Hypothesis profile (tests/conftest.py; ``FUZZ_EXAMPLES`` sets how
many examples each property draws). With ``FUZZ_FINDINGS=file.jsonl`` the long
run records each failing example there and goes on, instead of stopping at the
first one, so that one run surveys every kind of failure.
"""

from __future__ import annotations

import json
import os
import re
import resource
import signal
import string
import subprocess
import sys
import tempfile
import time
import traceback
from contextlib import contextmanager, suppress
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import assertree
from assertree import jp
from assertree.cli import main
from assertree.errors import AssertreeError
from assertree.jp.registry import all_functions

EXAMPLE_SECONDS = 30  # the slowest legitimate refusal (a 10 MB to_string budget) takes about 4 s
RSS_CEILING_MB = 2048
SUBPROCESS_ADDRESS_SPACE = 3 * 1024**3

FAST = settings(max_examples=25, deadline=None, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                                       HealthCheck.data_too_large, HealthCheck.filter_too_much])
SLOW = settings(settings.get_profile("slow"),
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                                       HealthCheck.data_too_large, HealthCheck.filter_too_much])


class Hang(BaseException):
    """An example ran past EXAMPLE_SECONDS (a BaseException: no `except Exception` in assertree swallows it)."""


@contextmanager
def bounded():
    """Fail an example that runs too long (SIGALRM) or whose peak memory passes the ceiling."""

    def expire(signum, frame):
        raise Hang(f"no result within {EXAMPLE_SECONDS} s")

    previous = signal.signal(signal.SIGALRM, expire)
    held_before = _start_peak()
    started = time.monotonic()
    signal.setitimer(signal.ITIMER_REAL, EXAMPLE_SECONDS)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    # the alarm can fire where its exception is swallowed (inside a garbage-collection callback): the
    # clock says it too
    took = time.monotonic() - started
    if took > EXAMPLE_SECONDS:
        raise Hang(f"no result within {EXAMPLE_SECONDS} s (took {took:.0f} s)")
    peak_mb = _peak() - held_before
    assert peak_mb < RSS_CEILING_MB, f"peak memory {peak_mb} MB above the {held_before} MB held before"


def _status_mb(field: str) -> int | None:
    match = re.search(rf"^{field}:\s+(\d+) kB", Path("/proc/self/status").read_text(), re.MULTILINE) \
        if Path("/proc/self/status").exists() else None
    return int(match[1]) // 1024 if match else None


def _start_peak() -> int:
    """The resident MB now, with the process's high-water mark reset to it (Linux: /proc/self/clear_refs),
    so that `_peak` is this example's. Hypothesis keeps about 200 KB per example it has run (measured with
    the scan left out), which a lifetime peak would count against a long run's later examples."""
    with suppress(OSError):
        Path("/proc/self/clear_refs").write_text("5")
        return _status_mb("VmRSS") or 0
    return 0  # no way to reset: `_peak` is the lifetime peak, compared with the whole ceiling


def _peak() -> int:
    return _status_mb("VmHWM") or resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024  # KiB on Linux


# -- generators: YAML with anchors, aliases and tags ------------------------------------------------------

SCALAR_TEXTS = st.one_of(
    st.sampled_from([
        "1", "-0", "0x1F", "0o17", "017", "0b101", "1e3", "1_000", "+12", ".5", ".inf", "-.inf", ".nan", "y", "no",
        "~", "null", "true", "2001-12-14t21:59:43.10-05:00", "'quoted'", '"dq \\u00e9 \\x41"', "abc", "<<", "=",
        "''", "9" * 30, "-" + "9" * 25, "9" * 5000, "0x" + "f" * 40, "18446744073709551615", "1e400", "x: y",
        '"\\ud800"', "'{{ a }}'", "'(a)'", "'~.x'", "?", "-", "|", "&", "%x", "@", "`x`",
    ]),
    st.text(string.ascii_letters + string.digits + " ._-", max_size=8).map(json.dumps),
)
TAGS = st.sampled_from(["", "", "", "", "!!int ", "!!float ", "!!str ", "!!bool ", "!!null ", "!!binary ",
                        "!!timestamp ", "!!map ", "!!seq ", "!!set ", "!!omap ", "!custom ", "!<tag:x> "])


@st.composite
def yaml_nodes(draw, depth=0, anchors=None):
    """A flow-style YAML node: scalars, sequences and mappings, with anchors, aliases (also to open
    anchors: cycles), merge keys and explicit tags."""
    anchors = [] if anchors is None else anchors
    kinds = ["scalar", "scalar", "alias", "seq", "map"] if depth < 4 else ["scalar", "alias"]
    kind = draw(st.sampled_from(kinds))
    if kind == "alias" and anchors:
        return "*" + draw(st.sampled_from(anchors))
    prefix = draw(TAGS)
    if draw(st.integers(0, 3)) == 0:
        name = f"a{draw(st.integers(0, 5))}"
        prefix = f"&{name} {prefix}"
        if draw(st.booleans()):
            anchors.append(name)  # known before its node ends: an alias inside is a cycle
    if kind in ("scalar", "alias"):
        text = prefix + draw(SCALAR_TEXTS)
    elif kind == "seq":
        items = [draw(yaml_nodes(depth + 1, anchors)) for _ in range(draw(st.integers(0, 4)))]
        text = prefix + "[" + ", ".join(items) + "]"
    else:
        pairs = []
        for _ in range(draw(st.integers(0, 4))):
            key = draw(st.one_of(st.sampled_from(["a", "b", "<<", "1", "null", "[x]", "? k", "(a)", "~.x", "k->v"]),
                                 SCALAR_TEXTS))
            pairs.append(f"{key}: {draw(yaml_nodes(depth + 1, anchors))}")
        text = prefix + "{" + ", ".join(pairs) + "}"
    if prefix.startswith("&"):
        anchors.append(prefix.split()[0][1:])
    return text


def laughs(fanout: int, levels: int, mapping: bool) -> str:
    """A "billion laughs" document: each level aliases the previous one `fanout` times."""
    lines = ["l0: &l0 [" + ", ".join(["lol"] * fanout) + "]"]
    for level in range(1, levels):
        refs = ", ".join([f"*l{level - 1}"] * fanout)
        body = "{" + ", ".join(f"k{i}: *l{level - 1}" for i in range(fanout)) + "}" if mapping else f"[{refs}]"
        lines.append(f"l{level}: &l{level} {body}")
    return "\n".join(lines) + "\n"


yaml_texts = st.one_of(
    st.lists(yaml_nodes(), min_size=1, max_size=3).map(lambda docs: "\n---\n".join(docs)),
    st.builds(laughs, st.integers(2, 12), st.integers(2, 12), st.booleans()),
    st.text(alphabet="{}[]:,-&*!|>'\"\n #ab01.~%@`\\?<=", max_size=120),
)
payload_bytes = st.one_of(
    yaml_texts.map(str.encode),
    st.binary(max_size=200),
    st.sampled_from([b"\xef\xbb\xbf{}", b"\xff\xfe{\x00}\x00", b"\x00\x00\x00", b"[" * 5000, b"{\"a\":" * 3000,
                     b"a: 1\n" * 2000, b"\t\x0b\x0c", "\u2028\ud7ff\ue000".encode()]),
)

# -- generators: expressions ------------------------------------------------------------------------------

FUNCTION_NAMES = sorted(function.name for function in all_functions())
ATOMS = st.sampled_from([
    "@", "a", "b", "items", "a.b", "a[0]", "$", "$x", "$payload", "`1`", "`-1`", "`1000000000`", "`0.5`", "'abc'",
    "''", '`"s"`', "`[1, 2]`", '`{"a": 1}`', "`null`", "`true`", "'[a-z]{1000}'", "'$0$0$0'", "'*'", "`1e308`",
    "'a: &a [*a]'", "'9999999999999999999999999'", "'{\"a\": 1}'",
])
HEAVY = [
    "pad_left({0}, `1000000000`)", "pad_right('', {0})", "replace_all(to_string({0}), '', to_string({0}))",
    "join('', [to_string({0}), to_string({0}), to_string({0})])", "random({0})", "split(to_string({0}), '')",
    "regex_replace_all('', to_string({0}), '$0$0')", "parse_yaml(to_string({0}))", "parse_json(to_string({0}))",
    "items({0}, 'k', 'v')", "to_string([{0}, {0}])", "let $d = [{0}, {0}] in [$d, $d][][]", "{0}[][][]",
]


def _extend(inner):
    binary = st.sampled_from([".", " || ", " && ", " == ", " != ", " < ", " + ", " * ", " / ", " % ", " // ", " | "])
    return st.one_of(
        st.builds(lambda a, op, b: f"{a}{op}{b}", inner, binary, inner),
        st.builds(lambda a, n: f"{a}[{n}]", inner, st.integers(-3, 3)),
        st.builds(lambda a, s: f"{a}[{s}]", inner, st.sampled_from(["::-1", "1:", ":2", "0:0:0", "*"])),
        st.builds(lambda a, b: f"{a}[?{b}]", inner, inner),
        st.builds(lambda a, suffix: f"{a}{suffix}", inner, st.sampled_from(["[]", ".*", "[*].a", "[]|[0]"])),
        st.builds(lambda a, b: f"[{a}, {b}]", inner, inner),
        st.builds(lambda a: f"{{k: {a}}}", inner),
        st.builds(lambda prefix, a: f"{prefix}{a}", st.sampled_from(["!", "-", "&"]), inner),
        st.builds(lambda a: f"({a})", inner),
        st.builds(lambda a, b: f"let $x = {a} in {b}", inner, inner),
        st.builds(lambda name, args: f"{name}({', '.join(args)})", st.sampled_from(FUNCTION_NAMES),
                  st.lists(inner, max_size=3)),
        st.builds(lambda template, a: template.format(a), st.sampled_from(HEAVY), inner),
    )


expressions = st.one_of(
    st.recursive(ATOMS, _extend, max_leaves=10),
    st.text(alphabet="ab.[]{}()*?|&!=<>@$`'\"-+:,0123 ", max_size=40),
    st.builds(lambda joiner, count: joiner.join(["a"] * count), st.sampled_from([".", " || ", "|", "+"]),
              st.integers(100, 300)),
    st.builds(lambda opener, count: opener * count + "a", st.sampled_from(["(", "[", "{a:", "!", "abs("]),
              st.integers(100, 300)),
)
json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(allow_nan=False),
              st.text(max_size=10)),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.sampled_from(["a", "b", "items"]),
                                                                        inner, max_size=3)),
    max_leaves=15,
)

# -- generators: policies ---------------------------------------------------------------------------------


def _json_text(text: str) -> str:
    return json.dumps(text)


@st.composite
def policy_texts(draw):
    """A policy file: kyverno-json or Kyverno, built as YAML text around random nodes and expressions."""
    expression = _json_text(draw(expressions))
    node = draw(yaml_nodes())
    message = _json_text("{{ " + draw(expressions) + " }}")
    kind = draw(st.sampled_from(["json", "json", "kyverno", "garbage"]))
    if kind == "garbage":
        return draw(yaml_texts)
    if kind == "json":
        check = draw(st.sampled_from([f"{{{expression}: {node}}}", f"{{a: {node}}}", node, "{}",
                                      f"{{\"({draw(expressions)})\": true}}"]))
        rules = draw(st.sampled_from([
            "[]", f"[{{name: r, assert: {{all: [{{check: {check}, message: {message}}}]}}}}]",
            f"[&r {{name: r, assert: {{any: [{{check: {check}}}]}}}}, *r]",
            f"[{{name: r, match: {{any: [{node}]}}, assert: {{all: [{{check: {check}}}]}}}}]",
        ]))
        return (f"apiVersion: json.kyverno.io/v1alpha1\nkind: ValidatingPolicy\nmetadata: {{name: fuzz}}\n"
                f"spec: {{rules: {rules}}}\n")
    return (f"apiVersion: kyverno.io/v1\nkind: ClusterPolicy\nmetadata: {{name: fuzz}}\n"
            f"spec: {{rules: [{{name: r, match: {{any: [{{resources: {{kinds: [Pod]}}}}]}}, "
            f"validate: {{message: {message}, pattern: {node}}}}}]}}\n")


# -- properties -------------------------------------------------------------------------------------------


def evaluate_expression(text, document):
    with bounded(), suppress(jp.JMESPathError):
        jp.compile(text).search(document, {"x": document, "payload": document})


def read_yaml_functions(text):
    with bounded():
        for function in ("parse_yaml", "parse_json"):
            with suppress(jp.JMESPathError):
                jp.search(f"{function}($s)", None, {"s": text})


def load_and_scan(policy, payloads):
    with tempfile.TemporaryDirectory() as folder, bounded():
        path = Path(folder) / "policy.yaml"
        path.write_text(policy)
        try:
            policies = assertree.load_policies(path)
        except AssertreeError:
            return
        with suppress(AssertreeError):
            assertree.scan(payloads, policies, bindings={"x": 1})


def run_cli(capsys, policy, payload, options):
    with tempfile.TemporaryDirectory() as folder, bounded():
        (Path(folder) / "policy.yaml").write_text(policy)
        (Path(folder) / "payload.yaml").write_bytes(payload)
        code = main(["scan", str(Path(folder) / "payload.yaml"), "--policy", str(Path(folder) / "policy.yaml"),
                     *options])
    err = capsys.readouterr().err
    assert code in (0, 1, 2), (code, err[-2000:])
    assert "Traceback" not in err and "internal error" not in err, err[-2000:]


cli_options = st.sampled_from([[], ["--terraform"], ["-o", "json"], ["-o", "sarif"], ["-o", "junit"],
                               ["--pre-process", "@"], ["-o", "github"], ["--kyverno-json"]])


def test_the_bound_sees_an_example_that_takes_memory_or_time(monkeypatch):
    """`bounded` fails an example by its own peak (after others freed theirs) and by the clock."""
    monkeypatch.setattr(sys.modules[__name__], "RSS_CEILING_MB", 100)
    with bounded():
        assert len(b"x" * 50 * 2**20) > 0  # under the ceiling
    with pytest.raises(AssertionError, match="peak memory"), bounded():
        assert len(b"x" * 300 * 2**20) > 0
    with bounded():  # the last example's 300 MB is not this one's
        pass
    monkeypatch.setattr(sys.modules[__name__], "EXAMPLE_SECONDS", 0.05)
    with pytest.raises(Hang), bounded(), suppress(Hang):  # swallowed where it fired (a collector callback)
        time.sleep(0.2)


@FAST
@given(expressions, json_values)
def test_expressions_end_in_a_value_or_a_jmespath_error(text, document):
    evaluate_expression(text, document)


@FAST
@given(yaml_texts)
def test_parse_yaml_of_hostile_yaml_is_a_value_or_a_function_error(text):
    read_yaml_functions(text)


@FAST
@given(policy_texts(), st.lists(json_values, min_size=1, max_size=3))
def test_library_loads_and_scans_hostile_policies(policy, payloads):
    load_and_scan(policy, payloads)


@FAST
@given(policy_texts(), payload_bytes, cli_options)
def test_cli_in_process_exits_0_1_or_2_without_a_traceback(capsys, policy, payload, options):
    run_cli(capsys, policy, payload, options)


def run_subprocess(policy: str, payload: bytes) -> None:
    """One real `assertree scan` under RLIMIT_AS: a memory blow-up would be a MemoryError (exit 3)."""

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (SUBPROCESS_ADDRESS_SPACE, SUBPROCESS_ADDRESS_SPACE))

    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "policy.yaml").write_text(policy)
        (Path(folder) / "payload.yaml").write_bytes(payload)
        done = subprocess.run(
            [sys.executable, "-c", "from assertree.cli import run; run()", "scan", "payload.yaml", "--policy",
             "policy.yaml"], cwd=folder, capture_output=True, text=True, timeout=EXAMPLE_SECONDS,
            preexec_fn=limit, env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])})
    assert done.returncode in (0, 1, 2), (done.returncode, done.stderr[-2000:])
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr, done.stderr[-2000:]


@settings(FAST, max_examples=3)
@given(policy_texts(), payload_bytes)
def test_real_subprocess_runs_exit_cleanly(policy, payload):
    run_subprocess(policy, payload)


# -- the same properties, long (pytest -m slow) -----------------------------------------------------------

FINDINGS = os.environ.get("FUZZ_FINDINGS")


def surveyed(check, *args):
    """Run one long-run example; with FUZZ_FINDINGS, record a failure (with its example) and go on."""
    if not FINDINGS:
        check(*args)
        return
    started = time.monotonic()
    try:
        check(*args)
        failure = None
    except (AssertionError, Hang, Exception) as error:  # noqa: BLE001 - every failure is a finding
        failure = "".join(traceback.format_exception_only(error)).strip()[-1500:]
    with open(FINDINGS, "a") as findings:
        record = {"test": check.__name__, "seconds": round(time.monotonic() - started, 3)}
        if failure is not None:
            record.update(failure=failure, example=[a for a in args if isinstance(a, (str, list))][:3]
                          + [a.decode("latin-1")[:2000] for a in args if isinstance(a, bytes)])
        findings.write(json.dumps(record, default=repr) + "\n")


@pytest.mark.slow
@SLOW
@given(expressions, json_values)
def test_expressions_long(text, document):
    surveyed(evaluate_expression, text, document)


@pytest.mark.slow
@SLOW
@given(yaml_texts)
def test_parse_yaml_long(text):
    surveyed(read_yaml_functions, text)


@pytest.mark.slow
@SLOW
@given(policy_texts(), st.lists(json_values, min_size=1, max_size=3))
def test_library_long(policy, payloads):
    surveyed(load_and_scan, policy, payloads)


@pytest.mark.slow
@SLOW
@given(policy_texts(), payload_bytes, cli_options)
def test_cli_in_process_long(capsys, policy, payload, options):
    surveyed(run_cli, capsys, policy, payload, options)


@pytest.mark.slow
@settings(SLOW, max_examples=max(3, settings.get_profile("slow").max_examples // 100))
@given(policy_texts(), payload_bytes)
def test_real_subprocess_runs_long(policy, payload):
    surveyed(run_subprocess, policy, payload)
