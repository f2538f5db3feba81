"""kat's example policies (zemanlx/kat ``test-policies-pass``): admission policies with the verdicts kat's tests expect.

Each case (data/kat, read its README) is a group of files ``<policy>.<test>.<expect>.<part>.yaml`` in a
policy's ``tests/`` folder. Validating cases run through the scan ``assertree scan --policy ... --params ...``
runs, with the request file's operation, user and namespace: ``deny`` when the policy denies (a FAIL or an
ERROR), ``warn`` when it only warns, ``allow`` otherwise (``audit`` expects an admitted request). Mutating
cases run through ``assertree apply``'s mutations and compare the result with the ``.gold.yaml`` /
``.expected.yaml`` file.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import CONFORMANCE

from assertree.apply.mutations import apply_mutations
from assertree.engine.scan import scan
from assertree.languages.base import ScanContext
from assertree.languages.kyverno.values import UserInfo, Values
from assertree.languages.load import compile_document, link

DATA = CONFORMANCE / "kat" / "test-policies-pass"
_PART = re.compile(r"^(?P<case>.+?)\.(?P<part>object|oldObject|request|params|authorizer|message|warnings|"
                   r"annotations|gold|expected)\.(?:yaml|txt)$")
_EXPECT = ("allow", "deny", "warn", "audit", "mutate")

_SOURCE = "https://github.com/kubernetes/kubernetes/blob/master/pkg/apis/admissionregistration/validation/validation.go"
XFAIL = {
    "block-pod-exec.prod-admin.allow": "a CONNECT request for pods/exec with no object: assertree admits manifests "
                                       "(CREATE, UPDATE, DELETE of an object), not connections",
    "block-pod-exec.prod-non-admin.deny": "a CONNECT request for pods/exec with no object (as above)",
    "simple.deny": "the policy has no matchConstraints, which Kubernetes refuses "
                   "(validateValidatingAdmissionPolicySpec: matchConstraints and its resourceRules are required, "
                   f"{_SOURCE}); kat does not validate policies. "
                   "It also needs kat's authorizer mock, and offline the authorizer has no opinion",
    "track-privileged.privileged-pod.audit": "validations[0].reason 'Warn' is not a reason Kubernetes accepts "
                                             f"(supportedValidationPolicyReason, {_SOURCE}); kat does not validate it",
    "track-privileged.unprivileged-pod.audit": "the same policy as above (reason 'Warn')",
    "prevent-owner-change.changed-owner.deny": "an UPDATE whose oldObject differs from the object: assertree's "
                                               "requests have the object as oldObject (no input names an old object)",
    "require-owner-label.without-label.deny": "no request file, so the Deployment is in 'default', whose labels do not "
                                              "match the binding's namespaceSelector: the apiserver would not run the "
                                              "policy (admit). kat runs every namespaceSelector when it has no "
                                              "namespaceObject (matchesNamespaceSelectorByLabelSelector: 'No namespace "
                                              "object provided - can't evaluate selector', returns true)",
}

# kat runs a binding whose paramRef finds nothing with params null; with parameterNotFoundAction Deny the apiserver
# denies the request without running the validations, with its own message (the policy dispatcher's "no params
# found for policy binding with `Deny` parameterNotFoundAction", k8s.io/apiserver/pkg/admission/plugin/policy/
# generic/policy_dispatcher.go). The verdict agrees; the message is Kubernetes'.
KUBERNETES_MESSAGE = {"replica-limit-params.no-params.deny": "no params found for policy binding with `Deny` "
                                                             "parameterNotFoundAction"}


def _cases():
    for tests in sorted(DATA.glob("*/*/tests")):
        groups: dict[str, dict[str, Path]] = {}
        for path in sorted(tests.iterdir()):
            match = _PART.match(path.name)
            assert match, path
            groups.setdefault(match["case"], {})[match["part"]] = path
        for case, parts in groups.items():
            expect = case.rsplit(".", 1)[-1]
            kind = "mutate" if {"gold", "expected"} & parts.keys() else expect
            if kind not in _EXPECT:
                continue  # a group without an expectation (check-authorizer's 'allowed', whose policy is refused)
            marks = [pytest.mark.xfail(strict=True, reason=XFAIL[case])] if case in XFAIL else []
            yield pytest.param(tests.parent, case, parts, id=f"{tests.parent.name}/{case}", marks=marks)


def _load(path: Path | None) -> Any:
    return yaml.safe_load(path.read_text()) if path is not None else None


def _policies(folder: Path) -> list:
    documents = [document for path in sorted(folder.glob("*.yaml"))
                 for document in yaml.safe_load_all(path.read_text()) if document]
    policies, unlinked = link([compile_document(document) for document in documents])
    assert not unlinked
    return policies


def _request(parts: dict[str, Path]) -> tuple[Any, ScanContext]:
    """The resource a case admits and the scan context its request file describes."""
    request = _load(parts.get("request")) or {}
    new = _load(parts.get("object")) or request.get("object")
    old = _load(parts.get("oldObject")) or request.get("oldObject")
    operation = request.get("operation") or ("UPDATE" if new and old else "DELETE" if old else "CREATE")
    resource = dict(new if new is not None else old or {})
    namespace_object = request.get("namespaceObject")
    namespace = request.get("namespace") or ((namespace_object or {}).get("metadata") or {}).get("name")
    if namespace and isinstance(resource.get("metadata"), dict) and not resource["metadata"].get("namespace"):
        resource["metadata"] = {**resource["metadata"], "namespace": namespace}
    values = Values(global_values={"request.operation": operation}, policies=(),
                    namespaces=(namespace_object,) if namespace_object else ())
    user = request.get("userInfo")
    user_info = UserInfo(username=user.get("username", ""), groups=tuple(user.get("groups") or ())) if user else None
    params = tuple(item for item in [_load(parts.get("params"))] if item is not None)
    return resource, ScanContext(params=params, values=values, user_info=user_info, operation=operation)


@pytest.mark.parametrize(("folder", "case", "parts"), list(_cases()))
def test_kat_case(folder: Path, case: str, parts: dict[str, Path]) -> None:
    policies = _policies(folder)
    resource, context = _request(parts)
    if "gold" in parts or "expected" in parts:
        [applied] = apply_mutations([resource], policies, context=context)
        assert not applied.errors
        expected = _load(parts.get("gold") or parts.get("expected"))
        metadata = dict(applied.mutated.get("metadata") or {})
        if "namespace" not in (expected.get("metadata") or {}):
            metadata.pop("namespace", None)  # the namespace the request file gave, not part of kat's golden file
        assert {**applied.mutated, "metadata": metadata} == expected
        return
    results = scan([resource], policies, context=context).results
    statuses = {str(result.status) for result in results}
    found = "deny" if statuses & {"fail", "error"} else "warn" if "warn" in statuses else "allow"
    expect = case.rsplit(".", 1)[-1]
    assert found == {"audit": "allow"}.get(expect, expect), [(str(result.status), result.message) for result in results]
    if "message" in parts:
        message = KUBERNETES_MESSAGE.get(case) or parts["message"].read_text().strip()
        assert any(message in (result.message or "") for result in results)
    if "warnings" in parts:
        assert any(parts["warnings"].read_text().strip() in (result.message or "") for result in results)


def test_every_case_is_read() -> None:
    cases = list(_cases())
    assert len(cases) == 46
    assert {case.values[1] for case in cases} >= XFAIL.keys()
