"""Reports people can read and that scale, a CLI that explains itself, and lint that helps."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from assertree.cli import main
from assertree.documents.reader import load_documents, skip_json_value
from assertree.engine.scan import scan
from assertree.inputs.resources import load_resources
from assertree.languages.load import load_policies
from assertree.report import render
from assertree.report.options import ReportOptions
from assertree.report.totals import totals

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "tests" / "data" / "real-world"
NULL_WHERE_MAP = """\
apiVersion: json.kyverno.io/v1alpha1
kind: ValidatingPolicy
metadata:
  name: tags
spec:
  rules:
    - name: team
      assert:
        all:
          - check:
              tags: '(`{"team": "a"}`)'
"""


def run(args, capsys, monkeypatch, cwd):
    monkeypatch.chdir(cwd)
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


# -- wording --------------------------------------------------------------------------------------


def test_a_null_where_a_map_was_expected_is_no_internal_error(tmp_path, capsys, monkeypatch):
    (tmp_path / "p.yaml").write_text(NULL_WHERE_MAP)
    (tmp_path / "r.json").write_text('{"tags": null}')
    code, out, _ = run(["scan", "r.json", "--policy", "p.yaml"], capsys, monkeypatch, tmp_path)
    assert code == 1
    assert "- ERROR: tags: the value is null, but the policy expects a map here (POLICY=tags, RULE=team)" in out
    assert "Internal error" not in out
    for format_name in ("json", "sarif", "junit", "github"):
        _, out, _ = run(["scan", "r.json", "--policy", "p.yaml", "-o", format_name], capsys, monkeypatch, tmp_path)
        assert "the value is null, but the policy expects a map here" in out and "Internal error" not in out
    # kyverno-json's exact text, for its conformance tests and its users
    code, out, _ = run(["scan", "r.json", "--policy", "p.yaml", "--kyverno-json"], capsys, monkeypatch, tmp_path)
    assert "- ERROR: tags: Internal error: invalid actual value, must be a map, found null (POLICY=tags" in out
    assert out.splitlines()[-1] == "Done"


def test_a_failure_inside_a_foreach_names_the_item(capsys, monkeypatch):
    _, out, _ = run(["scan", "k8s/deployment.yaml", "--policy", "policies/images.yaml"], capsys, monkeypatch, DATA)
    assert ("  -> Invalid value: true: Expected value: false (PATH=spec.template.spec.~.containers[1].image."
            "(ends_with(@, ':latest'))) (item [1] = {\"name\":\"log-shipper\",...})") in out.splitlines()


# -- totals and "skipped" ---------------------------------------------------------------------------


def test_totals_line_and_the_one_meaning_of_skipped(tmp_path, capsys, monkeypatch):
    (tmp_path / "p.yaml").write_text((DATA / "policies" / "images.yaml").read_text())
    code, out, err = run(["scan", str(DATA / "k8s" / "service.yaml"), str(DATA / "k8s" / "deployment.yaml"),
                          "--policy", "p.yaml"], capsys, monkeypatch, tmp_path)
    assert code == 1
    # locale-norway matches no resource: skipped once; the Service matches no rule: not matched, not skipped
    assert out.splitlines()[-1] == (
        "Checked 2 resources against 1 policy (2 rules): 0 passed, 1 failed, 0 errored, 1 skipped")
    assert err == "assertree: note: 1 rule applied to no resource: pinned-images/locale-norway\n"
    summaries = {}
    for format_name in ("json", "sarif"):
        _, out, _ = run(["scan", str(DATA / "k8s" / "service.yaml"), str(DATA / "k8s" / "deployment.yaml"),
                         "--policy", "p.yaml", "-o", format_name], capsys, monkeypatch, tmp_path)
        data = json.loads(out)
        summaries[format_name] = data["summary"] if format_name == "json" else data["runs"][0]["properties"]["summary"]
    assert summaries["json"] == summaries["sarif"]
    assert summaries["json"]["skipped"] == 1 and summaries["json"]["notMatched"] == 3
    _, out, _ = run(["scan", str(DATA / "k8s" / "service.yaml"), str(DATA / "k8s" / "deployment.yaml"),
                     "--policy", "p.yaml", "-o", "junit"], capsys, monkeypatch, tmp_path)
    assert re.search(r'<testsuites name="assertree" tests="2" failures="1" errors="0" skipped="1"', out)


def test_quiet_hides_the_folded_note_and_keeps_the_totals(tmp_path, capsys, monkeypatch):
    (tmp_path / "p.yaml").write_text((DATA / "policies" / "images.yaml").read_text())
    code, out, err = run(["scan", "-q", str(DATA / "k8s" / "service.yaml"), "--policy", "p.yaml"],
                         capsys, monkeypatch, tmp_path)
    assert code == 0 and err == "assertree: warning: no rule applied to any resource: nothing was checked.\n"
    assert out == "Checked 1 resource against 1 policy (2 rules): 0 passed, 0 failed, 0 errored, 2 skipped\n"


def test_file_outputs_alone_still_print_the_totals(tmp_path, capsys, monkeypatch):
    code, out, err = run(["scan", "k8s/deployment.yaml", "--policy", "policies/images.yaml",
                          "-o", f"sarif={tmp_path / 'r.sarif'}"], capsys, monkeypatch, DATA)
    assert code == 1 and out == ""
    assert (f"assertree: Checked 1 resource against 1 policy (2 rules): 0 passed, 1 failed, 0 errored, 1 skipped "
            f"(reports: sarif to {tmp_path / 'r.sarif'})") in err.splitlines()


# -- reports that scale -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def plan_scan():
    loaded = load_resources([str(REPO / "samples/terraform-aws/plan-bad.json")], terraform=True)
    return scan(loaded.resources, load_policies(REPO / "samples/terraform-aws/policies"))


def test_json_report_refers_instead_of_embedding(plan_scan):
    plan_size = (REPO / "samples/terraform-aws/plan-bad.json").stat().st_size
    report = render("json", plan_scan)
    embedded = render("json", plan_scan, ReportOptions(kyverno_json=True))
    assert len(report) < plan_size < len(embedded)
    entry = next(item for item in json.loads(report)["reports"] if item["results"])
    assert set(entry["resource"]) == {"source", "path", "identifier"}
    assert entry["resource"]["path"].startswith("planned_values.root_module.")
    assert entry["resource"]["identifier"].startswith("aws_")
    rule = entry["results"][0]["rules"][0]
    assert set(rule["rule"]) == {"name"}


def test_one_line_json_locations_have_a_column_and_the_resource_address(tmp_path, plan_scan):
    plan = json.loads((REPO / "samples/terraform-aws/plan-bad.json").read_text())
    (tmp_path / "plan.json").write_text(json.dumps(plan, separators=(",", ":")))  # as terraform show -json writes it
    loaded = load_resources([str(tmp_path / "plan.json")], terraform=True)
    result = scan(loaded.resources, load_policies(REPO / "samples/terraform-aws/policies"))
    results = json.loads(render("sarif", result))["runs"][0]["results"]
    columns = {item["locations"][0]["physicalLocation"]["region"]["startColumn"] for item in results}
    assert all(item["locations"][0]["physicalLocation"]["region"]["startLine"] == 1 for item in results)
    assert len(columns) == len(results) > 5  # every finding has its own place on the one line
    first = results[0]
    address = first["locations"][0]["logicalLocations"][0]
    assert address["kind"] == "resource" and address["fullyQualifiedName"] == first["properties"]["identifier"]
    # the column points at a key of the one line (the failing field, or its deepest ancestor in the file)
    text = (tmp_path / "plan.json").read_text()
    column = first["locations"][0]["physicalLocation"]["region"]["startColumn"]
    assert text[column - 1] == '"' and text[column - 2] in "{,"


def test_json_positions_skip_values_without_building_them():
    text = '{"a": [1, {"b": "x]}\\"", "c": [[], {}]}], "d": -1.5e3 , "e": "}"}'
    assert skip_json_value(text, 6) == text.index(', "d"')
    assert skip_json_value(text, text.index("-1.5e3")) == text.index(" , ")
    deep = "[" * 60 + "]" * 60  # deeper than the one-regex skip: the bracket walk takes over
    assert skip_json_value(deep, 0) == 120
    document = load_documents("x.json", text, positions_only=True)[0]
    assert document.value is None and document.locate(("e",)) == (1, 57)


# -- a CLI that explains itself --------------------------------------------------------------------


@pytest.mark.parametrize("command", [["scan"], ["lint"], ["jp", "query"], ["jp", "parse"], ["jp", "function"]])
def test_help_shows_metavariables_and_examples(command, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "120")
    main([*command, "--help"])
    out = capsys.readouterr().out
    assert "<list[str]>" not in out and "<bool>" not in out and "<path>" not in out
    assert "Examples:" in out and out.count("assertree ") >= 3
    if command == ["scan"]:
        assert re.search(r"--policy\s+PATH", out) and "[required]" in out  # rich marks it * too, on a terminal
        assert "auto|always|never" in out and "FORMAT[=FILE]" in out and "FORMAT: text (default), json," in out
        assert "EXPR" in out and "FILE" in out


def test_jp_help_reads_as_assertree():
    from assertree.cli import jp

    assert "informations" not in jp.function.__doc__ and "Provides" not in jp.HELP


@pytest.mark.parametrize("args", [
    ["jp", "parse", "-f", "missing.txt"], ["jp", "query", "-q", "latin1.txt", "-i", "a.json"],
    ["jp", "query", "-i", "missing.json", "a"], ["jp", "query", "-i", "latin1.txt", "a"]])
def test_jp_file_errors_are_one_line_and_exit_2(args, tmp_path, capsys, monkeypatch):
    (tmp_path / "latin1.txt").write_bytes(b"caf\xe9")
    (tmp_path / "a.json").write_text("{}")
    code, out, err = run(args, capsys, monkeypatch, tmp_path)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("assertree: error: ") and "Traceback" not in err


# -- lint -------------------------------------------------------------------------------------------

UNUSED_BINDING = """\
apiVersion: json.kyverno.io/v1alpha1
kind: ValidatingPolicy
metadata:
  name: unused
spec:
  rules:
    - name: r
      context:
        - name: never
          variable: 1
      assert:
        all:
          - check:
              a: 1
"""


def test_lint_warnings_alone_pass_unless_strict(tmp_path, capsys, monkeypatch):
    (tmp_path / "p.yaml").write_text(UNUSED_BINDING)
    code, out, err = run(["lint", "p.yaml"], capsys, monkeypatch, tmp_path)
    assert code == 0 and "warning:" in out and "never used" in out
    assert out.splitlines()[-1] == "1 policy file checked: 0 errors, 1 warning"
    code, _, err = run(["lint", "--strict", "p.yaml"], capsys, monkeypatch, tmp_path)
    assert code == 1 and "1 policy file checked: 0 errors, 1 warning (--strict)" in err


def test_lint_skips_payloads_with_one_note_and_says_when_all_is_well(capsys, monkeypatch):
    code, out, err = run(["lint", "."], capsys, monkeypatch, DATA)
    assert code == 0
    assert out == "5 policy files checked: no problems\n"
    assert err.count("\n") == 1 and err.startswith("assertree: note: skipped 9 files that hold no policy (")


def test_lint_hints_at_old_kyverno_json_syntax(tmp_path, capsys, monkeypatch):
    old = UNUSED_BINDING.replace("kind: ValidatingPolicy", "kind: Policy")
    (tmp_path / "old.yaml").write_text(old)
    (tmp_path / "validate.yaml").write_text(UNUSED_BINDING.replace("      assert:", "      validate:\n       assert:"))
    code, out, _ = run(["lint", "old.yaml", "validate.yaml"], capsys, monkeypatch, tmp_path)
    assert code == 1
    assert "(old kyverno-json syntax: the kind is now ValidatingPolicy)" in out
    assert "(old kyverno-json syntax: write match/assert directly under the rule, without 'validate:')" in out


def test_totals_of_an_empty_scan():
    result = scan([], [])
    assert totals(result).line() == (
        "Checked 0 resources against 0 policies (0 rules): 0 passed, 0 failed, 0 errored, 0 skipped")


@pytest.mark.parametrize("spelling", ["compact", "indented", "go-escaped", "spaced"])
def test_the_fast_json_position_path_never_changes_a_position(spelling):
    plan = json.loads((REPO / "samples/terraform-aws/plan-bad.json").read_text())
    plan["planned_values"]["root_module"]["resources"][0]["values"]["note"] = "<b> & ü"
    text = {"compact": json.dumps(plan, separators=(",", ":"), ensure_ascii=False),
            "indented": json.dumps(plan, indent=2),
            "go-escaped": json.dumps(plan, separators=(",", ":")).replace("<", "\\u003c"),
            "spaced": json.dumps(plan, separators=(", ", ":"))}[spelling]
    fast = load_documents("plan.json", text, positions_only=True, value=json.loads(text))[0]
    walked = load_documents("plan.json", text, positions_only=True)[0]
    resources = plan["planned_values"]["root_module"]["resources"]
    paths = [("planned_values", "root_module", "resources", index, *tail)
             for index in range(len(resources)) for tail in [(), ("values",), ("values", "note"), ("address",)]]
    paths += [("resource_changes", 3, "change", "actions", 0), ("nope",), ("planned_values", "root_module", "x")]
    for path in reversed(paths):  # far members first, then near ones from what was read
        assert fast.locate(path) == walked.locate(path), path
