"""Kyverno's wildcard matching (ext/wildcard over go-wildcard v1.0.3): `*` any run, `?` exactly one character."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from assertree.languages.kyverno.wildcard import (
    check_patterns,
    contains_wildcard,
    expand_selector_labels,
    first_match,
    match,
)

# Cases from Kyverno's ext/wildcard tests (pattern, text, matched).
CASES = [
    ("*", "s3:GetObject", True),
    ("", "s3:GetObject", False),
    ("", "", True),
    ("s3:*", "s3:ListMultipartUploadParts", True),
    ("s3:ListBucketMultipartUploads", "s3:ListBucket", False),
    ("s3:ListBucket", "s3:ListBucket", True),
    ("my-bucket/oo*", "my-bucket/oo", True),
    ("my-bucket/In*", "my-bucket/India/Karnataka/", True),
    ("my-bucket/In*", "my-bucket/Karnataka/India/", False),
    ("my-bucket/In*/Ka*/Ban", "my-bucket/India/Karnataka/Ban/Ban/Ban/Ban/Ban", True),
    ("my-bucket/In*/Ka*/Ban", "my-bucket/India/State1/State2/Karnataka/Area1/Area2/Area3/Ban", True),
    ("my-bucket/In*/Ka*/Ban", "my-bucket/India/Karnataka/Bangalore", False),
    ("my-bucket/In*/Ka*/Ban*", "my-bucket/India/Karnataka/Bangalore", True),
    ("my-bucket/oo*", "my-bucket/odo", False),
    ("my-bucket?/abc*", "mybucket/abc", False),
    ("my-bucket?/abc*", "my-bucket1/abc", True),
    ("my-?-bucket/abc*", "my--bucket/abc", False),
    ("my-?-bucket/abc*", "my-1-bucket/abc", True),
    ("my??bucket/abc*", "mybucket/abc", False),
    ("my??bucket/abc*", "my4abucket/abc", True),
    ("my-bucket/abc?efg", "my-bucket/abc/efg", True),
    ("my-bucket/abc????", "my-bucket/abcde", False),
    ("my-bucket/abc????", "my-bucket/abcdefg", True),
    ("my-bucket/abc?", "my-bucket/abc", False),
    ("my-bucket/abc?", "my-bucket/abcde", False),
    ("my-bucket/mnop*?", "my-bucket/mnop", False),
    ("my-bucket/mnop*?", "my-bucket/mnopq", True),
    ("my-bucket/mnop*?and", "my-bucket/mnopand", False),
    ("my-bucket/mnop*?and?", "my-bucket/mnopqanda", True),
    ("my-bucket/mnop*?and", "my-bucket/mnopqanda", False),
    ("my-bucket/mnop*??", "my-bucket/mnopqrst", True),
    # no character classes, no escapes: these are literal
    ("[a]", "a", False),
    ("[a]", "[a]", True),
    ("a\\*", "a\\bc", True),
    ("a.c", "abc", False),
    # `?` is one code point, not one byte
    ("caf?", "café", True),
    ("?", "", False),
    ("**", "", True),
]


@pytest.mark.parametrize(("pattern", "text", "matched"), CASES)
def test_match(pattern: str, text: str, matched: bool) -> None:
    assert match(pattern, text) is matched


def _reference(pattern: str, text: str) -> bool:
    regex = "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern)
    return re.fullmatch(regex, text, re.DOTALL) is not None


@given(st.text(alphabet="ab*?", max_size=8), st.text(alphabet="ab", max_size=8))
def test_match_agrees_with_a_regular_expression(pattern: str, text: str) -> None:
    assert match(pattern, text) is _reference(pattern, text)


def test_many_stars_do_not_backtrack_exponentially() -> None:
    assert match("*a" * 30 + "b", "a" * 200) is False


def test_contains_wildcard() -> None:
    assert contains_wildcard("app-*") and contains_wildcard("v?") and not contains_wildcard("plain[1]")


def test_check_patterns() -> None:
    assert check_patterns(["kube-*", "default"], ["team-a", "kube-system"])
    assert not check_patterns(["kube-*"], ["team-a"])
    assert not check_patterns([], ["x"])


def test_first_match() -> None:
    assert first_match("app.kubernetes.io/*", ["team", "app.kubernetes.io/name", "app.kubernetes.io/part-of"]) == (
        "app.kubernetes.io/name"
    )
    assert first_match("x*", ["a"]) is None


def test_expand_selector_labels() -> None:
    labels = {"app": "web", "tier": "frontend"}
    assert expand_selector_labels({"app": "web"}, labels) == {"app": "web"}
    assert expand_selector_labels({"ti*": "front*"}, labels) == {"tier": "frontend"}
    assert expand_selector_labels({"ti*": "back*"}, labels) == {"ti0": "back0"}
    assert expand_selector_labels({"app": "w?b"}, labels) == {"app": "web"}
