"""JSON's nesting limit is assertree's, whichever orjson is installed.

orjson before 3.9.15 reads JSON of any depth, later releases refuse more than 1,024 levels with wordings
that changed between releases, and a future one might refuse less. `parse_json` gives the same value, or
the same message at the same place, in each case: these tests make orjson behave each way.
"""

from __future__ import annotations

import orjson
import pytest

from assertree.documents import limits
from assertree.documents.reader import JSONError, parse_json

DEEPEST = b'{"a":' * 1024 + b"1" + b"}" * 1024
TOO_DEEP = b'["x", ' + b"[" * 1024 + b"]" * 1024 + b"]"  # the 1,025th level opens at byte 1,030


def _orjson_without_limit(data):
    """orjson before 3.9.15: any depth reads (here the standard library's parser, given room to recurse)."""
    import json
    import sys

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(20_000)
    try:
        return json.loads(data)
    except json.JSONDecodeError as error:
        raise orjson.JSONDecodeError(error.msg, error.doc, error.pos) from None
    finally:
        sys.setrecursionlimit(limit)


def _orjson_with_a_lower_limit(real_loads):
    def loads(data):
        depth = 0
        for position, byte in enumerate(data):
            depth += byte in b"[{"
            depth -= byte in b"]}"
            if depth > 512:
                raise orjson.JSONDecodeError("recursion limit reached", data.decode(), position)
        return real_loads(data)

    return loads


@pytest.fixture(params=["installed", "none", "lower"])
def orjson_kind(request, monkeypatch):
    """orjson as installed, without a nesting limit, or with a lower one than assertree's."""
    if request.param == "none":
        monkeypatch.setattr(orjson, "loads", _orjson_without_limit)
    elif request.param == "lower":
        monkeypatch.setattr(orjson, "loads", _orjson_with_a_lower_limit(orjson.loads))
    monkeypatch.setattr(limits, "_ORJSON_NESTING", [])  # found again, for the orjson of this test
    return request.param


def test_the_installed_orjson_is_classified_as_it_behaves():
    deepest, too_deep = b"[" * 1024 + b"]" * 1024, b"[" * 1025 + b"]" * 1025
    reads = []
    for data in (deepest, too_deep):
        try:
            orjson.loads(data)
            reads.append(True)
        except orjson.JSONDecodeError:
            reads.append(False)
    expected = {(True, False): "same", (True, True): "none", (False, False): "lower"}[tuple(reads)]
    limits._ORJSON_NESTING.clear()
    assert limits.orjson_nesting() == expected


def test_1024_levels_read_whatever_the_orjson(orjson_kind):
    value = parse_json(DEEPEST)
    for _ in range(1024):
        value = value["a"]
    assert value == 1
    assert limits.orjson_nesting() == ("same" if orjson_kind == "installed" else orjson_kind)


def test_1025_levels_are_refused_in_assertrees_words_whatever_the_orjson(orjson_kind):
    with pytest.raises(JSONError) as refused:
        parse_json(TOO_DEEP)
    assert refused.value.message == "invalid JSON: nested more than 1024 levels deep"
    assert (refused.value.line, refused.value.column) == (1, refused.value.offset + 1)
    assert 1029 <= refused.value.offset <= 1031  # at the opener that passed the limit, or just after it


def test_brackets_inside_strings_do_not_count(orjson_kind):
    text = b'["' + b"[" * 5000 + b'\\"\\\\", "' + b"{" * 5000 + b'"]'
    assert parse_json(text) == ["[" * 5000 + '"\\', "{" * 5000]


def test_a_syntax_error_keeps_its_place(orjson_kind):
    with pytest.raises(JSONError) as refused:
        parse_json(b'{"a": [1, 2,, 3]}')
    assert (refused.value.line, refused.value.offset) == (1, 12)
