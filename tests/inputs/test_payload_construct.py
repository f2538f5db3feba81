"""The fast YAML constructors give exactly what PyYAML's general constructor gives.

`assertree.documents.loaders.build_value` builds a document's value in one walk
(`construct_plain`) and declines (for PyYAML's constructor to build) anything the
walk does not handle itself: for payloads, for documents with positions, and for
the Kyverno manifests' go-yaml v2 reading (`go_yaml_documents`, with that
loader's constructors, keys and repeats); `go_yaml_number` answers
plain decimal integers without its general steps. All promise never to change a
value or an error. The
properties hold them to that on random YAML streams written from a vocabulary
of spellings where YAML readers disagree (``017``, ``1_000``, ``0x1F``, ``on``,
``.inf``, dates, big numbers, quoted look-alikes), explicit and unknown tags,
merge keys, anchors, repeated keys, flow and block styles, and comment-only
documents.
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assertree.documents import loaders, reader
from assertree.documents.loaders import Unsupported, go_yaml_number
from assertree.documents.reader import parse_values
from assertree.errors import DocumentError
from assertree.languages.kyverno import manifests

SCALARS = ["017", "0777", "08", "1_000", "0x1F", "0o17", "0b101", "+12", "-0", "0", "00", "1e3", ".5", "1.",
           "99999999999999999999", "18446744073709551615", "9223372036854775808", "on", "yes", "True", "TRUE",
           "false", "~", "null", "", ".inf", "-.Inf", ".NaN", "2001-12-14", "1:30", "x", "name", "a b", "'017'",
           '"on"', "'1_000'", "!!int '12'", "!!str 12", "!!float 1", "!!bool true", "!!bool yes", "!!int x",
           "!Ref Logs", "!!null ''", "!!timestamp 2001-12-14", "!!binary aGk=", "|\n  text", ">-\n  folded"]
KEYS = ["a", "b", "c", "200", "true", "on", "'a'", "<<", "null", "y", "N", "1.0", "0x10", "'1.0'", "=", "!!str 7"]


def render(value: Any, indent: int = 0) -> str:
    """Block-style YAML for a generated value: a scalar spelling, a list of items or a list of (key, value)."""
    pad = " " * indent
    if isinstance(value, str):
        if "\n" in value:  # a block scalar: its lines indented under the key
            head, body = value.split("\n", 1)
            return f"{head}\n{pad}  {body.strip()}"
        return value
    kind, items = value
    if not items:
        return "[]" if kind == "seq" else "{}"
    lines = []
    for item in items:
        key, child = item if kind == "map" else ("-", item)
        lead = f"{pad}{key}:" if kind == "map" else f"{pad}-"
        if isinstance(child, str):
            lines.append(f"{lead} {render(child, indent)}")
        elif child[1]:
            lines.append(f"{lead}\n{render(child, indent + 2)}")
        else:
            lines.append(f"{lead} {render(child, indent)}")
    return "\n".join(lines)


values = st.recursive(
    st.sampled_from(SCALARS),
    lambda inner: st.one_of(
        st.tuples(st.just("seq"), st.lists(inner, max_size=3)),
        st.tuples(st.just("map"), st.lists(st.tuples(st.sampled_from(KEYS), inner), max_size=4)),
    ),
    max_leaves=12,
)
documents = st.lists(st.one_of(values.map(render), st.just("# a comment only"),
                               st.just("x: &a {k: 1}\ny: *a"), st.just("m: {<<: {k: 1}, j: 2}")),
                     min_size=1, max_size=3)


def outcome(text: str, payload: bool = True) -> str:
    try:  # repr: 1, 1.0, True, nan apart
        return repr(parse_values(text.encode(), "t.yaml", "yaml", payload=payload))
    except DocumentError as error:
        return f"error: {error}"


def decline(*_: Any) -> Any:
    raise Unsupported("the general constructor")


def general(text: str, monkeypatch: pytest.MonkeyPatch, payload: bool = True) -> str:
    with monkeypatch.context() as patched:
        patched.setattr(loaders, "construct_plain", decline)
        return outcome(text, payload)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(documents, st.booleans())
def test_fast_constructor_equals_the_general_one(monkeypatch, streams, payload):
    """Payloads (yaml.v3's reading) and other values without positions (`parse_values`)."""
    text = "\n---\n".join(streams) + "\n"
    assert outcome(text, payload) == general(text, monkeypatch, payload)


@pytest.mark.parametrize("text", [
    "a: 1\na: 2\n",  # a repeated key: the general constructor's located error
    "a: {b: !!int x}\nc: [1, 2]\n",
    "- {a: 1}\n- [x, !!bool maybe]\n",
    "? [a]\n: 1\n",  # a list as a key
    "a: |\n  x",  # a block scalar ending the file without a line break
])
def test_errors_and_edges_are_the_general_constructors(monkeypatch, text):
    assert outcome(text) == general(text, monkeypatch)


@given(st.text("0123456789", min_size=1, max_size=22))
def test_decimal_integers_read_as_the_general_steps_read_them(digits):
    # with a sign, the text skips the shortcut for plain digits: the number must be the same
    assert repr(go_yaml_number(digits)) == repr(go_yaml_number("+" + digits))


def go_outcome(text: str) -> str:
    try:
        return repr(manifests.go_yaml_documents(text))
    except yaml.YAMLError as error:
        return f"error: {type(error).__name__}: {error}"


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(documents)
def test_the_go_yaml_walk_equals_pyyamls_constructor(monkeypatch, streams):
    text = "\n---\n".join(streams) + "\n"
    with monkeypatch.context() as patched:
        patched.setattr(loaders, "construct_plain", decline)
        general_documents = go_outcome(text)
    assert go_outcome(text) == general_documents
    assert general_documents == go_load_all(text)


def go_load_all(text: str) -> str:
    """PyYAML's own ``load_all`` with the loader: what the walk must give."""
    try:
        return repr(list(yaml.load_all(text, Loader=manifests.GoYAMLLoader)))
    except yaml.YAMLError as error:
        return f"error: {type(error).__name__}: {error}"


def documents_outcome(text: str, payload: bool) -> str:
    try:
        return repr([document.value for document in reader.load_documents("t.yaml", text, payload=payload)])
    except DocumentError as error:
        return f"error: {error}"


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(documents, st.booleans())
def test_documents_with_positions_walk_as_the_general_constructor_builds(monkeypatch, streams, payload):
    """Policies, test files and located payloads (`load_documents`) are built by the walk too."""
    text = "\n---\n".join(streams) + "\n"
    with monkeypatch.context() as patched:
        patched.setattr(loaders, "construct_plain", decline)
        general_documents = documents_outcome(text, payload)
    assert documents_outcome(text, payload) == general_documents
