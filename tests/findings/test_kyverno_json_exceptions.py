"""PolicyExceptions for kyverno-json policies (both exception kinds), expiry, and lint's exception checks."""

from __future__ import annotations

import datetime
from pathlib import Path

import pytest

from assertree.cli import main

POLICY = """\
apiVersion: json.kyverno.io/v1alpha1
kind: ValidatingPolicy
metadata: {name: buckets-tagged}
spec:
  rules:
  - name: team-tag
    identifier: address
    assert:
      all:
      - message: "{{ address }} has no team tag"
        check:
          (tags.team != null): true
"""

PLAN = """[
  {"address": "aws_s3_bucket.legacy_logs", "tags": {}},
  {"address": "aws_s3_bucket.new_data", "tags": {}},
  {"address": "aws_s3_bucket.tagged", "tags": {"team": "data"}}
]"""


def cel_exception(name: str, condition: str, expires: str | None = None, report: str | None = None) -> str:
    extra = f"\n  expiresAt: \"{expires}\"" if expires else ""
    extra += f"\n  reportResult: {report}" if report else ""
    return f"""\
apiVersion: policies.kyverno.io/v1
kind: PolicyException
metadata: {{name: {name}, namespace: platform}}
spec:{extra}
  policyRefs:
  - {{name: buckets-tagged, kind: ValidatingPolicy}}
  matchConditions:
  - name: which
    expression: "{condition}"
"""


def in_days(days: int) -> str:
    moment = datetime.datetime.now(datetime.UTC) + datetime.timedelta(days=days)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


@pytest.fixture
def files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "policy.yaml").write_text(POLICY)
    (tmp_path / "plan.json").write_text(PLAN)
    return tmp_path


def scan(capsys, *args: str) -> tuple[int, list[str]]:
    code = main(["scan", "plan.json", "--policy", "policy.yaml", *args])
    return code, capsys.readouterr().out.splitlines()


def test_a_cel_exception_exempts_a_kyverno_json_result_until_it_expires(files, capsys):
    (files / "legacy.yaml").write_text(cel_exception(
        "legacy", "object.address.startsWith('aws_s3_bucket.legacy')", expires=in_days(30)))
    (files / "expired.yaml").write_text(cel_exception(
        "old-waiver", "object.address == 'aws_s3_bucket.new_data'", expires="2026-01-01T00:00:00Z"))
    code, lines = scan(capsys, "--exceptions", "legacy.yaml", "--exceptions", "expired.yaml")
    assert code == 1
    assert "- SKIPPED (POLICY=buckets-tagged, RULE=team-tag, ID=aws_s3_bucket.legacy_logs)" in lines
    assert " -> rule is skipped due to policy exception: platform/legacy" in lines
    assert "- FAILED (POLICY=buckets-tagged, RULE=team-tag, ID=aws_s3_bucket.new_data)" in lines
    assert (" -> aws_s3_bucket.new_data has no team tag (policy exception platform/old-waiver expired at "
            "2026-01-01T00:00:00Z and was not applied) (CHECK=spec.rules[0].assert.all[0])") in lines
    assert lines[-1].endswith("1 passed, 1 failed, 0 errored, 1 skipped")


def test_report_result_pass_and_an_exception_for_another_policy(files, capsys):
    (files / "pass.yaml").write_text(cel_exception("waived", "true", report="pass"))
    (files / "other.yaml").write_text(cel_exception("other", "true").replace("buckets-tagged", "something-else"))
    code, lines = scan(capsys, "--exceptions", "pass.yaml")
    assert code == 0 and lines[-1].endswith("3 passed, 0 failed, 0 errored, 0 skipped")
    code, lines = scan(capsys, "--exceptions", "other.yaml")
    assert code == 1 and lines[-1].endswith("1 passed, 2 failed, 0 errored, 0 skipped")


def test_a_kyverno_exception_exempts_a_kubernetes_shaped_document(files, capsys):
    (files / "k8s.json").write_text('[{"kind": "Bucket", "metadata": {"name": "new-data"}, "tags": {}, '
                                    '"address": "a"}, {"kind": "Bucket", "metadata": {"name": "old"}, "tags": {}, '
                                    '"address": "b"}]')
    (files / "v2.yaml").write_text("""\
apiVersion: kyverno.io/v2
kind: PolicyException
metadata: {name: new-buckets, namespace: default}
spec:
  exceptions:
  - policyName: buckets-tagged
    ruleNames: ["team-*"]
  match:
    any:
    - resources: {kinds: [Bucket], names: ["new-*"]}
""")
    code = main(["scan", "k8s.json", "--policy", "policy.yaml", "--exceptions", "v2.yaml"])
    lines = capsys.readouterr().out.splitlines()
    assert code == 1
    assert " -> rule is skipped due to policy exception: default/new-buckets" in lines
    assert "- FAILED (POLICY=buckets-tagged, RULE=team-tag, ID=b)" in lines


def test_assertree_test_applies_them_too(files, capsys):
    (files / "legacy.yaml").write_text(cel_exception("legacy", "object.address.endsWith('legacy_logs')"))
    (files / "buckets.yaml").write_text("".join(
        f"---\nkind: Bucket\nmetadata: {{name: {name}}}\naddress: aws_s3_bucket.{name}\ntags: {{}}\n"
        for name in ("legacy_logs", "new_data")))
    (files / "kyverno-test.yaml").write_text("""\
apiVersion: cli.kyverno.io/v1alpha1
kind: Test
metadata: {name: buckets}
policies: [policy.yaml]
resources: [buckets.yaml]
exceptions: [legacy.yaml]
results:
- {policy: buckets-tagged, rule: team-tag, resources: [legacy_logs], result: skip}
- {policy: buckets-tagged, rule: team-tag, resources: [new_data], result: fail}
""")
    assert main(["test", "."]) == 0, capsys.readouterr().out


def test_lint_warns_about_exceptions_that_exempt_nothing_or_expire(files, capsys):
    (files / "soon.yaml").write_text(cel_exception("soon", "true", expires=in_days(10)))
    (files / "later.yaml").write_text(cel_exception("later", "true", expires=in_days(100)))
    (files / "gone.yaml").write_text(cel_exception("gone", "true", expires="2026-01-01T00:00:00Z"))
    (files / "typo.yaml").write_text(cel_exception("typo", "true").replace("name: buckets-tagged",
                                                                            "name: bucket-tagged"))
    code = main(["lint", ".", "--expiring", "30"])
    out = capsys.readouterr().out.splitlines()
    assert code == 0
    warnings = sorted(line for line in out if ": warning: " in line)
    assert len(warnings) == 3, out
    assert warnings[0].startswith("gone.yaml:5:3: warning: spec.expiresAt: expired at 2026-01-01T00:00:00Z")
    assert warnings[1].startswith("soon.yaml:5:3: warning: spec.expiresAt: expires at ")
    assert "(--expiring 30): renew or remove it" in warnings[1]
    assert warnings[2] == ("typo.yaml:6:5: warning: spec.policyRefs[0]: policyRefs: ValidatingPolicy "
                           "'bucket-tagged' is not among the policies found here: this reference exempts nothing")
    assert main(["lint", ".", "--strict"]) == 1


def test_lint_checks_kyverno_exception_rule_names_and_named_exception_files(files, capsys, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "v2.yaml").write_text("""\
apiVersion: kyverno.io/v2
kind: PolicyException
metadata: {name: x, namespace: default}
spec:
  exceptions:
  - policyName: buckets-tagged
    ruleNames: [team-tag, autogen-team-tag, owner-tag]
  match: {any: [{resources: {kinds: [Pod]}}]}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: not-an-exception}
""")
    code = main(["lint", "policy.yaml", "--exceptions", str(elsewhere)])
    out = capsys.readouterr().out.splitlines()
    assert code == 1
    assert any(line.endswith("warning: spec.exceptions[0].ruleNames[2]: ruleNames: 'owner-tag' names no rule of "
                             "'buckets-tagged': it exempts nothing") for line in out), out
    assert any("error: kind: not a PolicyException (kyverno.io or policies.kyverno.io)" in line for line in out)
