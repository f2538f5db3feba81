"""The JSON report: kyverno-json's report shape, wrapped with a summary.

    {"reports": [ {"resource": ..., "results": [ {"policy": ..., "rules": [
        {"rule": ..., "status": "fail", "identifier": ..., "violations": [
            {"message": "... (CHECK=...)", "errors": [{"type", "field", "value", "detail"}]}]}]}]}],
     "summary": {"resources": 1, "policies": 1, ...}}

By default the report refers to what it checked instead of embedding it, so
that it stays smaller than the payload (a 35 MB plan once gave a 199 MB report):
each resource is ``{"source", "document", "path", "identifier"}`` (its file, its
index in a YAML stream or JSON array, its place in the document, its name),
each policy ``{"apiVersion", "kind", "metadata": {"name"}}`` and each rule
``{"name"}`` (so readers of kyverno-json's report that look up
``policy.metadata.name`` and ``rule.name`` keep working); only policies with a
rule that applied are listed. ``fileErrors`` lists the payload files that could not be read, and
``summary`` the totals (`assertree.report.totals`, where "skipped" is defined).

With ``ReportOptions(kyverno_json=True)`` (``--kyverno-json``), `reports` is
exactly what ``kyverno-json scan --output json`` prints (one entry per resource
with the resource itself, one per policy with the policy document, the rule
documents), plus three fields kyverno-json does not have: ``status`` and
``feedback`` on each rule, and ``source`` on each resource that came from a file.
"""

from __future__ import annotations

from typing import Any

from assertree.errors import Problem, field_path_text
from assertree.report.options import ReportOptions
from assertree.report.totals import totals
from assertree.report.wording import rule_error
from assertree.results import ERROR, PolicyInfo, Resource, RuleResult, ScanResult


def report_data(result: ScanResult, options: ReportOptions | None = None) -> dict[str, Any]:
    options = options or ReportOptions()
    embed = options.kyverno_json
    reports = []
    for resource, rule_results in result.by_resource():
        report: dict[str, Any] = {"resource": resource.value if embed else _reference(resource, rule_results)}
        if embed and resource.source is not None:
            report["source"] = resource.label
        policies = []
        by_policy: dict[int, list[RuleResult]] = {}
        for rule_result in rule_results:
            by_policy.setdefault(id(rule_result.policy), []).append(rule_result)
        for policy in result.policies:
            rules = [_rule(r, embed) for r in by_policy.get(id(policy), [])]
            if not rules and not embed:
                continue
            entry: dict[str, Any] = {"policy": policy.document if embed else _policy_reference(policy)}
            if rules:
                entry["rules"] = rules
            policies.append(entry)
        if policies or not embed:
            report["results"] = policies
        reports.append(report)
    data: dict[str, Any] = {"reports": reports, "summary": totals(result, options.problems).as_dict()}
    if options.problems or not embed:
        data["fileErrors"] = [_problem(problem) for problem in options.problems]
    return data


def _reference(resource: Resource, results: list[RuleResult]) -> dict[str, Any]:
    """What names a resource: its file, its index in the file, its place in the document, its name."""
    out: dict[str, Any] = {"source": resource.source}
    if resource.document is not None:
        out["document"] = resource.document
    if resource.origin:  # known without searching (Terraform, whole documents)
        out["path"] = field_path_text(resource.origin)
    identifier = resource.default_identifier or next((r.identifier for r in results if r.identifier), None)
    if identifier:
        out["identifier"] = identifier
    return out


def _policy_reference(policy: PolicyInfo) -> dict[str, Any]:
    """A Kubernetes-style reference (apiVersion, kind, metadata.name): readers of kyverno-json's report
    that look up ``policy.metadata.name`` and ``rule.name`` keep working."""
    return {"apiVersion": policy.document.get("apiVersion"), "kind": policy.kind, "metadata": {"name": policy.name}}


def _problem(problem: Problem) -> dict[str, Any]:
    where = problem.location
    return {"source": where.source, "line": where.line, "column": where.column, "message": problem.message}


def _rule(result: RuleResult, embed: bool = True) -> dict[str, Any]:
    out: dict[str, Any] = {"rule": result.rule.document if embed else {"name": result.rule.name},
                           "status": result.status}
    if result.identifier:
        out["identifier"] = result.identifier
    if result.message and not result.violations:  # Kyverno's own words for a skip or a pass
        out["message"] = result.message
    if result.exception:
        out["exception"] = result.exception
    if result.status == ERROR:
        out["error"] = rule_error(result.error, kyverno_json=embed)
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
        report_data(result, options), option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS | orjson.OPT_APPEND_NEWLINE
    ).decode()
