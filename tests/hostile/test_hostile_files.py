"""Real hostile files, one test per kind of attack in issue 14: each ends in a clean, fast, one-line answer.

The files live in tests/hostile/data/: payloads carrying YAML alias bombs and
mistagged YAML for ``parse_yaml``, expressions that ask for gigabytes or nest
100,000 levels, Terraform plans of the wrong shape, a policy with no rules.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

import assertree
from assertree import jp
from assertree.cli import main
from assertree.errors import PolicyError, Severity
from assertree.jp import limits

DATA = Path(__file__).parent / "data"
SECONDS = 10  # generous on a loaded CI machine; each case takes well under a second on a laptop


def scan_one(policy: str, payload: str) -> dict[str, assertree.RuleResult]:
    """Each rule's result for one payload file, by rule name (the scan must be quick)."""
    started = time.monotonic()
    resources = assertree.load_resources([str(DATA / payload)]).resources
    result = assertree.scan(resources, assertree.load_policies(DATA / policy))
    assert time.monotonic() - started < SECONDS
    return {r.rule.name: r for r in result.results}


def cli(capsys, *args: str) -> tuple[int, str]:
    code = main([*args])
    err = capsys.readouterr().err
    assert "Traceback" not in err and "internal error" not in err
    return code, err


# -- parse_yaml: alias bombs, cycles, tags, numbers past 64 bits -------------------------------------------


def test_yaml_alias_bomb_in_a_string_is_a_rule_error_not_a_hang():
    (result,) = scan_one("parse-yaml-policy.yaml", "configmap-alias-bomb.json").values()
    assert result.status == "error"
    assert "yaml: document contains excessive aliasing" in str(result.error)


def test_parse_yaml_mistagged_cyclic_and_huge_values():
    results = scan_one("parse-yaml-policy.yaml", "configmap-tags-and-big-numbers.json")
    assert "yaml: cannot decode !!str `three` as a !!int" in str(results["bad-int"].error)
    assert "yaml: cannot decode !!str `half` as a !!float" in str(results["bad-float"].error)
    assert "yaml: anchor 'a' value contains itself" in str(results["cycle"].error)
    # go-yaml v2: a decimal integer beyond 64 bits is a float; past float64's range, or in hex, a string
    big = results["big-numbers"]
    assert big.status == "fail" and not big.error
    parsed = jp.search("parse_yaml(@)", "id: 123456789012345678901234567890\nhuge: " + "9" * 5000)
    assert parsed == {"id": 1.2345678901234568e29, "huge": "9" * 5000}


def test_alias_budget_lets_ordinary_sharing_through():
    text = "base: &base {cpu: 1, memory: 2}\n" + "".join(f"c{i}: {{<<: *base, name: c{i}}}\n" for i in range(2000))
    parsed = jp.search("parse_yaml(@)", text)
    assert len(parsed) == 2001 and parsed["c1999"] == {"cpu": 1, "memory": 2, "name": "c1999"}


# -- expressions: results beyond the limits, nesting beyond the limit ----------------------------------------


def test_expressions_asking_for_gigabytes_are_rule_errors_naming_the_limit():
    results = scan_one("expression-limits-policy.yaml", "pod.json")
    limit_text = f"{limits.MAX_STRING_LENGTH:,} characters, assertree's limit"
    assert f"pad_left(): the result would be longer than {limit_text}" in str(results["pad-a-billion"].error)
    assert f"replace_all(): the result would be longer than {limit_text}" in str(results["square-a-string"].error)
    assert "to_string(): the JSON text would be longer than" in str(results["double-a-list-sixty-times"].error)
    assert f"more than {limits.MAX_ARRAY_LENGTH:,} items" in str(results["split-into-characters"].error)
    assert results["random-megabytes"].status == "pass"  # within the limits: works as before


@pytest.mark.parametrize("policy", ["deep-expression-policy.yaml", "chained-indexes-policy.yaml"])
def test_100000_term_expressions_are_one_line_load_errors(capsys, policy):
    started = time.monotonic()
    code, err = cli(capsys, "scan", str(DATA / "pod.json"), "--policy", str(DATA / policy))
    assert time.monotonic() - started < SECONDS
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert f"nested too deeply (over {limits.MAX_EXPRESSION_DEPTH} levels)" in err and len(err) < 800


@pytest.mark.parametrize("text", [
    "(" * 100_000 + "a" + ")" * 100_000, "[" * 100_000 + "]" * 100_000, "abs(" * 100_000 + "`1`" + ")" * 100_000,
    " || ".join(["a"] * 100_000), "!" * 100_000 + "a", "{a:" * 100_000 + "a" + "}" * 100_000,
    "let $a = `1` in " * 100_000 + "$a", "a" + "[?a]" * 100_000, "a" + ".*" * 100_000,
])
def test_deep_expressions_fail_fast_before_any_recursion(text):
    started = time.monotonic()
    with pytest.raises(jp.ParseError, match="nested too deeply") as caught:
        jp.compile(text)
    assert time.monotonic() - started < 1
    assert len(str(caught.value)) < 300  # the expression is quoted as an excerpt around the column


def test_expressions_at_the_nesting_limit_still_work():
    depth = limits.MAX_EXPRESSION_DEPTH - 2
    data: dict = {"a": 1}
    for _ in range(depth - 1):
        data = {"a": data}
    assert jp.search(".".join(["a"] * depth), data) == 1
    assert jp.search("(" * 100 + "a" + ")" * 100, {"a": 2}) == 2


# -- Terraform plans of the wrong shape ----------------------------------------------------------------------

TERRAFORM = DATA / "terraform"
EXPECTED = json.loads((TERRAFORM / "expected-errors.json").read_text())


@pytest.mark.parametrize(("name", "message"), EXPECTED.items())
def test_malformed_plan_is_a_located_one_line_payload_error(capsys, name, message):
    loaded = assertree.load_resources([str(TERRAFORM / name)], terraform=True)
    (problem,) = loaded.problems
    assert problem.text().endswith(message) and problem.location.line is not None
    code, err = cli(capsys, "scan", "--terraform", str(TERRAFORM / name), "--policy",
                    "samples/terraform-aws/policies/")
    assert code == 2 and f"{name}:" in err and message in err


def test_plan_parts_terraform_may_leave_null_read_as_empty():
    loaded = assertree.load_resources([str(TERRAFORM / "null-parts.json")], terraform=True)
    assert loaded.problems == [] and loaded.resources == []


# -- policy paths and policies that check nothing ---------------------------------------------------------


@pytest.mark.parametrize("path", ["", " "])
def test_empty_policy_path_is_refused(path):
    with pytest.raises(PolicyError, match="empty policy path"):
        assertree.load_policies(path)


def test_policy_with_no_rules_loads_but_lint_warns():
    (policy,) = assertree.load_policies(DATA / "empty-rules-policy.yaml")  # kyverno-json loads it too
    assert policy.policy.rules == []
    (problem,) = assertree.lint([DATA / "empty-rules-policy.yaml"])
    assert problem.severity == Severity.WARNING and problem.path == ("spec", "rules")
    assert "checks nothing" in problem.message and problem.location.line == 6
