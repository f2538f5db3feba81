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

With ``ReportOptions(kyverno_json=True)`` (``--kyverno-json``), the report is
what ``kyverno-json scan --output json`` prints, byte for byte: a top-level list
of reports, whole resources and policies, and nothing else (`kyverno_json`).

With ``--explain``, a failing or erroring rule also has ``explanation``:
``{"steps": [{"what", "depth", "outcome", "value", "operator", "expected",
"detail", "policyPath", "resourcePath"}, ...], "truncated": true}`` (absent parts
left out; `assertree.explanation`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from assertree.errors import Problem, field_path_text
from assertree.report.options import ReportOptions
from assertree.report.spool import Writable
from assertree.report.totals import Tally
from assertree.report.wording import rule_error
from assertree.results import ERROR, PolicyInfo, Resource, RuleResult, ScanResult


def _dumps(value: Any, indent: str) -> str:
    """`value` as orjson writes it with two-space indentation, every line after the first indented by
    `indent` (JSON strings never hold a raw line break, so this is the nested value's text exactly)."""
    import orjson

    text = orjson.dumps(value, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS).decode()
    return text.replace("\n", "\n" + indent) if indent else text


def render(result: ScanResult, options: ReportOptions | None = None) -> str:
    from assertree.report.stream import render_whole

    return render_whole("json", result, options)


class Writer:
    """The JSON report as a scan goes: each resource's entry of ``reports`` is written when it is
    checked; ``summary`` and ``fileErrors`` close the document. The bytes are those orjson writes for
    the whole document with two-space indentation."""

    by_resource = True

    def __init__(self, policies: Sequence[PolicyInfo], options: ReportOptions, out: Writable,
                 spill_dir: str | None = None) -> None:
        self.policies, self.options, self.out = policies, options, out
        self.count = 0
        if not options.kyverno_json:  # kyverno-json's list starts with its first report (else it is null)
            out.write('{\n  "reports": [')

    def add(self, resource: Resource, results: Sequence[RuleResult]) -> None:
        own = [rule_result for rule_result in results if rule_result.resource is resource]
        if self.options.kyverno_json:
            from assertree.report.gojson import marshal_indent
            from assertree.report.kyverno_json import report

            text = marshal_indent(report(resource, own, self.policies), "  ")
            self.out.write(("[\n  " if not self.count else ",\n  ") + text)
        else:
            entry = _report(resource, own, self.policies)
            self.out.write(("\n    " if not self.count else ",\n    ") + _dumps(entry, "    "))
        self.count += 1

    def finish(self, tally: Tally, problems: Sequence[Problem] = ()) -> None:
        out = self.out
        if self.options.kyverno_json:  # the list only: files that could not be read are told on stderr
            out.write("\n]\n" if self.count else "null\n")
            return
        out.write("\n  ]" if self.count else "]")
        out.write(',\n  "summary": ' + _dumps(tally.totals(problems).as_dict(), "  "))
        out.write(',\n  "fileErrors": ' + _dumps([_problem(problem) for problem in problems], "  "))
        if self.options.baseline is not None:
            out.write(',\n  "baseline": ' + _dumps(self.options.baseline.as_dict(), "  "))
        out.write("\n}\n")

    def close(self) -> None:
        pass


def _report(resource: Resource, rule_results: list[RuleResult], policies: Sequence[PolicyInfo]) -> dict[str, Any]:
    """The ``reports`` entry of one resource."""
    report: dict[str, Any] = {"resource": _reference(resource, rule_results)}
    entries = []
    by_policy: dict[int, list[RuleResult]] = {}
    for rule_result in rule_results:
        by_policy.setdefault(id(rule_result.policy), []).append(rule_result)
    for policy in policies:
        rules = [_rule(r) for r in by_policy.get(id(policy), [])]
        if rules:
            entries.append({"policy": _policy_reference(policy), "rules": rules})
    report["results"] = entries
    return report


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


def _rule(result: RuleResult) -> dict[str, Any]:
    out: dict[str, Any] = {"rule": {"name": result.rule.name}, "status": result.status}
    if result.identifier:
        out["identifier"] = result.identifier
    if result.message and not result.violations:  # Kyverno's own words for a skip or a pass
        out["message"] = result.message
    if result.exception:
        out["exception"] = result.exception
    if result.baselined:
        out["baselined"] = True
    if result.gate:
        out["gate"] = result.gate
    if result.status == ERROR:
        out["error"] = rule_error(result.error)
    if result.violations:
        out["violations"] = [
            {
                "message": violation.headline(),
                "errors": [_field_error(error) for error in violation.errors],
                **({"baselined": True} if violation.baselined else {}),
            }
            for violation in result.violations
        ]
    if result.feedback:
        out["feedback"] = result.feedback_json()
    if result.explanation is not None:
        out["explanation"] = result.explanation.as_dict()
    return out


def _field_error(error) -> dict[str, Any]:
    out: dict[str, Any] = {"type": error.type, "field": error.field}
    if error.value is not None:
        out["value"] = error.value
    out["detail"] = error.detail
    return out
