"""``assertree scan`` on JSON Lines and with ``--stream``: what a user sees."""

from __future__ import annotations

import io
import json

import pytest
from stream_inputs import deployment, inputs_fixture  # noqa: F401  (a fixture)

from assertree.cli import main
from assertree.inputs.stream import MAX_LINE_PROBLEMS


def run(args, capsys):
    code = main([str(argument) for argument in args])
    out = capsys.readouterr()
    assert "Traceback" not in out.err
    return code, out.out, out.err


def test_standard_input_as_json_lines(inputs, capsys, monkeypatch):
    lines = "".join(json.dumps(deployment(name, replicas)) + "\n" for name, replicas in (("a", 1), ("b", 9)))
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(lines.encode())))
    code, out, _ = run(["scan", "--policy", "policies", "--payload-format", "ndjson", "-q", "-"], capsys)
    assert code == 1
    assert "- FAILED (POLICY=limits, RULE=replicas, ID=b)" in out
    assert "Checked 2 resources against 2 policies" in out


def test_a_bad_line_is_a_located_file_error_and_the_rest_is_checked(inputs, capsys):
    code, out, err = run(["scan", "--policy", "policies", "-q", "mixed.ndjson"], capsys)
    assert code == 2
    assert "assertree: error: mixed.ndjson:5:33: invalid JSON: " in err  # the reason after it is orjson's
    assert "- ERROR: mixed.ndjson:6:1: a JSON Lines payload holds one JSON object (a resource) per line" in out
    assert "Checked 5 resources" in out  # seven non-blank lines, two of them bad


def test_a_line_over_the_input_limit_is_skipped_alone(inputs, capsys, monkeypatch):
    short = json.dumps(deployment("short", 1))
    long = json.dumps({**deployment("long", 1), "padding": "x" * 1500})
    (inputs / "sizes.ndjson").write_text(f"{short}\n{long}\n{short}\n")
    monkeypatch.setenv("ASSERTREE_MAX_INPUT_BYTES", "1000")  # the whole file is larger: it is never read whole
    code, out, err = run(["scan", "--policy", "policies", "-q", "sizes.ndjson"], capsys)
    assert code == 2
    assert "sizes.ndjson:2: line longer than 1,000 bytes, the input limit (set ASSERTREE_MAX_INPUT_BYTES" in err
    assert "Checked 2 resources" in out


@pytest.mark.parametrize("bad_lines", [MAX_LINE_PROBLEMS + 1, 3 * MAX_LINE_PROBLEMS])
def test_bad_lines_past_the_first_hundred_are_counted_not_listed(inputs, capsys, bad_lines):
    good = json.dumps(deployment("good", 1))
    (inputs / "noisy.ndjson").write_text(f"{good}\n" + "{oops\n" * bad_lines + f"{good}\n")
    code, out, err = run(["scan", "--policy", "policies", "-q", "noisy.ndjson"], capsys)
    assert code == 2
    assert err.count("invalid JSON") == MAX_LINE_PROBLEMS
    assert f"noisy.ndjson:{MAX_LINE_PROBLEMS + 1}:2: invalid JSON" in err  # the last one listed
    hidden = bad_lines - MAX_LINE_PROBLEMS
    lines = "line" if hidden == 1 else f"lines, through line {bad_lines + 1}"
    assert (f"noisy.ndjson:{MAX_LINE_PROBLEMS + 2}: {hidden} more bad {lines}, not listed (the first "
            f"{MAX_LINE_PROBLEMS} of this file are)") in err
    assert "Checked 2 resources" in out


def test_reports_point_at_the_line_and_column_of_the_failing_field(inputs, capsys):
    _, out, _ = run(["scan", "--policy", "policies", "-o", "sarif", "passing.jsonl", "mixed.ndjson"], capsys)
    results = json.loads(out)["runs"][0]["results"]
    failed = next(item for item in results if item["ruleId"] == "limits/replicas")
    region = failed["locations"][0]["physicalLocation"]["region"]
    line = (inputs / "mixed.ndjson").read_text().splitlines()[1]
    # the check is an expression under `spec`: the deepest field the payload has is `spec`
    assert region == {"startLine": 2, "startColumn": line.index('"spec"') + 1}
    assert failed["properties"]["resource"] == "mixed.ndjson#1"


@pytest.mark.parametrize("flags", [["--stream", "--terraform"], ["--pre-process", "items"]])
def test_streaming_refuses_what_needs_whole_payloads(inputs, capsys, flags):
    code, _, err = run(["scan", "--policy", "policies", *flags, "passing.jsonl"], capsys)
    assert code == 2
    assert "--terraform and --pre-process need whole payloads" in err


def test_an_unknown_payload_format_is_a_usage_error(inputs, capsys):
    code, _, err = run(["scan", "--policy", "policies", "--payload-format", "xml", "passing.jsonl"], capsys)
    assert code == 2
    assert "unknown --payload-format 'xml' (choose from: auto, ndjson)" in err


@pytest.mark.parametrize(("text", "message"), [
    ("a: 1\n---\n" + "[" * 1100 + "]" * 1100 + "\n",
     "stream.yaml:3:1025: invalid YAML: nested more than 1024 levels deep"),
    ("a: 1\n---\n" + "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + level)}: &{chr(98 + level)} [{', '.join(['*' + chr(97 + level)] * 10)}]\n" for level in range(5)),
     "invalid YAML: document contains excessive aliasing"),
])
def test_yaml_streams_keep_the_reader_limits(inputs, capsys, text, message):
    (inputs / "stream.yaml").write_text(text)
    code, _, err = run(["scan", "--policy", "policies", "--stream", "-q", "stream.yaml"], capsys)
    assert code == 2
    assert message in err


def test_a_yaml_document_over_the_input_limit(inputs, capsys, monkeypatch):
    (inputs / "stream.yaml").write_text("a: 1\n---\nb: " + "x" * 200_000 + "\n")
    monkeypatch.setenv("ASSERTREE_MAX_INPUT_BYTES", "100000")
    code, _, err = run(["scan", "--policy", "policies", "--stream", "-q", "stream.yaml"], capsys)
    assert code == 2
    assert "stream.yaml: a YAML document larger than 100,000 bytes, the input limit" in err


def test_a_streamed_report_file_is_written_whole_or_not_at_all(inputs, capsys):
    from stream_inputs import policies_in

    from assertree.cli.outputs import parse_outputs, write_streamed
    from assertree.engine.scan import Scanner
    from assertree.engine.stream import check_stream
    from assertree.errors import UsageError
    from assertree.inputs.stream import ResourceStream
    from assertree.report import ReportOptions

    (inputs / "report.sarif").write_text("the previous report")
    scanner = Scanner(policies_in(inputs))

    def interrupted():
        for count, unit in enumerate(check_stream(scanner, ResourceStream(["passing.jsonl"]))):
            if count == 2:
                raise UsageError("the scan stopped half-way")
            yield unit

    with pytest.raises(UsageError):
        write_streamed(parse_outputs(["sarif=report.sarif", "junit=new.xml"]), scanner.policies, ReportOptions(),
                       interrupted(), [])
    assert (inputs / "report.sarif").read_text() == "the previous report"
    assert not (inputs / "new.xml").exists()
    assert not [path.name for path in inputs.iterdir() if path.name.startswith(".")]
