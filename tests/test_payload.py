"""Reading payloads: formats, resources, and one clear error per kind of bad input."""

from __future__ import annotations

import io

import pytest

from assertree.errors import PayloadError, UsageError
from assertree.inputs.payload import (
    compile_preprocessors,
    parse_payload,
    payload_files,
    read_payload,
    resources_from,
)
from assertree.results import find_origin


def write(tmp_path, name, data):
    path = tmp_path / name
    path.write_bytes(data if isinstance(data, bytes) else data.encode())
    return str(path)


def test_json_file_is_one_value(tmp_path):
    loaded = read_payload(write(tmp_path, "a.json", '{"a": [1, 2.5, "x", true, null]}'))
    assert loaded.value == {"a": [1, 2.5, "x", True, None]}
    assert not loaded.documents


def test_yaml_stream_is_a_list_of_documents(tmp_path):
    loaded = read_payload(write(tmp_path, "a.yaml", "a: 1\n---\n# comment only\n---\nb: 2\n"))
    assert loaded.value == [{"a": 1}, {"b": 2}]
    assert loaded.documents
    resources = resources_from(loaded)
    assert [(r.value, r.document, r.origin) for r in resources] == [({"a": 1}, 0, (0,)), ({"b": 2}, 1, (1,))]


def test_yaml_keeps_dates_and_y_n_as_strings(tmp_path):
    loaded = read_payload(write(tmp_path, "a.yml", "day: 2024-01-01\nat: 2024-01-01T10:00:00Z\nanswer: y\nno: n\n"))
    assert loaded.value == {"day": "2024-01-01", "at": "2024-01-01T10:00:00Z", "answer": "y", "no": "n"}


def test_yaml_never_builds_python_objects(tmp_path):
    # as yaml.v3: a tag no JSON type has gives the value it tags (never an object, never a call)
    loaded = read_payload(write(tmp_path, "a.yaml", "a: !!python/object/apply:os.system ['true']\n"))
    assert loaded.value == {"a": ["true"]}


def test_unknown_extension_and_stdin_are_sniffed(tmp_path):
    assert read_payload(write(tmp_path, "a.txt", '{"a": 1}')).value == {"a": 1}
    assert read_payload(write(tmp_path, "b.txt", "a: 1\n")).value == {"a": 1}
    assert read_payload("-", stdin=io.BytesIO(b"[1]")).value == [1]


def test_json_array_is_many_resources():
    resources = resources_from(parse_payload(b'[{"a": 1}, {"a": 2}]', "x.json", "json"))
    assert [r.value for r in resources] == [{"a": 1}, {"a": 2}]
    assert [r.label for r in resources] == ["x.json#0", "x.json#1"]


def test_pre_process_picks_resources_and_keeps_their_origin():
    payload = parse_payload(b'{"planned_values": {"resources": [{"a": 1}, {"a": 2}]}}', "plan.json", "json")
    resources = resources_from(payload, compile_preprocessors(["planned_values.resources"]))
    assert [r.value for r in resources] == [{"a": 1}, {"a": 2}]
    assert resources[1].origin_path() == ("planned_values", "resources", 1)


def test_find_origin_is_by_identity():
    shared = {"x": 1}
    root = {"a": [{"x": 1}, shared]}
    assert find_origin(root, shared) == ("a", 1)
    assert find_origin(root, {"x": 1}) is None


# -- one test per kind of bad input ----------------------------------------------------------


def test_missing_file(tmp_path):
    with pytest.raises(PayloadError) as caught:
        read_payload(str(tmp_path / "nope.json"))
    assert str(caught.value) == f"{tmp_path / 'nope.json'}: payload file not found"


def test_directory_given_as_file(tmp_path):
    with pytest.raises(PayloadError, match="is a directory"):
        read_payload(str(tmp_path))


def test_invalid_json_names_line_and_column(tmp_path):
    path = write(tmp_path, "bad.json", '{\n  "a": 1,\n  "b": \n}\n')
    with pytest.raises(PayloadError) as caught:
        read_payload(path)
    assert str(caught.value).startswith(f"{path}:4:1: invalid JSON")


def test_invalid_yaml_names_line_and_column(tmp_path):
    path = write(tmp_path, "bad.yaml", "a: 1\nb: [1, 2\nc: 3\n")
    with pytest.raises(PayloadError) as caught:
        read_payload(path)
    assert str(caught.value).startswith(f"{path}:3:")
    assert "invalid YAML" in str(caught.value)


def test_empty_payload(tmp_path):
    with pytest.raises(PayloadError, match=r"empty file: a \.json file must hold a JSON value"):
        read_payload(write(tmp_path, "empty.json", "  \n"))
    with pytest.raises(PayloadError, match="payload is empty"):
        read_payload("-", stdin=io.BytesIO(b"  \n"))
    # a YAML file with no document holds no resource, and that is not an error
    for text in ("# nothing here\n---\n", "", "\n\n"):
        loaded = read_payload(write(tmp_path, "comments.yaml", text))
        assert loaded.empty and resources_from(loaded) == []


def test_payload_that_is_not_an_object_or_list(tmp_path):
    with pytest.raises(PayloadError, match="must be an object or a list of objects, not a number"):
        resources_from(read_payload(write(tmp_path, "n.json", "42")))
    with pytest.raises(PayloadError, match="payload is null"):
        resources_from(read_payload(write(tmp_path, "null.json", "null")))


def test_non_utf8_yaml(tmp_path):
    path = write(tmp_path, "latin1.yaml", b"a: 1\nname: caf\xe9\n")
    with pytest.raises(PayloadError) as caught:
        read_payload(path)
    assert str(caught.value) == f"{path}:2:10: payload is not UTF-8 text (byte 14): save the file as UTF-8"


def test_non_utf8_json(tmp_path):
    with pytest.raises(PayloadError) as caught:
        read_payload(write(tmp_path, "latin1.json", b'{"name": "caf\xe9"}'))
    assert (caught.value.line, caught.value.column) == (1, 14)
    assert caught.value.message == "payload is not UTF-8 text (byte 13): save the file as UTF-8"


def test_invalid_pre_process_expression():
    with pytest.raises(UsageError) as caught:
        compile_preprocessors(["planned_values.["])
    assert "invalid --pre-process expression 'planned_values.['" in str(caught.value)
    with pytest.raises(UsageError, match=r"unknown function: nope\(\)"):
        compile_preprocessors(["nope(@)"])


def test_pre_process_returning_null():
    payload = parse_payload(b'{"a": 1}', "x.json", "json")
    with pytest.raises(PayloadError, match="returned null: nothing to check"):
        resources_from(payload, compile_preprocessors(["missing"]))


def test_very_large_numbers(tmp_path):
    with pytest.raises(PayloadError, match="invalid JSON: number is infinity"):
        read_payload(write(tmp_path, "big.json", '{"a": 1e400}'))
    big = read_payload(write(tmp_path, "int.json", '{"a": 123456789012345678901234567890}')).value["a"]
    assert big == pytest.approx(1.2345678901234568e29)


def test_deeply_nested_payload(tmp_path):
    deep = "[" * 10_000 + "]" * 10_000
    with pytest.raises(PayloadError, match=r"invalid JSON: nested more than 1024 levels deep"):
        read_payload(write(tmp_path, "deep.json", deep))


# -- --payload arguments ---------------------------------------------------------------------------


def test_payload_files_expands_directories_and_globs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "d" / "sub").mkdir(parents=True)
    for name in ("d/b.yaml", "d/a.json", "d/sub/c.yml", "d/notes.txt", "top.json"):
        (tmp_path / name).write_text("{}")
    assert payload_files(["d"]) == ["d/a.json", "d/b.yaml", "d/sub/c.yml"]
    assert payload_files(["**/*.json", "top.json"]) == ["d/a.json", "top.json"]
    assert payload_files(["-"]) == ["-"]


def test_payload_files_errors(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "empty").mkdir()
    with pytest.raises(PayloadError, match="payload file not found"):
        payload_files(["missing.json"])
    with pytest.raises(PayloadError, match="no file matches"):
        payload_files(["*.json"])
    with pytest.raises(PayloadError, match=r"no \.json, \.yaml or \.yml files"):
        payload_files(["empty"])
    with pytest.raises(UsageError, match="only once"):
        payload_files(["-", "-"])


@pytest.mark.parametrize("make", ["missing", "directory", "unreadable"])
def test_a_json_lines_file_that_cannot_be_opened_is_worded_as_any_payload(tmp_path, make):
    """JSON Lines files are opened by their own reader (a line at a time); its errors read as read_payload's."""
    import os

    from assertree.inputs.stream import ndjson_resources

    path = tmp_path / "inventory.ndjson"
    if make == "directory":
        path.mkdir()
    elif make == "unreadable":
        path.write_text("{}\n")
        path.chmod(0)
        if os.access(path, os.R_OK):  # root reads anything: a symlink to itself cannot be opened by anyone
            path.unlink()
            path.symlink_to(path)  # ELOOP: "Too many levels of symbolic links"
    with pytest.raises(PayloadError) as streamed:
        list(ndjson_resources(str(path), []))
    with pytest.raises(PayloadError) as whole:
        read_payload(str(path))
    assert str(streamed.value) == str(whole.value)
    assert str(streamed.value).startswith(f"{path}: {'payload file not found' if make == 'missing' else ''}")
