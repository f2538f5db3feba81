"""A large JSON payload read for the members a ``--pre-process`` expression reads (`assertree.documents.members`):
the same values, resources, reports and errors as parsing it whole; None (parse it whole) whenever unsure."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import BUCKETS_POLICY

from assertree.cli import main
from assertree.documents.members import Members, parse_members
from assertree.documents.nesting import MAX_NESTING
from assertree.inputs import payload
from assertree.inputs.payload import read_payload
from assertree.inputs.resources import load_resources

_KEYS = ("a", "b", "c", "a b", "é")
_scalars = (st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=False, allow_infinity=False)
            | st.text(max_size=5))
_values = st.recursive(_scalars, lambda inner: st.lists(inner, max_size=3)
                       | st.dictionaries(st.text(max_size=3), inner, max_size=3), max_leaves=10)
# members as (key, value) pairs: a key may repeat, as JSON allows
_members = st.lists(st.tuples(st.sampled_from(_KEYS), _values), max_size=6)


def _text(members: list[tuple[str, object]], indent: int | None) -> bytes:
    separator = ",\n" if indent else ","
    inner = separator.join(f"{json.dumps(key)}: {json.dumps(value, indent=indent)}" for key, value in members)
    return ("{" + inner + "}").encode()


@settings(max_examples=300, deadline=None)
@given(_members, st.sets(st.sampled_from((*_KEYS, "missing"))), st.sampled_from([None, 2]))
def test_the_members_read_are_those_of_the_whole_parse(members, names, indent) -> None:
    """The members asked for, and maybe some small ones before them, in the file's order."""
    data = _text(members, indent)
    whole = orjson.loads(data)
    found = parse_members(data, names)
    assert {name: found[name] for name in names if name in found} == {name: whole[name] for name in names
                                                                       if name in whole}
    assert {name: whole[name] for name in found} == found
    assert list(found) == [name for name in whole if name in found]


@pytest.mark.parametrize("data", [
    b"[1, 2]", b"3", b'"text"', b"null",  # not an object
    b'{"x": [1,], "a": 1}',  # a syntax error in a member not read
    b'{"x": "\xff", "a": 1}',  # not UTF-8 where msgspec does not look
    b'{"x": "\xed\xa0\x80", "a": 1}',  # UTF-8 of a surrogate
    b'{"x": "\\ud800", "a": 1}',  # a lone surrogate escape
    b'{"a": 1} {"b": 2}',  # more than one value
    b'{"a": 1e400}',  # a member read that orjson refuses
    b'\xef\xbb\xbf{"a": 1}',  # a byte-order mark: the whole parse decodes it
    '{"a": 1}'.encode("utf-16"),
])
def test_whatever_it_is_unsure_of_is_parsed_whole(data: bytes) -> None:
    assert parse_members(data, {"a"}) is None


def test_what_a_member_not_read_is_not_checked_for() -> None:
    """Documented (docs/performance.md): a member never built is not held to the nesting limit or to
    numbers a double can hold."""
    deep = b"[" * (MAX_NESTING + 5) + b"]" * (MAX_NESTING + 5)
    assert parse_members(b'{"x": ' + deep + b', "a": 1}', {"a"}) == {"a": 1}
    assert parse_members(b'{"x": 1e400, "a": 1}', {"a"}) == {"a": 1}
    assert parse_members(b'{"x": 1e300, "a": 1}', {"a"}) == {"x": 1e300, "a": 1}  # small, before: read too


@pytest.fixture(scope="module")
def plan(tmp_path_factory) -> Path:
    """A plan-shaped payload over `payload._MEMBERS_FROM`: buckets under ``planned.items``, every third one not
    encrypted, after and before members no expression below reads."""
    buckets = [{"name": f"bucket-{index}", "encrypted": index % 3 != 0} for index in range(300)]
    filler = [{"id": index, "pad": "x" * 4000} for index in range(payload._MEMBERS_FROM // 4000)]
    compact = json.dumps(filler)
    planned = json.dumps({"items": buckets}, indent=1)
    text = f'{{\n "version": 1,\n "before": {compact},\n "planned": {planned},\n "after": {compact}\n}}\n'
    path = tmp_path_factory.mktemp("members") / "plan.json"
    path.write_text(text)
    return path


def test_a_large_payload_is_read_for_the_members_the_expression_reads(plan) -> None:
    read = read_payload(str(plan), members=Members({"planned"}))
    assert list(read.value) == ["version", "planned"]  # "before", larger, is not read
    assert read.value["planned"] == json.loads(plan.read_text())["planned"]


def test_the_resources_are_those_of_the_whole_parse(plan, monkeypatch) -> None:
    partly = load_resources([str(plan)], pre_process=["planned.items"])
    monkeypatch.setattr(payload, "_MEMBERS_FROM", 1 << 40)  # every payload parsed whole
    whole = load_resources([str(plan)], pre_process=["planned.items"])
    assert [r.value for r in partly.resources] == [r.value for r in whole.resources]
    assert len(partly.resources) == 300
    some = slice(0, 12)  # found by a search from the root each (the whole parse's root is large)
    assert [r.origin_path() for r in partly.resources[some]] == [r.origin_path() for r in whole.resources[some]]
    places = partly.resources[0].file.locate_all([r.origin_path() for r in partly.resources[some]])
    assert places == whole.resources[0].file.locate_all([r.origin_path() for r in whole.resources[some]])
    assert places[3] == (6 + 4 * 3, 3)  # bucket-3's "{": bucket-0's is on line 6, four lines a bucket
    assert list(partly.resources[0].root) == ["version", "planned"]  # the members read, and a small one before


@pytest.mark.parametrize("expression", ["planned.items", "[planned.items][]", "planned | items"])
def test_reports_are_byte_identical(capsys, tmp_path, plan, monkeypatch, expression) -> None:
    (tmp_path / "policy.yaml").write_text(BUCKETS_POLICY)
    command = ["scan", str(plan), "--policy", str(tmp_path / "policy.yaml"), "--color", "never",
               "--pre-process", expression, "-o", "text", "-o", f"sarif={tmp_path / 'report.sarif'}",
               "-o", f"json={tmp_path / 'report.json'}"]
    assert main(command) == 1
    partly = capsys.readouterr(), (tmp_path / "report.sarif").read_bytes(), (tmp_path / "report.json").read_bytes()
    monkeypatch.setattr(payload, "_MEMBERS_FROM", 1 << 40)
    assert main(command) == 1
    whole = capsys.readouterr(), (tmp_path / "report.sarif").read_bytes(), (tmp_path / "report.json").read_bytes()
    assert partly == whole
    assert "bucket-3" in partly[0].out and '"startLine"' in partly[1].decode()


def test_a_syntax_error_in_a_member_not_read_is_the_whole_parse_error(capsys, tmp_path, plan) -> None:
    broken = tmp_path / "broken.json"
    broken.write_bytes(plan.read_bytes().replace(b'"pad": "x', b'"pad": x', 1))  # in "before", on line 3
    (tmp_path / "policy.yaml").write_text(BUCKETS_POLICY)
    code = main(["scan", str(broken), "--policy", str(tmp_path / "policy.yaml"), "--pre-process", "planned.items"])
    error = capsys.readouterr().err
    assert code == 2
    assert f"{broken}:3:30: invalid JSON" in error and "invalid JSON" in error and "Traceback" not in error


def test_a_worker_process_reads_the_same_members(plan) -> None:
    """``--jobs``: the files a worker parses are read for the same members (`inputs.parallel._read_chunk`)."""
    from assertree.inputs import parallel

    outcome = parallel._read_chunk([str(plan)], members=Members({"planned"}))[0]
    assert isinstance(outcome, payload.Payload) and list(outcome.value) == ["version", "planned"]
    assert list(parallel._read_chunk([str(plan)])[0].value) == ["version", "before", "planned", "after"]
