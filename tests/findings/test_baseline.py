"""Baselines: written once, then only new findings fail, in every report, through edits that keep findings."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from assertree.cli import main

KYVERNO_POLICY = """\
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: require-team-label
  annotations:
    policies.kyverno.io/severity: medium
spec:
  validationFailureAction: Enforce
  rules:
  - name: team-label
    match: {any: [{resources: {kinds: [Deployment, Service]}}]}
    validate:
      message: "{{ request.object.metadata.name }} needs a team label"
      pattern:
        metadata:
          labels:
            team: "?*"
"""

JSON_POLICY = """\
apiVersion: json.kyverno.io/v1alpha1
kind: ValidatingPolicy
metadata:
  name: replicas
  annotations:
    policies.kyverno.io/severity: high
spec:
  rules:
  - name: at-least-two
    match: {any: [{kind: Deployment}]}
    assert:
      all:
      - message: "{{ metadata.name }} runs fewer than two replicas"
        check:
          spec:
            (replicas >= `2`): true
"""


def deployment(name: str, *, team: str | None = None, replicas: int = 1) -> str:
    labels = f"\n    team: {team}" if team else ""
    return textwrap.dedent(f"""\
        apiVersion: apps/v1
        kind: Deployment
        metadata:
          name: {name}
          labels:
            app: {name}""") + labels + f"\nspec:\n  replicas: {replicas}\n"


def service(name: str) -> str:
    return f"apiVersion: v1\nkind: Service\nmetadata:\n  name: {name}\nspec:\n  ports: [{{port: 80}}]\n"


@pytest.fixture
def repository(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A small repository: two policies, manifests in two folders, several documents per file."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "policies").mkdir()
    (tmp_path / "policies" / "team.yaml").write_text(KYVERNO_POLICY)
    (tmp_path / "policies" / "replicas.yaml").write_text(JSON_POLICY)
    (tmp_path / "apps" / "web").mkdir(parents=True)
    (tmp_path / "apps" / "db").mkdir(parents=True)
    (tmp_path / "apps" / "web" / "all.yaml").write_text("---\n".join(
        [deployment("web"), service("web"), deployment("web-worker", team="shop", replicas=3)]))
    (tmp_path / "apps" / "db" / "db.yaml").write_text("---\n".join([deployment("db", team="data"), service("db")]))
    return tmp_path


def scan(capsys, *args: str) -> tuple[int, str, str]:
    code = main(["scan", "apps/", "--policy", "policies/", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_a_baseline_accepts_todays_findings_and_fails_only_new_ones(repository, capsys):
    code, out, _ = scan(capsys, "-q")
    assert code == 1 and "5 failed" in out  # web: no team and 1 replica; both services: no team; db: 1 replica
    code, _, err = scan(capsys, "--write-baseline", "baseline.json")
    assert code == 0 and "wrote 5 findings to the baseline baseline.json" in err
    code, out, _ = scan(capsys, "--baseline", "baseline.json")
    assert code == 0
    assert out.splitlines()[-1].endswith("0 failed, 0 errored, 0 skipped, 5 baselined")
    assert out.count("- BASELINED (FAILED,") == 5

    # a new finding fails, the known ones stay baselined
    (repository / "apps" / "db" / "cache.yaml").write_text(deployment("cache", team="data"))
    code, out, _ = scan(capsys, "--baseline", "baseline.json", "-q")
    assert code == 1
    assert [line for line in out.splitlines() if line.startswith("- FAILED")] == [
        "- FAILED (POLICY=replicas, RULE=at-least-two, SOURCE=apps/db/cache.yaml)"]
    assert out.splitlines()[-1].endswith("1 failed, 0 errored, 0 skipped, 5 baselined")


def test_reordering_reformatting_and_moving_lines_keep_every_unchanged_finding(repository, capsys):
    assert scan(capsys, "--write-baseline", "baseline.json")[0] == 0
    web = repository / "apps" / "web" / "all.yaml"
    documents = web.read_text().split("---\n")
    # reorder the documents, add comments and blank lines above them, and reflow one into flow style
    reflowed = "# the web tier\n\n" + "---\n".join([
        documents[2],
        "# the public service\n" + json.dumps({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
                                               "spec": {"ports": [{"port": 80}]}}) + "\n",
        "\n\n" + documents[0].replace("spec:\n  replicas: 1\n", "spec: {replicas: 1}\n"),
    ])
    web.write_text(reflowed)
    db = repository / "apps" / "db" / "db.yaml"
    db.write_text("---\n".join(reversed(db.read_text().split("---\n"))))
    code, out, err = scan(capsys, "--baseline", "baseline.json")
    assert code == 0, out
    assert out.splitlines()[-1].endswith("0 failed, 0 errored, 0 skipped, 5 baselined")
    assert "fixed" not in out + err


def test_fixed_findings_are_listed_in_every_format(repository, capsys):
    assert scan(capsys, "--write-baseline", "baseline.json")[0] == 0
    (repository / "apps" / "db" / "db.yaml").write_text("---\n".join([deployment("db", team="data", replicas=2),
                                                                       service("db")]))
    code, out, err = scan(capsys, "--baseline", "baseline.json", "-o", "text", "-o", "json=r.json",
                          "-o", "sarif=r.sarif", "-o", "junit=r.xml")
    assert code == 0
    assert "- FIXED (RULE=replicas/at-least-two, RESOURCE=k8s=apps/Deployment//db, SOURCE=apps/db/db.yaml)" in out
    assert "1 finding of the baseline baseline.json is fixed" in err
    report = json.loads(Path("r.json").read_text())
    assert report["summary"]["baselined"] == 4 and report["summary"]["fixed"] == 1
    assert [entry["rule"] for entry in report["baseline"]["fixed"]] == ["replicas/at-least-two"]
    results = json.loads(Path("r.sarif").read_text())["runs"][0]["results"]
    states = sorted(result["baselineState"] for result in results)
    assert states == ["absent", "unchanged", "unchanged", "unchanged", "unchanged"]
    assert all(result["suppressions"][0]["status"] == "accepted" for result in results
               if result["baselineState"] == "unchanged")
    junit = Path("r.xml").read_text()
    assert junit.count("baselined: in the --baseline file") == 4 and 'failures="0"' in junit


def test_json_and_github_reports_mark_baselined_findings(repository, capsys):
    assert scan(capsys, "--write-baseline", "baseline.json")[0] == 0
    code, out, _ = scan(capsys, "--baseline", "baseline.json", "-o", "json")
    rules = [rule for report in json.loads(out)["reports"] for result in report["results"]
             for rule in result.get("rules", ())]
    failing = [rule for rule in rules if rule["status"] == "fail"]
    assert len(failing) == 5 and all(rule["baselined"] and rule["violations"][0]["baselined"] for rule in failing)
    code, out, _ = scan(capsys, "--baseline", "baseline.json", "-o", "github")
    assert code == 0 and out.count("::notice ") == 5 and "::error " not in out


def test_a_partly_known_result_fails_for_its_new_violation(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "p.yaml").write_text(JSON_POLICY.replace(
        "            (replicas >= `2`): true\n",
        "            (replicas >= `2`): true\n      - message: needs a strategy\n        check:\n"
        "          spec:\n            (strategy != null): true\n"))
    (tmp_path / "d.yaml").write_text(deployment("web") + "  strategy: {type: Recreate}\n")
    assert main(["scan", "d.yaml", "--policy", "p.yaml", "--write-baseline", "b.json"]) == 0
    (tmp_path / "d.yaml").write_text(deployment("web"))
    capsys.readouterr()
    assert main(["scan", "d.yaml", "--policy", "p.yaml", "--baseline", "b.json"]) == 1
    out = capsys.readouterr().out
    assert "- FAILED (POLICY=replicas, RULE=at-least-two)" in out
    assert "runs fewer than two replicas (CHECK=spec.rules[0].assert.all[0]) (baselined)" in out
    assert "needs a strategy (CHECK=spec.rules[0].assert.all[1])\n" in out


@pytest.mark.parametrize(("content", "message"), [
    ("{", "not a baseline file: invalid JSON"),
    ('{"findings": []}', 'not a baseline file (write one with --write-baseline)'),
    ('{"format": "assertree-baseline", "version": 9, "findings": []}', "baseline version 9 is not 1"),
    ('{"format": "assertree-baseline", "version": 1, "findings": [{"rule": "x"}]}', "findings[0]: must be a mapping"),
])
def test_a_bad_baseline_is_one_line_and_exit_2(repository, capsys, content, message):
    Path("bad.json").write_text(content)
    code, out, err = scan(capsys, "--baseline", "bad.json")
    assert code == 2 and out == ""
    assert err.startswith("assertree: error: bad.json: ") and message in err and len(err.splitlines()) == 1


def test_a_missing_baseline_names_the_file(repository, capsys):
    code, _, err = scan(capsys, "--baseline", "nope.json")
    assert code == 2 and "nope.json" in err and len(err.splitlines()) == 1


def test_writing_a_baseline_never_leaves_half_a_file(repository, capsys):
    Path("baseline.json").write_text("previous")
    (repository / "taken").mkdir()
    code, _, err = scan(capsys, "--write-baseline", "taken")
    assert code == 2 and "taken" in err
    assert Path("baseline.json").read_text() == "previous"
