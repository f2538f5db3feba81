"""The CEL kinds build one admission request per resource (`cel_policies.selection._request`), not one per
(rule, resource): a scan gives the same report as building the request afresh for every rule."""

from __future__ import annotations

import json
from typing import Any
from unittest.mock import patch

import yaml
from support import policy_library, scan_json

from assertree.languages.kubernetes.request import admission_request
from assertree.languages.kyverno.cel_policies import selection
from assertree.languages.kyverno.manifests import with_default_namespace

FOLDERS = ("best-practices-vpol", "pod-security-vpol", "other-mpol", "other-gpol")


def _fresh(resource: Any, context: Any) -> tuple[Any, Any]:
    """The general path: the request made again for every rule."""
    lookups = getattr(context, "lookups", None)
    defaulted = with_default_namespace(resource, context.cluster_scoped)
    return defaulted, admission_request(defaulted, operation=context.operation, values=context.values,
                                        user_info=context.user_info, types=getattr(lookups, "cluster", None))


def test_one_request_per_resource_reports_as_one_per_rule(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("ASSERTREE_CACHE", "off")
    policies, resources = policy_library(tmp_path, FOLDERS)
    memoised = scan_json(capsys, policies, resources)
    with patch.object(selection, "_request", _fresh):
        general = scan_json(capsys, policies, resources)
    assert memoised == general
    assert memoised[0] == 1 and len(json.dumps(memoised[1])) > 10_000  # a real scan, with failures


def test_validating_policies_build_one_request_per_resource(tmp_path, capsys, monkeypatch):
    """Mutating policies hand later ones a new (patched) resource, which needs its own request; validating
    policies never do, so each resource's request is built once for all of them."""
    monkeypatch.setenv("ASSERTREE_CACHE", "off")
    policies, resources = policy_library(tmp_path, FOLDERS[:2])
    built = []
    real = selection.admission_request

    def counting(*args: Any, **kwargs: Any) -> Any:
        built.append(args[0])
        return real(*args, **kwargs)

    with patch.object(selection, "admission_request", counting):
        scan_json(capsys, policies, resources)
    documents = sum(1 for path in resources.iterdir() for document in yaml.safe_load_all(path.read_text())
                    if isinstance(document, dict))
    assert 0 < len(built) <= documents  # one request per resource, not one per (rule, resource)
