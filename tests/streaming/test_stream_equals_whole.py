"""A streamed scan writes the very bytes a whole scan writes, in every format, for the same resources.

The whole path: `load_resources`, `scan`, `render`. The streamed path: the command with ``--stream``
(JSON Lines always streams), every report to a file, spools spilled to disk. Exit codes agree too.
"""

from __future__ import annotations

import pytest
from stream_inputs import CASES, inputs_fixture, policies_in, small_spools_fixture  # noqa: F401  (fixtures)

from assertree.cli import main
from assertree.engine.scan import scan
from assertree.inputs.resources import load_resources
from assertree.report import FORMATS, ReportOptions, render

VARIANTS = {"default": [], "quiet": ["-q"], "kyverno-json": ["--kyverno-json"]}


def whole(folder, files, flags) -> tuple[dict[str, str], int]:
    loaded = load_resources(files)
    result = scan(loaded.resources, policies_in(folder))
    options = ReportOptions(quiet="-q" in flags, kyverno_json="--kyverno-json" in flags,
                            multiple_sources=len(files) > 1, problems=tuple(loaded.problems))
    reports = {name: render(name, result, options) for name in FORMATS}
    code = 2 if loaded.problems else 1 if result.failed else 0
    return reports, code


def streamed(files, flags, *extra) -> tuple[dict[str, str], int]:
    outputs = [argument for name in FORMATS for argument in ("-o", f"{name}=report.{name}")]
    code = main(["scan", "--policy", "policies", *outputs, *flags, *extra, *files])
    from pathlib import Path

    return {name: Path(f"report.{name}").read_text(encoding="utf-8") for name in FORMATS}, code


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("case", CASES)
def test_streamed_reports_are_the_whole_reports(inputs, small_spools, capsys, case, variant):
    files, flags = CASES[case], VARIANTS[variant]
    expected, expected_code = whole(inputs, files, flags)
    got, code = streamed(files, flags, "--stream")
    for name in FORMATS:
        assert got[name] == expected[name], f"{name} report differs"
    assert code == expected_code
    assert not [path.name for path in inputs.iterdir() if path.name.startswith(".")]  # no temporary file left


def test_the_cases_cover_every_outcome(inputs):
    """The inputs above really have passing, failing and erroring rules, a rule that applies to nothing,
    and bad lines: the equality test compares reports that show each."""
    loaded = load_resources(CASES["several-files"])
    result = scan(loaded.resources, policies_in(inputs))
    statuses = {item.status for item in result.results}
    assert {"pass", "fail", "error"} <= statuses
    assert [rule.name for _, rule in result.unmatched_rules()] == ["services-only"]
    bad_json, not_an_object = (str(problem) for problem in loaded.problems)
    assert bad_json.startswith("mixed.ndjson:5:33: invalid JSON: ")  # the reason after it is orjson's
    assert not_an_object == (
        "mixed.ndjson:6:1: a JSON Lines payload holds one JSON object (a resource) per line, found array")


def test_stdout_gets_the_same_report_as_a_file(inputs, capsys):
    code = main(["scan", "--policy", "policies", "-o", "sarif", "mixed.ndjson", "stream.yaml"])
    out = capsys.readouterr().out
    expected, expected_code = whole(inputs, ["mixed.ndjson", "stream.yaml"], [])
    assert out == expected["sarif"]
    assert code == expected_code == 2
