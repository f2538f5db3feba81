"""Policies users can trust: the loader's peer cases, the schema against kyverno-json's CRD, and lint."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
import yaml
from conftest import CONFORMANCE

from assertree.cli import main
from assertree.errors import PolicyError
from assertree.languages.kyverno_json.schema import schema
from assertree.languages.load import load_policies

REPO = Path(__file__).resolve().parents[1]
LOADER = CONFORMANCE / "kyverno-json" / "policies"
LOADER_ROWS = json.loads((LOADER / "manifest.json").read_text())
CRD = CONFORMANCE / "kyverno-json" / "schema" / "json.kyverno.io_validatingpolicies.yaml"

# What each of kyverno-json's loader error kinds looks like in assertree's message.
ERROR_WORDING = {
    "unsupported_kind": "unsupported document",
    "file_not_found": "not found",
    "required": "required field is missing",
    "unknown_field": "unknown field",
}


# -- kyverno-json's loader cases ------------------------------------------------------------------


@pytest.mark.parametrize("row", LOADER_ROWS, ids=[row["name"] for row in LOADER_ROWS])
def test_kyverno_json_loader_case(row):
    path = LOADER / row["file"]
    if not row["want_error"]:
        policies = load_policies(path)
        assert len(policies) == row["policies"]
        if row.get("expected_policies"):
            assert [p.policy.name for p in policies] == [p["metadata"]["name"] for p in row["expected_policies"]]
        return
    with pytest.raises(PolicyError) as caught:
        load_policies(path)
    message = str(caught.value)
    assert ERROR_WORDING[row["error_kind"]] in message
    assert str(path) in message
    if row.get("error_field"):
        assert f"{row['error_field']}:" in message


# -- the JSON Schema against kyverno-json's CRD ---------------------------------------------------


def _resolve(node: dict) -> dict:
    while "$ref" in node:
        node = schema()["$defs"][node["$ref"].rsplit("/", 1)[-1]]
    return node


def _compare(crd: dict, ours: dict, where: str, visited: list[str]) -> None:
    ours = _resolve(ours)
    visited.append(where)
    if crd.get("x-kubernetes-preserve-unknown-fields"):
        return  # assertion trees and free-form values: any JSON
    if "enum" in crd:
        assert sorted(ours.get("enum", [])) == sorted(crd["enum"]), where
    if "properties" in crd:
        assert set(ours["properties"]) == set(crd["properties"]), where
        required = set(ours.get("required", []))
        if where:
            assert required == set(crd.get("required", [])), where
        else:  # the CRD leaves apiVersion, kind and metadata to the API server; a file must say them
            assert required == set(crd["required"]) | {"apiVersion", "kind", "metadata"}
        assert ours.get("additionalProperties") is False, f"{where}: unknown fields must be rejected"
        for name, child in crd["properties"].items():
            _compare(child, ours["properties"][name], f"{where}.{name}", visited)
    if "items" in crd:
        _compare(crd["items"], ours["items"], f"{where}[]", visited)


def test_schema_accepts_the_same_fields_as_kyverno_jsons_crd():
    crd = yaml.safe_load(CRD.read_text())["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    free_metadata = {"x-kubernetes-preserve-unknown-fields": True}  # the API server's ObjectMeta
    crd_without_metadata = {**crd, "properties": {**crd["properties"], "metadata": free_metadata}}
    visited: list[str] = []
    _compare(crd_without_metadata, schema(), "", visited)
    assert ".spec.rules[].assert.all[].check" in visited and ".spec.rules[].context[].variable" in visited


def test_schema_ships_inside_the_package_unchanged():
    shipped = REPO / "assertree" / "schemas" / "validatingpolicy.v1alpha1.json"
    documented = REPO / "schemas" / "validatingpolicy.v1alpha1.json"
    assert shipped.read_bytes() == documented.read_bytes()
    assert json.loads(shipped.read_text())["$schema"] == "https://json-schema.org/draft/2020-12/schema"


def test_the_docs_show_the_editor_schema_line():
    assert "# yaml-language-server: $schema=" in (REPO / "docs" / "lint.md").read_text()


# -- assertree lint -------------------------------------------------------------------------------


BROKEN = """\
apiVersion: json.kyverno.io/v1alpha1
kind: ValidatingPolicy
metadata:
  name: broken
spec:
  rules:
    - name: one
      assert:
        all:
          - check:
              (foo[): true
              (nosuch(@)): true
              (length(@, @)): true
              ~.(length(@)):
                a: 1
    - name: one
      assert:
        all:
          - check:
              ($later): 1
              name->later: {}
"""


def test_lint_reports_every_problem_with_its_line(tmp_path, capsys):
    (tmp_path / "broken.yaml").write_text(BROKEN)
    code = main(["lint", str(tmp_path / "broken.yaml")])
    out, err = capsys.readouterr()
    lines = [line.split(": ", 1)[0].rsplit(":", 2)[1:] + [line] for line in out.splitlines()]
    found = {(int(row), text.split(": ", 2)[2].split(":")[0]) for row, _col, text in lines}
    assert code == 1
    assert found == {
        (11, "spec.rules[0].assert.all[0].check.(foo[)"),
        (12, "spec.rules[0].assert.all[0].check.(nosuch(@))"),
        (13, "spec.rules[0].assert.all[0].check.(length(@, @))"),
        (14, "spec.rules[0].assert.all[0].check.~.(length(@))"),
        (16, "spec.rules[1].name"),
        (20, "spec.rules[1].assert.all[0].check.($later)"),
        (21, "spec.rules[1].assert.all[0].check.name->later"),
    }
    assert "expected an index" in out and "unknown function: nosuch()" in out
    assert "expects 1 argument but 2 were supplied" in out and "foreach needs a list or a map" in out
    assert "duplicate rule name 'one'" in out and "is not visible here" in out and "never used" in out
    assert "1 policy file checked: 6 errors, 1 warning" in err


def test_lint_reports_every_schema_problem(tmp_path, capsys):
    (tmp_path / "typos.yaml").write_text(textwrap.dedent("""\
        apiVersion: json.kyverno.io/v1alpha1
        kind: ValidatingPolicy
        metadata:
          name: typos
        spec:
          rules:
            - name: one
              assrt: {}
              assert:
                all:
                  - check: {a: 1}
                    mesage: typo
        """))
    assert main(["lint", str(tmp_path / "typos.yaml")]) == 1
    out = capsys.readouterr().out
    assert "typos.yaml:8:7: error: spec.rules[0].assrt: unknown field 'assrt' (did you mean 'assert'?)" in out
    assert "typos.yaml:12:13: error: spec.rules[0].assert.all[0].mesage: unknown field 'mesage'" in out


def test_lint_clean_policies_exit_0(capsys):
    assert main(["lint", *map(str, REPO.glob("samples/*/policies"))]) == 0
    assert capsys.readouterr().out.endswith(" policy files checked: no problems\n")


def test_what_lint_knows_also_stops_scan(tmp_path, capsys):
    (tmp_path / "broken.yaml").write_text(BROKEN)
    (tmp_path / "payload.json").write_text("{}")
    code = main(["scan", str(tmp_path / "payload.json"), "--policy", str(tmp_path / "broken.yaml")])
    err = capsys.readouterr().err
    assert code == 2
    assert len(err.strip().splitlines()) == 1 and "broken.yaml:11:15" in err


@pytest.mark.parametrize("text", [
    "apiVersion: json.kyverno.io/v1alpha1\nkind: ValidatingPolicy\nmetadata: {name: p}\nspec:\n  rules: [{name: r}]\n",
    "- not a mapping\n",
    "apiVersion: [\n",
])
def test_lint_never_raises(tmp_path, capsys, text):
    (tmp_path / "p.yaml").write_text(textwrap.dedent(text))
    assert main(["lint", str(tmp_path / "p.yaml")]) == 1
    out, err = capsys.readouterr()
    assert "p.yaml:" in out and "Traceback" not in out + err


def test_lint_reports_schema_and_expression_problems_of_a_file_in_one_pass(tmp_path, capsys):
    from assertree.cli import main

    path = tmp_path / "policy.yaml"
    path.write_text(
        "apiVersion: json.kyverno.io/v1alpha1\nkind: ValidatingPolicy\nmetadata:\n  name: x\nspec:\n  rules:\n"
        "  - name: r\n    unknownField: 1\n    assert:\n      all:\n      - check:\n          \"(foo[)\": 1\n"
    )
    assert main(["lint", str(path)]) == 1
    out = capsys.readouterr().out
    assert "policy.yaml:8:5: error: spec.rules[0].unknownField: unknown field 'unknownField'" in out
    assert "policy.yaml:12:11: error: spec.rules[0].assert.all[0].check.(foo[): invalid expression 'foo['" in out


def test_policy_directories_skip_hidden_test_folders(tmp_path):
    from assertree.languages.load import policy_files

    (tmp_path / ".kyverno-test").mkdir()
    (tmp_path / ".kyverno-test" / "kyverno-test.yaml").write_text("apiVersion: cli.kyverno.io/v1alpha1\nkind: Test\n")
    (tmp_path / "policy.yaml").write_text("kind: ClusterPolicy\n")
    assert policy_files([tmp_path]) == [tmp_path / "policy.yaml"]
    assert policy_files([tmp_path / ".kyverno-test" / "kyverno-test.yaml"])  # named on purpose: read


@pytest.mark.parametrize("at", [0, (1 << 20) - 5, 3 << 20])
def test_lint_finds_a_policy_marker_anywhere_in_a_large_file_found_in_a_directory(tmp_path, capsys, at):
    """Whether a file found in a directory may be a policy is decided reading it in chunks (a repository
    may hold a plan of gigabytes), so a marker across two chunks still counts."""
    text = bytearray(b" " * (4 << 20))
    text[at:at + len(b"ClusterPolicy")] = b"ClusterPolicy"
    (tmp_path / "big.yaml").write_bytes(b'a: "\n' + bytes(text) + b"\n")  # not YAML: said once it is read
    (tmp_path / "payload.json").write_text('{"no": "policy here"}')
    assert main(["lint", str(tmp_path)]) == 1  # big.yaml is read (it names a policy kind), payload.json skipped
    out = capsys.readouterr().out
    assert "big.yaml" in out and "error: invalid YAML" in out and "payload.json" not in out
