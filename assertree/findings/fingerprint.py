"""The identity of a finding, stable across edits that do not change it.

A fingerprint hashes what a finding *is*: the rule (``policy/rule``), the
payload file, the resource's identity and the failing check with its fields.
It never hashes where the finding is: a line number, the resource's position
in its file or the file's formatting. So reordering resources, reformatting a
file or moving lines keeps every fingerprint, while fixing the field, renaming
the resource or moving it to another file makes a new one.

The resource's identity is, in order: the rule's identifier (a kyverno-json
``identifier``, Kyverno's ``kind/namespace/name``, a Terraform address), the
Kubernetes identity of a document that has one (apiVersion group, kind,
namespace, name), else a hash of the resource's content (sorted keys), which
survives reordering and reformatting but not an edit of the resource itself.
"""

from __future__ import annotations

from typing import Any

from assertree.inputs.paths import relative_path
from assertree.results import PolicyInfo, RuleInfo, RuleResult, Violation

SCHEME = "assertree/v2"  # the name of the fingerprint in SARIF's partialFingerprints; a new scheme, a new name


def rule_id(policy: PolicyInfo, rule: RuleInfo) -> str:
    """``policy/rule``: how reports and fingerprints name a rule."""
    return f"{policy.name}/{rule.name}"


def resource_identity(result: RuleResult) -> str:
    """What names the resource of `result` whatever its place in its file (see the module docstring)."""
    if result.identifier:
        return f"id={result.identifier}"
    value = result.resource.value
    if isinstance(value, dict):
        metadata = value.get("metadata")
        kind = value.get("kind")
        if isinstance(kind, str) and isinstance(metadata, dict) and isinstance(metadata.get("name"), str):
            group = str(value.get("apiVersion") or "").rpartition("/")[0]
            return f"k8s={group}/{kind}/{metadata.get('namespace') or ''}/{metadata['name']}"
    return f"content={_content_hash(value)}"


def _content_hash(value: Any) -> str:
    import hashlib  # here, not at the top: hashlib loads OpenSSL (a few ms), and most runs write no fingerprint

    import orjson

    try:
        text = orjson.dumps(value, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS)
    except (TypeError, orjson.JSONEncodeError):  # nested deeper than orjson writes, or not JSON: its repr
        text = repr(value).encode()
    return hashlib.sha256(text).hexdigest()[:32]


def fingerprint(result: RuleResult, violation: Violation | None) -> str:
    """The finding's fingerprint: `violation` of `result`, or `result` itself when the rule errored (None)."""
    source = relative_path(result.resource.source) if result.resource.source else ""
    if violation is None:
        what = ["error"]
    else:
        what = [violation.check, *sorted(error.field for error in violation.errors)]
    text = "\0".join([rule_id(result.policy, result.rule), source, resource_identity(result), *what])
    import hashlib

    return hashlib.sha256(text.encode()).hexdigest()
