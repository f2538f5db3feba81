"""Payloads as they are found in other people's repositories (tests/data/real-world/): read as
kyverno-json reads them, in any Unicode encoding, and never stopping a scan at the first bad file."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
import yaml

from assertree import jp
from assertree.cli import main
from assertree.documents.loaders import PayloadLoader, go_yaml_number
from assertree.documents.reader import load_documents
from assertree.errors import PayloadError
from assertree.inputs.payload import looks_like_template, read_payload
from assertree.inputs.resources import load_resources

DATA = Path(__file__).resolve().parents[1] / "data" / "real-world"


def run(args, capsys, monkeypatch, cwd=DATA):
    monkeypatch.chdir(cwd)
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


# -- YAML as kyverno-json (gopkg.in/yaml.v3) reads payloads ----------------------------------------


def test_github_workflow_keeps_its_on_key_and_yes_no_strings():
    workflow = read_payload(str(DATA / "github-workflow.yaml")).value
    assert workflow["on"] == {"push": {"branches": ["main"]}, "pull_request": None}
    assert True not in workflow  # YAML 1.1 would have made `on:` the boolean key true
    assert workflow["jobs"]["test"]["steps"][-1]["continue-on-error"] == "no"
    # to_string(@) used to leak a Python TypeError on the boolean key
    assert json.loads(jp.compile("to_string(@)").search(workflow))["on"]["push"] == {"branches": ["main"]}


def test_only_true_and_false_are_booleans():
    config = read_payload(str(DATA / "k8s" / "config.yaml")).value
    assert config["data"] == {"country": "NO", "debug": "off", "enabled": "yes"}
    loaded = yaml.load("[true, True, TRUE, false, y, n, yes, no, on, off, Yes, ~, null, '']", Loader=PayloadLoader)
    assert loaded == [True, True, True, False, "y", "n", "yes", "no", "on", "off", "Yes", None, None, ""]


def test_numbers_as_yaml_v3_reads_them():
    # yaml.v3's resolver: Go's base prefixes, underscores dropped, 017 still octal (yaml.v3 keeps that
    # for compatibility), no sexagesimal numbers, and values too big for 64 bits become floats
    cases = {"12": 12, "-3": -3, "0x1F": 31, "0o17": 15, "0b101": 5, "017": 15, "1_000": 1000, "0.5": 0.5,
             ".5": 0.5, "1e3": 1000.0, "1:30": "1:30", "0789": 789.0, "12345678901234567890123": 1.2345678901234568e22}
    for text, expected in cases.items():
        value = yaml.load(f"v: {text}", Loader=PayloadLoader)["v"]
        assert value == expected and type(value) is type(expected), text
        assert go_yaml_number(text) == expected
    assert yaml.load("[.inf, -.Inf, 2001-12-14]", Loader=PayloadLoader) == [float("inf"), float("-inf"), "2001-12-14"]


def test_openapi_response_codes_are_string_keys():
    document = read_payload(str(DATA / "openapi.yaml")).value
    responses = document["paths"]["/pets"]["get"]["responses"]
    assert list(responses) == ["200", "404"]
    assert jp.compile('paths."/pets".get.responses."200".description').search(document) == "the pets"
    keys = yaml.load("1: a\ntrue: b\nnull: c\n1.5: d\n", Loader=PayloadLoader)
    assert keys == {"1": "a", "true": "b", "null": "c", "1.5": "d"}


def test_cloudformation_short_tags_are_the_values_they_tag():
    template = read_payload(str(DATA / "cloudformation.yaml")).value
    assert template["Resources"]["LogsPolicy"]["Properties"]["Bucket"] == "Logs"
    assert template["Resources"]["Logs"]["Properties"]["BucketName"] == "logs-${Env}"
    assert template["Outputs"]["Arn"]["Value"] == ["Logs", "Arn"]
    statement = template["Resources"]["LogsPolicy"]["Properties"]["PolicyDocument"]["Statement"][0]
    assert statement["Resource"] == "Logs.Arn" and statement["Condition"]["Bool"]["aws:SecureTransport"] is False


def test_real_world_documents_pass_their_policies(capsys, monkeypatch):
    code, out, _ = run(["scan", "github-workflow.yaml", "openapi.yaml", "cloudformation.yaml",
                        "--policy", "policies/workflow.yaml", "--policy", "policies/openapi.yaml",
                        "--policy", "policies/cloudformation.yaml"], capsys, monkeypatch)
    assert code == 0, out
    assert out.splitlines()[-1] == (
        "Checked 3 resources against 3 policies (3 rules): 3 passed, 0 failed, 0 errored, 0 skipped")


def test_repeated_keys_in_a_yaml_payload_are_a_located_error(tmp_path):
    (tmp_path / "dup.yaml").write_text("metadata:\n  name: a\n  labels: {}\n  name: b\n")
    with pytest.raises(PayloadError) as caught:
        read_payload(str(tmp_path / "dup.yaml"))
    assert str(caught.value) == (
        f"{tmp_path / 'dup.yaml'}:4:3: invalid YAML: duplicate key 'name' (first defined on line 2)")
    # a key written once as a number and once as a string is the same JSON key
    (tmp_path / "dup2.yaml").write_text("200: a\n'200': b\n")
    with pytest.raises(PayloadError, match="duplicate key '200'"):
        read_payload(str(tmp_path / "dup2.yaml"))
    # JSON keeps the last value, as orjson and Go's encoding/json do
    (tmp_path / "dup.json").write_text('{"name": "a", "name": "b"}')
    assert read_payload(str(tmp_path / "dup.json")).value == {"name": "b"}


def test_positions_follow_the_same_reading():
    documents = load_documents(DATA / "openapi.yaml", payload=True)
    assert documents[0].locate(("paths", "/pets", "get", "responses", "200")) == (12, 9)


# -- encodings --------------------------------------------------------------------------------------


@pytest.mark.parametrize("encoding", ["utf-8-sig", "utf-16", "utf-16-le", "utf-16-be", "utf-32", "utf-32-le"])
@pytest.mark.parametrize("name", ["p.json", "p.yaml", "-"])
def test_unicode_encodings_are_decoded(encoding, name, tmp_path):
    text = '{"owner": "Søren", "tags": ["ü"]}' if name != "p.yaml" else "owner: Søren\ntags: [ü]\n"
    data = text.encode(encoding)
    if name == "-":
        value = read_payload("-", stdin=io.BytesIO(data)).value
    else:
        (tmp_path / name).write_bytes(data)
        value = read_payload(str(tmp_path / name)).value
    assert value == {"owner": "Søren", "tags": ["ü"]}


def test_a_utf16_plan_from_powershell(capsys, monkeypatch):
    assert (DATA / "plan-utf16.json").read_bytes()[:2] == b"\xff\xfe"
    code, out, _ = run(["scan", "--terraform", "plan-utf16.json", "--policy", "policies/s3-team-tag.yaml"],
                       capsys, monkeypatch)
    assert code == 1
    assert "- FAILED (POLICY=s3-team-tag, RULE=team-tag, ID=aws_s3_bucket.tmp)" in out
    code, out, _ = run(["scan", "--terraform", "plan-utf16.json", "--policy", "policies/s3-team-tag.yaml",
                        "-o", "github"], capsys, monkeypatch)
    # the line and column of "tags": {} (where team is missing), counted in the decoded text
    assert out.startswith("::error file=plan-utf16.json,line=29,col=13,")


def test_undecodable_files_name_the_encoding(tmp_path):
    (tmp_path / "bad16.json").write_bytes(b"\xff\xfe" + '{"a": "'.encode("utf-16-le") + b"\x00\xd8" + b'"\x00}\x00')
    with pytest.raises(PayloadError) as caught:
        read_payload(str(tmp_path / "bad16.json"))
    assert "payload is not valid UTF-16 text (byte 16): save the file as UTF-8" in str(caught.value)
    (tmp_path / "latin1.yaml").write_bytes(b"a: 1\nname: caf\xe9\n")
    with pytest.raises(PayloadError, match=r"latin1.yaml:2:10: payload is not UTF-8 text \(byte 14\)"):
        read_payload(str(tmp_path / "latin1.yaml"))


# -- one bad file never stops a scan ---------------------------------------------------------------


def test_a_directory_with_a_helm_template_and_a_comment_only_file(capsys, monkeypatch):
    code, out, err = run(["scan", "k8s/", "--policy", "policies/images.yaml"], capsys, monkeypatch)
    assert code == 2  # bad input, reported at the end, after every other file was checked
    lines = out.splitlines()
    template = next(line for line in lines if "k8s/templates/deployment.yaml" in line)
    assert template.startswith("- ERROR: k8s/templates/deployment.yaml:1:3: invalid YAML: ")  # then libyaml's reason
    assert template.endswith("(this looks like an unrendered template: render it first, or leave it out with "
                             "--exclude)")
    assert "- PASSED (POLICY=pinned-images, RULE=locale-norway, ID=locale, SOURCE=k8s/config.yaml)" in lines
    assert "- FAILED (POLICY=pinned-images, RULE=no-latest, ID=web, SOURCE=k8s/deployment.yaml)" in lines
    assert "kustomization-notes" not in out  # comment-only: no resource, no error
    assert lines[-1] == ("Checked 3 resources against 1 policy (2 rules): 1 passed, 1 failed, 0 errored, 0 skipped; "
                         "1 file could not be read")
    # like every input problem that exits 2, the file's error is also one line on stderr
    assert err.splitlines()[0].startswith("assertree: error: k8s/templates/deployment.yaml:1:3: invalid YAML")


@pytest.mark.parametrize("format_name", ["json", "sarif", "junit", "github"])
def test_every_format_reports_the_unreadable_file(format_name, capsys, monkeypatch):
    code, out, err = run(["scan", "k8s/", "--policy", "policies/images.yaml", "-o", format_name], capsys, monkeypatch)
    assert code == 2
    where = "k8s/templates/deployment.yaml"
    if format_name == "json":
        report = json.loads(out)
        assert report["fileErrors"][0]["source"] == where and report["fileErrors"][0]["line"] == 1
        assert report["summary"]["fileErrors"] == 1 and report["summary"]["failed"] == 1
    elif format_name == "sarif":
        invocation = json.loads(out)["runs"][0]["invocations"][0]
        assert invocation["executionSuccessful"] is False
        notification = invocation["toolExecutionNotifications"][0]
        assert notification["level"] == "error" and "unrendered template" in notification["message"]["text"]
        assert notification["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == where
    elif format_name == "junit":
        assert f'<testcase classname="payload files" name="{where}">' in out and 'type="unreadable-file"' in out
    else:
        assert out.startswith(f"::error file={where},line=1,col=3,title=assertree%3A cannot read this file::")
    # the file error reaches the terminal on stderr; and the totals too when the report is not text or github
    assert f"assertree: error: {where}:1:3: invalid YAML" in err
    if format_name != "github":
        assert "assertree: Checked 3 resources against 1 policy (2 rules)" in err


def test_library_keeps_problems_as_data():
    loaded = load_resources([str(DATA / "k8s")])
    assert [problem.location.line for problem in loaded.problems] == [1]
    assert loaded.problems[0].location.source.endswith("templates/deployment.yaml")
    assert len(loaded.resources) == 3


def test_json_with_comments_and_empty_json_files(tmp_path, capsys, monkeypatch):
    (tmp_path / "tsconfig.json").write_text('{\n  // the compiler options\n  "strict": true\n}\n')
    (tmp_path / "empty.json").write_text("")
    (tmp_path / "ok.json").write_text('{"kind": "Deployment", "metadata": {"name": "x"}}')
    (tmp_path / "p.yaml").write_text((DATA / "policies" / "images.yaml").read_text())
    code, out, _ = run(["scan", ".", "--policy", "p.yaml", "-q"], capsys, monkeypatch, cwd=tmp_path)
    assert code == 2
    tsconfig = next(line for line in out.splitlines() if "tsconfig.json" in line)
    assert tsconfig.startswith("- ERROR: tsconfig.json:2:3: invalid JSON: ")  # then orjson's reason
    assert tsconfig.endswith("(JSON has no comments: remove them, or exclude the file)")
    assert "- ERROR: empty.json: empty file: a .json file must hold a JSON value" in out.splitlines()


def test_template_detection_ignores_quoted_actions():
    assert looks_like_template("replicas: {{ .Values.replicas }}\n")
    assert looks_like_template("{{- if .Values.enabled }}\nkind: Pod\n")
    assert not looks_like_template('image: "{{ .Values.image }}"\nmessage: \'{{ x }}\'\n# {{ comment }}\n')


def test_a_terraform_state_given_to_terraform_gets_a_hint(tmp_path, capsys, monkeypatch):
    (tmp_path / "terraform.tfstate.json").write_text(json.dumps(
        {"version": 4, "terraform_version": "1.9.8", "serial": 3, "lineage": "x", "outputs": {}, "resources": []}))
    (tmp_path / "p.yaml").write_text((DATA / "policies" / "s3-team-tag.yaml").read_text())
    code, out, _ = run(["scan", "--terraform", "terraform.tfstate.json", "--policy", "p.yaml"], capsys, monkeypatch,
                       cwd=tmp_path)
    assert code == 2
    assert "- ERROR: terraform.tfstate.json: this is a Terraform state, not a plan" in out
    assert "--pre-process 'values.root_module.resources'" in out


def test_an_explicit_tag_that_does_not_fit_is_a_located_yaml_error():
    from assertree.errors import DocumentError

    with pytest.raises(DocumentError, match=r"p.yaml:2:10: invalid YAML: cannot read '\.5' as int"):
        load_documents("p.yaml", "a: 1\npattern: !!int .5\n")
    assert load_documents("p.yaml", "a: !!int 5\n")[0].value == {"a": 5}
