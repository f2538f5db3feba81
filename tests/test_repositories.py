"""Real policy repositories just work: what is not a policy is passed over with one note, a policy that
cannot be used, or a rule that cannot run, is one line and the rest run, --exclude leaves paths out in every
command, and a scan puts a namespace-less namespaced resource in ``default`` as ``kyverno apply`` does."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from assertree.cli import main
from assertree.documents.paths import Exclude, walk
from assertree.errors import PolicyError, Severity, UsageError
from assertree.languages.load import load_policies, load_policy_set

POLICY = """\
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: {name}
spec:
  rules:
  - name: require-team
    match:
      any:
      - resources:
          kinds: [Pod]
          namespaces: [default]
    validate:
      message: a team label is required
      pattern:
        metadata:
          labels:
            team: "?*"
"""
GENERATE = """\
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: add-quota
spec:
  rules:
  - name: quota
    match:
      any:
      - resources:
          kinds: [Namespace]
    generate:
      apiVersion: v1
      kind: ResourceQuota
      name: default
      namespace: "{{request.object.metadata.name}}"
      data: {}
"""
SIGNATURES = """\
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: check-signatures
spec:
  rules:
  - name: signed
    match:
      any:
      - resources:
          kinds: [Pod]
    verifyImages:
    - imageReferences: ["ghcr.io/example/*"]
      attestors:
      - entries:
        - keys:
            publicKeys: "-----BEGIN PUBLIC KEY-----..."
"""
INVALID = """\
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: broken
spec:
  rules:
  - name: r
    match: 3
"""
POD = ("apiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\n{labels}spec:\n  containers:\n  - name: c\n"
       "    image: nginx\n")


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return root


@pytest.fixture
def repository(tmp_path: Path) -> Path:
    """A folder laid out as kyverno/policies is: each policy with its tests, metadata and friends."""
    return write(tmp_path / "policies", {
        "best-practices/require-team/require-team.yaml": POLICY.format(name="require-team"),
        "best-practices/require-team/artifacthub-pkg.yml": "name: require-team\nversion: 1.0.0\n",
        "best-practices/require-team/.kyverno-test/kyverno-test.yaml":
            "apiVersion: cli.kyverno.io/v1alpha1\nkind: Test\nmetadata:\n  name: t\n",
        "best-practices/require-team/.kyverno-test/resource.yaml": POD.format(name="p", labels=""),
        "best-practices/require-team/.chainsaw-test/chainsaw-test.yaml":
            "apiVersion: chainsaw.kyverno.io/v1alpha1\nkind: Test\nmetadata:\n  name: t\n",
        "multi-tenancy/add-quota/add-quota.yaml": GENERATE,
        "supply-chain/check-signatures/check-signatures.yaml": SIGNATURES,
        "broken/broken.yaml": INVALID,
        "kustomization.yaml": "resources:\n- best-practices/require-team/require-team.yaml\n",
        "crds/crd.yaml": "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n"
                         "metadata:\n  name: x.kyverno.io\nspec:\n  group: kyverno.io\n",
        "chart/templates/policy.yaml": "apiVersion: kyverno.io/v1\nkind: ClusterPolicy\nmetadata:\n"
                                       "  name: {{ .Values.name }}\n",
        "exceptions/exception.yaml": "apiVersion: kyverno.io/v2\nkind: PolicyException\nmetadata:\n  name: e\n"
                                     "spec:\n  exceptions: []\n  match: {}\n",
        "tests/kyverno-test.yaml": "apiVersion: cli.kyverno.io/v1alpha1\nkind: Test\nmetadata:\n  name: t\n",
    })


# -- --exclude ------------------------------------------------------------------------------------


@pytest.mark.parametrize(("pattern", "path", "matched"), [
    ("templates", "chart/templates/a.yaml", True),
    ("templates", "chart/templatesx/a.yaml", False),
    ("*.tpl.yaml", "a/b/c.tpl.yaml", True),
    ("charts/*/templates", "repo/charts/web/templates/a.yaml", True),
    ("charts/*/templates", "repo/charts/web/x/templates/a.yaml", False),
    ("charts/**/templates", "repo/charts/web/x/templates/a.yaml", True),
    ("**/testdata/**", "a/testdata/b/c.yaml", True),
    ("./examples/_archived/", "examples/_archived/x.yaml", True),
    ("examples/_archived", "other/examples/_archived2/x.yaml", False),
    ("[ab].yaml", "dir/b.yaml", True),
    ("[!ab].yaml", "dir/b.yaml", False),
])
def test_exclude_patterns(pattern, path, matched):
    assert Exclude.of([pattern]).matches(path) is matched


def test_under_a_folder_named_a_pattern_must_name_something_inside_it():
    policies = Exclude.of(["policies"])
    assert not policies.matches("repo/policies/a.yaml", "repo/policies")
    assert policies.matches("repo/policies/old/policies/a.yaml", "repo/policies")
    assert Exclude.of(["examples/_archived"]).matches("examples/_archived/a.yaml", "examples")
    assert policies.matches("repo/policies/a.yaml")  # a file named on the command line: its whole path


def test_an_empty_exclude_pattern_is_a_usage_error():
    with pytest.raises(UsageError, match="empty pattern"):
        Exclude.of([" "])


def test_walking_prunes_excluded_and_hidden_folders(tmp_path):
    write(tmp_path, {"a.yaml": "", "skip/b.yaml": "", "keep/c.yml": "", ".hidden/d.yaml": "", "keep/e.txt": ""})
    assert walk(tmp_path, (".yaml", ".yml"), Exclude.of(["skip"]), hidden=False) == [
        tmp_path / "a.yaml", tmp_path / "keep" / "c.yml"]
    assert len(walk(tmp_path, (".yaml", ".yml"))) == 4


def test_scan_excludes_payloads_and_policies(repository, tmp_path, capsys):
    pods = write(tmp_path / "k8s", {"good.yaml": POD.format(name="good", labels="  labels:\n    team: a\n"),
                                    "chart/templates/bad.yaml": "{{ if .Values.x }}\nkind: Pod\n"})
    assert main(["scan", "--policy", str(repository / "best-practices"), str(pods)]) == 2  # the template
    capsys.readouterr()
    assert main(["scan", "--policy", str(repository / "best-practices"), str(pods), "--exclude", "templates"]) == 0
    assert "Checked 1 resource against 1 policy" in capsys.readouterr().out
    assert main(["scan", "--policy", str(repository / "best-practices"), str(pods), "--exclude", "templates",
                 "--exclude", "best-practices/require-team"]) == 2  # no policy left
    assert "no policies were found in" in capsys.readouterr().err


def test_lint_test_and_compare_take_exclude(repository, tmp_path, capsys):
    assert main(["lint", str(repository), "--exclude", "broken", "--exclude", "supply-chain"]) == 0
    assert main(["lint", str(repository)]) == 1  # broken.yaml
    capsys.readouterr()
    tests = write(tmp_path / "t", {"a/kyverno-test.yaml": "apiVersion: cli.kyverno.io/v1alpha1\nkind: Test\n"
                                                        "metadata:\n  name: a\npolicies: [missing.yaml]\n"})
    assert main(["test", str(tests), "--exclude", "a"]) == 2  # no test left
    assert "nothing was tested" in capsys.readouterr().err


# -- reading a repository -------------------------------------------------------------------------


def test_a_repository_loads_its_policies_and_counts_the_rest(repository):
    found = load_policy_set([repository])
    assert [item.policy.name for item in found.policies] == ["require-team", "add-quota", "check-signatures"]
    assert found.errors == []
    [broken] = found.refused
    assert broken.location.source == str(repository / "broken/broken.yaml")
    assert broken.severity == Severity.WARNING and "ClusterPolicy 'broken' is skipped" in broken.message
    [signed] = found.not_run  # a rule that needs the registry: said once, with its field; the policy loads
    assert signed.location.source == str(repository / "supply-chain/check-signatures/check-signatures.yaml")
    assert signed.severity == Severity.WARNING and signed.path == ("spec", "rules", 0, "verifyImages", 0, "attestors")
    assert signed.message.startswith("rule 'signed' is not run: verifying image signatures needs the image registry")
    assert dict(found.skipped) == {"in hidden folders": 3, "Artifact Hub metadata": 1, "kustomizations": 1,
                                   "CRDs": 1, "Helm templates": 1, "PolicyExceptions": 1, "Kyverno tests": 1}
    assert found.skipped_note() == ("skipped 9 files that hold no policy (3 in hidden folders, 1 Artifact Hub "
                                    "metadata, 1 CRDs, 1 Helm templates, 1 Kyverno tests, 1 PolicyExceptions, "
                                    "1 kustomizations)")


def test_chainsaw_test_folders_beside_a_policy_are_passed_over(tmp_path, capsys):
    """An ``e2e/`` folder holding ``chainsaw-test.yaml`` asserts a partial copy of the policy (no rules, a
    ``status``): not a policy to run, so neither lint nor scan reads it as one."""
    assert_ready = ("apiVersion: kyverno.io/v1\nkind: ClusterPolicy\nmetadata:\n  name: require-team\n"
                    "status:\n  ready: true\n")
    repository = write(tmp_path / "policies", {
        "require-team/require-team.yaml": POLICY.format(name="require-team"),
        "require-team/e2e/chainsaw-test.yaml": "apiVersion: chainsaw.kyverno.io/v1alpha1\nkind: Test\n"
                                               "metadata:\n  name: e2e\nspec:\n  steps: []\n",
        "require-team/e2e/policy-assert.yaml": assert_ready,
        "require-team/e2e/nested/more-assert.yaml": assert_ready,
        "other/e2e-like/policy-assert.yaml": assert_ready,  # no chainsaw-test.yaml beside it: still read
    })
    found = load_policy_set([repository])
    assert [item.policy.name for item in found.policies] == ["require-team"]
    assert [problem.location.source for problem in found.refused] == [
        str(repository / "other/e2e-like/policy-assert.yaml")]
    assert found.skipped["in Chainsaw test folders"] == 3
    assert main(["lint", str(repository / "require-team")]) == 0
    assert "3 in Chainsaw test folders" in capsys.readouterr().err


def test_a_file_named_explicitly_must_hold_policies(repository):
    found = load_policy_set([repository / "broken/broken.yaml", repository / "kustomization.yaml",
                             repository / "best-practices/require-team/require-team.yaml"])
    assert [problem.severity for problem in found.errors] == [Severity.ERROR, Severity.ERROR]
    assert len(found.policies) == 1  # the others still load
    with pytest.raises(PolicyError, match="must be of type object"):
        load_policies(repository / "broken/broken.yaml")


def test_scanning_a_repository_exits_on_the_results_with_one_note(repository, tmp_path, capsys):
    pods = write(tmp_path / "k8s", {"pods.yaml": POD.format(name="bad", labels="")})
    assert main(["scan", "--policy", str(repository), str(pods)]) == 1
    err = capsys.readouterr().err.splitlines()
    told = [line for line in err if line.startswith("assertree: ")]
    assert [line.split(": ")[1] for line in told] == ["warning", "warning", "note", "note"]
    assert "'broken' is skipped" in told[0] and "rule 'signed' is not run" in told[1]
    assert told[2].startswith("assertree: note: skipped 9 files that hold no policy")
    assert told[3] == "assertree: note: 1 rule applied to no resource: add-quota/quota"
    assert main(["scan", "-q", "--policy", str(repository), str(pods)]) == 1  # -q: the warnings only
    assert [line for line in capsys.readouterr().err.splitlines() if "note:" in line] == []


def test_a_bad_named_policy_is_reported_and_the_others_still_run(repository, tmp_path, capsys):
    pods = write(tmp_path / "k8s", {"pods.yaml": POD.format(name="bad", labels="")})
    code = main(["scan", "--policy", str(repository / "broken/broken.yaml"), "--policy",
                 str(repository / "best-practices/require-team/require-team.yaml"), str(pods)])
    out = capsys.readouterr()
    assert code == 2
    assert "- FAILED (POLICY=require-team" in out.out
    assert "broken.yaml:8:5: spec.rules[0].match: must be of type object" in out.err


def test_compare_reads_repositories_too(repository, tmp_path, capsys):
    new = write(tmp_path / "new", {"require-team.yaml": POLICY.format(name="require-team"), "README.yaml": "a: 1\n"})
    pods = write(tmp_path / "k8s", {"pods.yaml": POD.format(name="bad", labels="")})
    assert main(["compare", "--old", str(repository / "best-practices"), "--new", str(new), str(pods)]) == 0
    assert "skipped 1 file that holds no policy (1 other YAML or JSON)" in capsys.readouterr().err


# -- Kubernetes semantics in scan -----------------------------------------------------------------


def test_scan_puts_a_namespaceless_namespaced_resource_in_default(repository, tmp_path, capsys):
    pods = write(tmp_path / "k8s", {"pods.yaml": POD.format(name="bad", labels="")})
    assert main(["scan", "-q", "--policy", str(repository / "best-practices/require-team"), str(pods)]) == 1
    assert "ID=Pod/default/bad" in capsys.readouterr().out


CLUSTER_POLICY = """\
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: no-namespace
spec:
  rules:
  - name: cluster-scoped
    match:
      any:
      - resources:
          kinds: ["*"]
    validate:
      message: "a cluster-scoped resource has no namespace"
      deny:
        conditions:
          any:
          - key: "{{ request.object.metadata.namespace || '' }}"
            operator: NotEquals
            value: ""
"""


def test_cluster_scoped_kinds_keep_no_namespace_and_crd_files_name_more(tmp_path, capsys):
    write(tmp_path, {
        "policy.yaml": CLUSTER_POLICY,
        "resources.yaml": "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: a\n---\n"
                          "apiVersion: example.com/v1\nkind: Tenant\nmetadata:\n  name: t\n",
        "crds/tenant.yaml": "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n"
                            "  name: tenants.example.com\nspec:\n  group: example.com\n  scope: Cluster\n"
                            "  names:\n    kind: Tenant\n    plural: tenants\n",
    })
    policy, resources = str(tmp_path / "policy.yaml"), str(tmp_path / "resources.yaml")
    assert main(["scan", "-q", "--policy", policy, resources]) == 1  # the Tenant is taken as namespaced
    assert "ID=Tenant/default/t" in capsys.readouterr().out
    assert main(["scan", "-q", "--policy", policy, resources, "--crd", str(tmp_path / "crds")]) == 0


def test_a_scan_where_no_rule_can_run_checks_nothing_and_says_so(repository, tmp_path, capsys):
    pods = write(tmp_path / "k8s", {"pods.yaml": POD.format(name="bad", labels="")})
    assert main(["scan", "--policy", str(repository / "supply-chain"), str(pods)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert "rule 'signed' is not run" in err[0]
    assert err[1].endswith("can be run (--policy): nothing would be checked")
