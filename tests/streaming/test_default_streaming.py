"""A scan of several files streams by default (no ``--stream``), with the whole scan's reports and exit code.

The whole path here is the library's, in this process (`load_resources`, `scan`, `render`); the command is
made to fail if it takes that path, so each comparison really is streamed against whole. Files are read
whole with the fast reader (in worker processes with ``-j2``); a YAML file above
`assertree.inputs.stream.STREAM_YAML_BYTES` document by document: the reports are the same either way.
"""

from __future__ import annotations

import gc
import json
import tracemalloc
from pathlib import Path

import pytest
from stream_inputs import deployment, inputs_fixture, policies_in, small_spools_fixture  # noqa: F401  (fixtures)

from assertree.cli import main
from assertree.cli.outputs import parse_outputs
from assertree.cli.streamed import scan_streamed
from assertree.engine.scan import scan
from assertree.inputs import resources, stream
from assertree.report import FORMATS, ReportOptions, render, spool

FILES = ["stream.yaml", "list.yaml", "single.yaml", "array.json", "empty.yaml", "broken.yaml", "scalar.json"]


@pytest.fixture(name="more_inputs")
def more_inputs_fixture(inputs):
    """The shared inputs, plus files a repository holds: comments only, bad YAML, a JSON scalar."""
    (inputs / "empty.yaml").write_text("# nothing here\n")
    (inputs / "broken.yaml").write_text("kind: Deployment\nspec: [unclosed\n")
    (inputs / "scalar.json").write_text("42\n")
    return inputs


def whole(files: list[str], flags: list[str]) -> tuple[dict[str, str], int]:
    loaded = resources.load_resources(files)
    result = scan(loaded.resources, policies_in(Path(".")))
    options = ReportOptions(quiet="-q" in flags, multiple_sources=len(files) > 1, problems=tuple(loaded.problems))
    code = 2 if loaded.problems else 1 if result.failed else 0
    return {name: render(name, result, options) for name in FORMATS}, code


def command(files: list[str], flags: list[str], monkeypatch) -> tuple[dict[str, str], int]:
    def refuse(*args, **kwargs):
        raise AssertionError("the whole path was taken")

    with monkeypatch.context() as patched:
        patched.setattr(resources, "load_resources", refuse)
        outputs = [argument for name in FORMATS for argument in ("-o", f"{name}=report.{name}")]
        code = main(["scan", "--policy", "policies", *outputs, *flags, *files])
    return {name: Path(f"report.{name}").read_text(encoding="utf-8") for name in FORMATS}, code


@pytest.mark.parametrize("flags", [[], ["-q"], ["-j2"]], ids=["default", "quiet", "two-jobs"])
@pytest.mark.parametrize("threshold", [stream.STREAM_YAML_BYTES, 16], ids=["whole-files", "yaml-by-document"])
def test_a_scan_of_several_files_streams_the_whole_reports(more_inputs, small_spools, monkeypatch, capsys,
                                                          flags, threshold):
    monkeypatch.setattr(stream, "STREAM_YAML_BYTES", threshold)
    expected, expected_code = whole(FILES, flags)
    got, code = command(FILES, flags, monkeypatch)
    for name in FORMATS:
        assert got[name] == expected[name], f"{name} report differs"
    assert code == expected_code == 2  # broken.yaml and scalar.json are problems, the others still checked
    err = capsys.readouterr().err
    assert "broken.yaml" in err and "scalar.json" in err


def test_two_jobs_read_many_files_as_one_job_does(inputs, monkeypatch, capsys):
    folder = inputs / "many"
    folder.mkdir()
    for index in range(120):  # enough for a worker (`assertree.inputs.parallel.MIN_FILES_PER_JOB`)
        (folder / f"d{index:03}.yaml").write_text(json.dumps(deployment(f"d{index}", 1 + 4 * (index % 2))))
    one, code_one = command(["many"], ["-j1"], monkeypatch)
    two, code_two = command(["many"], ["-j2"], monkeypatch)
    assert one == two and code_one == code_two == 1
    assert "120 resources" in one["text"]


def test_one_file_and_whole_payload_options_take_the_whole_path(inputs, monkeypatch, capsys):
    taken: list[str] = []
    load = resources.load_resources

    def recording(*args, **kwargs):
        taken.append("whole")
        return load(*args, **kwargs)

    monkeypatch.setattr(resources, "load_resources", recording)
    main(["scan", "--policy", "policies", "-q", "single.yaml"])
    main(["scan", "--policy", "policies", "-q", "--pre-process", "@", "single.yaml", "list.yaml"])
    assert taken == ["whole", "whole"]
    main(["scan", "--policy", "policies", "-q", "--stream", "single.yaml"])
    main(["scan", "--policy", "policies", "-q", "single.yaml", "list.yaml"])
    assert taken == ["whole", "whole"]


def test_the_input_limit_caps_files_by_default_and_documents_with_stream(inputs, monkeypatch, capsys):
    (inputs / "big.yaml").write_text("a: 1\n---\nb: " + "x" * 2_000 + "\n")
    monkeypatch.setenv("ASSERTREE_MAX_INPUT_BYTES", "1500")
    code = main(["scan", "--policy", "policies", "-q", "big.yaml", "single.yaml"])
    assert code == 2
    assert "big.yaml: larger than 1,500 bytes, the input limit" in capsys.readouterr().err
    code = main(["scan", "--policy", "policies", "-q", "--stream", "big.yaml", "single.yaml"])
    assert code == 2
    assert "big.yaml: a YAML document larger than 1,500 bytes, the input limit" in capsys.readouterr().err


PADDING = 20_000  # bytes of each file: a scan that kept its files would grow by far more than their paths


def peak_of_scanning(folder: Path, count: int) -> int:
    files = []
    for index in range(count):  # every other one fails, so every report has findings to write
        path = folder / f"f{count}-{index}.yaml"
        path.write_text(json.dumps({**deployment(f"d{index}", 1 + 4 * (index % 2)), "pad": "x" * PADDING}))
        files.append(str(path))
    outputs = parse_outputs([f"{name}={folder / f'out{count}.{name}'}" for name in FORMATS])
    policies = policies_in(folder)
    names = [Path(file).parts for file in files]  # noqa: F841  (held: see below)
    # The file names are interned (pathlib does) and held while the scan runs: interning a thousand new
    # names can resize the interpreter's table of interned strings, an allocation as large as everything the
    # process interned before (megabytes in a long test run), which is not the scan's.
    gc.collect()
    gc.disable()  # what a file leaves in a reference cycle counts too: how often the collector runs depends
    tracemalloc.start()  # on everything else the process holds (a long test run holds much)
    try:
        tally, read = scan_streamed(files, policies, None, outputs, ReportOptions(multiple_sources=True))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
        gc.enable()
    assert tally.resources == count and tally.failed and not read.problems
    return peak


def test_peak_memory_does_not_grow_with_the_number_of_files(inputs, monkeypatch, capsys):
    """Each file read whole is let go once its resources are checked: 900 more files of 20 kB add less
    than a twentieth of their bytes to the peak (what reports keep per file: a name in SARIF's list of
    artifacts), where a scan that kept each file's payload (its bytes and its value) would add more than
    all of them."""
    monkeypatch.setattr(spool, "SPILL_BYTES", 16_384)
    peak_of_scanning(inputs, 20)  # what every run makes once (lazy imports, caches)
    small, large = peak_of_scanning(inputs, 100), peak_of_scanning(inputs, 1_000)
    assert large - small < 900 * PADDING / 20, (small, large)


def test_workers_parse_only_a_few_chunks_ahead_of_the_scan(tmp_path, monkeypatch):
    """A streamed scan with ``--jobs`` holds what the workers parsed and it has not taken yet: at most a
    window of files (`parallel._WINDOW` per process, made small here), never every file (the pool here runs
    each chunk at once, in this process, to count them)."""
    from concurrent import futures

    from assertree.inputs import parallel
    from assertree.inputs.parallel import read_payloads

    monkeypatch.setattr(parallel, "_WINDOW", 40)

    submitted: list[list[str]] = []

    class InlinePool:
        def __init__(self, *args, **kwargs) -> None:
            pass

        def submit(self, function, chunk):
            future: futures.Future = futures.Future()
            future.set_result(function(chunk))
            submitted.append(chunk)
            return future

        def shutdown(self, *args, **kwargs) -> None:
            pass

    monkeypatch.setattr(futures, "ProcessPoolExecutor", InlinePool)
    files = []
    for index in range(600):
        path = tmp_path / f"d{index:03}.yaml"
        path.write_text(json.dumps(deployment(f"d{index}", 2)))
        files.append(str(path))
    ahead = []
    for count, (path, read) in enumerate(read_payloads(files, 2), start=1):
        assert read().source == path
        ahead.append(sum(len(chunk) for chunk in submitted) - count)
    assert sum(len(chunk) for chunk in submitted) > 250  # the worker's share, about half
    assert max(ahead) < 2 * 40, max(ahead)  # a window of two processes, not all 600 files
