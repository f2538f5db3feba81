"""``assertree apply``: the sample fixes as a diff, written files that scan better, exit codes, bad input."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

import assertree
from assertree import cli
from assertree.cli.apply import EXAMPLES, apply

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "samples" / "kubernetes"
BAD = SAMPLES / "deployment-bad.yaml"
GOOD = SAMPLES / "deployment-good.yaml"
MUTATE = SAMPLES / "mutate"
CHECKS = SAMPLES / "policies"


def command(name: str | None = None) -> typer.Typer:
    app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)
    app.command("apply", epilog=EXAMPLES)(apply)
    return app


@pytest.fixture
def run(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):
    """``assertree apply ARGS`` through `assertree.cli.main` (its exit codes and one-line errors), with the
    command registered as the lead will register it; returns (exit code, stdout, stderr)."""
    monkeypatch.setattr(cli, "build_app", command)

    def invoke(*args: object, stdin: str | None = None) -> tuple[int, str, str]:
        if stdin is not None:
            import io
            import sys

            monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
        code = cli.main([str(arg) for arg in args])
        out, err = capsys.readouterr()
        return code, out, err

    return invoke


def deployment_policy(directory: Path, name: str, mutate: str) -> Path:
    """A file holding a ClusterPolicy `name` with one rule `name` that mutates Deployments as `mutate` says."""
    path = directory / f"{name}.yaml"
    body = "\n".join("        " + line for line in mutate.splitlines())
    path.write_text(f"apiVersion: kyverno.io/v1\nkind: ClusterPolicy\nmetadata: {{name: {name}}}\nspec:\n  rules:\n"
                    f"    - name: {name}\n      match: {{any: [{{resources: {{kinds: [Deployment]}}}}]}}\n"
                    f"      mutate:\n{body}\n")
    return path


def findings(*payloads: Path) -> list[tuple[str, str, str]]:
    """(policy, rule, resource) of every failed rule when the sample checks scan `payloads`."""
    loaded = assertree.load_resources([str(p) for p in payloads])
    result = assertree.scan(loaded.resources, assertree.load_policies(CHECKS))
    return sorted((r.policy.name, r.rule.name, str(r.identifier)) for r in result.results if r.failed)


def test_diff_of_the_bad_sample_shows_a_fix_for_each_finding_the_sample_policies_address(run) -> None:
    code, out, err = run("--diff", "--policy", MUTATE, BAD)
    assert code == 1  # something would change, as with `git diff --exit-code`
    assert out.startswith(f"--- a/{BAD}\n+++ b/{BAD}\n")
    added = [line[1:].strip() for line in out.splitlines() if line.startswith("+") and not line.startswith("+++")]
    removed = [line[1:].strip() for line in out.splitlines() if line.startswith("-") and not line.startswith("---")]
    assert "team: unassigned" in added  # required-labels
    assert removed.count("privileged: true") == 1 and "privileged: false" in added  # no-privileged
    assert [line for line in added if line in ("cpu: 500m", "memory: 512Mi")] == ["cpu: 500m", "memory: 512Mi"]
    assert removed == ["privileged: true", "limits: {cpu: 500m, memory: 4Gi}"]
    assert "limits: {cpu: 500m, memory: 2Gi}" in added  # resource-limits: at most 2Gi
    assert "deployment-bad.yaml#0: Deployment/legacy-batch: mutated by fix-workloads/add-required-labels" in err
    assert "deployment-bad.yaml#1: DaemonSet/node-agent: mutated by cap-memory-limits/cap-memory" in err


def test_applied_output_has_fewer_findings_and_only_the_image_tags_are_left(run, tmp_path: Path) -> None:
    before = findings(BAD)
    code, _, _ = run("--policy", MUTATE, "-o", tmp_path, BAD)
    assert code == 0
    after = findings(tmp_path / BAD.name)
    assert len(after) < len(before)
    assert set(after) < set(before)
    assert {policy for policy, _, _ in after} == {"no-latest-tag"}  # a tag cannot be made up by a rule


def test_applying_twice_changes_nothing_more(run, tmp_path: Path) -> None:
    copy = tmp_path / "deploy.yaml"
    shutil.copy(BAD, copy)
    assert run("--in-place", "--policy", MUTATE, copy)[0] == 0
    assert copy.read_text() != BAD.read_text()
    code, out, err = run("--diff", "--policy", MUTATE, copy)
    assert (code, out) == (0, "")
    assert "no resource changed" in err


def test_a_good_file_is_left_alone(run) -> None:
    code, out, _err = run("--diff", "--policy", MUTATE, GOOD)
    assert (code, out) == (0, "")


def test_stdout_gets_every_file_whole_separated_by_document_markers(run) -> None:
    from assertree.apply import apply_to_files, load_mutate_policies

    loaded = load_mutate_policies([MUTATE])
    bad, good = apply_to_files([BAD, GOOD], loaded.policies, context=loaded.context)
    code, out, _ = run("--policy", MUTATE, BAD, GOOD)
    assert code == 0
    assert out == bad.new_text + "---\n" + GOOD.read_text()
    assert bad.changed and not good.changed and out.startswith("# Two workloads in one stream")


def test_standard_input_can_be_fixed_to_stdout(run) -> None:
    code, out, _ = run("--policy", MUTATE, "-", stdin=BAD.read_text())
    assert code == 0 and "privileged: false" in out and "memory: 2Gi" in out


def test_output_directory_mirrors_directory_arguments(run, tmp_path: Path) -> None:
    source = tmp_path / "in"
    (source / "apps").mkdir(parents=True)
    shutil.copy(BAD, source / "apps" / "bad.yaml")
    shutil.copy(GOOD, source / "good.yaml")
    code, _, _ = run("--policy", MUTATE, "-o", tmp_path / "out", source)
    assert code == 0
    assert (tmp_path / "out" / "good.yaml").read_text() == GOOD.read_text()  # unchanged files are copied too
    assert "team: unassigned" in (tmp_path / "out" / "apps" / "bad.yaml").read_text()


def test_a_rule_that_cannot_patch_is_reported_and_exits_1(run, tmp_path: Path) -> None:
    broken = deployment_policy(tmp_path, "broken",
                               "patchesJson6902: |-\n  - {op: test, path: /metadata/name, value: nobody}")
    code, out, err = run("--policy", broken, BAD)
    assert code == 1
    assert out == BAD.read_text()
    assert f"assertree: error: {BAD}#0: Deployment/legacy-batch: broken/broken: " in err


@pytest.mark.parametrize(("args", "message"), [
    (["--policy", MUTATE, "missing.yaml"], "missing.yaml: payload file not found"),
    (["--policy", CHECKS, BAD], "no policy with mutate or generate rules in"),
    (["--diff", "--in-place", "--policy", MUTATE, BAD], "choose one of -o/--output, --diff and --in-place"),
    ([BAD], "give at least one --policy"),
    (["--in-place", "--policy", MUTATE, "-"],
     "standard input ('-') can only be written to stdout, to one -o FILE or diffed"),
])
def test_bad_input_exits_2_with_one_line(run, args: list, message: str) -> None:
    code, out, err = run(*args)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("assertree: error: ") and message in err


def test_a_broken_policy_names_its_file_and_line(run, tmp_path: Path) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_text("apiVersion: kyverno.io/v1\nkind: ClusterPolicy\nmetadata: {name: p}\nspec:\n  rules:\n"
                      "    - name: r\n      match: {any: [{resources: {kinds: [Pod]}}]}\n      mutate: {nope: 1}\n")
    code, _, err = run("--policy", policy, BAD)
    assert code == 2 and err.count("\n") == 1
    assert err.startswith(f"assertree: error: {policy}:")


def test_a_resource_file_that_is_not_yaml_names_the_line(run, tmp_path: Path) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text("kind: Pod\nmetadata: [unclosed\n")
    code, _, err = run("--policy", MUTATE, broken)
    assert code == 2 and err.startswith(f"assertree: error: {broken}:") and err.count("\n") == 1


def test_output_directory_may_not_overwrite_an_input(run, tmp_path: Path) -> None:
    copy = tmp_path / "deploy.yaml"
    shutil.copy(BAD, copy)
    code, _, err = run("--policy", MUTATE, "-o", tmp_path, copy)
    assert code == 2 and "use --in-place" in err and copy.read_text() == BAD.read_text()


def test_the_command_runs_under_typer_alone() -> None:
    result = CliRunner().invoke(command(), ["--diff", "--policy", str(MUTATE), str(BAD)])
    assert result.exit_code == 1 and "+    team: unassigned" in result.output
    help_text = CliRunner().invoke(command(), ["--help"]).output
    assert "--diff" in help_text and "Examples:" in help_text


def test_a_values_file_fills_in_variables(run, tmp_path: Path) -> None:
    policy = deployment_policy(tmp_path, "owner", 'patchStrategicMerge: {metadata: {labels: {+(team): "{{ owner }}"}}}')
    values = tmp_path / "values.yaml"
    values.write_text("apiVersion: cli.kyverno.io/v1alpha1\nkind: Values\nglobalValues:\n  owner: payments\n")
    code, out, _ = run("--diff", "--policy", policy, "--values", values, BAD)
    assert code == 1 and "+    team: payments\n" in out
    code, _, err = run("--diff", "--policy", policy, BAD)  # without it the variable cannot be resolved
    assert code == 1 and "owner/owner" in err and "assertree: error:" in err
