"""`kind_gate` never closes on a resource `match.rule_matches` would select.

The gate (assertree/languages/kyverno/kind_gate.py) answers "can this rule's ``match`` select this kind?"
before a session is made. These hold it to the general path:

* on every ClusterPolicy/Policy rule of the vendored kyverno/policies and kyverno-cli data (and the rules
  autogen adds to them), for every kind those rules name, spelled as resources spell them, under CREATE and
  DELETE: a closed gate means `rule_matches` does not select;
* on random ``match`` blocks (``any``, ``all`` or the direct form; kinds with versions, groups, wildcards
  and subresources; filters with and without kinds) and random apiVersions and kinds: a closed gate means no
  selection, and where every filter has kinds and nothing else the gate and `rule_matches` agree exactly;
* end to end: a scan of kyverno/policies' best-practices and pod-security policies over their test resources
  reports the same with the gate as with the gate turned off.
"""

from __future__ import annotations

import json
from pathlib import Path
from unittest.mock import patch

import yaml
from conftest import CONFORMANCE
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import policy_library, scan_json

from assertree.languages.kyverno import evaluate, prelude
from assertree.languages.kyverno.autogen import autogen_rules
from assertree.languages.kyverno.kind_gate import kind_gate
from assertree.languages.kyverno.match import parse_kind_selector, rule_matches

POLICY_KINDS = ("ClusterPolicy", "Policy")


def _documents(root: Path) -> list[dict]:
    found = []
    for path in sorted(root.rglob("*.yaml")):
        try:
            found.extend(d for d in yaml.safe_load_all(path.read_text()) if isinstance(d, dict))
        except (yaml.YAMLError, UnicodeDecodeError):
            continue
    return found


def _rules() -> list[dict]:
    rules = []
    for root in (CONFORMANCE / "kyverno-policies", CONFORMANCE / "kyverno-cli"):
        for document in _documents(root):
            if document.get("kind") not in POLICY_KINDS or not isinstance(document.get("spec"), dict):
                continue
            written = [rule for rule in document["spec"].get("rules") or [] if isinstance(rule, dict)]
            try:
                generated = list(autogen_rules(document))
            except Exception:  # noqa: BLE001  a malformed policy of the data: its written rules still count
                generated = []
            rules.extend(written + [rule for rule in generated if isinstance(rule, dict)])
    return rules


def _spellings(kinds: set[str]) -> list[tuple[str, str]]:
    """(apiVersion, kind) pairs a resource of each named kind could carry."""
    out = {("v1", "Pod"), ("apps/v1", "Deployment"), ("batch/v1", "CronJob"), ("v1", "Namespace"), ("", "")}
    for entry in kinds:
        group, version, kind, _ = parse_kind_selector(entry)
        version = "v1" if version in ("*", "") else version
        kind = "Pod" if kind in ("*", "") else kind.replace("*", "x").replace("?", "x")
        out.add((version if group in ("*", "") else f"{group.replace('*', 'x')}/{version}", kind))
        out.add((f"example.io/{version}", kind))
    return sorted(out)


RULES = _rules()


def _resource(api_version: str, kind: str) -> dict:
    return {"apiVersion": api_version, "kind": kind, "metadata": {"name": "a", "namespace": "default"}}


def test_a_closed_gate_never_hides_a_selection_on_the_conformance_rules():
    kinds = {kind for rule in RULES for item in _filters(rule) for kind in item}
    spellings = _spellings(kinds)
    closed = 0
    for rule in RULES:
        gate = kind_gate(rule)
        if gate is None:
            continue
        for api_version, kind in spellings:
            resource = _resource(api_version, kind)
            if gate.admits(resource):
                continue
            closed += 1
            for operation in ("CREATE", "DELETE"):
                new = None if operation == "DELETE" else resource
                assert not rule_matches(rule, new, old_resource=resource, operation=operation).matched, (
                    rule.get("name"), api_version, kind, operation)
    assert len(RULES) > 500 and closed > 5_000  # the data reached the gate and the gate closed often


def _filters(rule: dict) -> list[list[str]]:
    match = rule.get("match") or {}
    items = match.get("any") or match.get("all") or [match]
    return [((item.get("resources") or {}).get("kinds") or []) for item in items if isinstance(item, dict)]


KIND_ENTRIES = st.sampled_from(["Pod", "Deployment", "v1/Pod", "apps/v1/Deployment", "apps/v1/*", "*",
                                "Pod/exec", "Pod.ephemeralcontainers", "*/*", "Po?", "*/scale", "Deploy*",
                                "batch/*/CronJob", "v2beta1/HorizontalPodAutoscaler", "Namespace"])
FILTER = st.fixed_dictionaries({}, optional={
    "resources": st.fixed_dictionaries({}, optional={"kinds": st.lists(KIND_ENTRIES, max_size=3),
                                                     "names": st.lists(st.sampled_from(["a", "b*"]), max_size=1),
                                                     "operations": st.just(["CREATE"])}),
})
MATCH = st.one_of(st.builds(lambda f: {"any": f}, st.lists(FILTER, max_size=3)),
                  st.builds(lambda f: {"all": f}, st.lists(FILTER, max_size=3)),
                  FILTER, st.just({}))
API_VERSIONS = st.sampled_from(["v1", "apps/v1", "batch/v1", "autoscaling/v2beta1", "example.io/v1alpha1",
                                "a/b/c", "", "v1beta1"])
KINDS = st.sampled_from(["Pod", "Deployment", "CronJob", "Namespace", "HorizontalPodAutoscaler", "Pox", ""])


def _kinds_only(match: dict) -> bool:
    items = match.get("any") or match.get("all") or [match]
    return all(set(item) == {"resources"} and set(item["resources"]) == {"kinds"} and item["resources"]["kinds"]
               for item in items)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(MATCH, API_VERSIONS, KINDS, st.sampled_from(["CREATE", "UPDATE", "DELETE"]))
def test_the_gate_agrees_with_rule_matches_on_random_match_blocks(match, api_version, kind, operation):
    rule = {"name": "r", "match": match}
    resource = _resource(api_version, kind)
    gate = kind_gate(rule)
    matched = rule_matches(rule, None if operation == "DELETE" else resource, old_resource=resource,
                           operation=operation).matched
    if gate is None:
        return
    if not gate.admits(resource):
        assert not matched
    elif _kinds_only(match) and operation == "CREATE":
        assert matched  # kinds alone decide: the gate is exact, so a gate that closes too rarely fails too


def test_a_scan_reports_the_same_with_and_without_the_gate(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("ASSERTREE_CACHE", "off")
    policies, resources = policy_library(tmp_path, ("best-practices", "pod-security"))
    fast = scan_json(capsys, policies, resources)
    with patch.object(evaluate, "gate_of", lambda rule: None), patch.object(prelude, "gate_of", lambda rule: None):
        general = scan_json(capsys, policies, resources)
    assert fast == general
    assert fast[0] == 1 and len(json.dumps(fast[1])) > 10_000  # a real scan, with failures
