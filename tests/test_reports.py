"""SARIF, JUnit and GitHub reports of real scans: schema-valid, counted right, pointing at the right lines."""

from __future__ import annotations

import io
import json
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from conftest import CONFORMANCE
from jsonschema import Draft4Validator

from assertree import load_policies, read_payload, resources_from, scan
from assertree.cli import main
from assertree.report import render
from assertree.report.github import escape_data, escape_property, overflow_note
from assertree.report.locate import Locator

REPO = Path(__file__).resolve().parents[1]
K8S = REPO / "samples" / "kubernetes"
K8S_POLICIES = [
    K8S / "policies" / name for name in ("no-latest-tag.yaml", "no-privileged.yaml", "required-labels.yaml")
]
TERRAFORM = REPO / "samples" / "terraform-aws"
SARIF_SCHEMA = json.loads((CONFORMANCE / "sarif" / "sarif-schema-2.1.0.json").read_text())


def policy(
    name: str,
    check: str,
    *,
    severity: str | None = None,
    match: str | None = None,
    annotations: dict[str, str] | None = None,
    message: str = "{{ name }} is wrong",
) -> str:
    """A one-rule policy; `check` is the YAML of the assertion tree (two-space indented)."""
    notes = dict(annotations or {})
    if severity:
        notes["policies.kyverno.io/severity"] = severity
    meta = "".join(f"\n    {key}: {json.dumps(value)}" for key, value in notes.items())
    meta = f"\n  annotations:{meta}" if meta else ""
    match_yaml = f"\n      match:\n        any:\n        - {match}" if match else ""
    return (
        f"apiVersion: json.kyverno.io/v1alpha1\nkind: ValidatingPolicy\nmetadata:\n  name: {name}{meta}\n"
        f"spec:\n  rules:\n    - name: check\n      identifier: name{match_yaml}\n      assert:\n        all:\n"
        f"        - message: {json.dumps(message)}\n          check:\n"
        + textwrap.indent(textwrap.dedent(check), " " * 12)
    )


def scan_files(payloads, policies, *, terraform: bool = False):
    """A scan through the library, as the CLI runs it."""
    resources = []
    for path in payloads:
        loaded = read_payload(str(path))
        if terraform:
            from assertree.inputs.terraform import plan_resources

            resources.extend(plan_resources(loaded.value, loaded.source, file=loaded))
        else:
            resources.extend(resources_from(loaded))
    return scan(resources, load_policies(*policies))


def line_of(path: Path, line: int) -> str:
    return path.read_text().splitlines()[line - 1]


def sarif(result) -> dict:
    log = json.loads(render("sarif", result))
    errors = sorted(Draft4Validator(SARIF_SCHEMA).iter_errors(log), key=lambda e: list(e.absolute_path))
    assert not errors, [f"{list(e.absolute_path)}: {e.message}" for e in errors]
    return log


def github_lines(result) -> list[str]:
    return render("github", result).splitlines()


@pytest.fixture
def k8s(monkeypatch):
    monkeypatch.chdir(REPO)
    return scan_files([K8S.relative_to(REPO) / "deployment-bad.yaml"], K8S_POLICIES)


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


REPLICAS = """\
    replicas:
      (@ <= `3`): true
"""


# -- SARIF ---------------------------------------------------------------------------------------


def test_sarif_of_the_kubernetes_sample(k8s):
    log = sarif(k8s)
    run = log["runs"][0]
    driver = run["tool"]["driver"]
    assert driver["name"] == "assertree"
    assert driver["version"]
    assert [rule["id"] for rule in driver["rules"]] == [
        "no-latest-tag/pinned-images",
        "no-privileged-containers/not-privileged",
        "required-labels/team-and-app",
    ]
    assert driver["rules"][0]["shortDescription"]["text"] == "Images must be pinned"
    assert driver["rules"][0]["fullDescription"]["text"].startswith("Every container image")
    assert [rule["defaultConfiguration"]["level"] for rule in driver["rules"]] == ["warning", "error", "note"]
    expected = json.loads(render("json", k8s))["summary"]
    assert len(run["results"]) == expected["violations"]
    assert run["properties"]["summary"] == expected
    for item in run["results"]:
        assert driver["rules"][item["ruleIndex"]]["id"] == item["ruleId"]
        assert item["level"] == driver["rules"][item["ruleIndex"]]["defaultConfiguration"]["level"]
        location = item["locations"][0]["physicalLocation"]
        assert location["artifactLocation"] == {
            "uri": "samples/kubernetes/deployment-bad.yaml",
            "uriBaseId": "%SRCROOT%",
        }
    image = next(r for r in run["results"] if r["ruleId"] == "no-latest-tag/pinned-images")
    assert image["message"]["text"].startswith("legacy-batch runs an image without a pinned tag (CHECK=")
    assert "(PATH=spec.template.spec.~.containers[0].image." in image["message"]["text"]
    region = image["locations"][0]["physicalLocation"]["region"]
    text = line_of(K8S / "deployment-bad.yaml", region["startLine"])
    assert text.strip() == "image: registry.example.com/batch:latest"
    assert text.index("image") + 1 == region["startColumn"]


def test_sarif_levels_help_uri_and_rule_errors(workdir):
    (workdir / "p.yaml").write_text(
        policy("info-level", REPLICAS, severity="info", annotations={"help.policy.kyverno.io": "https://x.test/h"})
        + "---\n"
        + policy("critical-level", REPLICAS, severity="Critical")
        + "---\n"
        + policy("no-severity", REPLICAS)
        + "---\n"
        + policy("broken", "(to_string(`1` / `0`)): true\n", severity="low")
    )
    (workdir / "bad.json").write_text('{"name": "b", "replicas": 5}')
    log = sarif(scan_files(["bad.json"], ["p.yaml"]))
    run = log["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert rules[0]["helpUri"] == "https://x.test/h"
    assert all("helpUri" not in rule for rule in rules[1:])
    assert [(r["ruleId"], r["level"]) for r in run["results"]] == [
        ("info-level/check", "note"),
        ("critical-level/check", "error"),
        ("no-severity/check", "error"),
        ("broken/check", "error"),
    ]
    broken = run["results"][-1]
    assert broken["message"]["text"].startswith("rule error: ")
    assert "+Inf" in broken["message"]["text"]
    assert broken["ruleIndex"] == 3


def test_sarif_lists_skipped_rules(workdir):
    (workdir / "p.yaml").write_text(
        policy("some", REPLICAS, match="kind: Deployment") + "---\n" + policy("none", REPLICAS, match="kind: Nope")
    )
    (workdir / "r.yaml").write_text("name: a\nkind: Deployment\nreplicas: 1\n---\nname: b\nkind: Service\n")
    run = sarif(scan_files(["r.yaml"], ["p.yaml"]))["runs"][0]
    assert run["results"] == []
    assert run["properties"]["skippedRules"] == [
        {"ruleId": "some/check", "notMatchedResources": 1, "appliedToNoResource": False},
        {"ruleId": "none/check", "notMatchedResources": 2, "appliedToNoResource": True},
    ]
    # skipped: the one rule that applied to no resource; not matched: the resource x rule pairs
    assert run["properties"]["summary"]["skipped"] == 1
    assert run["properties"]["summary"]["notMatched"] == 3


def test_sarif_fingerprints_are_stable_and_ignore_lines(workdir):
    (workdir / "p.yaml").write_text(policy("limits", REPLICAS))
    payload = "- name: a\n  replicas: 5\n- name: b\n  replicas: 9\n"
    (workdir / "r.yaml").write_text(payload)

    def fingerprints():
        results = sarif(scan_files(["r.yaml"], ["p.yaml"]))["runs"][0]["results"]
        return [
            (r["partialFingerprints"]["assertree/v2"], r["locations"][0]["physicalLocation"]["region"]["startLine"])
            for r in results
        ]

    first = fingerprints()
    assert first == fingerprints()
    assert [line for _, line in first] == [2, 4]
    assert len({value for value, _ in first}) == 2
    (workdir / "r.yaml").write_text("# a comment\n# shifts every line\n" + payload)
    moved = fingerprints()
    assert [line for _, line in moved] == [4, 6]
    assert [value for value, _ in moved] == [value for value, _ in first]
    (workdir / "r.yaml").write_text("- {replicas: 9, name: b}\n- {name: a, replicas: 5}\n")  # reordered, reflowed
    assert sorted(value for value, _ in fingerprints()) == sorted(value for value, _ in first)
    (workdir / "r.yaml").write_text(payload.replace("name: b", "name: c"))  # renamed: another resource
    renamed = [value for value, _ in fingerprints()]
    assert renamed[0] == first[0][0] and renamed[1] != first[1][0]


def test_sarif_uris_outside_the_working_directory_and_from_stdin(tmp_path, monkeypatch):
    (tmp_path / "p.yaml").write_text(policy("limits", REPLICAS))
    (tmp_path / "my file.json").write_text('{"name": "b", "replicas": 5}')
    inside = tmp_path / "inside"
    inside.mkdir()
    monkeypatch.chdir(inside)
    result = scan_files([tmp_path / "my file.json"], [tmp_path / "p.yaml"])
    location = sarif(result)["runs"][0]["results"][0]["locations"][0]["physicalLocation"]
    assert location["artifactLocation"] == {"uri": (tmp_path / "my file.json").as_uri()}
    assert location["region"] == {"startLine": 1, "startColumn": 15}

    monkeypatch.chdir(tmp_path)
    assert sarif(result)["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"] == {
        "uri": "my%20file.json",
        "uriBaseId": "%SRCROOT%",
    }

    stdin = read_payload("-", stdin=io.BytesIO(b'{"name": "s", "replicas": 5}'))
    from_stdin = scan(resources_from(stdin), load_policies("p.yaml"))
    # no file to point into: only the logical location (the resource's name) is left
    assert all("physicalLocation" not in where for where in sarif(from_stdin)["runs"][0]["results"][0]["locations"])


def test_sarif_of_a_terraform_plan_points_into_the_json(monkeypatch):
    monkeypatch.chdir(REPO)
    plan = TERRAFORM / "plan-bad.json"
    result = scan_files([plan.relative_to(REPO)], [TERRAFORM / "policies" / "lb-listener-https.yaml"], terraform=True)
    results = sarif(result)["runs"][0]["results"]
    assert results
    for item in results:
        field = item["properties"]["fields"][0]
        line = line_of(plan, item["locations"][0]["physicalLocation"]["region"]["startLine"])
        if field.endswith("default_action[0].type"):
            assert line.strip().startswith('"type":')
        else:  # an expression key: the deepest payload field before it
            assert line.strip().startswith('"values":')


# -- locating fields -----------------------------------------------------------------------------


def test_located_lines_in_yaml_streams_and_json_arrays(workdir):
    (workdir / "p.yaml").write_text(
        policy(
            "limits",
            """\
        spec:
          replicas: 3
        """,
        )
    )
    (workdir / "s.yaml").write_text(
        textwrap.dedent("""\
        name: a
        spec: {replicas: 3}
        ---
        null
        ---
        name: b
        spec:
          replicas: 4
        ---
        name: c
        """)
    )
    (workdir / "a.json").write_text(
        '[\n  {"name": "d", "spec": {"replicas": 3}},\n  {"name": "e",\n   "spec": {\n     "replicas": 7}}\n]\n'
    )
    result = scan_files(["s.yaml", "a.json"], ["p.yaml"])
    lines = {line.split("::")[1].split("title=")[1]: line for line in github_lines(result)[:-1]}
    assert "file=s.yaml,line=8,col=3," in lines["limits/check (b)"]
    assert "file=s.yaml,line=10,col=1," in lines["limits/check (c)"]  # no spec: the document start
    assert "file=a.json,line=5,col=6," in lines["limits/check (e)"]


def test_locations_come_from_the_payload_as_read_parsed_once(workdir, monkeypatch):
    (workdir / "p.yaml").write_text(policy("limits", REPLICAS))
    (workdir / "r.yaml").write_text("- name: a\n  replicas: 5\n- name: b\n  replicas: 9\n")
    result = scan_files(["r.yaml"], ["p.yaml"])
    import assertree.inputs.payload as payload_module

    calls = []
    real = payload_module.load_documents
    monkeypatch.setattr(payload_module, "load_documents",
                        lambda path, *text, **options: calls.append(path) or real(path, *text, **options))
    (workdir / "r.yaml").unlink()  # the report does not read the file again: it asks the payload as it was read
    locator = Locator()
    assert [locator.result(r, r.violations[0]).line for r in result.results] == [2, 4]
    assert calls == ["r.yaml"]
    region = sarif(result)["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]
    assert region["startLine"] == 2
    assert github_lines(result)[0].startswith("::error file=r.yaml,line=2,col=3,title=limits/check (a)::")


def test_pre_processed_resources_are_found_in_their_file(workdir):
    (workdir / "p.yaml").write_text(policy("limits", REPLICAS))
    (workdir / "r.json").write_text('{"items": [\n {"name": "a", "replicas": 1},\n {"name": "b",\n  "replicas": 8}]}')
    from assertree.inputs.payload import compile_preprocessors

    resources = resources_from(read_payload("r.json"), compile_preprocessors(["items"]))
    result = scan(resources, load_policies("p.yaml"))
    assert "file=r.json,line=4,col=3," in github_lines(result)[0]


# -- JUnit ---------------------------------------------------------------------------------------


def counts(element) -> tuple[int, ...]:
    return tuple(int(element.get(name)) for name in ("tests", "failures", "errors", "skipped"))


def test_junit_of_the_kubernetes_sample(k8s):
    root = ET.fromstring(render("junit", k8s))
    assert root.tag == "testsuites"
    summary = k8s.summary()
    assert counts(root) == (summary.passed + summary.failed + summary.errors, summary.failed, summary.errors, 0)
    suites = {suite.get("name"): suite for suite in root.findall("testsuite")}
    assert list(suites) == ["no-latest-tag", "no-privileged-containers", "required-labels"]
    privileged = suites["no-privileged-containers"]
    assert counts(privileged) == (2, 1, 0, 0)
    cases = privileged.findall("testcase")
    assert [(c.get("classname"), c.get("name")) for c in cases] == [
        ("no-privileged-containers", "not-privileged: legacy-batch"),
        ("no-privileged-containers", "not-privileged: node-agent"),
    ]
    failure = cases[0].find("failure")
    assert failure.get("type") == "violation"
    assert failure.get("message") == "legacy-batch has a privileged container (CHECK=spec.rules[0].assert.all[0])"
    assert "resource: samples/kubernetes/deployment-bad.yaml:" in failure.text
    assert "Expected value: false (PATH=spec.template.spec.~.containers[0]." in failure.text
    assert list(cases[1]) == []
    assert {p.get("name"): p.get("value") for p in privileged.find("properties")}["severity"] == "high"


def test_junit_errors_skips_and_unprintable_characters(workdir):
    (workdir / "p.yaml").write_text(
        policy("limits", REPLICAS, match="kind: Deployment")
        + "---\n"
        + policy("broken", "(to_string(`1` / `0`)): true\n", match="kind: Deployment")
        + "---\n"
        + policy("unused", REPLICAS, match="kind: Nope")
    )
    (workdir / "r.json").write_text(
        json.dumps(
            [
                {"kind": "Deployment", "name": "bell\u0007<&>", "replicas": 5},
                {"kind": "Deployment", "name": "ok", "replicas": 1},
                {"kind": "Service", "name": "svc"},
            ]
        )
    )
    text = render("junit", scan_files(["r.json"], ["p.yaml"]))
    root = ET.fromstring(text)  # would fail on the BEL character
    assert counts(root) == (5, 1, 2, 1)
    suites = {suite.get("name"): suite for suite in root.findall("testsuite")}
    assert counts(suites["limits"]) == (2, 1, 0, 0)
    bad = suites["limits"].find("testcase")
    assert bad.get("name") == "check: bell<&>"
    assert bad.find("failure").get("message") == "bell<&> is wrong (CHECK=spec.rules[0].assert.all[0])"
    assert counts(suites["broken"]) == (2, 0, 2, 0)
    error = suites["broken"].find("testcase/error")
    assert "+Inf" in error.get("message")
    assert error.get("type") == "error"
    unused = suites["unused"]
    assert counts(unused) == (1, 0, 0, 1)
    assert unused.find("testcase").get("name") == "check"
    assert unused.find("testcase/skipped") is not None


# -- GitHub --------------------------------------------------------------------------------------


def test_github_annotations_of_the_kubernetes_sample(k8s):
    lines = github_lines(k8s)
    summary = k8s.summary()
    assert len(lines) == summary.violations + 1
    assert lines[-1] == (
        f"assertree: Checked 2 resources against 3 policies (3 rules): {summary.passed} passed, "
        f"{summary.failed} failed, 0 errored, 0 skipped"
    )
    privileged = next(line for line in lines if "title=no-privileged-containers" in line)
    assert privileged.startswith("::error file=samples/kubernetes/deployment-bad.yaml,line=")
    assert "title=no-privileged-containers/not-privileged (legacy-batch)::" in privileged
    assert privileged.endswith(
        "(CHECK=spec.rules[0].assert.all[0])%0AInvalid value: true: Expected value: false "
        "(PATH=spec.template.spec.~.containers[0].(securityContext.privileged || `false`))"
    )
    labels = next(line for line in lines if "title=required-labels" in line)
    assert labels.startswith("::warning ")  # low
    line = int(labels.split(",line=")[1].split(",")[0])
    assert line_of(K8S / "deployment-bad.yaml", line).strip() == "labels:"  # `team` is missing: its parent
    for annotation in lines[:-1]:
        number = int(annotation.split(",line=")[1].split(",")[0])
        assert line_of(K8S / "deployment-bad.yaml", number).strip()


def test_github_escaping(workdir):
    (workdir / "p.yaml").write_text(
        policy("limits", REPLICAS, severity="medium", message="{{ name }}: 100% over\nthe limit")
    )
    (workdir / "r.json").write_text('{"name": "a:b,c%d", "replicas": 5}')
    line = github_lines(scan_files(["r.json"], ["p.yaml"]))[0]
    assert line.startswith("::warning file=r.json,line=1,col=21,title=limits/check (a%3Ab%2Cc%25d)::")
    assert line.split("::", 2)[2].startswith("a:b,c%25d: 100%25 over%0Athe limit (CHECK=")


@pytest.mark.parametrize(
    ("text", "data", "property_"),
    [
        ("plain", "plain", "plain"),
        ("50% a:b, c", "50%25 a:b, c", "50%25 a%3Ab%2C c"),
        ("one\r\ntwo", "one%0D%0Atwo", "one%0D%0Atwo"),
        ("%0A", "%250A", "%250A"),
    ],
)
def test_escape_rules(text, data, property_):
    assert escape_data(text) == data
    assert escape_property(text) == property_


@pytest.mark.parametrize("streamed", [[], ["--stream"]])
@pytest.mark.parametrize(("failing", "note"), [(10, None), (11, "11 errors")])
def test_overflow_note_when_github_would_drop_annotations(workdir, capsys, failing, note, streamed):
    (workdir / "p.yaml").write_text(policy("limits", REPLICAS))
    (workdir / "r.json").write_text(
        json.dumps([{"name": f"r{i}", "replicas": 9} for i in range(failing)] + [{"name": "fine", "replicas": 1}])
    )
    result = scan_files(["r.json"], ["p.yaml"])
    assert sum(line.startswith("::error ") for line in github_lines(result)) == failing
    code = main(["scan", "r.json", "--policy", "p.yaml", "-o", "github", *streamed])
    err = capsys.readouterr().err
    assert code == 1
    if note is None:
        assert overflow_note(result) is None
        assert err == ""
    else:
        assert note in overflow_note(result)
        assert err == f"assertree: note: {overflow_note(result)}\n"


# -- the command line ----------------------------------------------------------------------------


def test_text_sarif_and_junit_in_one_run(workdir, capsys):
    (workdir / "p.yaml").write_text(policy("limits", REPLICAS))
    (workdir / "r.json").write_text('[{"name": "a", "replicas": 5}, {"name": "b", "replicas": 1}]')
    code = main(
        ["scan", "r.json", "--policy", "p.yaml", "-o", "text", "-o", "sarif=out/r.sarif", "-o", "junit=out/r.xml"]
    )
    out = capsys.readouterr()
    assert code == 1
    assert out.out.startswith("Loading policies ...")
    assert "- FAILED (POLICY=limits, RULE=check, ID=a)" in out.out
    log = json.loads((workdir / "out" / "r.sarif").read_text())
    assert not list(Draft4Validator(SARIF_SCHEMA).iter_errors(log))
    assert [r["ruleId"] for r in log["runs"][0]["results"]] == ["limits/check"]
    assert counts(ET.fromstring((workdir / "out" / "r.xml").read_text())) == (2, 1, 0, 0)


def test_totals_count_rules_as_written_autogen_rules_under_their_source(tmp_path, capsys):
    """A one-rule ClusterPolicy is one rule in the totals, though Kyverno's autogen adds two for Pod
    controllers; it applied (to the Pods), so nothing is skipped and no rule 'applied to no resource'."""
    (tmp_path / "policy.yaml").write_text(
        "apiVersion: kyverno.io/v1\nkind: ClusterPolicy\nmetadata:\n  name: team\nspec:\n  rules:\n"
        "  - name: require-team\n    match:\n      any:\n      - resources:\n          kinds: [Pod]\n"
        "    validate:\n      message: team label\n      pattern:\n        metadata:\n          labels:\n"
        "            team: \"?*\"\n")
    (tmp_path / "k8s.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: good\n  labels:\n    team: a\n---\n"
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: bad\n---\n"
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: other\n")
    assert main(["scan", "--policy", str(tmp_path / "policy.yaml"), str(tmp_path / "k8s.yaml"), "-o", "json"]) == 1
    out = capsys.readouterr()
    summary = json.loads(out.out)["summary"]
    assert (summary["policies"], summary["rules"], summary["passed"], summary["failed"], summary["skipped"],
            summary["notMatched"]) == (1, 1, 1, 1, 0, 1)
    assert out.err == ("assertree: Checked 3 resources against 1 policy (1 rule): 1 passed, 1 failed, 0 errored, "
                       "0 skipped\n")


def test_an_unreadable_payload_is_printed_once_where_both_streams_go(tmp_path):
    """The text report lists a file that could not be read; standard error repeats it only when it goes
    somewhere else (a report redirected to a file), never twice in one terminal or CI log."""
    import subprocess
    import sys

    (tmp_path / "bad.yaml").write_text("a: [\n")
    command = [sys.executable, "-m", "assertree", "scan", "--policy", str(K8S / "policies"),
               str(K8S / "deployment-good.yaml"), str(tmp_path / "bad.yaml")]
    with (tmp_path / "log.txt").open("w") as log:  # one place, as `2>&1` gives
        assert subprocess.run(command, stdout=log, stderr=log, check=False).returncode == 2
    assert (tmp_path / "log.txt").read_text().count("bad.yaml:2:1: invalid YAML") == 1
    apart = subprocess.run(command, capture_output=True, text=True, check=False)
    assert apart.returncode == 2
    assert "bad.yaml:2:1: invalid YAML" in apart.stdout and "bad.yaml:2:1: invalid YAML" in apart.stderr
