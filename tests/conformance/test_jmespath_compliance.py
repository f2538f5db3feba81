"""The JMESPath compliance suites, run straight from ../shared/conformance/jmespath.

* ``community/``: every case (the dialect go-jmespath implements);
* ``official/``: every case but one, ``'\\\\'`` in literal.json, where the
  community dialect reads ``\\\\`` in a raw string as one backslash (asserted
  below as the community reading);
* ``derived/``: go-jmespath behaviour the suites leave open, checked with both
  function tables (go-jmespath's own and kyverno-json's).
"""

from __future__ import annotations

import json

import pytest
from conftest import CONFORMANCE
from support import json_equal

from assertree import jp

SUITES = CONFORMANCE / "jmespath"
# The one official case the community dialect answers differently (README "What go-jmespath claims").
OFFICIAL_EXCEPTION = ("literal.json", "'\\\\'")


def cases(folder: str):
    for path in sorted((SUITES / folder).rglob("*.json")):
        for suite_index, suite in enumerate(json.loads(path.read_text())):
            for case_index, case in enumerate(suite["cases"]):
                if "bench" in case:
                    continue
                name = f"{path.relative_to(SUITES / folder)}:{suite_index}:{case_index}"
                yield pytest.param(path.name, suite["given"], case, id=name)


def check(given, case, dialect: str) -> None:
    expression = case["expression"]
    if "error" in case:
        with pytest.raises(jp.JMESPathError) as caught:
            jp.compile(expression, dialect).search(given)
        if case["error"] == "syntax":
            assert isinstance(caught.value, jp.ParseError), f"expected a syntax error, got {caught.value!r}"
        return
    actual = jp.compile(expression, dialect).search(given)
    assert json_equal(actual, case["result"]), f"{expression!r}: got {actual!r}, expected {case['result']!r}"


@pytest.mark.parametrize(("file", "given", "case"), list(cases("community")))
def test_community(file, given, case):
    check(given, case, "community")


@pytest.mark.parametrize(("file", "given", "case"), list(cases("official")))
def test_official(file, given, case):
    if (file, case["expression"]) == OFFICIAL_EXCEPTION:
        assert jp.compile(case["expression"], "community").search(given) == "\\"
        return
    check(given, case, "community")


@pytest.mark.parametrize("dialect", ["community", "kyverno"])
@pytest.mark.parametrize(("file", "given", "case"), list(cases("derived")))
def test_derived(file, given, case, dialect):
    check(given, case, dialect)


def test_case_counts():
    """The suites are all there: a missing file must not shrink the run silently."""
    counted = {folder: sum(1 for _ in cases(folder)) for folder in ("community", "official", "derived")}
    assert counted == {"community": 1034, "official": 892, "derived": 69}
