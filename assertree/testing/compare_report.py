"""Words for a `Comparison`: the text report people read and the JSON report tools read.

Both only format what `assertree.testing.compare` decided; nothing here
re-derives a verdict. The text lists each difference under its twin pair,
then the policies left without a twin, then one line of totals.
"""

from __future__ import annotations

import json
from typing import Any

from assertree.results import PolicyInfo, Resource
from assertree.testing.compare import Comparison, Row, Verdict, policy_name

__all__ = ["FORMATS", "render_json", "render_text", "resource_json", "resource_label"]


def resource_json(resource: Resource) -> dict[str, Any]:
    """Kind, namespace and name of a Kubernetes-shaped resource (when it has them), and where it was read."""
    value = resource.value if isinstance(resource.value, dict) else {}
    found = value.get("metadata")
    metadata: dict[str, Any] = found if isinstance(found, dict) else {}
    out = {key: item for key, item in (("kind", value.get("kind")), ("namespace", metadata.get("namespace")),
                                       ("name", metadata.get("name"))) if isinstance(item, str)}
    out["source"] = resource.label
    return out


def resource_label(resource: Resource) -> str:
    """``Kind namespace/name (file#doc)``, or the source alone for a resource without Kubernetes metadata."""
    described = resource_json(resource)
    if "name" not in described:
        return described["source"]
    name = f"{described['namespace']}/{described['name']}" if "namespace" in described else described["name"]
    return f"{described.get('kind', '?')} {name} ({described['source']})"


def render_text(comparison: Comparison) -> str:
    lines: list[str] = []
    current = None
    for row in comparison.differences:
        if row.twin is not current:
            current = row.twin
            lines.append(f"{row.twin.label} ({_kind(row.twin.old)} -> {_kind(row.twin.new)}):")
        lines.append(f"  {resource_label(row.resource)}: old {row.old.status}, new {row.new.status}"
                     f"{'  [admission changes]' if row.admission_changes else ''}")
        for side, verdict in (("old", row.old), ("new", row.new)):
            lines.extend(f"    {side}: {message}" for message in verdict.messages)
    for side, policies in (("old", comparison.old_only), ("new", comparison.new_only)):
        for policy in policies:
            where = f" ({policy.source})" if policy.source else ""
            lines.append(f"no twin: {side} {_kind(policy)} {policy_name(policy)}{where}")
    lines.append(_totals(comparison))
    return "\n".join(lines) + "\n"


def render_json(comparison: Comparison) -> str:
    document = {
        "pairs": [{"old": policy_name(twin.old), "new": policy_name(twin.new), "pairedBy": twin.paired_by}
                  for twin in comparison.twins],
        "differences": [_row_json(row) for row in comparison.differences],
        "unpaired": {"old": [_policy_json(policy) for policy in comparison.old_only],
                     "new": [_policy_json(policy) for policy in comparison.new_only]},
        "summary": comparison.summary(),
        "agree": comparison.agree,
    }
    return json.dumps(document, indent=2) + "\n"


FORMATS = {"text": render_text, "json": render_json}


def _row_json(row: Row) -> dict[str, Any]:
    return {"resource": resource_json(row.resource), "admissionChanges": row.admission_changes,
            "old": _verdict_json(row.twin.old, row.old), "new": _verdict_json(row.twin.new, row.new)}


def _verdict_json(policy: PolicyInfo, verdict: Verdict) -> dict[str, Any]:
    return {"policy": policy_name(policy), "kind": _kind(policy), "verdict": str(verdict.status),
            "rules": list(verdict.rules), "messages": list(verdict.messages)}


def _policy_json(policy: PolicyInfo) -> dict[str, Any]:
    return {"policy": policy_name(policy), "kind": _kind(policy), "source": policy.source}


def _kind(policy: PolicyInfo) -> str:
    return policy.kind


def _totals(comparison: Comparison) -> str:
    summary = comparison.summary()
    text = (f"{summary['pairs']} twin pair{'' if summary['pairs'] == 1 else 's'} on {summary['resources']} "
            f"resource{'' if summary['resources'] == 1 else 's'}: {summary['agree']} verdicts agree, "
            f"{summary['differ']} {'differs' if summary['differ'] == 1 else 'differ'}")
    unpaired = summary["oldOnly"] + summary["newOnly"]
    if unpaired:
        text += f", {unpaired} polic{'y' if unpaired == 1 else 'ies'} without a twin"
    return text
