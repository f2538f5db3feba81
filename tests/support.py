"""Helpers for tests that are not fixtures: comparing JSON the way the suites ask, calling functions."""

from __future__ import annotations

import math
import shutil
from pathlib import Path
from typing import Any

import pytest

from assertree import jp


def run(expression: str, data: Any = None) -> Any:
    """Evaluate `expression` against `data` with the kyverno-json function table."""
    return jp.search(expression, data)


def fails_with(expression: str, message: str) -> None:
    """`expression` raises an assertree.jp error whose text is exactly `message`."""
    with pytest.raises(jp.JMESPathError) as caught:
        run(expression)
    assert str(caught.value) == message


def call(name: str, *args: Any) -> Any:
    """Call a function on arguments passed as data, so no JMESPath quoting gets in the way."""
    names = [f"a{index}" for index in range(len(args))]
    return jp.search(f"{name}({', '.join(names)})", dict(zip(names, args)))


def call_fails_with(message: str, name: str, *args: Any) -> None:
    """`call(name, *args)` raises an assertree.jp error whose text is exactly `message`."""
    with pytest.raises(jp.JMESPathError) as caught:
        call(name, *args)
    assert str(caught.value) == message


def json_equal(actual: Any, expected: Any) -> bool:
    """JSON equality that keeps booleans apart from numbers and compares numbers by value.

    Written independently of `assertree.jp.values.equal`, which is under test.
    """
    if isinstance(expected, bool) or isinstance(actual, bool):
        return type(actual) is type(expected) and actual == expected
    if isinstance(expected, (int, float)) and isinstance(actual, (int, float)):
        if isinstance(expected, float) and isinstance(actual, float) and math.isnan(expected):
            return math.isnan(actual)
        if isinstance(expected, float) or isinstance(actual, float):  # `12345678901234567000` read as int
            return float(actual) == float(expected)
        return actual == expected
    if isinstance(expected, list):
        return isinstance(actual, list) and len(actual) == len(expected) and all(
            json_equal(a, e) for a, e in zip(actual, expected)
        )
    if isinstance(expected, dict):
        return isinstance(actual, dict) and actual.keys() == expected.keys() and all(
            json_equal(actual[k], v) for k, v in expected.items()
        )
    return type(actual) is type(expected) and actual == expected


def go_value(value: Any, *, expected: bool = False) -> str:
    """A value as kyverno-json prints it in field errors (Go's fmt), to compare our structured
    results with its text: ``"null"`` (actual) or ``<nil>`` (expected) for null, ``%q`` strings,
    ``map[string]interface {}{...}`` and ``[]interface {}{...}`` for compound values."""
    if value is None:
        return "<nil>" if expected else '"null"'
    if isinstance(value, (dict, list)):
        return _go_sharp(value)
    return _go_plain(value)


def _go_plain(value: Any) -> str:
    import json

    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _go_float(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    raise TypeError(value)


def _go_float(value: float) -> str:
    """Go's %v for float64: shortest digits, exponent form below 1e-4 or from 1e21."""
    if value == int(value) and abs(value) < 1e21:
        return str(int(value))
    text = repr(value)
    if "e" in text:
        mantissa, exponent = text.split("e")
        sign = "-" if exponent.startswith("-") else "+"
        return f"{mantissa}e{sign}{exponent.lstrip('+-').zfill(2)}"
    return text


def _go_sharp(value: Any) -> str:
    if value is None:
        return "interface {}(nil)"
    if isinstance(value, dict):
        items = ", ".join(f'"{k}":{_go_sharp(value[k])}' for k in sorted(value))
        return "map[string]interface {}{" + items + "}"
    if isinstance(value, list):
        return "[]interface {}{" + ", ".join(_go_sharp(item) for item in value) + "}"
    return _go_plain(value)


def go_body(error) -> str:
    """The Kubernetes field-error body kyverno-json prints for one of our FieldErrors."""
    if error.type == "FieldValueRequired":
        return f"Required value: {error.detail}"
    if error.has_expected:
        return f"Invalid value: {go_value(error.value)}: Expected value: {go_value(error.expected, expected=True)}"
    return f"Invalid value: {go_value(error.value)}: {error.detail}"


def as_go_text(text: str, result) -> str:
    """Our text report with each field-error line re-rendered with Go value syntax."""
    errors = iter(e for r in result.results for v in r.violations for e in v.errors)
    lines = []
    for line in text.splitlines():
        if line.startswith("  -> "):
            error = next(errors)
            line = f"  -> {go_body(error)} (PATH={error.field})"
        lines.append(line)
    return "\n".join(lines) + "\n"


def order_insensitive(text: str) -> list[str]:
    """Lines with each run of sibling lines (field errors, binding echoes) sorted: kyverno-json
    emits those in Go's random map order."""
    out: list[str] = []
    run: list[str] = []
    for line in text.splitlines():
        if line.startswith("  -> ") or (line.startswith("- ") and " -> " in line and "(POLICY=" not in line):
            run.append(line)
            continue
        out.extend(sorted(run))
        run = []
        out.append(line)
    out.extend(sorted(run))
    return out


def kyverno_case_workdir(case: Path, tmp_path: Path, monkeypatch: Any) -> Path:
    """A working directory with a kyverno/policies case's policy as policy.yaml and its test resources as
    pods.yaml (`scan_case`'s names)."""
    shutil.copy(case / f"{case.name}.yaml", tmp_path / "policy.yaml")
    shutil.copy(case / ".kyverno-test" / "resource.yaml", tmp_path / "pods.yaml")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def scan_case(capsys: Any, *args: str) -> tuple[int, str]:
    """`assertree scan` of `kyverno_case_workdir`'s files: its exit code and standard output."""
    from assertree.cli import main

    code = main(["scan", "--policy", "policy.yaml", "pods.yaml", *args])
    return code, capsys.readouterr().out


def severity_policy(name: str, severity: str | None) -> str:
    """A kyverno-json ValidatingPolicy named `name` (annotated with `severity` when given) whose one rule fails
    every payload without ``ok: true``."""
    notes = f"\n  annotations:\n    policies.kyverno.io/severity: {severity}" if severity else ""
    return f"""\
apiVersion: json.kyverno.io/v1alpha1
kind: ValidatingPolicy
metadata:
  name: {name}{notes}
spec:
  rules:
  - name: check
    identifier: name
    assert:
      all:
      - message: "{name} fails"
        check:
          ok: true
"""


def policy_library(tmp_path: Path, folders: tuple[str, ...]) -> tuple[Path, Path]:
    """The policies and the test resources of kyverno/policies tiers (conformance folders), copied into
    ``policies/`` and ``resources/`` under `tmp_path` for one scan over all of them."""
    data = Path(__file__).parent / "conformance" / "data" / "kyverno-policies"
    policies, resources = tmp_path / "policies", tmp_path / "resources"
    policies.mkdir()
    resources.mkdir()
    for folder in folders:
        for test in sorted((data / folder).glob("*/.kyverno-test")):
            for path in test.parent.glob("*.yaml"):
                shutil.copy(path, policies / f"{folder}-{test.parent.name}-{path.name}")
            for path in test.glob("resource*.yaml"):
                shutil.copy(path, resources / f"{folder}-{test.parent.name}-{path.name}")
    return policies, resources


def scan_json(capsys: Any, policies: Path, resources: Path) -> tuple[int, Any]:
    """``assertree scan RESOURCES --policy POLICIES -o json --jobs 1``: the exit code and the JSON report (for
    tests that hold a fast path to the general one by comparing whole scans)."""
    import json

    from assertree.cli import main

    capsys.readouterr()
    code = main(["scan", str(resources), "--policy", str(policies), "-o", "json", "--jobs", "1"])
    return code, json.loads(capsys.readouterr().out)


BUCKETS_POLICY = """\
apiVersion: json.kyverno.io/v1alpha1
kind: ValidatingPolicy
metadata:
  name: buckets
spec:
  rules:
    - name: encrypted
      identifier: name
      assert:
        all:
        - check:
            encrypted: true
"""
"""A kyverno-json policy for the large payloads of bucket records tests generate: each must be encrypted."""
