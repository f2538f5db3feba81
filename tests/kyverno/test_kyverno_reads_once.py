"""`prelude.as_kyverno_reads` converts a resource once per scan and gives the same answers as converting it
for every mutating policy and rule.

The fast path's invariant (assertree/languages/kyverno/prelude.py): the memo's value is a fresh conversion's,
because no rule changes the value it is given. Held here end to end: scans of kyverno/policies' mutating and
validating policies over their test resources (mutations feed the validate rules) report the same, patched
resources included, with the memo as with a conversion per call; and after such a scan every memo'd value
still equals a fresh conversion of its resource (a rule that patched the shared value in place would show).
"""

from __future__ import annotations

import json
from typing import Any

from support import policy_library, scan_json

from assertree.languages.kyverno import evaluate, mutation, prelude
from assertree.languages.kyverno.manifests import copy_json, to_float64, with_default_namespace
from assertree.results import Resource

FOLDERS = ("other", "psp-migration", "karpenter")


def _fresh(resource: Resource, scan: Any) -> Resource:
    """The general path: a conversion for every call."""
    return resource.with_value(to_float64(with_default_namespace(resource.value, scan.cluster_scoped)))


def test_a_scan_reports_the_same_with_one_conversion_per_resource(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("ASSERTREE_CACHE", "off")
    policies, resources = policy_library(tmp_path, FOLDERS)
    fast = scan_json(capsys, policies, resources)
    with monkeypatch.context() as patched:
        for module in (evaluate, mutation):
            patched.setattr(module, "as_kyverno_reads", _fresh)
        general = scan_json(capsys, policies, resources)
    assert fast == general
    assert fast[0] == 1 and len(json.dumps(fast[1])) > 10_000  # a real scan, with failures


def test_no_rule_changes_the_value_it_is_given(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("ASSERTREE_CACHE", "off")
    policies, resources = policy_library(tmp_path, FOLDERS)
    given: dict[int, tuple[Resource, Any]] = {}  # each value handed out, and a copy of it as it was then

    def recording(resource: Resource, scan: Any) -> Resource:
        read = prelude.as_kyverno_reads(resource, scan)
        given.setdefault(id(read), (read, copy_json(read.value)))
        return read

    for module in (evaluate, mutation):
        monkeypatch.setattr(module, "as_kyverno_reads", recording)
    code, _ = scan_json(capsys, policies, resources)
    assert code == 1 and len(given) > 100  # a real scan, over many resources
    changed = [read.value.get("kind") for read, then in given.values() if read.value != then]
    assert changed == []
