"""``samples/migrate`` is what ``assertree migrate`` writes: the converted policies, the rewritten test and the
report are made afresh from ``samples/migrate/policies`` and compared file by file, and the migrated sample's
own test passes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from assertree.cli import main
from assertree.migrate import migrate

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "samples" / "migrate"


def files(folder: Path) -> dict[str, str]:
    return {path.relative_to(folder).as_posix(): path.read_text() for path in sorted(folder.rglob("*"))
            if path.is_file()}


@pytest.mark.parametrize("to", ["validating", "vap"])
def test_the_sample_migrates_verified(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, to: str) -> None:
    monkeypatch.chdir(REPO)
    report = migrate(["samples/migrate/policies"], tmp_path / "migrated", to=to)
    statuses = [rule.status for policy in report.policies for rule in policy.rules]
    assert statuses == ["verified"] * 4 and report.all_verified and report.tests_failed == 0
    if to == "validating":
        assert files(tmp_path / "migrated") == files(SAMPLE / "migrated")
        assert json.loads(report.json_text()) == json.loads((SAMPLE / "report.json").read_text())
    else:
        kinds = {document.split("\nkind: ", 1)[1].split("\n", 1)[0]
                 for document in (tmp_path / "migrated" / "require-team-label.yaml").read_text().split("---")
                 if "\nkind: " in document}
        assert kinds == {"ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"}


def test_the_migrated_sample_passes_its_rewritten_test(monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(REPO)
    assert main(["test", "samples/migrate/migrated"]) == 0
    assert "8 tests passed and 0 tests failed" in capsys.readouterr().out


def test_sources_without_a_kyverno_policy_are_an_error_not_a_success(tmp_path: Path, capsys) -> None:
    """Nothing migrated is exit 2 with one line naming the sources, as a file that cannot be read is."""
    source = tmp_path / "policies"
    source.mkdir()
    (source / "policy.yaml").write_text(
        "apiVersion: json.kyverno.io/v1alpha1\nkind: ValidatingPolicy\nmetadata:\n  name: p\nspec:\n  rules: []\n")
    code = main(["migrate", str(source), "--out", str(tmp_path / "out")])
    assert code == 2
    assert f"no ClusterPolicy or Policy found in {source}: nothing to migrate" in capsys.readouterr().err


def test_a_test_file_that_cannot_be_read_is_named_with_its_line_and_field(tmp_path: Path, capsys) -> None:
    """A kyverno-test.yaml with a field Kyverno does not read: one line naming file, line and field, exit 2."""
    source = tmp_path / "src"
    source.mkdir()
    (source / "policy.yaml").write_text((SAMPLE / "policies" / "require-team-label.yaml").read_text())
    (source / "kyverno-test.yaml").write_text(
        "apiVersion: cli.kyverno.io/v1alpha1\nkind: Test\nmetadata:\n  name: t\npolicies: [policy.yaml]\n"
        "resources: [pods.yaml]\nresults:\n- policy: require-team-label\n  resource: bad\n  kind: Pod\n"
        "  result: fail\n")
    assert main(["migrate", str(source), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert f"{source / 'kyverno-test.yaml'}:9:3: results[0].resource: unknown field 'resource'" in err


def test_two_sources_that_would_write_the_same_file_are_refused(tmp_path: Path, capsys) -> None:
    """``migrate a b`` with ``a/p.yaml`` and ``b/p.yaml``: one conversion would silently replace the other."""
    policy = (SAMPLE / "policies" / "require-team-label.yaml").read_text()
    for folder, name in (("a", "require-team-label"), ("b", "other-team-label")):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "p.yaml").write_text(policy.replace("name: require-team-label", f"name: {name}"))
    out = tmp_path / "out"
    assert main(["migrate", str(tmp_path / "a"), str(tmp_path / "b"), "--out", str(out)]) == 2
    assert f"{tmp_path / 'a' / 'p.yaml'} and {tmp_path / 'b' / 'p.yaml'} would both be written to {out / 'p.yaml'}" \
        in capsys.readouterr().err
    assert not out.exists()


def test_two_sources_holding_the_same_other_file_copy_it_once_with_a_note(tmp_path: Path, capsys) -> None:
    """A README (or kustomization) in each of two SRC folders is copied once; when they differ, a note."""
    policy = (SAMPLE / "policies" / "require-team-label.yaml").read_text()
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / f"{folder}.yaml").write_text(
            policy.replace("name: require-team-label", f"name: {folder}-team-label"))
        (tmp_path / folder / "README.md").write_text(f"folder {folder}\n")
    out = tmp_path / "out"
    assert main(["migrate", str(tmp_path / "a"), str(tmp_path / "b"), "--out", str(out)]) == 0
    assert (out / "README.md").read_text() == "folder a\n"
    assert sorted(path.name for path in out.iterdir()) == ["README.md", "a.yaml", "b.yaml"]
    note = f"{tmp_path / 'b' / 'README.md'} is not copied: {tmp_path / 'a' / 'README.md'} is written to {out}"
    assert note in capsys.readouterr().out


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


POLICY = """apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: protect}
spec:
  rules:
    - name: no-changes
      match: {any: [{resources: {kinds: [ConfigMap]}}]}
      validate:
        deny:
          conditions:
            all: [{key: "{{request.operation}}", operator: Equals, value: UPDATE}]
"""


@pytest.mark.parametrize(("rows", "values", "left"), [
    # every row names a rule the policy lacks: kyverno test passes them whatever the policy does
    ("- {policy: protect, rule: no-such-rule, resources: [cm], result: pass}\n", None, None),
    # the values give every row's resource UPDATE: the rows move to a Test of their own, the first is empty
    ("- {policy: protect, rule: no-changes, resources: [cm], result: fail}\n",
     ("apiVersion: cli.kyverno.io/v1alpha1\nkind: Values\npolicies:\n- name: protect\n  resources:\n"
      "  - name: cm\n    values: {request.operation: UPDATE}\n"), "protect-update"),
])
def test_a_test_left_with_no_row_is_not_written(tmp_path: Path, rows: str, values: str | None,
                                                left: str | None) -> None:
    source = tmp_path / "src"
    _write(source / "protect.yaml", POLICY)
    _write(source / "test" / "cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm, namespace: x}\n")
    test = ("apiVersion: cli.kyverno.io/v1alpha1\nkind: Test\nmetadata: {name: protect}\npolicies: [../protect.yaml]\n"
            "resources: [cm.yaml]\n" + ("variables: values.yaml\n" if values else "") + "results:\n" + rows)
    _write(source / "test" / "kyverno-test.yaml", test)
    if values:
        _write(source / "test" / "values.yaml", values)
    report = migrate([source], tmp_path / "out")
    written = tmp_path / "out" / "test" / "kyverno-test.yaml"
    assert any("Test protect left out: none of its rows is left for it to check" in note for note in report.notes)
    assert report.tests_failed == 0
    if left is None:
        assert not written.exists() and report.tests == ""
    else:
        assert [document["metadata"]["name"] for document in yaml.safe_load_all(written.read_text())] == [left]
        assert report.tests == "Test Summary: 1 tests passed and 0 tests failed"


def test_without_the_cel_extra_migrate_says_what_to_install(tmp_path: Path, monkeypatch, capsys) -> None:
    """Without cel-expr-python nothing can be converted or proven: one line naming the extra, exit 2, nothing
    written."""
    from assertree.languages.cel import engine

    monkeypatch.setattr(engine, "available", lambda: False)
    out = tmp_path / "out"
    assert main(["migrate", str(SAMPLE / "policies"), "--out", str(out)]) == 2
    assert capsys.readouterr().err == ("assertree: error: migrate writes and proves CEL policies; CEL expressions "
                                       "need the cel extra: pip install 'assertree[cel]'\n")
    assert not out.exists()
