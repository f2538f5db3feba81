"""A large payload file read in a thread while the command gets ready (`assertree.inputs.ahead`): the same
bytes, the same errors and the same reports as reading it when it is wanted, and nothing kept afterwards."""

from __future__ import annotations

import gc
import json
from pathlib import Path

import pytest
from support import BUCKETS_POLICY

from assertree.cli import main
from assertree.documents.limits import MAX_INPUT_BYTES_VARIABLE
from assertree.documents.reader import read_bytes
from assertree.errors import AssertreeError, PayloadError
from assertree.inputs import ahead, payload
from assertree.inputs.payload import read_payload


@pytest.fixture(scope="module")
def big(tmp_path_factory) -> Path:
    """A JSON payload just over `MIN_BYTES`: a list of buckets, every third one not encrypted."""
    items: list[str] = []
    size = 0
    while size < ahead.MIN_BYTES:
        index = len(items)
        items.append(json.dumps({"name": f"bucket-{index}", "encrypted": index % 3 != 0, "pad": "x" * 200}))
        size += len(items[-1])
    path = tmp_path_factory.mktemp("ahead") / "buckets.json"
    path.write_text("[" + ",".join(items) + "]")
    return path


def test_the_bytes_are_those_of_the_file_and_taken_once(big):
    reading = ahead.read_ahead(str(big))
    assert reading is not None
    assert ahead.take(str(big)) == read_bytes(big)
    assert ahead.take(str(big)) is None  # once


def test_small_files_standard_input_and_missing_files_are_read_when_wanted(tmp_path):
    small = tmp_path / "small.json"
    small.write_text("{}")
    assert ahead.read_ahead(str(small)) is None
    assert ahead.read_ahead(str(tmp_path / "missing.json")) is None
    assert ahead.read_ahead(str(tmp_path)) is None  # a directory


def test_a_read_let_go_is_dropped(big):
    reading = ahead.read_ahead(str(big))
    assert reading is not None
    reading.take()  # the thread is done
    del reading
    gc.collect()
    assert ahead.take(str(big)) is None


def test_an_error_is_the_one_reading_then_gives(big, monkeypatch):
    monkeypatch.setenv(MAX_INPUT_BYTES_VARIABLE, "1000")
    with pytest.raises(PayloadError) as now:
        read_payload(str(big))
    reading = ahead.read_ahead(str(big))
    assert reading is not None
    with pytest.raises(PayloadError) as early:
        read_payload(str(big))
    assert str(early.value) == str(now.value) and "1,000 bytes" in str(now.value)
    assert isinstance(early.value, AssertreeError)


def test_the_scan_command_reads_one_large_payload_ahead_with_the_same_reports(capsys, tmp_path, big, monkeypatch):
    (tmp_path / "policy.yaml").write_text(BUCKETS_POLICY)
    command = ["scan", str(big), "--policy", str(tmp_path / "policy.yaml"), "--color", "never", "-o", "text",
               "-o", f"sarif={tmp_path / 'report.sarif'}"]
    monkeypatch.setattr(ahead, "MIN_BYTES", 1 << 40)  # nothing read ahead
    code = main(command)
    before = capsys.readouterr(), (tmp_path / "report.sarif").read_bytes()
    monkeypatch.setattr(ahead, "MIN_BYTES", 1024)
    taken = []
    take = payload.take

    def spy(path: str) -> bytes | None:
        data = take(path)
        taken.append(data is not None)
        return data

    monkeypatch.setattr(payload, "take", spy)
    assert main(command) == code == 1
    assert (capsys.readouterr(), (tmp_path / "report.sarif").read_bytes()) == before
    assert taken == [True]
    assert "FAILED" in before[0].out and "bucket-3" in before[0].out
