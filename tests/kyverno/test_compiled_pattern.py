"""Compiled patterns (`compiled_pattern`) decide exactly as the interpreter (`pattern`) does.

Same status, failing path and Kyverno error text (`match_pattern`), and the same rule outcome
(`validate_rule`: status, message, path), on:

* every ``validate.pattern`` and ``anyPattern`` (foreach ones too) of every ClusterPolicy and Policy in
  the vendored kyverno/policies and kyverno-cli data, against every resource of the same test folder
  (as read, and with float64 numbers as the CLI gives them), and a few shapes that are no resource;
* random patterns (every anchor, wildcard keys and values, operator leaves: ranges, quantities,
  durations, alternatives) and random resources shaped like them.

Examples are derandomized (tests/conftest.py); ``HYPOTHESIS_PROFILE=explore`` draws new ones.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import CONFORMANCE
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assertree.languages.kyverno.compiled_pattern import compile_pattern, compile_patterns
from assertree.languages.kyverno.manifests import to_float64
from assertree.languages.kyverno.operators import validate_value
from assertree.languages.kyverno.pattern import match_pattern, validate_rule

PATTERNS = settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def same(pattern: Any, resource: Any) -> None:
    """The compiled pattern and the interpreter agree on `resource`, and neither changes the pattern."""
    before = copy.deepcopy(pattern)
    compiled = compile_pattern(pattern)
    if compiled is None:
        return
    assert compiled.match(resource) == match_pattern(resource, pattern), (pattern, resource)
    assert pattern == before


def same_rule(pattern: Any, any_pattern: Any, resource: Any) -> None:
    compiled = compile_patterns(pattern, any_pattern)
    if compiled is None:
        return
    for message in ("", "must be set", "ends."):
        assert compiled.validate(resource, "rule", message) == validate_rule(
            resource, "rule", pattern=pattern, any_pattern=any_pattern, message=message), (pattern, resource)


# -- the conformance data -----------------------------------------------------------------------------------


def _read(path: Path) -> list[Any]:
    try:
        return [document for document in yaml.safe_load_all(path.read_text(encoding="utf-8")) if document]
    except (yaml.YAMLError, UnicodeDecodeError):
        return []


def _checks(part: Any) -> list[tuple[Any, Any]]:
    """(pattern, anyPattern) of a validate block and of its foreach entries, nested ones too."""
    if not isinstance(part, dict):
        return []
    found = []
    if part.get("pattern") is not None or part.get("anyPattern") is not None:
        found.append((part.get("pattern"), part.get("anyPattern")))
    for entry in part.get("foreach") or []:
        found += _checks(entry)
    return found


def _rules(document: Any) -> list[tuple[Any, Any]]:
    if not isinstance(document, dict) or document.get("kind") not in ("ClusterPolicy", "Policy"):
        return []
    spec = document.get("spec")
    rules = spec.get("rules") if isinstance(spec, dict) else None
    return [check for rule in rules or [] if isinstance(rule, dict) for check in _checks(rule.get("validate"))]


def conformance_cases() -> list[tuple[str, list[tuple[Any, Any]], list[Any]]]:
    """(test folder, its pattern rules, its resources) for every folder with a pattern rule."""
    folders: dict[Path, tuple[list, list]] = {}
    for root in (CONFORMANCE / "kyverno-policies", CONFORMANCE / "kyverno-cli"):
        for path in sorted(root.rglob("*.y*ml")):
            folder = path.parent.parent if path.parent.name == ".kyverno-test" else path.parent  # kyverno/policies
            rules, resources = folders.setdefault(folder, ([], []))
            for document in _read(path):
                found = _rules(document)
                rules += found
                if not found and isinstance(document, dict) and isinstance(document.get("kind"), str):
                    resources.append(document)
    return [(str(folder.relative_to(CONFORMANCE)), rules, resources)
            for folder, (rules, resources) in sorted(folders.items()) if rules]


CASES = conformance_cases()
NO_RESOURCES = [None, "x", 1, [], {}, [{}], {"metadata": None}, {"spec": {"containers": "x"}}]


def test_the_conformance_data_has_pattern_rules():
    rules = [rule for _, found, _ in CASES for rule in found]
    assert len(rules) >= 100
    compiled = [rule for rule in rules if compile_patterns(*rule) is not None]
    assert len(compiled) >= 0.9 * len(rules)  # the fast path is the common path


@pytest.mark.parametrize(("folder", "rules", "resources"), CASES, ids=[case[0] for case in CASES])
def test_compiled_patterns_of_the_conformance_data(folder, rules, resources):
    for pattern, any_pattern in rules:
        for resource in [*resources, *map(to_float64, resources), *NO_RESOURCES]:
            if pattern is not None:
                same(pattern, resource)
            for candidate in to_float64(any_pattern) if isinstance(any_pattern, list) else []:
                same(candidate, resource)
            same_rule(pattern, any_pattern, resource)


# -- random patterns ------------------------------------------------------------------------------------------

NAMES = ["name", "image", "app", "spec", "containers", "labels", "metadata", "x"]
ANCHORS = ["{}", "({})", "X({})", "=({})", "^({})", "<({})", "+({})", " ({}) "]
LEAF_TEXTS = ["*", "?*", "nginx:*", "!nginx:latest", "!*:latest", "nginx", "", "true", "1", "0", "1.5", "-1",
              ">1", "<=2Gi", ">= 100Mi", "1-5", "1!-5", "2Gi-4Gi", "a | b", ">1 & <5", "1h", "<30m", ">=1h30m",
              "!0", "null", "500m", ">30m", "<2h", "1h-2h", "10s!-1m",
              "*Mi", "?", "a|*", " x & !y ", "0.5-1.5", ">", "!-", "1-", "1.0"]
RESOURCE_TEXTS = ["nginx:latest", "nginx", "nginx:1.2", "1", "3", "2Gi", "3Gi", "500m", "200Mi", "1h", "45m", "90m",
                  "5s", "0", "true", "false", "", "a", "b", "x", "1.5", "-1"]

keys = st.builds(lambda anchor, name: anchor.format(name), st.sampled_from(ANCHORS), st.sampled_from(NAMES))
wildcard_keys = st.sampled_from(["app*", "app.kubernetes.io/*", "?pp", "(team*)", "=(app)"])
scalars = st.one_of(st.sampled_from(LEAF_TEXTS), st.integers(-2, 6), st.sampled_from([0.0, 1.0, 1.5, 3.0]),
                    st.booleans(), st.none())
label_maps = st.dictionaries(
    st.one_of(wildcard_keys, st.sampled_from(["app", "team"])),
    st.one_of(st.sampled_from(["*", "web", "?*", "!x"]), st.integers(0, 1), st.none()), max_size=3)
metadata = st.builds(lambda name, maps: {**name, **maps},
                     st.sampled_from([{}, {"name": "*"}, {"name": "?*"}, {"name": "!bad"}]),
                     st.dictionaries(st.sampled_from(["labels", "=(labels)", "annotations"]), label_maps, max_size=2))
patterns = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.dictionaries(keys, inner, min_size=1, max_size=4),
        st.lists(inner, min_size=0, max_size=2),
        st.lists(st.dictionaries(keys, inner, min_size=1, max_size=3), min_size=1, max_size=2),
        st.builds(lambda head, tail: {"metadata": head, **tail}, metadata,
                  st.dictionaries(keys, inner, max_size=2)),
    ),
    max_leaves=10,
)
resource_scalars = st.one_of(st.sampled_from(RESOURCE_TEXTS), st.integers(-1, 6), st.sampled_from([0.0, 1.0, 2.5]),
                             st.booleans(), st.none())
resource_values = st.recursive(
    resource_scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(NAMES), inner, max_size=3)),
    max_leaves=8,
)


def _key_name(key: str) -> str:
    text = key.strip()
    return text[text.index("(") + 1:-1] if text.endswith(")") and "(" in text else text


def _resembling(draw: st.DrawFn, pattern: Any) -> Any:
    """A resource shaped like `pattern` (anchored keys read as their names; keys kept, dropped or changed)."""
    choice = draw(st.integers(0, 9))
    if choice == 9:
        return draw(resource_values)
    if isinstance(pattern, dict):
        value: dict[str, Any] = {}
        for key, child in pattern.items():
            if draw(st.integers(0, 4)):
                name = _key_name(key).replace("*", draw(st.sampled_from(["", "x", ".kubernetes.io/name"])))
                value[name.replace("?", "a")] = _resembling(draw, child)
        if choice == 8:
            value[draw(st.sampled_from(NAMES))] = draw(resource_values)
        return value
    if isinstance(pattern, list):
        items = [_resembling(draw, item) for item in pattern for _ in range(draw(st.integers(0, 2)))]
        return items if choice else [*items, None]
    if choice < 4:
        return pattern
    return draw(resource_scalars)


@st.composite
def patterns_and_resources(draw: st.DrawFn) -> tuple[Any, Any]:
    pattern = draw(patterns)
    return pattern, _resembling(draw, pattern)


@PATTERNS
@given(case=patterns_and_resources())
def test_compiled_patterns_of_random_patterns(case):
    pattern, resource = case
    same(pattern, resource)
    same_rule(pattern, None, resource)


@PATTERNS
@given(candidates=st.lists(patterns, min_size=1, max_size=3), data=st.data())
def test_compiled_any_patterns_of_random_patterns(candidates, data):
    resource = _resembling(data.draw, data.draw(st.sampled_from(candidates)))
    same_rule(None, candidates, resource)


@PATTERNS
@given(leaf=st.one_of(scalars, st.lists(st.sampled_from(LEAF_TEXTS), min_size=1, max_size=3).map(" | ".join),
                      st.lists(st.sampled_from(LEAF_TEXTS), min_size=1, max_size=3).map("&".join)),
       value=st.one_of(resource_scalars, st.sampled_from(LEAF_TEXTS), st.just({}), st.just([1])))
def test_compiled_leaves(leaf, value):
    same(leaf, value)
    same({"a": leaf}, {"a": value})
    assert (compile_pattern(leaf).match(value).status.value == "pass") == (
        validate_value(value, leaf) if not isinstance(value, list) else all(validate_value(v, leaf) for v in value))


def test_every_leaf_against_every_value():
    """Each leaf of the operator language, alone and combined, against every resource scalar (as read and as
    float64), and the other way round: the parsed operands must decide as the interpreter's parse per call."""
    texts = [*LEAF_TEXTS, *(f"{a} | {b}" for a in LEAF_TEXTS[::3] for b in LEAF_TEXTS[1::4]),
             *(f"{a}&{b}" for a in LEAF_TEXTS[::4] for b in LEAF_TEXTS[2::5])]
    values = [*RESOURCE_TEXTS, *LEAF_TEXTS, None, True, False, 0, 1, 3, -1, 0.0, 1.5, 3.0, 2**63, {}, ["1", 2]]
    for leaf in [*texts, *RESOURCE_TEXTS, None, True, False, 0, 1, 3, 1.5, 2**63, {}]:
        compiled = compile_pattern({"a": leaf})
        for value in values:
            assert compiled.match({"a": value}) == match_pattern({"a": value}, {"a": leaf}), (leaf, value)


def test_wildcard_metadata_keys_are_left_to_the_interpreter():
    """Those are rewritten per resource (Kyverno's ExpandInMetadata); label values that are no string too."""
    assert compile_pattern({"metadata": {"labels": {"app.kubernetes.io/*": "?*"}}}) is None
    assert compile_pattern({"spec": [{"=(metadata)": {"annotations": {"team": 1}}}]}) is None
    assert compile_pattern({"metadata": {"labels": {"app": "?*"}}}) is not None
    assert compile_pattern({"spec": {"labels": {"app*": "?*"}}}) is not None  # literal keys outside metadata


def test_a_pattern_with_variables_is_not_compiled_once():
    from assertree.languages.kyverno import bridge

    assert bridge.compile_patterns({"metadata": {"name": "{{ request.object.kind }}"}}, None) is None
    assert bridge.compile_patterns(None, [{"spec": "$(./../x)"}]) is None
    assert bridge.compile_patterns({"metadata": {"name": "?*"}}, None) is not None
