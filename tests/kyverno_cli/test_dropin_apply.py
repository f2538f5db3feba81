"""``assertree kyverno apply``: Kyverno CLI 1.19's command lines, its output (pinned) and its exit codes.

Expected texts come from Kyverno's source at kyverno/kyverno 111e07bb
(``commands/apply``) and its documentation's examples (kyverno.io, "kyverno
apply"), which two tests reproduce byte for byte."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from assertree.cli import main
from assertree.cli.kyverno import REFUSED, pflag_arguments

DATA = Path(__file__).parent / "data" / "apply"
LIFECYCLE = Path(__file__).parent / "data" / "apply-lifecycle"  # generate and mutate.targets, apart from `.` above


def run(args, capsys, monkeypatch, cwd=DATA):
    monkeypatch.chdir(cwd)
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1752755472")
    code = main(["kyverno", "apply", *args])
    out = capsys.readouterr()
    assert "Traceback" not in out.err
    return code, out.out, out.err


# -- the outputs, pinned ---------------------------------------------------------------------------


@pytest.mark.parametrize("args", [
    pytest.param(["disallow-latest-tag.yaml", "require-team.yaml", "unscored.yaml", "-r", "pods.yaml"],
                 id="failures"),
    pytest.param(["add-label.yaml", "--resource", "others.yaml"], id="mutation"),
    pytest.param(["add-label.yaml", "--resource", "others.yaml", "--stdin"], id="stdin"),
    pytest.param([".", "-r", "pods.yaml,others.yaml"], id="folder-and-comma-list"),
    pytest.param(["disallow-latest-tag.yaml", "replicas-vpol.yaml", "-r", "pods.yaml", "-r", "others.yaml",
                  "--table"], id="table"),
    pytest.param(["disallow-latest-tag.yaml", "replicas-vpol.yaml", "-r", "pods.yaml", "-r", "others.yaml",
                  "-t", "--detailed-results"], id="table-detailed"),
    pytest.param(["disallow-latest-tag.yaml", "team-a-policy.yaml", "replicas-vpol.yaml", "-r", "pods.yaml",
                  "-r", "others.yaml", "--policy-report"], id="policy-report"),
    pytest.param(["disallow-latest-tag.yaml", "-r", "pods.yaml", "-p", "--output-format", "json"],
                 id="policy-report-json"),
    pytest.param(["disallow-latest-tag.yaml", "-r", "pods.yaml", "--audit-warn"], id="audit-warn"),
    pytest.param(["require-team.yaml", "-r", "pods.yaml", "--exception", "exception.yaml"], id="exception"),
    pytest.param(["disallow-latest-tag.yaml", "-r", "pods.yaml", "--generate-exceptions"], id="generate-exceptions"),
    pytest.param(["disallow-latest-tag.yaml", "-r", "pods.yaml", "-r", "missing.yaml"], id="missing-resource"),
])
def test_output(args, capsys, monkeypatch, snapshot):
    code, out, err = run(args, capsys, monkeypatch)
    assert (code, out, err) == snapshot


@pytest.mark.parametrize("args", [
    pytest.param(["generate.yaml", "-r", "namespace.yaml,existing.yaml"], id="generate"),
    pytest.param(["mutate-existing.yaml", "-r", "configmap.yaml", "--target-resource", "existing.yaml"],
                 id="mutate-existing"),
])
def test_generate_and_mutate_existing_output(args, capsys, monkeypatch, snapshot):
    code, out, err = run(args, capsys, monkeypatch, LIFECYCLE)
    assert (code, out, err) == snapshot


# -- the documentation's examples, byte for byte ---------------------------------------------------


def test_the_documented_exception_example(tmp_path, capsys, monkeypatch):
    """kyverno.io "kyverno apply", Applying Policy Exceptions: max-containers, container-exception and a
    three-container Deployment labelled blue."""
    (tmp_path / "policy.yaml").write_text(textwrap.dedent("""\
        apiVersion: kyverno.io/v1
        kind: ClusterPolicy
        metadata:
          name: max-containers
        spec:
          background: false
          rules:
            - name: max-two-containers
              match:
                any:
                  - resources:
                      kinds:
                        - Pod
              validate:
                failureAction: Enforce
                message: 'A maximum of 2 containers are allowed inside a Pod.'
                deny:
                  conditions:
                    any:
                      - key: '{{request.object.spec.containers[] | length(@)}}'
                        operator: GreaterThan
                        value: 2
        """))
    (tmp_path / "exception.yaml").write_text(textwrap.dedent("""\
        apiVersion: kyverno.io/v2
        kind: PolicyException
        metadata:
          name: container-exception
        spec:
          exceptions:
            - policyName: max-containers
              ruleNames:
                - max-two-containers
                - autogen-max-two-containers
          match:
            any:
              - resources:
                  kinds:
                    - Pod
                    - Deployment
          conditions:
            any:
              - key: "{{ request.object.metadata.labels.color || '' }}"
                operator: Equals
                value: blue
        """))
    containers = "".join(f"        - name: c{index}\n          image: busybox:1.36\n" for index in range(3))
    (tmp_path / "resource.yaml").write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: three-containers-deployment\n  labels:\n"
        "    app: my-app\n    color: blue\nspec:\n  selector:\n    matchLabels:\n      app: my-app\n  template:\n"
        "    metadata:\n      labels:\n        app: my-app\n        color: blue\n    spec:\n      containers:\n"
        + containers)
    code, out, err = run(["policy.yaml", "--resource", "resource.yaml", "--exception", "exception.yaml"], capsys,
                         monkeypatch, tmp_path)
    assert out == ("\nApplying 3 policy rule(s) to 1 resource(s) with 1 exception(s)...\n\n"
                   "pass: 0, fail: 0, warn: 0, error: 0, skip: 1 \n")
    assert code == 0 and err == ""


def test_the_documented_validating_policy_report(tmp_path, capsys, monkeypatch):
    """kyverno.io "kyverno apply", Applying ValidatingPolicies: the openreports.io ClusterReport of
    check-deployment-replicas on a good and a bad Deployment (its message as the policy writes it)."""
    (tmp_path / "policy.yaml").write_text((DATA / "replicas-vpol.yaml").read_text())
    deployment = ("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {name}\n  labels:\n    app: nginx\n"
                  "spec:\n  replicas: {replicas}\n  selector:\n    matchLabels:\n      app: nginx\n  template:\n"
                  "    metadata:\n      labels:\n        app: nginx\n    spec:\n      containers:\n"
                  "        - name: nginx\n          image: nginx:latest\n")
    (tmp_path / "deployments.yaml").write_text(deployment.format(name="good-deployment", replicas=2) + "---\n"
                                               + deployment.format(name="bad-deployment", replicas=3))
    code, out, _ = run(["policy.yaml", "--resource", "deployments.yaml", "--policy-report"], capsys, monkeypatch,
                       tmp_path)
    assert code == 1
    assert out == textwrap.dedent("""\
        apiVersion: openreports.io/v1alpha1
        kind: ClusterReport
        metadata:
          creationTimestamp: null
          name: merged
        results:
        - message: success
          policy: check-deployment-replicas
          properties:
            process: background scan
          resources:
          - apiVersion: apps/v1
            kind: Deployment
            name: good-deployment
            namespace: default
          result: pass
          scored: true
          source: KyvernoValidatingPolicy
          timestamp:
            nanos: 0
            seconds: 1752755472
        - message: Deployment replicas must be less than or equal to 2
          policy: check-deployment-replicas
          properties:
            process: background scan
          resources:
          - apiVersion: apps/v1
            kind: Deployment
            name: bad-deployment
            namespace: default
          result: fail
          scored: true
          source: KyvernoValidatingPolicy
          timestamp:
            nanos: 0
            seconds: 1752755472
        source: ""
        summary:
          error: 0
          fail: 1
          pass: 1
          skip: 0
          warn: 0

        """)


# -- exit codes ------------------------------------------------------------------------------------


def test_exit_codes(tmp_path, capsys, monkeypatch):
    (tmp_path / "cm.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n")
    config_map = str(tmp_path / "cm.yaml")
    assert run(["disallow-latest-tag.yaml", "-r", "pods.yaml"], capsys, monkeypatch)[0] == 1  # a failure
    code, out, _ = run(["disallow-latest-tag.yaml", "-r", "pods.yaml", "--audit-warn", "--warn-exit-code", "3"],
                       capsys, monkeypatch)
    assert code == 3 and out.endswith("skip: 0 \nexit as warnExitCode is 3")
    code, out, _ = run(["disallow-latest-tag.yaml", "-r", config_map, "--warn-no-pass", "--warn-exit-code", "4"],
                       capsys, monkeypatch)
    assert code == 4 and out.endswith("exit as no objects satisfied policy\n")
    assert run(["disallow-latest-tag.yaml", "-r", config_map, "--warn-no-pass"], capsys, monkeypatch)[0] == 0
    assert run(["unscored.yaml", "-r", "pods.yaml"], capsys, monkeypatch)[0] == 0  # warnings only
    assert run(["unscored.yaml", "-r", "pods.yaml", "--warn-exit-code", "7"], capsys, monkeypatch)[0] == 7
    code, out, _ = run(["require-team.yaml", "-r", "pods.yaml", "--audit-warn"], capsys, monkeypatch)
    assert code == 1 and "failed as audit warning" not in out  # an Enforce policy stays a failure


def test_boolean_flags_take_pflag_values(capsys, monkeypatch):
    assert pflag_arguments(["apply", "--table=true", "--audit-warn=false", "-r=x"], ("--table", "--audit-warn")) \
        == ["apply", "--table", "-r=x"]
    code, out, _ = run(["disallow-latest-tag.yaml", "-r", "pods.yaml", "--audit-warn=true", "--table=false"],
                       capsys, monkeypatch)
    assert code == 0 and "failed as audit warning:" in out


def test_mutated_resources_go_to_a_file_or_a_folder(tmp_path, capsys, monkeypatch):
    code, out, _ = run(["add-label.yaml", "-r", "others.yaml", "-o", str(tmp_path / "out" / "mutated.yaml")],
                       capsys, monkeypatch)
    assert code == 0 and "applied to" not in out and out.count("Mutation has been applied successfully.") == 2
    written = (tmp_path / "out" / "mutated.yaml").read_text()
    assert written.count("---\n\n") == 2 and "app.kubernetes.io/managed-by: assertree" in written
    assert run(["add-label.yaml", "-r", "others.yaml", "-o", str(tmp_path / "folder")], capsys, monkeypatch)[0] == 0
    assert sorted(path.name for path in (tmp_path / "folder").iterdir()) == ["settings-mutated.yaml",
                                                                             "web-mutated.yaml"]


def test_generated_resources_go_to_a_file_per_policy_and_targets_follow_their_trigger(tmp_path, capsys,
                                                                                    monkeypatch):
    code, out, _ = run(["generate.yaml", "-r", "namespace.yaml,existing.yaml", "-o", str(tmp_path / "folder")],
                       capsys, monkeypatch, LIFECYCLE)
    assert code == 0 and "applied to" not in out and out.count("Generation completed successfully.") == 2
    assert sorted(path.name for path in (tmp_path / "folder").iterdir()) == ["namespace-defaults-generated.yaml"]
    written = (tmp_path / "folder" / "namespace-defaults-generated.yaml").read_text()
    assert written.count("---\n\n") == 2 and "kind: NetworkPolicy" in written and "kind: Secret" in written
    code, out, _ = run(["mutate-existing.yaml", "-r", "configmap.yaml", "--target-resource", "existing.yaml", "-o",
                        str(tmp_path / "one.yaml")], capsys, monkeypatch, LIFECYCLE)
    written = (tmp_path / "one.yaml").read_text()
    assert code == 0 and written.index("kind: ConfigMap") < written.index("refreshed-by: settings")


def test_without_the_target_resource_a_mutate_existing_rule_finds_nothing_to_patch(capsys, monkeypatch):
    code, out, _ = run(["mutate-existing.yaml", "-r", "configmap.yaml"], capsys, monkeypatch, LIFECYCLE)
    assert code == 1 and "patched targets" not in out and 'secrets "regcred" not found' in out


def test_set_variables_and_values_file_are_exclusive(tmp_path, capsys, monkeypatch):
    (tmp_path / "policy.yaml").write_text(textwrap.dedent("""\
        apiVersion: kyverno.io/v1
        kind: ClusterPolicy
        metadata:
          name: mode
        spec:
          rules:
          - name: dev-only
            match:
              any:
              - resources:
                  kinds: [ConfigMap]
            validate:
              message: "mode {{ request.mode }} is not dev"
              deny:
                conditions:
                  any:
                  - key: "{{ request.mode }}"
                    operator: NotEquals
                    value: dev
        """))
    (tmp_path / "cm.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n")
    (tmp_path / "values.yaml").write_text("apiVersion: cli.kyverno.io/v1alpha1\nkind: Values\nmetadata:\n  name: v\n")
    assert run(["policy.yaml", "-r", "cm.yaml", "--set", "request.mode=dev"], capsys, monkeypatch, tmp_path)[0] == 0
    code, out, _ = run(["policy.yaml", "-r", "cm.yaml", "-s", "request.mode=prod"], capsys, monkeypatch, tmp_path)
    assert code == 1 and "1 - dev-only mode prod is not dev" in out
    code, _, err = run(["policy.yaml", "-r", "cm.yaml", "-s", "a=b", "-f", "values.yaml"], capsys, monkeypatch,
                       tmp_path)
    assert code == 2 and err == "assertree: error: pass the values either using set flag or values_file flag\n"


# -- every flag: honoured, accepted, or refused with one line ---------------------------------------


@pytest.mark.parametrize(("flag", "value"), [
    ("--cluster", None), ("-c", None), ("--kubeconfig", "k"), ("--context", "c"), ("--registry", None),
    ("--git-branch", "main"), ("-b", "main"), ("--username", "u"), ("--password", "p"),
    ("--parameter-resource", "p.yaml"),
    ("--http-payload", "h.json"), ("--envoy-payload", "e.json"),
])
def test_what_needs_a_cluster_a_registry_or_git_is_refused_in_one_line(flag, value, capsys, monkeypatch):
    args = ["disallow-latest-tag.yaml", "-r", "pods.yaml", flag] + ([value] if value else [])
    code, out, err = run(args, capsys, monkeypatch)
    assert code == 2 and out == ""
    assert len(err.splitlines()) == 1 and err.startswith("assertree: error: --")
    canonical = {"-c": "--cluster", "-b": "--git-branch"}.get(flag, flag)
    assert REFUSED[canonical] in err


@pytest.mark.parametrize("args", [
    ["--namespace", "x"], ["-n", "x"], ["--continue-on-fail"], ["--cluster-wide-resources"], ["--concurrent", "4"],
    ["--batch-size", "10"], ["--continue-on-error=false"], ["--show-performance"], ["--remove-color"],
    ["--crd-paths", "pods.yaml"], ["--crd-path", "pods.yaml"], ["--exceptions-within-policies"],
    ["--exceptions-with-resources"], ["--exceptions-within-resources"], ["--generated-exception-ttl", "1h"],
])
def test_flags_kyverno_ignores_offline_are_accepted(args, capsys, monkeypatch):
    plain = run(["disallow-latest-tag.yaml", "-r", "pods.yaml"], capsys, monkeypatch)
    assert run(["disallow-latest-tag.yaml", "-r", "pods.yaml", *args], capsys, monkeypatch) == plain


def test_every_flag_of_kyverno_apply_is_known():
    """Every flag ``kyverno apply`` defines at kyverno/kyverno 111e07bb (``commands/apply/command.go``)."""
    assert set(APPLY_FLAGS) <= option_names("apply")


APPLY_FLAGS = (
    "--json", "--http-payload", "--envoy-payload", "--resource", "-r", "--resources", "--target-resource",
    "--target-resources", "--cluster", "-c", "--output", "-o", "--userinfo", "-u", "--set", "-s", "--values-file",
    "-f", "--context-file", "--policy-report", "-p", "--output-format", "--namespace", "-n", "--stdin", "-i",
    "--registry", "--kubeconfig", "--context", "--git-branch", "-b", "--username", "--password", "--audit-warn",
    "--warn-exit-code", "--warn-no-pass", "--remove-color", "--detailed-results", "--table", "-t",
    "--parameter-resource", "--exception", "-e", "--exceptions", "--continue-on-fail", "--exceptions-with-resources",
    "--exceptions-within-resources", "--exceptions-within-policies", "--generate-exceptions",
    "--generated-exception-ttl", "--cluster-wide-resources", "--concurrent", "--batch-size", "--continue-on-error",
    "--show-performance", "--crd-paths", "--crd-path",
)


def option_names(command: str) -> set[str]:
    import typer

    from assertree.cli import build_app

    group = typer.main.get_command(build_app())
    found = group.commands["kyverno"].commands[command]  # type: ignore[attr-defined]
    return {name for param in found.params for name in getattr(param, "opts", [])}


def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys, monkeypatch):
    (tmp_path / "config.yaml").write_text("cluster_name: test\n")
    code, out, err = run([str(DATA / "disallow-latest-tag.yaml"), "-r", "config.yaml", "-r", str(DATA / "pods.yaml")],
                         capsys, monkeypatch, tmp_path)
    assert code == 2
    assert "pass: 5, fail: 1" in out  # the other file was checked
    assert err == ("assertree: error: config.yaml: document 0 has no kind: not a Kubernetes resource (the Kyverno "
                   "CLI stops here; the other files are checked)\n")
    assert run([], capsys, monkeypatch)[2] == "assertree: error: require policy\n"
    (tmp_path / "empty").mkdir()
    code, out, err = run(["empty", "-r", str(DATA / "pods.yaml")], capsys, monkeypatch, tmp_path)
    assert (code, out) == (2, "")
    assert err == "assertree: error: no policy in empty can be run: nothing would be checked\n"
    assert run(["disallow-latest-tag.yaml"], capsys, monkeypatch)[2] == \
        "assertree: error: resource file(s) or cluster required\n"
