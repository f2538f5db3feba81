"""`assertree scan --exceptions` with ``policies.kyverno.io`` PolicyExceptions, and their reading."""

from __future__ import annotations

import json

import pytest
from conftest import CONFORMANCE
from support import kyverno_case_workdir
from support import scan_case as scan

from assertree.cli import main
from assertree.errors import PolicyError
from assertree.languages.kyverno.cel_policies.exceptions import read_exception

CASE = CONFORMANCE / "kyverno-policies" / "best-practices-vpol" / "disallow-latest-tag"

EXCEPTION = """\
apiVersion: policies.kyverno.io/{version}
kind: PolicyException
metadata:
  name: legacy
  namespace: default
spec:
  policyRefs:
  - name: disallow-latest-tag
    kind: ValidatingPolicy
  matchConditions:
  - name: legacy-pods
    expression: "object.metadata.name == 'badpod01'"
{more}"""


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    return kyverno_case_workdir(CASE, tmp_path, monkeypatch)


@pytest.mark.parametrize("version", ["v1alpha1", "v1beta1", "v1"])
def test_an_exception_skips_the_requests_it_holds_for(workdir, capsys, version):
    (workdir / "exception.yaml").write_text(EXCEPTION.format(version=version, more=""))
    code, out = scan(capsys, "--exceptions", "exception.yaml")
    assert "- SKIPPED (POLICY=disallow-latest-tag, RULE=disallow-latest-tag, ID=Pod/badpod01)" in out
    assert "rule is skipped due to policy exception: default/legacy" in out
    assert "- FAILED (POLICY=disallow-latest-tag, RULE=disallow-latest-tag, ID=Pod/badpod02)" in out
    assert code == 1
    _, report = scan(capsys, "--exceptions", "exception.yaml", "-o", "json")
    assert '"exception": "default/legacy"' in report


def test_an_expired_exception_is_reported_and_not_applied(workdir, capsys):
    (workdir / "exception.yaml").write_text(EXCEPTION.format(version="v1", more="  expiresAt: 2024-05-01T00:00:00Z\n"))
    code, out = scan(capsys, "--exceptions", "exception.yaml", "-o", "json")
    [badpod01] = [report for report in json.loads(out)["reports"]
                  if report["resource"]["identifier"] == "Pod/badpod01"]
    [rule] = badpod01["results"][0]["rules"]
    assert rule["status"] == "fail"
    assert rule["violations"][0]["message"].startswith(
        "An image tag is required. (policy exception default/legacy expired at 2024-05-01T00:00:00Z and was not "
        "applied)")
    assert code == 1


def test_an_exception_for_another_kind_does_not_apply(workdir, capsys):
    text = EXCEPTION.format(version="v1", more="").replace("kind: ValidatingPolicy", "kind: MutatingPolicy")
    (workdir / "exception.yaml").write_text(text)
    _, out = scan(capsys, "--exceptions", "exception.yaml")
    assert "- FAILED (POLICY=disallow-latest-tag, RULE=disallow-latest-tag, ID=Pod/badpod01)" in out


def test_a_malformed_exception_is_a_clear_error(workdir, capsys):
    (workdir / "exception.yaml").write_text(EXCEPTION.format(version="v1", more="  reportResult: maybe\n"))
    assert main(["scan", "--policy", "policy.yaml", "pods.yaml", "--exceptions", "exception.yaml"]) == 2
    assert "spec.reportResult: must be one of: skip, pass" in capsys.readouterr().err


def test_reading_keeps_every_field():
    document = {"apiVersion": "policies.kyverno.io/v1", "kind": "PolicyException",
                "metadata": {"name": "e", "labels": {"polex.kyverno.io/priority": "3"}},
                "spec": {"policyRefs": [{"name": "p", "kind": "NamespacedValidatingPolicy"}],
                         "images": ["ghcr.io/x:*"], "allowedValues": ["a"], "reportResult": "pass",
                         "expiresAt": "2030-01-01T02:00:00+02:00"}}
    exception = read_exception(document)
    assert exception.applies_to("NamespacedValidatingPolicy", "p") and not exception.applies_to("ValidatingPolicy", "p")
    assert (exception.images, exception.allowed_values, exception.report_result, exception.priority) == (
        ("ghcr.io/x:*",), ("a",), "pass", 3)
    assert exception.expires_at is not None and exception.expires_at.isoformat() == "2030-01-01T00:00:00+00:00"
    assert not exception.full
    with pytest.raises(PolicyError, match=r"spec\.policyRefs: required field is missing"):
        read_exception({**document, "spec": {}})
