"""The JSON report: kyverno-json's report shape, wrapped with a summary.

    {"reports": [ {"resource": ..., "results": [ {"policy": ..., "rules": [
        {"rule": ..., "status": "fail", "identifier": ..., "violations": [
            {"message": "... (CHECK=...)", "errors": [{"type", "field", "value", "detail"}]}]}]}]}],
     "summary": {"resources": 1, "policies": 1, ...}}

`reports` is exactly what ``kyverno-json scan --output json`` prints (one
entry per resource, one per policy, rules that applied), plus three fields
kyverno-json does not have: ``status`` and ``feedback`` on each rule, and
``source`` on each resource that came from a file.
"""

from __future__ import annotations

from typing import Any

from assertree.report.options import ReportOptions
from assertree.results import ERROR, RuleResult, ScanResult


def report_data(result: ScanResult) -> dict[str, Any]:
    reports = []
    for resource, rule_results in result.by_resource():
        report: dict[str, Any] = {"resource": resource.value}
        if resource.source is not None:
            report["source"] = resource.label
        policies = []
        by_policy: dict[int, list[RuleResult]] = {}
        for rule_result in rule_results:
            by_policy.setdefault(id(rule_result.policy), []).append(rule_result)
        for policy in result.policies:
            entry: dict[str, Any] = {"policy": policy.document}
            rules = [_rule(r) for r in by_policy.get(id(policy), [])]
            if rules:
                entry["rules"] = rules
            policies.append(entry)
        if policies:
            report["results"] = policies
        reports.append(report)
    return {"reports": reports, "summary": result.summary().as_dict()}


def _rule(result: RuleResult) -> dict[str, Any]:
    out: dict[str, Any] = {"rule": result.rule.document, "status": result.status}
    if result.identifier:
        out["identifier"] = result.identifier
    if result.status == ERROR:
        out["error"] = str(result.error)
    if result.violations:
        out["violations"] = [
            {
                "message": violation.headline(),
                "errors": [_field_error(error) for error in violation.errors],
            }
            for violation in result.violations
        ]
    if result.feedback:
        out["feedback"] = result.feedback_json()
    return out


def _field_error(error) -> dict[str, Any]:
    out: dict[str, Any] = {"type": error.type, "field": error.field}
    if error.value is not None:
        out["value"] = error.value
    out["detail"] = error.detail
    return out


def render(result: ScanResult, options: ReportOptions | None = None) -> str:
    import orjson

    return orjson.dumps(
        report_data(result), option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS | orjson.OPT_APPEND_NEWLINE
    ).decode()
